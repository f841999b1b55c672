package iceberg_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// partitionedTable creates a table partitioned by day, with column
// mapping but without Iceberg (its files do not hold day), and appends
// rows in three partitions, in two commits: six files.
func partitionedTable(t *testing.T, ctx context.Context, props map[string]string) (*delta.Table, string) {
	t.Helper()
	dir := t.TempDir()
	spec := uniformSpec()
	spec.Properties = props
	tbl, err := delta.Create(ctx, "file://"+dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	for i := range 2 {
		if _, err := tbl.AppendRows(ctx, smallRows(i*10, 10), delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return tbl, dir
}

// fileColumns returns, for each data file of snap, the field ids of the
// top-level columns of its Parquet schema.
func fileColumns(t *testing.T, ctx context.Context, dir string, snap *snapshot.Snapshot) map[string][]int {
	t.Helper()
	out := map[string][]int{}
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(a.Path)))
		if err != nil {
			t.Fatal(err)
		}
		info, _ := f.Stat()
		pf, err := parquet.OpenFile(f, info.Size())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range pf.Schema().Fields() {
			out[a.Path] = append(out[a.Path], c.ID())
		}
		f.Close()
	}
	return out
}

func tableRows(t *testing.T, ctx context.Context, tbl *delta.Table) []string {
	t.Helper()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r, err := range s.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, v := range r.Values() {
			parts = append(parts, v.String())
		}
		out = append(out, strings.Join(parts, " "))
	}
	slices.Sort(out)
	return out
}

