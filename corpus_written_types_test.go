package delta_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil"
)

// corpusTableCopy copies corpus table name to a temporary directory and
// opens it.
func corpusTableCopy(t *testing.T, name string) (*delta.Table, string) {
	t.Helper()
	dir := t.TempDir()
	if err := testutil.CopyTree(filepath.Join(testutil.CorpusDir(t), name), dir); err != nil {
		t.Fatal(err)
	}
	tbl, err := delta.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl, dir
}

// allRows scans every row of snap as values, in id order (column 0).
func allRows(t *testing.T, tbl *delta.Table, snap *delta.Snapshot) [][]schema.Value {
	t.Helper()
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]schema.Value
	for r, err := range s.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, slices.Clone(r.Values()))
	}
	return rows
}

// The Spark-written variantShredding-preview table, written by this
// library: its own rows appended again (variants at the top level and in
// arrays, structs and maps) read back equal, twice over, and the protocol
// keeps the features Spark set (a writer may write unshredded variants to
// a table with variant shredding: PROTOCOL.md "Variant Shredding").
func TestCorpusShreddedVariantWritten(t *testing.T) {
	ctx := context.Background()
	tbl, _ := corpusTableCopy(t, "delta-rs/spark-shredded-variant-preview-delta")
	before, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows := allRows(t, tbl, before)
	if len(rows) == 0 {
		t.Fatal("the corpus table has no rows")
	}
	if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	after, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := allRows(t, tbl, after)
	if len(got) != 2*len(rows) {
		t.Fatalf("%d rows after appending %d to %d", len(got), len(rows), len(rows))
	}
	key := func(r []schema.Value) string {
		var b strings.Builder
		for _, v := range r {
			b.WriteString(v.String())
			b.WriteByte('|')
		}
		return b.String()
	}
	count := map[string]int{}
	for _, r := range rows {
		count[key(r)] += 2
	}
	for _, r := range got {
		count[key(r)]--
	}
	for k, n := range count {
		if n != 0 {
			t.Fatalf("row %s: %d copies missing after the append", k, n)
		}
	}
	p := after.Protocol()
	for _, f := range []string{actions.FeatureVariantShreddingPreview, actions.FeatureVariantType} {
		if !slices.Contains(p.ReaderFeatures, f) || !slices.Contains(p.WriterFeatures, f) {
			t.Errorf("protocol after the append %+v lacks %s", p, f)
		}
	}
}

// The kernel-rs geospatial table: this library reads its geometry and
// geography columns but does not write them, and says so before it
// writes anything.
func TestCorpusGeospatialWriteRefused(t *testing.T) {
	ctx := context.Background()
	tbl, _ := corpusTableCopy(t, "kernel-rs/table-with-geo")
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]schema.Value, len(snap.Schema().Fields))
	for i := range row {
		row[i] = schema.Value{} // null
	}
	_, err = tbl.AppendRows(ctx, [][]schema.Value{row}, delta.WriteOptions{})
	if !errors.Is(err, deltaerr.ErrUnsupportedFeature) || !strings.Contains(err.Error(), "geo") {
		t.Fatalf("append to a geospatial table: %v, want ErrUnsupportedFeature", err)
	}
	after, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Version() != snap.Version() {
		t.Fatalf("version %d after a refused append, want %d", after.Version(), snap.Version())
	}
}
