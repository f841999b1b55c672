package delta

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// logFiles lists the names under the table's _delta_log, so that a test
// can tell a refused write left the log as it was.
func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(filepath.Join(dir, "_delta_log"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// The version checksum written after each commit is not
		// counted: a commit adds one file here.
		if !d.IsDir() && !strings.HasSuffix(p, ".crc") {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// removeAll stages a data-changing remove of every live file of the
// transaction's snapshot.
func removeAll(t *testing.T, tx *Transaction, dataChange bool) {
	t.Helper()
	for a, err := range tx.Snapshot().Files(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		tx.Remove(actions.Remove{Path: a.Path, DataChange: dataChange, PartitionValues: a.PartitionValues, Size: &a.Size})
	}
}

// TestAppendOnlyRefusesRemoves: on a table whose delta.appendOnly is true
// (in any case, as Spark reads it), every path that removes data is
// refused with ErrAppendOnly and leaves the log as it was; with false they
// all commit. The one sentinel is the same value in delta, txn and write.
func TestAppendOnlyRefusesRemoves(t *testing.T) {
	ctx := context.Background()
	if ErrAppendOnly != txn.ErrAppendOnly || ErrAppendOnly != write.ErrAppendOnly || ErrAppendOnly != tableconfig.ErrAppendOnly {
		t.Fatal("ErrAppendOnly differs between delta, txn, write and tableconfig")
	}
	sch := &schema.StructType{Fields: []schema.StructField{nf("id", schema.Long)}}
	rows := [][]schema.Value{{schema.LongValue(1)}, {schema.LongValue(2)}}
	paths := []struct {
		name  string
		write func(tbl *Table) error
	}{
		{"Overwrite", func(tbl *Table) error {
			_, err := tbl.OverwriteRows(ctx, [][]schema.Value{{schema.LongValue(3)}}, OverwriteOptions{})
			return err
		}},
		{"Begin+Remove+Commit", func(tbl *Table) error {
			tx, err := tbl.Begin(ctx, TxnOptions{Operation: "DELETE"})
			if err != nil {
				return err
			}
			removeAll(t, tx, true)
			_, err = tx.Commit(ctx)
			return err
		}},
		{"Update with a Remove", func(tbl *Table) error {
			_, err := tbl.Update(ctx, TxnOptions{Operation: "DELETE"}, func(tx *Transaction) error {
				removeAll(t, tx, true)
				return nil
			})
			return err
		}},
	}
	for _, value := range []string{"TRUE", "true", "True", "false", "FALSE"} {
		appendOnly := value == "TRUE" || value == "true" || value == "True"
		for _, p := range paths {
			t.Run(value+"/"+p.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "t")
				tbl, err := Create(ctx, dir, TableSpec{Schema: sch, Properties: map[string]string{tableconfig.KeyAppendOnly: value}})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tbl.AppendRows(ctx, rows, WriteOptions{}); err != nil {
					t.Fatal(err)
				}
				before := logFiles(t, dir)
				err = p.write(tbl)
				if !appendOnly {
					if err != nil {
						t.Fatalf("delta.appendOnly=%s: %v", value, err)
					}
					if after := logFiles(t, dir); len(after) != len(before)+1 {
						t.Errorf("log %v after a commit; was %v", after, before)
					}
					return
				}
				if !errors.Is(err, ErrAppendOnly) || !errors.Is(err, ErrInvalidArgument) {
					t.Fatalf("delta.appendOnly=%s: err = %v; want ErrAppendOnly", value, err)
				}
				if after := logFiles(t, dir); !slices.Equal(after, before) {
					t.Errorf("log %v after a refused write; was %v", after, before)
				}
				if got := scanRows(t, tbl); len(got) != len(rows) {
					t.Errorf("rows %v after a refused write", got)
				}
			})
		}
	}

	// Removes without dataChange (a compaction's) stay allowed.
	t.Run("dataChange=false", func(t *testing.T) {
		tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch, Properties: map[string]string{tableconfig.KeyAppendOnly: "TRUE"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.AppendRows(ctx, rows, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		tx, err := tbl.Begin(ctx, TxnOptions{Operation: "OPTIMIZE"})
		if err != nil {
			t.Fatal(err)
		}
		removeAll(t, tx, false)
		if _, err := tx.Commit(ctx); err != nil {
			t.Errorf("remove with dataChange=false on an append-only table: %v", err)
		}
	})
}

// TestAppendOnlyByConcurrentCommit: a transaction that removes data,
// begun on a table that was not append-only, is refused with
// ErrAppendOnly at rebase when a concurrent commit turned delta.appendOnly
// on, and writes nothing; one that only adds commits past it.
func TestAppendOnlyByConcurrentCommit(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{nf("id", schema.Long)}}
	for _, removes := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "t")
		tbl, err := Create(ctx, dir, TableSpec{Schema: sch})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}}, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		late, err := tbl.Begin(ctx, TxnOptions{Operation: "DELETE"})
		if err != nil {
			t.Fatal(err)
		}
		if removes {
			removeAll(t, late, true)
		} else {
			// A blind append of a file already written elsewhere.
			late.Add(actions.Add{Path: "part-late.parquet", Size: 1, DataChange: true})
		}

		alter, err := tbl.Begin(ctx, TxnOptions{Operation: "SET TBLPROPERTIES"})
		if err != nil {
			t.Fatal(err)
		}
		m := alter.Snapshot().Metadata()
		m.Configuration = maps.Clone(m.Configuration)
		if m.Configuration == nil {
			m.Configuration = map[string]string{}
		}
		m.Configuration[tableconfig.KeyAppendOnly] = "TRUE"
		alter.SetMetadata(m)
		if _, err := alter.Commit(ctx); err != nil {
			t.Fatal(err)
		}

		before := logFiles(t, dir)
		_, err = late.Commit(ctx)
		if !removes {
			// A metadata change is a conflict for any transaction; what
			// matters is that it is not called append-only.
			if errors.Is(err, ErrAppendOnly) {
				t.Errorf("an add-only transaction got %v", err)
			}
			continue
		}
		if !errors.Is(err, ErrAppendOnly) {
			t.Fatalf("err = %v; want ErrAppendOnly", err)
		}
		if after := logFiles(t, dir); !slices.Equal(after, before) {
			t.Errorf("log %v after a refused commit; was %v", after, before)
		}
	}
}

