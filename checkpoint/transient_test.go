package checkpoint

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/logstore"
)

// jsonLines returns each action of a read as JSON, encoded inside fn, so
// that a transient read's strings are taken while they are valid.
func jsonLines(t *testing.T, read func(context.Context, logstore.Store, []string, ActionSet, func([]actions.Action) error) error, store logstore.Store, parts []string, want ActionSet) ([]string, []map[string]string) {
	t.Helper()
	var lines []string
	var maps []map[string]string // partition maps, kept past their batch
	err := read(context.Background(), store, parts, want, func(batch []actions.Action) error {
		for i := range batch {
			b, err := json.Marshal(batch[i])
			if err != nil {
				return err
			}
			lines = append(lines, string(b))
			if a := batch[i].Add; a != nil {
				maps = append(maps, a.PartitionValues)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", parts[0], err)
	}
	return lines, maps
}

// TestReadTransient reads checkpoints with Read and with ReadTransient,
// and checks that they give the same actions: synthetic ones of many small
// pages (so that a batch spans pages, which must be held until it is
// handed over, and released pages are reused by the next ones), and every
// checkpoint and sidecar of the corpus. The partition maps, which the
// decoder shares between batches, must still hold their values once the
// read is over.
func TestReadTransient(t *testing.T) {
	rows, _ := manyFiles(3*batchSize + 17)
	key := "_delta_log/00000000000000000001.checkpoint.parquet"
	type source struct {
		name  string
		store logstore.Store
		parts []string
	}
	sources := []source{
		{"small pages", newMemStore(map[string][]byte{key: writeRows(t, rows, parquet.PageBufferSize(512))}), []string{key}},
		{"default pages", newMemStore(map[string][]byte{key: writeRows(t, rows)}), []string{key}},
	}
	if testing.Short() {
		t.Log("-short: the corpus is not read")
	} else {
		corpus := corpusDir(t)
		cps, sidecars := findCheckpoints(t, corpus, corpus)
		for _, cp := range append(cps, sidecars...) {
			sources = append(sources, source{cp.String(), dirStore{cp.table}, cp.parts})
		}
	}
	for _, src := range sources {
		for _, want := range []ActionSet{All, Add | Remove} {
			want1, maps1 := jsonLines(t, Read, src.store, src.parts, want)
			got, maps2 := jsonLines(t, ReadTransient, src.store, src.parts, want)
			if !slices.Equal(got, want1) {
				t.Fatalf("%s, kinds %b: ReadTransient gave %d actions, Read %d, or others", src.name, want, len(got), len(want1))
			}
			for i := range maps2 {
				if !equalStrings(maps1[i], maps2[i]) {
					t.Fatalf("%s: the partition values of add %d are %v after the read, want %v", src.name, i, maps2[i], maps1[i])
				}
			}
		}
	}
}
