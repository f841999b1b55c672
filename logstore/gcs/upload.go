package gcs

// Uploads: one multipart request (metadata and content) up to the chunk
// size, a resumable upload session above it and for the Writer.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/godelta/delta/logstore"
)

// cancelTimeout bounds the request that cancels an upload session, made on
// a context of its own (the caller's may be why the upload ends).
const cancelTimeout = 30 * time.Second

// upload stores data at key: in one request up to the chunk size, else as
// a resumable upload. With ifAbsent it carries ifGenerationMatch=0 and id
// in its metadata, by which a retry that meets a 412 tells its own earlier
// attempt from another writer's object.
func (s *Store) upload(ctx context.Context, key string, data []byte, ifAbsent bool, id string) error {
	crc := crc32.Checksum(data, castagnoli)
	if len(data) > s.chunkSize {
		u, err := s.startSession(ctx, key, &crc, int64(len(data)), ifAbsent, id)
		if err != nil {
			return err
		}
		for off := 0; ; off += s.chunkSize {
			end := min(off+s.chunkSize, len(data))
			if err := u.upload(ctx, data[off:end], end == len(data)); err != nil {
				u.cancel(ctx)
				return err
			}
			if end == len(data) {
				return nil
			}
		}
	}
	maybe := false // an attempt was sent and may have landed
	err := s.retry(ctx, transient, func() error {
		err := s.multipart(ctx, key, data, crc, ifAbsent, id)
		switch {
		case err == nil:
			return nil
		case ifAbsent && maybe && statusCode(err) == http.StatusPreconditionFailed:
			return s.settle(ctx, key, id, err)
		case transient(err) && !notSent(err):
			maybe = true
		}
		return err
	})
	if err != nil && ifAbsent && maybe && logstore.KindOf(err) == nil && statusCode(err) != http.StatusPreconditionFailed {
		// An earlier attempt may have created the object.
		return fmt.Errorf("%w: %w", logstore.ErrOutcomeUnknown, err)
	}
	return err
}

// settle decides a PutIfAbsent whose retry met a 412 (prec) after an
// attempt that may have landed: the object is this call's if it carries
// its id. It returns nil for ours, prec for another writer's, and an
// error matching ErrOutcomeUnknown when the object cannot be read.
func (s *Store) settle(ctx context.Context, key, id string, prec error) error {
	m, err := s.stat(ctx, key, "metadata")
	switch {
	case err == nil && m.Metadata[putIDKey] == id:
		return nil
	case err == nil:
		return prec
	}
	return fmt.Errorf("%w: a retried upload met an object (%w), which could not be read back to tell whose: %w", logstore.ErrOutcomeUnknown, prec, err)
}

// metadataJSON is the JSON metadata of an upload of key.
func (s *Store) metadataJSON(key string, crc *uint32, id string) []byte {
	m := map[string]any{"name": s.prefix + key, "contentType": "application/octet-stream"}
	if crc != nil {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], *crc)
		m["crc32c"] = base64.StdEncoding.EncodeToString(b[:])
	}
	if id != "" {
		m["metadata"] = map[string]string{putIDKey: id}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // strings only
	}
	return b
}

// multipart uploads data in one request (uploadType=multipart): the
// metadata, with the CRC32C the service checks, then the content.
func (s *Store) multipart(ctx context.Context, key string, data []byte, crc uint32, ifAbsent bool, id string) error {
	boundary := newBoundary()
	for bytes.Contains(data, []byte(boundary)) {
		boundary = newBoundary()
	}
	head := "--" + boundary + "\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" +
		string(s.metadataJSON(key, &crc, id)) +
		"\r\n--" + boundary + "\r\nContent-Type: application/octet-stream\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	kv := []string{"uploadType", "multipart"}
	if ifAbsent {
		kv = append(kv, "ifGenerationMatch", "0")
	}
	resp, err := s.send(ctx, &request{
		method: http.MethodPost,
		url:    s.uploadURL(kv...),
		header: http.Header{"Content-Type": {"multipart/related; boundary=" + boundary}},
		body:   [][]byte{[]byte(head), data, []byte(tail)},
	})
	if err != nil {
		return err
	}
	return readJSON(resp, nil)
}

func newBoundary() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// session is a resumable upload session. Its URL is a capability (anyone
// holding it may upload), so it never appears in an error.
type session struct {
	s    *Store
	url  string
	sent int64 // bytes the service holds
	done bool  // the service made the object
	lost bool  // a request of the session failed after it may have been acted on
}

