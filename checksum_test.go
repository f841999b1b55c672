package delta_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/internal/checksum"
	"github.com/godelta/delta/internal/checksum/crcwriter"
	"github.com/godelta/delta/schema"
)

// TestChecksumAfterEveryCommit: after each commit through the facade
// (create, append, DML with and without deletion vectors, OPTIMIZE,
// ALTER, a set transaction, clustering, a row-tracking backfill, RESTORE,
// overwrite), <v>.crc exists and equals the checksum computed from a
// replay of version v.
func TestChecksumAfterEveryCommit(t *testing.T) {
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, name STRING")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := delta.Create(ctx, filepath.Join(t.TempDir(), "t"), delta.TableSpec{
		Schema:     sch,
		Properties: map[string]string{"delta.enableDeletionVectors": "true", "delta.checkpointInterval": "3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	rows := func(from, n int64) [][]schema.Value {
		var out [][]schema.Value
		for i := from; i < from+n; i++ {
			out = append(out, []schema.Value{schema.LongValue(i), schema.StringValue(fmt.Sprint("n", i))})
		}
		return out
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"append", func() error { _, err := tbl.AppendRows(ctx, rows(0, 10), delta.WriteOptions{}); return err }},
		{"append again", func() error { _, err := tbl.AppendRows(ctx, rows(10, 10), delta.WriteOptions{}); return err }},
		{"delete with deletion vectors", func() error { _, err := tbl.Delete(ctx, "id % 3 = 0", delta.DMLOptions{}); return err }},
		{"update", func() error { _, err := tbl.UpdateRows(ctx, "name = 'x'", "id < 5", delta.DMLOptions{}); return err }},
		{"optimize", func() error { _, err := tbl.Optimize(ctx, delta.OptimizeOptions{}); return err }},
		{"set transaction", func() error {
			_, err := tbl.Update(ctx, delta.TxnOptions{}, func(tx *delta.Transaction) error {
				tx.SetTransaction("app", 5)
				return nil
			})
			return err
		}},
		{"alter: add column", func() error {
			_, err := tbl.AddColumn(ctx, nil, schema.StructField{Name: "extra", Type: schema.Integer, Nullable: true}, delta.AlterOptions{})
			return err
		}},
		{"deletion vectors off, copy-on-write delete", func() error {
			if _, err := tbl.SetProperties(ctx, map[string]string{"delta.enableDeletionVectors": "false"}, delta.AlterOptions{}); err != nil {
				return err
			}
			_, err := tbl.Delete(ctx, "id = 1", delta.DMLOptions{})
			return err
		}},
		{"cluster by: domain metadata", func() error { _, err := tbl.ClusterBy(ctx, []string{"id"}); return err }},
		{"row tracking: backfill", func() error { _, err := tbl.EnableFeature(ctx, "rowTracking", delta.AlterOptions{}); return err }},
		{"restore", func() error { _, err := tbl.RestoreVersion(ctx, 2, delta.TxnOptions{}); return err }},
		{"overwrite", func() error { _, err := tbl.OverwriteRows(ctx, rows(100, 3), delta.OverwriteOptions{}); return err }},
	}
	check := func(name string) {
		t.Helper()
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for v := int64(0); v <= snap.Version(); v++ {
			written, err := checksum.Read(ctx, tbl.Store(), v)
			if err != nil {
				t.Fatalf("after %s: version %d: %v", name, v, err)
			}
			at, err := tbl.SnapshotAt(ctx, v)
			if err != nil {
				t.Fatal(err)
			}
			replayed, err := crcwriter.Compute(ctx, at)
			if err != nil {
				t.Fatal(err)
			}
			if d := checksum.Compare(written, replayed); len(d) > 0 {
				t.Errorf("after %s: version %d: .crc differs from the replay: %v", name, v, d)
			}
		}
	}
	check("create")
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		check(s.name)
	}
}
