package azblob_test

import (
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/azblob"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil/backendtest"
)

func ddl(t testing.TB, s string) *schema.StructType {
	t.Helper()
	st, err := schema.ParseDDL(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// scanIDs returns the "id" column of a full scan of the table's latest
// version.
func scanIDs(t *testing.T, tbl *delta.Table) []int64 {
	t.Helper()
	ctx := t.Context()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return backendtest.ScanIDs(t, tbl, snap)
}

// A table on Azurite through the public API: concurrent writers, a
// checkpoint, and a scan through another store on the same prefix that
// returns exactly the rows appended.
func TestDeltaTable(t *testing.T) {
	s := newStore(t, azblob.Options{})
	cfg := azurite(t)
	again, err := azblob.New(t.Context(), cfg.Container, driver(s).Prefix(), options(cfg))
	if err != nil {
		t.Fatal(err)
	}
	backendtest.TableRoundTrip(t, s, again)
}

// Corpus tables uploaded to Azurite read the same as from local disk.
func TestCorpusTables(t *testing.T) {
	backendtest.Corpus(t, func(t *testing.T) logstore.Store { return newStore(t, azblob.Options{PageSize: 5}) })
}
