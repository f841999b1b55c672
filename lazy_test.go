package delta

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/bench/synth"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/testutil/countstore"
)

// TestTableOpsReadNoFileColumns checks, by counting the bytes read from the
// checkpoint, that the table operations that need no file state (time
// travel, an append transaction with an application id, a log cleanup
// with nothing before the checkpoint to delete) do not read the
// checkpoint's add and remove columns (a cleanup that deletes reads the
// checkpoint it keeps in full first), and that
// SnapshotAtTimestamp lists the log once.
func TestTableOpsReadNoFileColumns(t *testing.T) {
	ctx := context.Background()
	const n = 40_000
	d := memory.NewDriver()
	clock := time.UnixMilli(1_700_000_000_000)
	d.SetClock(func() time.Time { clock = clock.Add(time.Second); return clock })
	mem := logstore.NewPortable(d)
	if _, err := synth.Build(ctx, mem, n, 10); err != nil {
		t.Fatal(err)
	}
	cpSize := int64(0)
	if info, err := mem.Stat(ctx, "_delta_log/00000000000000000000.checkpoint.parquet"); err == nil {
		cpSize = info.Size
	} else {
		t.Fatal(err)
	}
	store := countstore.New(mem, func(key string) bool { return strings.Contains(key, ".checkpoint.") })
	tbl, err := OpenStore(ctx, "synth", store)
	if err != nil {
		t.Fatal(err)
	}
	v5, err := tbl.SnapshotAt(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	// Nearly all of the checkpoint is its add column; a read of it would
	// take more than a tenth of the file.
	limit := cpSize / 10

	for _, tc := range []struct {
		name  string
		op    func() error
		lists int64 // 0: not checked
		// readsFiles marks the control: an operation that must read them.
		readsFiles bool
	}{
		{"Snapshot", func() error { _, err := tbl.Snapshot(ctx); return err }, 0, false},
		{"SnapshotAt", func() error { _, err := tbl.SnapshotAt(ctx, 3); return err }, 0, false},
		{"SnapshotAtTimestamp", func() error {
			s, err := tbl.SnapshotAtTimestamp(ctx, v5.Timestamp())
			if err == nil && s.Version() != 5 {
				t.Errorf("SnapshotAtTimestamp: version %d, want 5", s.Version())
			}
			return err
		}, 1, false},
		{"Begin and commit an append with an application id", func() error {
			tx, err := tbl.Begin(ctx, TxnOptions{Operation: "WRITE", NoCheckpoint: true})
			if err != nil {
				return err
			}
			if _, ok, err := tx.TxnVersion(ctx, "app"); ok || err != nil {
				t.Errorf("TxnVersion: %v %v", ok, err)
			}
			tx.SetTransaction("app", 1)
			tx.Add(synth.File(10 * n))
			_, err = tx.Commit(ctx)
			return err
		}, 0, false},
		{"CleanupLog", func() error { _, err := tbl.CleanupLog(ctx, true); return err }, 0, false},
		{"Checkpoint (control)", func() error { _, err := tbl.Checkpoint(ctx); return err }, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store.Reset()
			if err := tc.op(); err != nil {
				t.Fatal(err)
			}
			c := store.Counts()
			if (c.Bytes > limit) != tc.readsFiles {
				t.Errorf("read %d bytes of a %d-byte checkpoint", c.Bytes, cpSize)
			}
			if tc.lists != 0 && c.Lists != tc.lists {
				t.Errorf("listed the log %d times, want %d", c.Lists, tc.lists)
			}
		})
	}

	// The files are still there when asked for.
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := snap.NumFiles(ctx); err != nil || got != n+5*10+1 {
		t.Errorf("NumFiles = %d, %v; want %d", got, err, n+5*10+1)
	}
}
