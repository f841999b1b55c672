package s3_test

import (
	"context"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/testutil/backendtest"
)

// TestDeltaTable writes a table on the server from concurrent writers,
// checkpoints it, and reads it back through another store on its prefix.
func TestDeltaTable(t *testing.T) {
	st := newStore(t)
	again, err := s3.New(context.Background(), driver(st).Bucket(), driver(st).Prefix(), options(server(t)))
	if err != nil {
		t.Fatal(err)
	}
	backendtest.TableRoundTrip(t, st, again)
}

// TestCorpusTables uploads corpus tables to the server and reads them
// through the backend: the same version, files and rows as from disk.
func TestCorpusTables(t *testing.T) {
	backendtest.Corpus(t, func(t *testing.T) logstore.Store { return newStore(t) })
}
