package checksum_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/checksum"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/testutil"
)

// corpusCRCs returns every <v>.crc of the corpus (not Hadoop's .x.crc
// side files), as table root and version.
func corpusCRCs(t *testing.T) map[string][]int64 {
	t.Helper()
	root := testutil.CorpusDir(t)
	out := map[string][]int64{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(path)) != "_delta_log" {
			return err
		}
		f, ok := deltalog.ParseName(d.Name())
		if !ok || f.Kind != deltalog.CRC {
			return nil
		}
		table := filepath.Dir(filepath.Dir(path))
		out[table] = append(out[table], f.Version)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no .crc files in the corpus")
	}
	return out
}

// TestCorpusRoundTrip reads every Spark-written .crc of the corpus, and
// checks that it encodes and decodes back to itself; the one the corpus
// made malformed on purpose must be corrupt.
func TestCorpusRoundTrip(t *testing.T) {
	ctx := context.Background()
	n := 0
	for table, versions := range corpusCRCs(t) {
		store, err := local.New(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range versions {
			name := filepath.Base(table) + "@" + deltalog.CRCKey(v)
			c, err := checksum.Read(ctx, store, v)
			if strings.Contains(table, "crc-malformed") {
				if !errors.Is(err, deltaerr.ErrCorrupt) {
					t.Errorf("%s: Read = %v, want corrupt", name, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			n++
			if c.Protocol != nil {
				if c.FileSizeHistogram == nil && strings.Contains(readFile(t, table, v), "istogram") {
					t.Errorf("%s: histogram not decoded", name)
				}
				data, err := checksum.Encode(c)
				if err != nil {
					t.Errorf("%s: Encode: %v", name, err)
					continue
				}
				back, err := checksum.Decode(name, data)
				if err != nil {
					t.Errorf("%s: decoding what Encode wrote: %v\n%s", name, err, data)
					continue
				}
				again, err := checksum.Encode(back)
				if d := checksum.Compare(back, c); len(d) > 0 || err != nil || !bytes.Equal(again, data) {
					t.Errorf("%s: round trip differs: %v %v\n got %s\nwant %s", name, d, err, again, data)
				}
				// Apart from the empty maps Encode writes for nil ones,
				// nothing is lost.
				// (and reader features [] that Protocol omits).
				c.Metadata, back.Metadata, c.Protocol, back.Protocol = nil, nil, nil, nil
				if !reflect.DeepEqual(back, c) {
					t.Errorf("%s: round trip differs:\n got %+v\nwant %+v", name, back, c)
				}
			}
		}
	}
	t.Logf("%d corpus checksums read and round-tripped", n)
}

func readFile(t *testing.T, table string, v int64) string {
	b, err := os.ReadFile(filepath.Join(table, filepath.FromSlash(deltalog.CRCKey(v))))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sample() *checksum.VersionChecksum {
	c, err := checksum.FromState(checksum.State{
		Protocol: actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
		Metadata: actions.Metadata{ID: "id", Format: actions.Format{Provider: "parquet"}, SchemaString: `{"type":"struct","fields":[]}`},
	}, func(yield func(*actions.Add, error) bool) {
		yield(&actions.Add{Path: "a", Size: 10}, nil)
	})
	if err != nil {
		panic(err)
	}
	return c
}

// TestReadHostile: what is not a sound checksum is corrupt, a missing one
// not found, and nothing panics or reads a huge file.
func TestReadHostile(t *testing.T) {
	ctx := context.Background()
	good, err := checksum.Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(from, to string) []byte { return bytes.Replace(good, []byte(from), []byte(to), 1) }
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"not json", []byte("malformed")},
		{"array", []byte("[1,2]")},
		{"truncated", good[:len(good)/2]},
		{"two objects", append(append([]byte{}, good...), good...)},
		{"numMetadata 2", edit(`"numMetadata":1`, `"numMetadata":2`)},
		{"negative files", edit(`"numFiles":1`, `"numFiles":-1`)},
		{"files do not match histogram", edit(`"numFiles":1`, `"numFiles":7`)},
		{"size does not match histogram", edit(`"tableSizeBytes":10`, `"tableSizeBytes":11`)},
		{"huge number", edit(`"numFiles":1`, `"numFiles":1e999`)},
		{"wrong type", edit(`"numFiles":1`, `"numFiles":"1"`)},
		{"deep nesting", []byte(strings.Repeat("[", 100000))},
		{"protocol version 0", edit(`"minReaderVersion":1`, `"minReaderVersion":0`)},
		{"huge", append(append([]byte{}, good[:len(good)-2]...), append(bytes.Repeat([]byte(" "), checksum.MaxSize), '}')...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.New()
			if err := store.Put(ctx, deltalog.CRCKey(3), tc.data); err != nil {
				t.Fatal(err)
			}
			c, err := checksum.Read(ctx, store, 3)
			var ce *deltaerr.CorruptError
			if !errors.As(err, &ce) || c != nil {
				t.Fatalf("Read = %v, %v; want a *deltaerr.CorruptError", c, err)
			}
		})
	}
	store := memory.New()
	if err := store.Put(ctx, deltalog.CRCKey(3), good); err != nil {
		t.Fatal(err)
	}
	if _, err := checksum.Read(ctx, store, 3); err != nil {
		t.Fatalf("the unedited file: %v", err)
	}
	_, err = checksum.Read(ctx, store, 4)
	if !errors.Is(err, checksum.ErrNotFound) || !errors.Is(err, logstore.ErrNotFound) {
		t.Fatalf("Read of a missing version = %v, want ErrNotFound", err)
	}
}

// TestWriteNeverOverwrites: a second Write leaves the first file alone,
// without error.
func TestWriteNeverOverwrites(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	first := sample()
	if err := checksum.Write(ctx, store, 0, first); err != nil {
		t.Fatal(err)
	}
	before, _ := store.Get(ctx, deltalog.CRCKey(0))
	second := sample()
	second.NumFiles, second.TableSizeBytes, second.FileSizeHistogram = 0, 0, nil
	if err := checksum.Write(ctx, store, 0, second); err != nil {
		t.Fatalf("second Write: %v", err)
	}
	after, _ := store.Get(ctx, deltalog.CRCKey(0))
	if !bytes.Equal(before, after) {
		t.Fatal("the second Write replaced the file")
	}
	if !bytes.HasSuffix(after, []byte("}\n")) || !bytes.Contains(after, []byte(`"fileSizeHistogram"`)) || !bytes.Contains(after, []byte(`"partitionColumns":[]`)) {
		t.Fatalf("file not as Spark writes it: %s", after)
	}
	bad := sample()
	bad.Protocol = nil
	if err := checksum.Write(ctx, store, 1, bad); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("Write without protocol = %v", err)
	}
}
