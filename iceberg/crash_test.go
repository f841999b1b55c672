package iceberg_test

import (
	"context"
	"fmt"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil/faultstore"
)

func smallRows(from, n int) [][]schema.Value {
	var out [][]schema.Value
	for i := from; i < from+n; i++ {
		out = append(out, []schema.Value{schema.LongValue(int64(i)), schema.StringValue(fmt.Sprint("n", i)), schema.DateValue(int32(19000 + i%3))})
	}
	return out
}

// TestCrashMidConversion stops the converting process at each write of a
// conversion: before the manifest, before the manifest list, before the
// metadata file (the switch) and right after it, before the hint. Each
// time the Delta commit stands; Iceberg readers see the previous snapshot
// (or, after the switch, the new one); and the next commit, in a new
// process, converts every version missed, one snapshot each.
func TestCrashMidConversion(t *testing.T) {
	cases := []struct {
		name      string
		rule      faultstore.Rule
		published bool // the crashed conversion's snapshot is visible
	}{
		{"before the manifest", faultstore.Rule{Ops: faultstore.OpPut, Key: "metadata/*-m0.avro", Kind: faultstore.Crash}, false},
		{"before the manifest list", faultstore.Rule{Ops: faultstore.OpPut, Key: "metadata/snap-*.avro", Kind: faultstore.Crash}, false},
		{"before the metadata file", faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Key: "metadata/v*.metadata.json", Kind: faultstore.Crash}, false},
		{"after the metadata file", faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Key: "metadata/v*.metadata.json", Kind: faultstore.CrashAfter}, true},
		{"before the hint", faultstore.Rule{Ops: faultstore.OpPut, Key: "metadata/version-hint.text", Kind: faultstore.Crash}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			inner := memory.New()
			fs := faultstore.New(inner, 1)
			tbl, err := delta.CreateStore(ctx, "crash", fs, uniformSpec())
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				if _, err := tbl.AppendRows(ctx, smallRows(i*10, 10), delta.WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			before, err := iceberg.ReadStatus(ctx, inner)
			if err != nil || before.ConvertedVersion != 2 {
				t.Fatalf("before the crash: %+v, %v", before, err)
			}
			// The next commit lands, then its conversion crashes.
			fs.AddRule(tc.rule)
			res, err := tbl.AppendRows(ctx, smallRows(20, 10), delta.WriteOptions{})
			if err != nil {
				t.Fatalf("the Delta commit must not fail with its conversion: %v", err)
			}
			if res.Version != 3 || !fs.Crashed() {
				t.Fatalf("version %d, crashed %v", res.Version, fs.Crashed())
			}
			// A new process: what readers see.
			st, err := iceberg.ReadStatus(ctx, inner)
			if err != nil {
				t.Fatal(err)
			}
			wantVersion, wantRecords := int64(2), int64(20)
			if tc.published {
				wantVersion, wantRecords = 3, 30
			}
			if st.ConvertedVersion != wantVersion || st.Records != wantRecords {
				t.Fatalf("after the crash readers see Delta version %d with %d records, want %d with %d", st.ConvertedVersion, st.Records, wantVersion, wantRecords)
			}
			// The next commit catches up.
			tbl2, err := delta.OpenStore(ctx, "crash", inner)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tbl2.AppendRows(ctx, smallRows(30, 10), delta.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			st, err = iceberg.ReadStatus(ctx, inner)
			if err != nil {
				t.Fatal(err)
			}
			if st.ConvertedVersion != 4 || st.Records != 40 || st.DataFiles != countFiles(t, ctx, inner) {
				t.Fatalf("after catching up: %+v", st)
			}
			checkOneSnapshotPerVersion(t, ctx, inner, 4)
		})
	}
}

func countFiles(t *testing.T, ctx context.Context, store logstore.Store) int64 {
	t.Helper()
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	n, err := snap.NumFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestExpireSnapshots: Options.MaxSnapshots keeps the newest snapshots,
// the current one last, and the snapshot log follows.
func TestExpireSnapshots(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	tbl, err := delta.CreateStore(ctx, "expire", store, uniformSpec())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := tbl.AppendRows(ctx, smallRows(i, 1), delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// One more commit, without the post-commit conversion, then converted
	// with a cap of 2 snapshots.
	tx, err := tbl.Begin(ctx, delta.TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := iceberg.Convert(ctx, snap, iceberg.Options{MaxSnapshots: 2}); err != nil {
		t.Fatal(err)
	}
	m := latestMetadata(t, ctx, store)
	checkMetadata(t, m)
	snaps := objects(t, "snapshots", m["snapshots"])
	log := objects(t, "snapshot-log", m["snapshot-log"])
	if len(snaps) != 2 || len(log) != 2 || snaps[1]["snapshot-id"] != m["current-snapshot-id"] {
		t.Fatalf("%d snapshots, %d log entries, current %v", len(snaps), len(log), m["current-snapshot-id"])
	}
	if got := snaps[0]["summary"].(map[string]any)[iceberg.PropDeltaVersion]; got != "4" {
		t.Fatalf("oldest kept snapshot converts Delta version %v, want 4", got)
	}
}

// TestCatchUpAfterLogCleanup: when a version to convert is no longer in
// the Delta log, the catch-up builds one snapshot from the whole file
// list, by difference with the files Iceberg has.
func TestCatchUpAfterLogCleanup(t *testing.T) {
	ctx := context.Background()
	inner := memory.New()
	fs := faultstore.New(inner, 1)
	tbl, err := delta.CreateStore(ctx, "cleanup", fs, uniformSpec())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.AppendRows(ctx, smallRows(0, 5), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Version 2 lands; its conversion crashes.
	fs.AddRule(faultstore.Rule{Ops: faultstore.OpPut, Key: "metadata/*-m0.avro", Kind: faultstore.Crash})
	if _, err := tbl.AppendRows(ctx, smallRows(5, 5), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A new process checkpoints version 2 and its commit file goes.
	tbl2, err := delta.OpenStore(ctx, "cleanup", inner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl2.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inner.Delete(ctx, deltalog.CommitKey(2)); err != nil {
		t.Fatal(err)
	}
	res, err := tbl2.SyncIceberg(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tbl2.IcebergStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Full || res.Snapshots != 1 || st.ConvertedVersion != 2 || st.Records != 10 || st.DataFiles != countFiles(t, ctx, inner) {
		t.Fatalf("catch-up %+v, status %+v", res, st)
	}
	checkMetadata(t, latestMetadata(t, ctx, inner))
}