// TestCreateRefusesBadProperties: Create checks the values of known table
// properties as Spark does when they are SET, with a *PropertyError that
// names the key and the value, and leaves no table behind.
func TestCreateRefusesBadProperties(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{nf("id", schema.Long)}}
	for _, tc := range []struct{ key, value string }{
		{tableconfig.KeyCheckpointInterval, "abc"},
		{tableconfig.KeyCheckpointInterval, "0"},
		{tableconfig.KeyAppendOnly, "maybe"},
		{tableconfig.KeyLogRetentionDuration, "interval 1 month"},
		{tableconfig.KeyColumnMappingMode, "path"},
		{tableconfig.KeyIsolationLevel, "ReadUncommitted"},
		{tableconfig.KeyDataSkippingNumIndexedCols, "-5"},
	} {
		dir := filepath.Join(t.TempDir(), "t")
		_, err := Create(ctx, dir, TableSpec{Schema: sch, Properties: map[string]string{tc.key: tc.value}})
		var pe *tableconfig.PropertyError
		if !errors.As(err, &pe) || pe.Key != tc.key || pe.Value != tc.value {
			t.Errorf("Create with %s=%q: err = %v; want a *PropertyError naming them", tc.key, tc.value, err)
		}
		if !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, write.ErrInvalidSpec) {
			t.Errorf("Create with %s=%q: err = %v; want ErrInvalidArgument and ErrInvalidSpec", tc.key, tc.value, err)
		}
		if _, err := Open(ctx, dir); !errors.Is(err, ErrTableNotFound) {
			t.Errorf("Create with %s=%q left a table: %v", tc.key, tc.value, err)
		}
	}
	// Spark's forms are accepted, in any case.
	tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch, Properties: map[string]string{
		tableconfig.KeyAppendOnly:                   "FALSE",
		tableconfig.KeyCheckpointInterval:           "5",
		tableconfig.KeyLogRetentionDuration:         "interval 2 weeks",
		tableconfig.KeyDeletedFileRetentionDuration: "168 hours",
		tableconfig.KeyIsolationLevel:               "Serializable",
	}})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := snap.Config()
	if cfg.AppendOnly() || cfg.CheckpointInterval() != 5 || cfg.LogRetention() != 14*24*time.Hour ||
		cfg.DeletedFileRetention() != 7*24*time.Hour || cfg.IsolationLevel() != tableconfig.Serializable {
		t.Errorf("config after Create: appendOnly %v, interval %d, log %v, files %v, isolation %s",
			cfg.AppendOnly(), cfg.CheckpointInterval(), cfg.LogRetention(), cfg.DeletedFileRetention(), cfg.IsolationLevel())
	}
}

// TestLoadRefusesBadPropertyOnDisk: a table another engine wrote with a
// property value Spark refuses does not load, with the *PropertyError.
func TestLoadRefusesBadPropertyOnDisk(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	tbl, err := Create(ctx, dir, TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{nf("id", schema.Long)}}})
	if err != nil {
		t.Fatal(err)
	}
	// Write version 1 by hand, as a careless engine might.
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := snap.Metadata()
	m.Configuration = map[string]string{tableconfig.KeyCheckpointInterval: "ten"}
	data, err := actions.EncodeCommit([]actions.Action{{Metadata: &m}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000001.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = tbl.Snapshot(ctx)
	var pe *tableconfig.PropertyError
	if !errors.As(err, &pe) || pe.Key != tableconfig.KeyCheckpointInterval || !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("loading a table with %s=ten: err = %v; want a *PropertyError", tableconfig.KeyCheckpointInterval, err)
	}
	// The version before it still loads.
	if _, err := tbl.SnapshotAt(ctx, 0); err != nil {
		t.Errorf("version 0: %v", err)
	}
}

// TestCommitRefusesBadStagedProperty: metadata staged with a property
// value Spark refuses (what an ALTER TABLE ... SET TBLPROPERTIES would
// write) is refused by Commit with the *PropertyError, and nothing is
// written.
func TestCommitRefusesBadStagedProperty(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	tbl, err := Create(ctx, dir, TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{nf("id", schema.Long)}}})
	if err != nil {
		t.Fatal(err)
	}
	before := logFiles(t, dir)
	tx, err := tbl.Begin(ctx, TxnOptions{Operation: "SET TBLPROPERTIES"})
	if err != nil {
		t.Fatal(err)
	}
	m := tx.Snapshot().Metadata()
	m.Configuration = map[string]string{tableconfig.KeyLogRetentionDuration: "interval 3 months"}
	tx.SetMetadata(m)
	_, err = tx.Commit(ctx)
	var pe *tableconfig.PropertyError
	if !errors.As(err, &pe) || pe.Key != tableconfig.KeyLogRetentionDuration {
		t.Errorf("err = %v; want a *PropertyError for %s", err, tableconfig.KeyLogRetentionDuration)
	}
	if after := logFiles(t, dir); !slices.Equal(after, before) {
		t.Errorf("log %v after a refused commit; was %v", after, before)
	}
}
