package dv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/testutil"
)

func corpusDir(t *testing.T) string { return testutil.CorpusDir(t) }

// logDVs returns every deletion vector descriptor of the add and remove
// actions in the table's JSON commits, read line by line.
func logDVs(t *testing.T, table string) []*actions.DeletionVector {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(table, "_delta_log", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	type fileAction struct {
		DeletionVector *actions.DeletionVector `json:"deletionVector"`
	}
	var out []*actions.DeletionVector
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "._") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var line struct {
				Add    *fileAction `json:"add"`
				Remove *fileAction `json:"remove"`
			}
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for _, a := range []*fileAction{line.Add, line.Remove} {
				if a != nil && a.DeletionVector != nil {
					out = append(out, a.DeletionVector)
				}
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestCorpus(t *testing.T) {
	root := corpusDir(t)
	tests := []struct {
		table  string
		minDVs int
		rows   []uint64 // when set, every vector must hold exactly these
	}{
		{"kernel-rs/table-with-dv-small", 1, []uint64{0, 9}},
		{"kernel-rs/with-short-dv", 1, nil},
		{"kernel-rs/cdf-table-with-dv", 8, nil},
		{"golden/dv-with-columnmapping/delta", 10, nil},
		{"golden/log-replay-dv-key-cases/delta", 3, nil},
		{"kernel-rs/compacted-log-files-table", 10, nil},
		{"delta-rs/table_with_deletion_logs", 3, nil},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.table, func(t *testing.T) {
			dir := filepath.Join(root, filepath.FromSlash(tc.table))
			store, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			dvs := logDVs(t, dir)
			if len(dvs) < tc.minDVs {
				t.Fatalf("found %d deletion vectors, want at least %d", len(dvs), tc.minDVs)
			}
			for _, d := range dvs {
				b, err := Load(ctx, store, d, nil)
				if err != nil {
					t.Fatalf("Load(%s): %v", d.UniqueID(), err)
				}
				if int64(b.Cardinality()) != d.Cardinality {
					t.Fatalf("%s: cardinality %d, descriptor %d", d.UniqueID(), b.Cardinality(), d.Cardinality)
				}
				if tc.rows != nil {
					if got := slices.Collect(b.All()); !slices.Equal(got, tc.rows) {
						t.Fatalf("%s: rows %v, want %v", d.UniqueID(), got, tc.rows)
					}
				}
				// Golden bytes: our encoder reproduces the writer's bitmap
				// bytes exactly.
				ser, err := b.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				orig := originalBytes(t, store, d)
				if !bytes.Equal(ser, orig) {
					t.Errorf("%s: re-encoded bitmap differs:\n got %x\nwant %x", d.UniqueID(), ser, orig)
				}
			}
		})
	}
}

// originalBytes returns the serialized bitmap a descriptor points at, as
// stored.
func originalBytes(t *testing.T, store *logstore.Portable, d *actions.DeletionVector) []byte {
	t.Helper()
	if d.StorageType == StorageInline {
		b, err := Z85Decode(d.PathOrInlineDv)
		if err != nil {
			t.Fatal(err)
		}
		return b[:d.SizeInBytes]
	}
	key, err := RelativePath(d)
	if err != nil {
		t.Fatal(err)
	}
	b, err := store.GetRange(context.Background(), key, int64(*d.Offset)+4, int64(d.SizeInBytes))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
