package delta_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	stdmaps "maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
	"github.com/godelta/delta/testutil"
)

// treeHash returns the SHA-256 of every file under dir, by relative path.
func treeHash(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sortedRows reads every row of the latest version (or of v >= 0).
func sortedRows(t *testing.T, tbl *delta.Table, v int64) []string {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
	if v >= 0 {
		snap, err = tbl.SnapshotAt(ctx, v)
	}
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for row, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(row.Values()))
	}
	slices.Sort(out)
	return out
}

func TestCloneSparkDVTable(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	if err := testutil.CopyTree(filepath.Join(testutil.CorpusDir(t), "kernel-rs", "cdf-table-with-dv"), src); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, src)
	source, err := delta.Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	defer source.Close()
	// Clone version 3, whose file has a deletion vector.
	snap3, err := source.SnapshotAt(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := sortedRows(t, source, 3)
	dst := filepath.Join(t.TempDir(), "clone dir")
	clone, res, err := source.CloneTo(ctx, snap3, dst, delta.TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer clone.Close()
	if res.SourceVersion != 3 || res.SourceNumOfFiles != 1 || res.NumCopiedFiles != 0 {
		t.Fatalf("result %+v", res)
	}
	if got := sortedRows(t, clone, -1); !slices.Equal(got, want) {
		t.Fatalf("clone reads %v, want %v", got, want)
	}
	// The change data feed of the clone's version 0 inserts those rows,
	// read from the source's file through its deletion vector.
	ch, err := clone.Changes(ctx, delta.ChangeOptions{Columns: []string{"value"}})
	if err != nil {
		t.Fatal(err)
	}
	var inserted []string
	for row, err := range ch.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if row.Values()[1].String() != "insert" {
			t.Fatalf("change %v", row.Values())
		}
		inserted = append(inserted, fmt.Sprint(row.Values()[:1]))
	}
	slices.Sort(inserted)
	if !slices.Equal(inserted, want) {
		t.Fatalf("clone CDF inserts %v, want %v", inserted, want)
	}
	// Reopened, the clone still reads (the source root comes from its log).
	re, err := delta.Open(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if got := sortedRows(t, re, -1); !slices.Equal(got, want) {
		t.Fatalf("reopened clone reads %v, want %v", got, want)
	}
	hist, err := re.History(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	ci := hist[0].Info
	if ci.Operation != "CLONE" || ci.OperationParameters["sourceVersion"] != float64(3) || ci.OperationParameters["isShallow"] != nil {
		t.Fatalf("commitInfo %+v", ci)
	}
	for _, k := range []string{"sourceTableSize", "sourceNumOfFiles", "numRemovedFiles", "numCopiedFiles", "removedFilesSize", "copiedFilesSize"} {
		if _, ok := ci.OperationMetrics[k]; !ok {
			t.Errorf("metric %s missing", k)
		}
	}
	cs, _ := re.Snapshot(ctx)
	if cs.Metadata().ID == snap3.Metadata().ID {
		t.Error("the clone kept the source's table id")
	}
	props := stdmaps.Clone(cs.Metadata().Configuration)
	if roots := props[location.CloneSourceRootsKey]; roots != `["`+snap3.Location().URI()+`"]` {
		t.Errorf("the clone declares the source roots %s, want the source's root %s", roots, snap3.Location().URI())
	}
	delete(props, location.CloneSourceRootsKey)
	if !maps(props, snap3.Metadata().Configuration) {
		t.Errorf("properties %v, want %v", props, snap3.Metadata().Configuration)
	}
	if !slices.Equal(treeHashKeys(treeHash(t, src)), treeHashKeys(before)) || !equalHashes(treeHash(t, src), before) {
		t.Fatal("the source changed")
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func treeHashKeys(m map[string][32]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func equalHashes(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestCloneAppendAndVacuum(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	source, err := delta.Create(ctx, src, delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long, Nullable: true},
			{Name: "p", Type: schema.String, Nullable: true},
		}},
		PartitionColumns: []string{"p"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer source.Close()
	row := func(id int64, p string) []schema.Value {
		return []schema.Value{schema.LongValue(id), schema.StringValue(p)}
	}
	if _, err := source.AppendRows(ctx, [][]schema.Value{row(1, "a"), row(2, "b")}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, _ := source.Snapshot(ctx)
	before := treeHash(t, src)

	dst := t.TempDir()
	clone, _, err := source.CloneTo(ctx, snap, dst, delta.TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer clone.Close()
	if _, _, err := source.CloneTo(ctx, snap, dst, delta.TxnOptions{}); !errors.Is(err, delta.ErrTableExists) {
		t.Fatalf("a second clone to the same place: %v, want ErrTableExists", err)
	}
	// The clone is writable: an append, then an overwrite that removes the
	// source's files from the clone.
	if _, err := clone.AppendRows(ctx, [][]schema.Value{row(3, "a")}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := sortedRows(t, clone, -1), []string{"[1 a]", "[2 b]", "[3 a]"}; !slices.Equal(got, want) {
		t.Fatalf("clone after append: %v, want %v", got, want)
	}
	// An overwrite with a condition on a data column reads the source's
	// files through the clone, and rewrites the rows it keeps.
	where, err := delta.ParsePredicate("id = 2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clone.OverwriteRows(ctx, [][]schema.Value{row(2, "b")}, delta.OverwriteOptions{ReplaceWhere: where}); err != nil {
		t.Fatal(err)
	}
	if got, want := sortedRows(t, clone, -1), []string{"[1 a]", "[2 b]", "[3 a]"}; !slices.Equal(got, want) {
		t.Fatalf("clone after a conditional overwrite: %v, want %v", got, want)
	}
	if _, err := clone.OverwriteRows(ctx, [][]schema.Value{row(9, "z")}, delta.OverwriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// VACUUM of the clone with nothing retained: its own removed files
	// (of the append and of the conditional overwrite) go, the source's
	// files stay. Lite mode, run first (a full run records that it has
	// handled the clone's commits), finds the same files: the clone's own
	// tombstones, never a source file, though the overwrite tombstoned the
	// source's files in the clone's log.
	now := time.Now().Add(time.Hour)
	lite, err := clone.Vacuum(ctx, delta.VacuumOptions{RetentionSet: true, Force: true, Lite: true, DryRun: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := clone.Vacuum(ctx, delta.VacuumOptions{RetentionSet: true, Force: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 2 {
		t.Fatalf("clone vacuum deleted %d files (%v), want 2", res.Deleted, res.Files)
	}
	if !slices.Equal(lite.Files, res.Files) {
		t.Fatalf("lite clone vacuum would delete %v, want %v", lite.Files, res.Files)
	}
	if !equalHashes(treeHash(t, src), before) {
		t.Fatal("the source changed")
	}
	if got := sortedRows(t, source, -1); !slices.Equal(got, []string{"[1 a]", "[2 b]"}) {
		t.Fatalf("source reads %v", got)
	}
}

// A shallow clone takes DML and OPTIMIZE: they read the source's files
// through the clone and never change the source.
func TestCloneDMLAndOptimize(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "p", Type: schema.String, Nullable: true},
	}}
	source, err := delta.Create(ctx, src, delta.TableSpec{Schema: sch, PartitionColumns: []string{"p"}})
	if err != nil {
		t.Fatal(err)
	}
	defer source.Close()
	row := func(id int64, p string) []schema.Value {
		return []schema.Value{schema.LongValue(id), schema.StringValue(p)}
	}
	for _, rows := range [][][]schema.Value{{row(1, "a"), row(2, "a")}, {row(3, "a"), row(4, "b")}} {
		if _, err := source.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	snap, _ := source.Snapshot(ctx)
	before := treeHash(t, src)
	clone, _, err := source.CloneTo(ctx, snap, t.TempDir(), delta.TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer clone.Close()

	if _, err := clone.Delete(ctx, "id = 2", delta.DMLOptions{}); err != nil {
		t.Fatalf("DELETE on a clone: %v", err)
	}
	if _, err := clone.UpdateRows(ctx, "id = id * 10", "id = 4", delta.DMLOptions{}); err != nil {
		t.Fatalf("UPDATE on a clone: %v", err)
	}
	src2 := delta.MergeRows(sch, [][]schema.Value{row(3, "a"), row(5, "b")})
	if _, err := clone.Merge(src2, "t.id = s.id").WhenMatchedUpdateAll("").WhenNotMatchedInsertAll("").Execute(ctx); err != nil {
		t.Fatalf("MERGE on a clone: %v", err)
	}
	if _, err := clone.Optimize(ctx, delta.OptimizeOptions{}); err != nil {
		t.Fatalf("OPTIMIZE on a clone: %v", err)
	}
	want := []string{"[1 a]", "[3 a]", "[40 b]", "[5 b]"}
	if got := sortedRows(t, clone, -1); !slices.Equal(got, want) {
		t.Fatalf("clone after DML and OPTIMIZE: %v, want %v", got, want)
	}
	if got, want := sortedRows(t, source, -1), []string{"[1 a]", "[2 a]", "[3 a]", "[4 b]"}; !slices.Equal(got, want) {
		t.Fatalf("source: %v, want %v", got, want)
	}
	if !equalHashes(treeHash(t, src), before) {
		t.Fatal("the source changed")
	}
}

// A stream over a shallow clone reads the source's files (the clone's
// first snapshot) and the clone's own appends, in both its modes.
func TestCloneStream(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}}
	source, err := delta.Create(ctx, t.TempDir(), delta.TableSpec{Schema: sch,
		Properties: map[string]string{"delta.enableChangeDataFeed": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer source.Close()
	if _, err := source.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}, {schema.LongValue(2)}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, _ := source.Snapshot(ctx)
	clone, _, err := source.CloneTo(ctx, snap, t.TempDir(), delta.TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer clone.Close()
	if _, err := clone.AppendRows(ctx, [][]schema.Value{{schema.LongValue(3)}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, cdf := range []bool{false, true} {
		t.Run(fmt.Sprint("cdf=", cdf), func(t *testing.T) {
			opts := delta.StreamOptions{ReadChangeFeed: cdf}
			if cdf {
				opts.Start = stream.FromVersion(0)
			}
			src, err := clone.Stream(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			var ids []int64
			for {
				b, ok, err := src.TryNext(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				for r, err := range b.Rows(ctx) {
					if err != nil {
						t.Fatalf("reading the clone's stream: %v", err)
					}
					ids = append(ids, r.Values()[0].Int64())
				}
			}
			slices.Sort(ids)
			if want := []int64{1, 2, 3}; !slices.Equal(ids, want) {
				t.Errorf("stream of the clone read ids %v, want %v", ids, want)
			}
		})
	}
}