// startSession begins a resumable upload of key (size -1: not known yet).
// Beginning one creates nothing, so it is retried like a read.
func (s *Store) startSession(ctx context.Context, key string, crc *uint32, size int64, ifAbsent bool, id string) (*session, error) {
	kv := []string{"uploadType", "resumable"}
	if ifAbsent {
		kv = append(kv, "ifGenerationMatch", "0")
	}
	h := http.Header{
		"Content-Type":          {"application/json; charset=UTF-8"},
		"X-Upload-Content-Type": {"application/octet-stream"},
	}
	if size >= 0 {
		h.Set("X-Upload-Content-Length", strconv.FormatInt(size, 10))
	}
	body := s.metadataJSON(key, crc, id)
	var loc string
	err := s.retry(ctx, transient, func() error {
		resp, err := s.send(ctx, &request{method: http.MethodPost, url: s.uploadURL(kv...), header: h, body: [][]byte{body}})
		if err != nil {
			return err
		}
		loc = resp.Header.Get("Location")
		if err := readJSON(resp, nil); err != nil {
			return err
		}
		if !strings.HasPrefix(loc, "https://") && !strings.HasPrefix(loc, "http://") {
			return errors.New("the service began no upload session (no Location)")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &session{s: s, url: loc}, nil
}

// upload sends b, the bytes from offset u.sent on; with final they end the
// object, whose size is then u.sent+len(b). It returns once the service
// holds all of b (and, with final, has made the object): after a chunk the
// service kept only part of, it sends the rest; after a failed request it
// asks the session how much it holds, then sends from there.
func (u *session) upload(ctx context.Context, b []byte, final bool) error {
	s := u.s
	base := u.sent
	total := "*"
	if final {
		total = strconv.FormatInt(base+int64(len(b)), 10)
	}
	failures, delay := 0, s.backoff
	ask := false // the session's state is unknown: query it first
	for {
		var err error
		if ask {
			err = u.query(ctx)
			ask = err != nil
		}
		if err == nil {
			off := u.sent - base
			switch {
			case u.done && !final:
				return errors.New("the service finished the upload before its last chunk")
			case u.done:
				return nil
			case off < 0 || off > int64(len(b)):
				return fmt.Errorf("the upload session holds %d bytes, with %d sent", u.sent, base+int64(len(b)))
			case off == int64(len(b)) && !final:
				return nil
			}
			rest := b[off:]
			cr := "bytes */" + total
			if len(rest) > 0 {
				cr = fmt.Sprintf("bytes %d-%d/%s", u.sent, u.sent+int64(len(rest))-1, total)
			}
			before := u.sent
			err = u.put(ctx, rest, cr)
			if err == nil {
				if u.done || u.sent > before {
					failures, delay = 0, s.backoff
					continue
				}
				err = &transportError{err: errors.New("the upload session kept nothing of a chunk")}
			} else if transient(err) && !notSent(err) {
				u.lost, ask = true, true
			}
		}
		if c := statusCode(err); c == http.StatusNotFound || c == http.StatusGone {
			if u.lost {
				return fmt.Errorf("%w: the upload session is gone after a lost request: %w", logstore.ErrOutcomeUnknown, err)
			}
			return fmt.Errorf("%w: the upload session is gone: %w", logstore.ErrNotWritten, err)
		}
		failures++
		if !transient(err) || failures >= s.maxAttempts || ctx.Err() != nil {
			return err
		}
		if !sleep(ctx, randDuration(delay)) {
			return err
		}
		delay = min(2*delay, maxBackoff)
	}
}

// put sends one request of the session with content range cr, and reads
// what the service holds from its answer.
func (u *session) put(ctx context.Context, b []byte, cr string) error {
	resp, err := u.s.send(ctx, &request{method: http.MethodPut, url: u.url, secret: true,
		header: http.Header{"Content-Range": {cr}}, body: [][]byte{b}})
	if err != nil {
		return err
	}
	return u.answer(resp)
}

// query asks the session how much it holds.
func (u *session) query(ctx context.Context) error {
	resp, err := u.s.send(ctx, &request{method: http.MethodPut, url: u.url, secret: true,
		header: http.Header{"Content-Range": {"bytes */*"}}, body: [][]byte{}})
	if err != nil {
		return err
	}
	return u.answer(resp)
}

// answer reads a session's answer: 200 or 201, the object is made; 308,
// the bytes it holds are those of its Range header (none without one).
func (u *session) answer(resp *http.Response) error {
	switch resp.StatusCode {
	case http.StatusOK, http.StatusCreated:
		var m objectMeta
		if err := readJSON(resp, &m); err != nil {
			return err
		}
		u.done = true
		return nil
	case http.StatusPermanentRedirect:
		rng := resp.Header.Get("Range")
		if err := readJSON(resp, nil); err != nil {
			return err
		}
		if rng == "" {
			u.sent = 0
			return nil
		}
		_, last, ok := strings.Cut(strings.TrimPrefix(rng, "bytes="), "-")
		n, err := strconv.ParseInt(last, 10, 64)
		if !ok || err != nil || !strings.HasPrefix(rng, "bytes=0-") {
			return fmt.Errorf("the upload session answered Range %q", rng)
		}
		u.sent = n + 1
		return nil
	}
	_ = readJSON(resp, nil)
	return fmt.Errorf("the upload session answered %s", resp.Status)
}

// cancel ends the session, on a context of its own, so that nothing of it
// lands. It is best effort: a session never finished is never visible,
// and GCS drops it after a week.
func (u *session) cancel(ctx context.Context) {
	if u.done {
		return
	}
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer stop()
	resp, err := u.s.send(ctx, &request{method: http.MethodDelete, url: u.url, secret: true})
	if err == nil {
		_ = readJSON(resp, nil) // GCS answers 499
	}
}