// TestEnablePartitionedNeedsRewrite: the files of a partitioned table
// written before Iceberg was on do not hold the partition column, which
// Iceberg readers read from the data files (as null there). Enabling
// refuses them, naming the option and committing nothing; enabling with
// Rewrite rewrites them in the enabling commit, and every file then
// holds the column, under its field id, with the same rows.
func TestEnablePartitionedNeedsRewrite(t *testing.T) {
	ctx := context.Background()
	tbl, dir := partitionedTable(t, ctx, map[string]string{tableconfig.KeyColumnMappingMode: "name"})
	before, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows := tableRows(t, ctx, tbl)

	_, err = tbl.EnableIceberg(ctx, delta.TxnOptions{})
	var nre *iceberg.NeedsRewriteError
	if !errors.Is(err, iceberg.ErrNeedsRewrite) || !errors.As(err, &nre) || !strings.Contains(err.Error(), "partition column day") ||
		!strings.Contains(err.Error(), "Rewrite") {
		t.Fatalf("enabling on files without the partition column: %v", err)
	}
	if snap, err := tbl.Snapshot(ctx); err != nil || snap.Version() != before.Version() {
		t.Fatalf("a refused enabling committed: version %d, %v", snap.Version(), err)
	}
	if st, err := tbl.IcebergStatus(ctx); err != nil || st.MetadataVersion != 0 {
		t.Fatalf("a refused enabling wrote Iceberg metadata: %+v, %v", st, err)
	}

	res, err := tbl.EnableIcebergWith(ctx, delta.IcebergEnableOptions{Rewrite: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != before.Version()+1 || snap.Version() != res.Version || !snap.Config().UniversalFormatIceberg() {
		t.Fatalf("after enabling: version %d (was %d), iceberg %v", snap.Version(), before.Version(), snap.Config().UniversalFormatIceberg())
	}
	ci, _ := snap.CommitInfo()
	if ci.Operation != "REORG TABLE UPGRADE UNIFORM" {
		t.Errorf("operation %q", ci.Operation)
	}
	day, _ := snap.Schema().Field("day")
	dayID, _ := day.ColumnMappingID()
	cols := fileColumns(t, ctx, dir, snap)
	if len(cols) == 0 {
		t.Fatal("no files")
	}
	for path, ids := range cols {
		if !slices.Contains(ids, int(dayID)) {
			t.Errorf("file %s has columns %v, not day (id %d)", path, ids, dayID)
		}
	}
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if a.Tags[iceberg.TagIcebergCompatVersion] != "2" {
			t.Errorf("file %s tags %v", a.Path, a.Tags)
		}
	}
	// The commit rewrote files without changing data.
	acts := commitActions(t, dir, snap.Version())
	var adds, removes int
	for _, a := range acts {
		switch {
		case a.Add != nil && !a.Add.DataChange:
			adds++
		case a.Remove != nil && !a.Remove.DataChange:
			removes++
		case a.Add != nil || a.Remove != nil:
			t.Errorf("an action with dataChange: %+v", a)
		}
	}
	if removes != 6 || adds == 0 {
		t.Errorf("%d removes, %d adds", removes, adds)
	}
	if got := tableRows(t, ctx, tbl); !slices.Equal(got, rows) {
		t.Fatalf("rows after the rewrite:\n%q\nbefore:\n%q", got, rows)
	}
	st, err := tbl.IcebergStatus(ctx)
	if err != nil || st.ConvertedVersion != res.Version || st.Records != 20 {
		t.Fatalf("status %+v, %v", st, err)
	}
}

// TestEnableRewriteWithoutColumnMapping: Rewrite also rewrites files
// written without column mapping (no field ids), which plain enabling
// refuses.
func TestEnableRewriteWithoutColumnMapping(t *testing.T) {
	ctx := context.Background()
	tbl, dir := partitionedTable(t, ctx, nil)
	rows := tableRows(t, ctx, tbl)
	if _, err := tbl.EnableIceberg(ctx, delta.TxnOptions{}); !errors.Is(err, iceberg.ErrNeedsRewrite) || !strings.Contains(err.Error(), "column mapping") {
		t.Fatalf("enabling on files without field ids: %v", err)
	}
	if _, err := tbl.EnableIcebergWith(ctx, delta.IcebergEnableOptions{Rewrite: true}); err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for _, f := range snap.Schema().Fields {
		id, _ := f.ColumnMappingID()
		want = append(want, int(id))
	}
	slices.Sort(want)
	for path, ids := range fileColumns(t, ctx, dir, snap) {
		slices.Sort(ids)
		if !slices.Equal(ids, want) {
			t.Errorf("file %s has field ids %v, want %v", path, ids, want)
		}
	}
	if got := tableRows(t, ctx, tbl); !slices.Equal(got, rows) {
		t.Fatalf("rows after the rewrite:\n%q\nbefore:\n%q", got, rows)
	}
}

// TestEnableKeepsMaterializedFiles: files that already hold their
// partition columns (written under icebergCompatV2) are not rewritten:
// the footers are read, not guessed.
func TestEnableKeepsMaterializedFiles(t *testing.T) {
	ctx := context.Background()
	tbl, dir := partitionedTable(t, ctx, map[string]string{tableconfig.KeyColumnMappingMode: "name", tableconfig.KeyEnableIcebergCompatV2: "true"})
	before, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before.Config().UniversalFormatIceberg() || !before.Config().IcebergCompatV2() {
		t.Fatal("want icebergCompatV2 without UniForm")
	}
	res, err := tbl.EnableIcebergWith(ctx, delta.IcebergEnableOptions{Rewrite: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ci, _ := snap.CommitInfo()
	for _, a := range commitActions(t, dir, snap.Version()) {
		if a.Add != nil || a.Remove != nil {
			t.Fatalf("files rewritten: %+v", a)
		}
	}
	if res.Version != before.Version()+1 || ci.Operation != "SET TBLPROPERTIES" {
		t.Fatalf("version %d, operation %q", res.Version, ci.Operation)
	}
}

// commitActions reads the actions of a commit of the table in dir.
func commitActions(t *testing.T, dir string, version int64) []actions.Action {
	t.Helper()
	key := deltalog.CommitKey(version)
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(key)))
	if err != nil {
		t.Fatal(err)
	}
	acts, err := actions.DecodeCommit(key, data)
	if err != nil {
		t.Fatal(err)
	}
	return acts
}
