package txn_test

import (
	"context"
	"maps"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/txn"
)

// A CommitResult says what the commit was: its operation, and the
// partitions it wrote new rows to (not those of files added again with a
// deletion vector, nor dataChange=false rewrites).
func TestCommitResultPartitionsWritten(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	createTable(t, store, tableSpec{})
	tx := txn.Begin(load(t, store), txn.Options{})
	a, b, a2 := addFile("g1", "a", 1), addFile("g2", "b", 1), addFile("g3", "a", 1)
	c := addFile("g4", "c", 1)
	c.DataChange = false
	d := addFile("f2", "d", 1)
	d.DeletionVector = &actions.DeletionVector{StorageType: "i", PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f", SizeInBytes: 1, Cardinality: 1}
	tx.Add(a, b, a2, c, d)
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Operation() != "WRITE" {
		t.Errorf("Operation = %q, want WRITE", res.Operation())
	}
	got := res.PartitionsWritten()
	if len(got) != 2 || !maps.Equal(got[0], map[string]string{"part": "a"}) || !maps.Equal(got[1], map[string]string{"part": "b"}) {
		t.Errorf("PartitionsWritten = %v, want [a b]", got)
	}

	tx = txn.Begin(load(t, store), txn.Options{Operation: "OPTIMIZE"})
	tx.Remove(removeFile("g1", false))
	c.Path = "g5"
	tx.Add(c)
	res, err = tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Operation() != "OPTIMIZE" || res.PartitionsWritten() != nil {
		t.Errorf("OPTIMIZE: Operation %q, PartitionsWritten %v; want no partition written", res.Operation(), res.PartitionsWritten())
	}
}
