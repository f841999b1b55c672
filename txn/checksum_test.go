package txn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/checksum"
	"github.com/godelta/delta/internal/checksum/crcwriter"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil/faultstore"
	"github.com/godelta/delta/txn"
)

// The checksum hook's failure is reported in PostCommit and changes
// nothing of the commit; the next commit, finding no .crc before it,
// computes its own from the replay.
func TestChecksumHookFailure(t *testing.T) {
	ctx := context.Background()
	inner := memory.New()
	createTable(t, inner, tableSpec{})
	fs := faultstore.New(inner, 1)
	fs.AddRule(faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Key: "_delta_log/*.crc", Kind: faultstore.Before, Nth: 1})
	commit := func(path string) txn.CommitResult {
		t.Helper()
		snap, err := snapshot.Load(ctx, fs, deltalog.Latest)
		if err != nil {
			t.Fatal(err)
		}
		tx := txn.Begin(snap, txn.Options{})
		a := addFile(path, "a", 10)
		tx.Add(a)
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		txn.PostCommit(ctx, &res)
		return res
	}
	res := commit("f3")
	if len(res.PostCommit.Failed) != 1 || res.PostCommit.Failed[0].Hook != "checksum" || res.Version != 1 {
		t.Fatalf("PostCommit = %+v, version %d; want the checksum hook failed", res.PostCommit, res.Version)
	}
	if _, err := checksum.Read(ctx, inner, 1); !errors.Is(err, checksum.ErrNotFound) {
		t.Fatalf("a .crc for version 1: %v", err)
	}
	res = commit("f4")
	if res.PostCommit.Err != nil {
		t.Fatal(res.PostCommit.Err)
	}
	written, err := checksum.Read(ctx, inner, 2)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, inner, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := crcwriter.Compute(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	if d := checksum.Compare(written, want); len(d) > 0 || written.NumFiles != 4 {
		t.Fatalf("version 2's .crc differs from the replay: %v", d)
	}
}

// A commit that lands after another writer's derives its checksum from
// the winner's .crc, not from the snapshot it read.
func TestChecksumAfterWinner(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	createTable(t, store, tableSpec{})
	base, err := snapshot.Load(ctx, store, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Version 0 was written without txn: give it its .crc.
	c, err := crcwriter.Compute(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if err := checksum.Write(ctx, store, 0, c); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"w1", "w2"} {
		tx := txn.Begin(base, txn.Options{}) // both read version 0
		a := addFile(path, "b", 100)
		tx.Add(a)
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		txn.PostCommit(ctx, &res)
		if res.PostCommit.Err != nil {
			t.Fatal(res.PostCommit.Err)
		}
	}
	got, err := checksum.Read(ctx, store, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got.NumFiles != 4 || got.TableSizeBytes != 400 {
		t.Fatalf("version 2: %d files, %d bytes; want 4, 400", got.NumFiles, got.TableSizeBytes)
	}
}
