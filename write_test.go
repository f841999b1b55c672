package delta

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil/faultstore"
	"github.com/godelta/delta/txn"
)

func longRows(ids ...int64) [][]schema.Value {
	rows := make([][]schema.Value, len(ids))
	for i, id := range ids {
		rows[i] = []schema.Value{schema.LongValue(id)}
	}
	return rows
}

var idSchema = &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}}

// checkpointVersions lists the versions of the checkpoints in tbl's log.
func checkpointVersions(t *testing.T, tbl *Table) []int64 {
	t.Helper()
	var out []int64
	for obj, err := range tbl.Store().List(context.Background(), deltalog.LogDir, "") {
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := deltalog.ParseName(obj.Key); ok && f.Kind.IsCheckpoint() {
			out = append(out, f.Version)
		}
	}
	return out
}

// TestCommitResultAndPostCommit: writes through a Table return the commit's
// result, and the table runs the checkpoint due every
// delta.checkpointInterval versions after the commit, never inside it.
func TestCommitResultAndPostCommit(t *testing.T) {
	ctx := context.Background()
	tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: idSchema,
		Properties: map[string]string{"delta.checkpointInterval": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	// Checkpoints are due at versions 3 (a Begin) and 6 (an Update).
	for i, how := range []string{"append", "overwrite", "begin", "append", "overwrite", "update", "begin"} {
		id := int64(i)
		var res CommitResult
		switch how {
		case "append":
			res, err = tbl.AppendRows(ctx, longRows(id), WriteOptions{})
		case "overwrite":
			res, err = tbl.OverwriteRows(ctx, longRows(id), OverwriteOptions{})
		case "update":
			res, err = tbl.Update(ctx, TxnOptions{}, func(tx *Transaction) error {
				tx.SetTransaction("app", id)
				return nil
			})
		case "begin": // the lower-level path: the caller runs the post-commit work
			var tx *Transaction
			if tx, err = tbl.Begin(ctx, TxnOptions{}); err != nil {
				t.Fatal(err)
			}
			tx.SetTransaction("app", id)
			if res, err = tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if res.PostCommit.Ran {
				t.Fatalf("version %d: Commit ran the post-commit work", res.Version)
			}
			tbl.PostCommit(ctx, &res)
		}
		if err != nil {
			t.Fatal(err)
		}
		due := res.Version%3 == 0
		if w := res.PostCommit; res.Version != id+1 || res.Attempts != 1 || res.Timestamp.IsZero() ||
			w.Checkpoint != due || !w.Ran || w.Checkpointed != due || w.Err != nil {
			t.Fatalf("write %d (%s): result %+v", i, how, res)
		}
	}
	if got := checkpointVersions(t, tbl); len(got) != 2 || got[0] != 3 || got[1] != 6 {
		t.Fatalf("checkpoints at %v, want [3 6]", got)
	}
	validateLog(t, tbl)
}

// TestPostCommitFailureKeepsCommit: a checkpoint that fails after an
// Append is reported in the result; the Append succeeded and its rows are
// in the table.
func TestPostCommitFailureKeepsCommit(t *testing.T) {
	ctx := context.Background()
	inner, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreateStore(ctx, "t", inner, TableSpec{Schema: idSchema,
		Properties: map[string]string{"delta.checkpointInterval": "1"}}); err != nil {
		t.Fatal(err)
	}
	fs := faultstore.New(inner, 1)
	fs.AddRule(faultstore.Rule{Ops: faultstore.OpPut | faultstore.OpPutIfAbsent, Key: "_delta_log/*.checkpoint*", Kind: faultstore.Before})
	tbl, err := OpenStore(ctx, "t", fs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tbl.AppendRows(ctx, longRows(1, 2), WriteOptions{})
	if err != nil {
		t.Fatalf("Append: %v; a failed checkpoint must not fail the commit", err)
	}
	if w := res.PostCommit; res.Version != 1 || !w.Checkpoint || w.Checkpointed || !errors.Is(w.Err, faultstore.ErrInjected) {
		t.Fatalf("result %+v; want version 1 with a failed checkpoint", res)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil || snap.Version() != 1 || len(checkpointVersions(t, tbl)) != 0 {
		t.Fatalf("table at %v (%v), checkpoints %v", snap, err, checkpointVersions(t, tbl))
	}
	diffRows(t, scanRows(t, tbl), formatRows(longRows(1, 2)))
}

// TestRowsCheckedIsNotPublic: a program that stages files itself cannot
// declare their rows checked, so a table with a CHECK constraint refuses
// its transactions (at Begin, in Update, and in a bare txn.Begin), while
// Append, which checks every row, writes to it.
func TestRowsCheckedIsNotPublic(t *testing.T) {
	ctx := context.Background()
	tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: idSchema,
		Properties: map[string]string{"delta.constraints.pos": "id > 0"}})
	if err != nil {
		t.Fatal(err)
	}
	add := actions.Add{Path: "mine.parquet", Size: 1, DataChange: true, Stats: `{"numRecords":1}`}
	if _, err := tbl.Begin(ctx, TxnOptions{}); !errors.Is(err, ErrUnsupportedFeature) {
		t.Errorf("Begin: %v, want ErrUnsupportedFeature", err)
	}
	if _, err := tbl.Update(ctx, TxnOptions{}, func(tx *Transaction) error { tx.Add(add); return nil }); !errors.Is(err, ErrUnsupportedFeature) {
		t.Errorf("Update: %v, want ErrUnsupportedFeature", err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx := txn.Begin(snap, TxnOptions{})
	tx.Add(add)
	if _, err := tx.Commit(ctx); !errors.Is(err, ErrUnsupportedFeature) {
		t.Errorf("txn Commit: %v, want ErrUnsupportedFeature", err)
	}
	if res, err := tbl.AppendRows(ctx, longRows(1), WriteOptions{}); err != nil || res.Version != 1 {
		t.Fatalf("Append: %+v, %v", res, err)
	}
	if _, err := tbl.AppendRows(ctx, longRows(-1), WriteOptions{}); !errors.Is(err, ErrConstraint) {
		t.Fatalf("Append of a bad row: %v, want ErrConstraint", err)
	}
}

// TestChangesRange: the zero End of ChangeOptions is the latest version,
// UpTo(v) ends at v (0 included), and bad ranges fail with their kind.
func TestChangesRange(t *testing.T) {
	ctx := context.Background()
	tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: idSchema,
		Properties: map[string]string{"delta.enableChangeDataFeed": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	for id := range int64(3) {
		if _, err := tbl.AppendRows(ctx, longRows(id+1), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		opts    ChangeOptions
		want    string // the ids inserted, in version order
		wantErr error
	}{
		{opts: ChangeOptions{}, want: "[1 2 3]"},
		{opts: ChangeOptions{Start: 1}, want: "[1 2 3]"},
		{opts: ChangeOptions{Start: 2}, want: "[2 3]"},
		{opts: ChangeOptions{Start: 1, End: UpTo(1)}, want: "[1]"},
		{opts: ChangeOptions{End: UpTo(0)}, want: "[]"},
		{opts: ChangeOptions{Start: 3, End: UpTo(3)}, want: "[3]"},
		{opts: ChangeOptions{Start: 2, End: UpTo(1)}, wantErr: ErrInvalidArgument},
		{opts: ChangeOptions{Start: -1}, wantErr: ErrInvalidArgument},
		{opts: ChangeOptions{Start: 4}, wantErr: ErrVersionNotFound},
		{opts: ChangeOptions{End: UpTo(9)}, wantErr: ErrVersionNotFound},
	} {
		t.Run(fmt.Sprintf("%d-%v", c.opts.Start, c.opts.End), func(t *testing.T) {
			ch, err := tbl.Changes(ctx, c.opts)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("Changes: %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ids := []int64{}
			for row, err := range ch.Rows(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, row.Values()[0].Int64())
			}
			slices.Sort(ids)
			if got := fmt.Sprint(ids); got != c.want {
				t.Fatalf("ids %s, want %s", got, c.want)
			}
		})
	}
}
