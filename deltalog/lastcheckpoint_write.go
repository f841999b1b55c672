package deltalog

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// checksumKey is the top-level field of _last_checkpoint that holds the
// checksum of the rest. Part of the on-disk format: never change it.
const checksumKey = "checksum"

// WriteLastCheckpoint replaces _delta_log/_last_checkpoint with lc, with
// its checksum computed as PROTOCOL.md "JSON checksum" says (any Checksum
// in lc is ignored). Call it only once the checkpoint lc names is
// completely written: readers trust the hint to name a checkpoint that
// exists. The file is replaced with one Put, so readers see the old hint
// or the new one, never a mix; the checksum lets readers of stores
// without atomic replacement detect a torn read.
//
// The JSON starts with version, size and parts, as Spark writes it, so
// that old readers that read only a prefix find them together.
func WriteLastCheckpoint(ctx context.Context, store logstore.Store, lc LastCheckpoint) error {
	data, err := EncodeLastCheckpoint(lc)
	if err != nil {
		return err
	}
	if err := store.Put(ctx, LastCheckpointKey, data); err != nil {
		return fmt.Errorf("writing %s: %w", LastCheckpointKey, err)
	}
	return nil
}

// EncodeLastCheckpoint returns the bytes WriteLastCheckpoint writes for lc:
// its JSON with the checksum field set.
func EncodeLastCheckpoint(lc LastCheckpoint) ([]byte, error) {
	if lc.Version < 0 || lc.Size < 0 || (lc.Parts != nil && *lc.Parts < 1) {
		return nil, fmt.Errorf("_last_checkpoint version %d, size %d, parts %v: %w", lc.Version, lc.Size, lc.Parts, deltaerr.ErrInvalidArgument)
	}
	lc.Checksum = ""
	data, err := json.Marshal(lc)
	if err != nil {
		return nil, fmt.Errorf("encoding _last_checkpoint: %w: %w", deltaerr.ErrInvalidArgument, err)
	}
	sum, err := LastCheckpointChecksum(data)
	if err != nil {
		return nil, err
	}
	lc.Checksum = sum
	return json.Marshal(lc)
}

// VerifyLastCheckpoint checks the checksum of the _last_checkpoint bytes
// data. A file without a checksum (older writers) passes; one whose
// checksum does not match, or that is not a JSON object without duplicate
// keys, gives a *deltaerr.CorruptError.
func VerifyLastCheckpoint(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return &deltaerr.CorruptError{Path: LastCheckpointKey, Reason: "not a valid JSON object", Err: err}
	}
	raw, ok := top[checksumKey]
	if !ok {
		return nil
	}
	var stored string
	if err := json.Unmarshal(raw, &stored); err != nil {
		return &deltaerr.CorruptError{Path: LastCheckpointKey, Reason: "checksum is not a string", Err: err}
	}
	sum, err := LastCheckpointChecksum(data)
	if err != nil {
		return err
	}
	if sum != stored {
		return deltaerr.Corruptf(LastCheckpointKey, "checksum %s does not match the content (%s)", stored, sum)
	}
	return nil
}

// LastCheckpointChecksum returns the checksum of the _last_checkpoint
// JSON object data, as PROTOCOL.md "JSON checksum" defines it: the MD5,
// in lower-case hex, of the canonical form of the object without its
// top-level "checksum" field.
//
// The canonical form lists every scalar leaf as path=value, where the path
// joins with '+' the object keys (quoted) and array indexes (bare) from
// the top, strings are quoted and URL-encoded (every byte but
// a-zA-Z0-9-._~ as %XX, upper-case), and numbers, true, false and null are
// written as they appear. Entries are sorted by their bytes (the whole
// path=value string, as the reference implementation sorts them; the
// encoding makes them ASCII) and joined with ','. Empty objects and arrays
// contribute nothing. A duplicate key makes data invalid: a
// *deltaerr.CorruptError.
func LastCheckpointChecksum(data []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var entries []string
	if err := canonicalize(dec, "", true, &entries); err != nil {
		return "", &deltaerr.CorruptError{Path: LastCheckpointKey, Reason: "cannot canonicalize for the checksum", Err: err}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", deltaerr.Corruptf(LastCheckpointKey, "data after the JSON object")
	}
	slices.Sort(entries)
	sum := md5.Sum([]byte(strings.Join(entries, ",")))
	return hex.EncodeToString(sum[:]), nil
}

var errDuplicateKey = errors.New("duplicate key")

// canonicalize reads one JSON value from dec and appends its canonical
// path=value entries under path. top is set for the outermost value, whose
// "checksum" key is left out.
func canonicalize(dec *json.Decoder, path string, top bool, out *[]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	join := func(seg string) string {
		if path == "" {
			return seg
		}
		return path + "+" + seg
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, ok := kt.(string)
				if !ok {
					return fmt.Errorf("object key %v is not a string", kt)
				}
				if seen[key] {
					return fmt.Errorf("%w %q", errDuplicateKey, key)
				}
				seen[key] = true
				if top && key == checksumKey {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return err
					}
					continue
				}
				if err := canonicalize(dec, join(encodeChecksumString(key)), false, out); err != nil {
					return err
				}
			}
		case '[':
			if top {
				return fmt.Errorf("_last_checkpoint is not a JSON object")
			}
			for i := 0; dec.More(); i++ {
				if err := canonicalize(dec, join(strconv.Itoa(i)), false, out); err != nil {
					return err
				}
			}
		}
		_, err := dec.Token() // the closing delimiter
		return err
	case string:
		*out = append(*out, path+"="+encodeChecksumString(t))
	case json.Number:
		*out = append(*out, path+"="+t.String())
	case bool:
		*out = append(*out, path+"="+strconv.FormatBool(t))
	case nil:
		*out = append(*out, path+"=null")
	}
	if top {
		return fmt.Errorf("_last_checkpoint is not a JSON object")
	}
	return nil
}

// encodeChecksumString quotes s with every byte outside a-zA-Z0-9-._~
// percent-encoded in upper-case hex.
func encodeChecksumString(s string) string {
	const hexDigits = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
	}
	return string(append(b, '"'))
}
