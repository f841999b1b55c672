package delta

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/testutil/countstore"
)

// logReads returns the reads of the log among the requests of s, sorted
// (commits are read in parallel, in no set order): listings, and the
// gets, ranges and stats of files under _delta_log. Version checksums
// (<v>.crc) are left out, so that a .crc written after the commit (a
// PUT, not counted) or the previous one read to build it incrementally
// do not change what this asserts: the commits, checkpoints and listings
// read.
func logReads(s *countstore.Store) []string {
	var out []string
	for _, r := range s.Requests() {
		if !strings.HasPrefix(r.Key, "_delta_log/") || strings.HasSuffix(r.Key, ".crc") {
			continue
		}
		out = append(out, r.String())
	}
	slices.Sort(out)
	return out
}

// readsTable is a table in a memory store with a checkpoint at version 3
// (Table.Checkpoint after the create and three appends) and two commits
// after it (versions 4 and 5), and the store.
func readsTable(t *testing.T) logstore.Store {
	t.Helper()
	ctx := context.Background()
	mem := memory.New()
	tbl, err := CreateStore(ctx, "mem", mem, TableSpec{Schema: idSchema})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := tbl.AppendRows(ctx, longRows(int64(i)), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := tbl.Checkpoint(ctx); err != nil || v != 3 {
		t.Fatalf("Checkpoint = %d, %v; want 3", v, err)
	}
	for i := range 2 {
		if _, err := tbl.AppendRows(ctx, longRows(int64(10+i)), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return mem
}

// TestAppendReadsLogOnce (issue 25: "an append loads the snapshot four
// times"): Open, then an append through the facade and its post-commit
// chain, read the log once: Open lists _delta_log to find a log file,
// then the append loads one snapshot (the _last_checkpoint hint, one
// listing from the checkpoint on, each commit after it and the
// checkpoint once; the checkpoint, smaller than parquetio.Whole, in one
// request), writes on it, and commits. The post-commit snapshot is built
// from that snapshot and the actions written, with no read, once: the
// hooks and the caller share it. The Iceberg hook does nothing on a table
// without UniForm: no request at all, metadata/ included.
//
// Before this test: the same for the facade; the CLI's append loaded the
// snapshot twice (once for the schema, once in Table.Append), and the
// checkpoint took four ranges (magic, footer, two column runs).
func TestAppendReadsLogOnce(t *testing.T) {
	ctx := context.Background()
	type row struct {
		ID int64 `parquet:"id"`
	}
	for _, tc := range []struct {
		name   string
		append func(*Table) (CommitResult, error)
	}{
		{"Append", func(tbl *Table) (CommitResult, error) {
			return tbl.Append(ctx, Rows(longRows(7)), WriteOptions{})
		}},
		{"AppendRows", func(tbl *Table) (CommitResult, error) {
			return tbl.AppendRows(ctx, longRows(7), WriteOptions{})
		}},
		{"AppendStructs", func(tbl *Table) (CommitResult, error) {
			return AppendStructs(ctx, tbl, slices.Values([]row{{7}}), WriteOptions{})
		}},
		{"AppendOn", func(tbl *Table) (CommitResult, error) {
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				return CommitResult{}, err
			}
			return tbl.AppendOn(ctx, snap, Rows(longRows(7)), WriteOptions{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := countstore.New(readsTable(t), nil)
			tbl, err := OpenStore(ctx, "mem", store)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := store.Requests(), []countstore.Request{{Op: "list", Key: "_delta_log/"}}; !slices.Equal(got, want) {
				t.Errorf("Open read %v, want %v", got, want)
			}
			store.Reset()
			res, err := tc.append(tbl)
			if err != nil {
				t.Fatal(err)
			}
			if res.Version != 6 || !res.PostCommit.Ran || res.PostCommit.Err != nil {
				t.Fatalf("append: version %d, post-commit %+v; want version 6, the chain run without error", res.Version, res.PostCommit)
			}
			want := []string{
				"list _delta_log/ after _delta_log/00000000000000000003",
				// Protocol and metadata come from 00000000000000000005.crc: the
				// checkpoint is only looked up (stat), not read.
				"range _delta_log/00000000000000000004.json",
				"range _delta_log/00000000000000000005.json",
				"range _delta_log/_last_checkpoint",
				"stat _delta_log/00000000000000000003.checkpoint.parquet",
			}
			if got := logReads(store); !slices.Equal(got, want) {
				t.Errorf("the append read the log:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			// Nothing else is read: not the data file just written, not
			// metadata/ (the Iceberg hook returns before any I/O).
			for _, r := range store.Requests() {
				if !strings.HasPrefix(r.Key, "_delta_log/") {
					t.Errorf("the append read outside the log: %v", r)
				}
			}

			// The post-commit snapshot: built already, read from nothing,
			// the same object each time.
			store.Reset()
			post, err := res.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			again, err := res.Snapshot(ctx)
			if err != nil || again != post {
				t.Errorf("a second CommitResult.Snapshot gave another snapshot (%p, %p) or %v", post, again, err)
			}
			if post.Version() != 6 {
				t.Errorf("post-commit snapshot at version %d, want 6", post.Version())
			}
			if got := store.Requests(); len(got) != 0 {
				t.Errorf("the post-commit snapshot read %v", got)
			}
			if n, err := post.NumFiles(ctx); err != nil || n != 6 {
				t.Errorf("post-commit NumFiles = %d, %v; want 6", n, err)
			}
		})
	}
}
