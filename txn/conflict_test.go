package txn_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/txn"
)

func mustParse(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestConflicts runs two transactions that both read version 0: the winner
// commits version 1 first, then ours commits and must either land at
// version 2 or fail with the conflict kind of the case.
func TestConflicts(t *testing.T) {
	type stage func(t *testing.T, tx *txn.Transaction)
	blindAppend := func(path, part string) stage {
		return func(t *testing.T, tx *txn.Transaction) { tx.Add(addFile(path, part, 1)) }
	}
	// readAppend reads a partition with a predicate, then appends to it (an
	// INSERT ... SELECT, or a MERGE with no match): not a blind append.
	readAppend := func(pred, path, part string) stage {
		return func(t *testing.T, tx *txn.Transaction) {
			tx.ReadPredicate(mustParse(t, pred))
			tx.Add(addFile(path, part, 1))
		}
	}
	// deleteFile reads a file and removes it (a DELETE or an UPDATE).
	deleteFile := func(path string) stage {
		return func(t *testing.T, tx *txn.Transaction) {
			tx.ReadFiles(path)
			tx.Remove(removeFile(path, true))
		}
	}
	// compact rewrites files without changing data (OPTIMIZE).
	compact := func(out string, in ...string) stage {
		return func(t *testing.T, tx *txn.Transaction) {
			tx.ReadFiles(in...)
			for _, p := range in {
				tx.Remove(removeFile(p, false))
			}
			a := addFile(out, "a", 20)
			a.DataChange = false
			tx.Add(a)
		}
	}
	noConflict := txn.ConflictKind("")

	cases := []struct {
		name       string
		spec       tableSpec
		isolation  txn.IsolationLevel
		winner     stage
		ours       stage
		wantKind   txn.ConflictKind
		wantDetail string
	}{
		{name: "two blind appends never conflict", winner: blindAppend("w", "a"), ours: blindAppend("o", "a"), wantKind: noConflict},
		{name: "two blind appends, serializable", isolation: txn.Serializable, winner: blindAppend("w", "a"), ours: blindAppend("o", "a"), wantKind: noConflict},
		{name: "blind append into a partition read, write-serializable ignores it",
			winner: blindAppend("w", "a"), ours: readAppend("part = 'a'", "o", "a"), wantKind: noConflict},
		{name: "blind append into a partition read, serializable",
			isolation: txn.Serializable, winner: blindAppend("w", "a"), ours: readAppend("part = 'a'", "o", "a"), wantKind: txn.ConflictConcurrentAppend},
		{name: "table property delta.isolationLevel=Serializable applies",
			spec:   tableSpec{config: map[string]string{"delta.isolationLevel": "Serializable"}},
			winner: blindAppend("w", "a"), ours: readAppend("part = 'a'", "o", "a"), wantKind: txn.ConflictConcurrentAppend},
		{name: "blind append into another partition, serializable",
			isolation: txn.Serializable, winner: blindAppend("w", "b"), ours: readAppend("part = 'a'", "o", "a"), wantKind: noConflict},
		{name: "non-blind append into a partition read",
			winner: readAppend("part = 'b'", "w", "a"), ours: readAppend("part = 'a'", "o", "a"), wantKind: txn.ConflictConcurrentAppend, wantDetail: "w"},
		{name: "non-blind append into another partition",
			winner: readAppend("part = 'a'", "w", "a"), ours: readAppend("part = 'b'", "o", "b"), wantKind: noConflict},
		{name: "IN predicate matches",
			winner: readAppend("part = 'z'", "w", "c"), ours: readAppend("part IN ('b', 'c')", "o", "b"), wantKind: txn.ConflictConcurrentAppend},
		{name: "predicate on a data column may match any file",
			winner: readAppend("part = 'z'", "w", "c"), ours: readAppend("id > 5", "o", "b"), wantKind: txn.ConflictConcurrentAppend},
		{name: "unpartitioned table: any predicate matches",
			spec:   tableSpec{unpartition: true},
			winner: readAppend("id = 1", "w", ""), ours: readAppend("id = 2", "o", ""), wantKind: txn.ConflictConcurrentAppend},
		{name: "snapshot isolation ignores appends",
			isolation: txn.SnapshotIsolation, winner: readAppend("part = 'b'", "w", "a"), ours: readAppend("part = 'a'", "o", "a"), wantKind: noConflict},
		{name: "whole-table read vs non-blind append",
			winner:   readAppend("part = 'b'", "w", "b"),
			ours:     func(t *testing.T, tx *txn.Transaction) { tx.ReadWholeTable(); tx.Add(addFile("o", "a", 1)) },
			wantKind: txn.ConflictConcurrentAppend},
		{name: "whole-table read vs blind append, write-serializable",
			winner:   blindAppend("w", "b"),
			ours:     func(t *testing.T, tx *txn.Transaction) { tx.ReadWholeTable(); tx.Add(addFile("o", "a", 1)) },
			wantKind: noConflict},
		{name: "whole-table read vs any remove",
			winner:   deleteFile("f2"),
			ours:     func(t *testing.T, tx *txn.Transaction) { tx.ReadWholeTable(); tx.Add(addFile("o", "a", 1)) },
			wantKind: txn.ConflictDeleteRead},
		{name: "blind append vs compaction", winner: compact("c", "f1"), ours: blindAppend("o", "a"), wantKind: noConflict},
		{name: "compaction vs blind append", winner: blindAppend("w", "a"), ours: compact("c", "f1"), wantKind: noConflict},
		{name: "compaction vs blind append, serializable asked", isolation: txn.Serializable,
			winner: blindAppend("w", "a"), ours: compact("c", "f1"), wantKind: noConflict},
		{name: "compaction vs non-blind append into its partition is downgraded",
			winner: readAppend("part = 'a'", "w", "a"),
			ours: func(t *testing.T, tx *txn.Transaction) {
				compact("c", "f1")(t, tx)
				tx.ReadPredicate(mustParse(t, "part = 'a'"))
			},
			wantKind: noConflict},
		{name: "delete vs compaction of the file read", winner: compact("c", "f1"), ours: deleteFile("f1"), wantKind: txn.ConflictDeleteRead, wantDetail: "f1"},
		{name: "compaction vs delete of a file it read", winner: deleteFile("f1"), ours: compact("c", "f1", "f2"), wantKind: txn.ConflictDeleteRead},
		{name: "two compactions of one file", winner: compact("c1", "f1"), ours: compact("c2", "f1"), wantKind: txn.ConflictDeleteRead},
		{name: "deletes of different files", winner: deleteFile("f2"), ours: deleteFile("f1"), wantKind: noConflict},
		{name: "delete of a file both delete",
			winner:   deleteFile("f1"),
			ours:     func(t *testing.T, tx *txn.Transaction) { tx.Remove(removeFile("f1", true)) },
			wantKind: txn.ConflictDeleteDelete},
		{name: "read file matched by path form",
			winner: deleteFile("f%31"), ours: deleteFile("f1"), wantKind: txn.ConflictDeleteRead},
		{name: "metadata change vs blind append",
			winner: func(t *testing.T, tx *txn.Transaction) {
				m := tx.Snapshot().Metadata()
				m.Description = "changed"
				tx.SetMetadata(m)
			},
			ours: blindAppend("o", "a"), wantKind: txn.ConflictMetadataChanged},
		{name: "identity high-water mark vs a transaction without metadata",
			spec:   tableSpec{schema: identitySchema(4)},
			winner: func(t *testing.T, tx *txn.Transaction) { tx.SetMetadata(withSchema(tx, identitySchema(9))) },
			ours:   deleteFile("f1"), wantKind: noConflict},
		{name: "identity high-water mark vs a transaction that moves it too",
			spec:   tableSpec{schema: identitySchema(4)},
			winner: func(t *testing.T, tx *txn.Transaction) { tx.SetMetadata(withSchema(tx, identitySchema(9))) },
			ours: func(t *testing.T, tx *txn.Transaction) {
				tx.SetMetadata(withSchema(tx, identitySchema(7)))
				tx.Add(addFile("o", "a", 1))
			},
			wantKind: txn.ConflictMetadataChanged},
		{name: "identity high-water mark and a property vs a transaction without metadata",
			spec: tableSpec{schema: identitySchema(4)},
			winner: func(t *testing.T, tx *txn.Transaction) {
				m := withSchema(tx, identitySchema(9))
				m.Configuration = map[string]string{"delta.appendOnly": "false"}
				tx.SetMetadata(m)
			},
			ours: blindAppend("o", "a"), wantKind: txn.ConflictMetadataChanged},
		{name: "protocol upgrade vs blind append",
			winner: func(t *testing.T, tx *txn.Transaction) {
				tx.SetProtocol(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 4})
			},
			ours: blindAppend("o", "a"), wantKind: txn.ConflictProtocolChanged},
		{name: "both restate the protocol",
			winner:   func(t *testing.T, tx *txn.Transaction) { tx.SetProtocol(tx.Snapshot().Protocol()) },
			ours:     func(t *testing.T, tx *txn.Transaction) { tx.SetProtocol(tx.Snapshot().Protocol()) },
			wantKind: txn.ConflictProtocolChanged},
		{name: "same domain",
			winner: func(t *testing.T, tx *txn.Transaction) {
				tx.SetDomainMetadata(actions.DomainMetadata{Domain: "app.x", Configuration: "{}"})
			},
			ours: func(t *testing.T, tx *txn.Transaction) {
				tx.SetDomainMetadata(actions.DomainMetadata{Domain: "app.x", Configuration: `{"a":1}`})
			},
			wantKind: txn.ConflictDomain, wantDetail: "app.x"},
		{name: "different domains",
			winner: func(t *testing.T, tx *txn.Transaction) {
				tx.SetDomainMetadata(actions.DomainMetadata{Domain: "app.x", Configuration: "{}"})
			},
			ours: func(t *testing.T, tx *txn.Transaction) {
				tx.SetDomainMetadata(actions.DomainMetadata{Domain: "app.y", Configuration: "{}"})
			},
			wantKind: noConflict},
		{name: "same application id",
			winner:   func(t *testing.T, tx *txn.Transaction) { tx.SetTransaction("stream", 1); tx.Add(addFile("w", "a", 1)) },
			ours:     func(t *testing.T, tx *txn.Transaction) { tx.SetTransaction("stream", 1); tx.Add(addFile("o", "a", 1)) },
			wantKind: txn.ConflictAppTransaction, wantDetail: "stream"},
		{name: "application id read",
			winner: func(t *testing.T, tx *txn.Transaction) { tx.SetTransaction("stream", 7) },
			ours: func(t *testing.T, tx *txn.Transaction) {
				if _, ok, err := tx.TxnVersion(t.Context(), "stream"); ok || err != nil {
					t.Fatalf("stream has no version yet (%v)", err)
				}
				tx.Add(addFile("o", "a", 1))
			},
			wantKind: txn.ConflictAppTransaction},
		{name: "different application ids",
			winner:   func(t *testing.T, tx *txn.Transaction) { tx.SetTransaction("s1", 1) },
			ours:     func(t *testing.T, tx *txn.Transaction) { tx.SetTransaction("s2", 1) },
			wantKind: noConflict},
	}
	for _, sc := range stores {
		for _, c := range cases {
			t.Run(sc.name+"/"+c.name, func(t *testing.T) {
				ctx := context.Background()
				store := sc.new(t)
				createTable(t, store, c.spec)
				snap := load(t, store)

				w := txn.Begin(snap, txn.Options{})
				c.winner(t, w)
				o := txn.Begin(snap, txn.Options{Isolation: c.isolation})
				c.ours(t, o)
				if res, err := w.Commit(ctx); err != nil || res.Version != 1 {
					t.Fatalf("winner: version %d, err %v", res.Version, err)
				}
				res, err := o.Commit(ctx)
				v := res.Version
				if c.wantKind == noConflict {
					if err != nil || v != 2 {
						t.Fatalf("ours: version %d, err %v; want version 2", v, err)
					}
					if ci := commitInfo(t, store, 2); *ci.ReadVersion != 1 || ci.TxnID != o.ID() {
						t.Errorf("rebased commitInfo: readVersion %d, txnId %q", *ci.ReadVersion, ci.TxnID)
					}
					return
				}
				var ce *txn.ConflictError
				if !errors.Is(err, txn.ErrConflict) || !errors.As(err, &ce) {
					t.Fatalf("ours: version %d, err %v; want a %s conflict", v, err, c.wantKind)
				}
				if ce.Kind != c.wantKind || ce.Version != 1 {
					t.Fatalf("conflict %q at %d, want %q at 1 (%v)", ce.Kind, ce.Version, c.wantKind, err)
				}
				if c.wantDetail != "" && !contains(ce.Detail, c.wantDetail) {
					t.Errorf("detail %q does not name %q", ce.Detail, c.wantDetail)
				}
				if got := commitVersions(t, store); len(got) != 2 {
					t.Errorf("log holds versions %v after a conflict, want [0 1]", got)
				}
			})
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestConflictAcrossSeveralWinners checks that every winner between the
// read version and the newest is checked, not just the first.
func TestConflictAcrossSeveralWinners(t *testing.T) {
	ctx := context.Background()
	store := stores[0].new(t)
	createTable(t, store, tableSpec{})
	snap := load(t, store)
	ours := txn.Begin(snap, txn.Options{})
	ours.ReadFiles("f2")
	ours.Remove(removeFile("f2", true))

	for i, stage := range []func(*txn.Transaction){
		func(tx *txn.Transaction) { tx.Add(addFile("x", "a", 1)) },
		func(tx *txn.Transaction) { tx.Add(addFile("y", "b", 1)) },
		func(tx *txn.Transaction) { tx.Remove(removeFile("f2", true)) },
	} {
		tx := txn.Begin(load(t, store), txn.Options{})
		stage(tx)
		if res, err := tx.Commit(ctx); err != nil || res.Version != int64(i+1) {
			t.Fatalf("winner %d: %d, %v", i, res.Version, err)
		}
	}
	_, err := ours.Commit(ctx)
	var ce *txn.ConflictError
	if !errors.As(err, &ce) || ce.Kind != txn.ConflictDeleteRead || ce.Version != 3 {
		t.Fatalf("got %v, want a delete-read conflict at version 3", err)
	}
}

// TestUpdateRerunsAfterConflict: Update runs fn again on a fresh snapshot.
func TestUpdateRerunsAfterConflict(t *testing.T) {
	ctx := context.Background()
	store := stores[0].new(t)
	createTable(t, store, tableSpec{})
	snap := load(t, store)
	runs := 0
	res, err := txn.Update(ctx, snap, txn.Options{}, func(tx *txn.Transaction) error {
		runs++
		last, _, err := tx.TxnVersion(ctx, "app")
		if err != nil {
			return err
		}
		if runs == 1 {
			// A concurrent writer for the same application commits first.
			other := txn.Begin(snap, txn.Options{})
			other.SetTransaction("app", 5)
			if _, err := other.Commit(ctx); err != nil {
				return err
			}
		}
		tx.SetTransaction("app", last+1)
		return nil
	})
	if err != nil || res.Version != 2 || runs != 2 || res.Attempts != 1 {
		t.Fatalf("Update: version %d (%d attempts), runs %d, err %v", res.Version, res.Attempts, runs, err)
	}
	if got, _, err := load(t, store).TxnVersion(ctx, "app"); got != 6 || err != nil {
		t.Fatalf("app version %d (%v), want 6", got, err)
	}
}

// identitySchema is the test schema with id an identity column whose
// high-water mark is hwm.
func identitySchema(hwm int) string {
	return `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{"delta.identity.start":1,"delta.identity.step":1,"delta.identity.highWaterMark":` +
		strconv.Itoa(hwm) + `,"delta.identity.allowExplicitInsert":true}},{"name":"part","type":"string","nullable":true,"metadata":{}}]}`
}

// withSchema is tx's metadata with schema s.
func withSchema(tx *txn.Transaction, s string) actions.Metadata {
	m := tx.Snapshot().Metadata()
	m.SchemaString = s
	return m
}
