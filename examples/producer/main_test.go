package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/examples/internal/exampletest"
)

// countBatches returns how many rows of each batch the table holds.
func countBatches(t *testing.T, uri string) map[int64]int {
	t.Helper()
	ctx := context.Background()
	tbl, err := delta.Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Scan(snap, delta.ScanOptions{Columns: []string{"batch"}})
	if err != nil {
		t.Fatal(err)
	}
	n := map[int64]int{}
	for r, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n[r.Values()[0].Int64()]++
	}
	return n
}

func testProducer(t *testing.T, uri string) {
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"-table", uri, "-batches", "3", "-rows", "4", "-compact-every", "0"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "batch 2 committed at version 3") {
		t.Fatalf("first run:\n%s", out.String())
	}
	out.Reset()
	// Run again with more batches: it resumes after batch 2.
	if err := run(ctx, []string{"-table", uri, "-batches", "5", "-rows", "4", "-compact-every", "0"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "resuming after batch 2\nbatch 3 committed") {
		t.Fatalf("second run:\n%s", out.String())
	}
	got := countBatches(t, uri)
	for b := int64(0); b < 5; b++ {
		if got[b] != 4 {
			t.Fatalf("batches in the table: %v, want 4 rows of each of 0..4", got)
		}
	}
}

func TestProducerLocal(t *testing.T) {
	testProducer(t, filepath.Join(t.TempDir(), "queue"))
}

func TestProducerS3(t *testing.T) {
	testProducer(t, exampletest.S3Table(t))
}

func TestProducerRefusesRemoteS3(t *testing.T) {
	err := run(context.Background(), []string{"-table", "s3://bucket/t?endpoint=https://s3.amazonaws.com"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("a non-loopback endpoint: %v", err)
	}
}
