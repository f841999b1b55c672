package optimize_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/write"
)

func TestClusteredTable(t *testing.T) {
	for _, mode := range []string{"none", "name"} {
		t.Run(mode, func(t *testing.T) {
			props := map[string]string{}
			if mode != "none" {
				props["delta.columnMapping.mode"] = mode
			}
			tbl, err := delta.Create(ctx, filepath.Join(t.TempDir(), "t"), delta.TableSpec{Schema: eventSchema(), Properties: props, ClusterBy: []string{"x", "Y"}})
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Close()
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			p := snap.Protocol()
			if !slices.Contains(p.WriterFeatures, actions.FeatureClustering) || !slices.Contains(p.WriterFeatures, actions.FeatureDomainMetadata) {
				t.Fatalf("protocol %+v", p)
			}
			raw, ok, err := snap.DomainMetadata(ctx, actions.DomainClustering)
			if err != nil || !ok {
				t.Fatalf("domain: %v %v", ok, err)
			}
			cc, err := actions.ParseClustering(raw)
			if err != nil {
				t.Fatal(err)
			}
			sch := snap.Schema()
			mm := snap.Config().ColumnMappingMode()
			x, _ := sch.Field("x")
			y, _ := sch.Field("y")
			if want := [][]string{{x.PhysicalName(mm)}, {y.PhysicalName(mm)}}; !slices.EqualFunc(cc.Columns, want, slices.Equal) {
				t.Errorf("clustering columns %v, want physical %v", cc.Columns, want)
			}
			if mode == "name" && !strings.HasPrefix(cc.Columns[0][0], "col-") {
				t.Errorf("physical name %s", cc.Columns[0][0])
			}
			cols, clustered, err := optimize.ClusteringColumns(ctx, snap)
			if err != nil || !clustered || !slices.Equal(cols, []string{"x", "y"}) {
				t.Fatalf("ClusteringColumns = %v %v %v", cols, clustered, err)
			}

			var next int64
			want := appendFiles(t, tbl, []string{"p"}, 3, 100, &next)
			res, err := tbl.Optimize(ctx, optimize.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Metrics.NumFilesRemoved != 3 || res.Metrics.ClusteringStats == nil {
				t.Fatalf("metrics %+v", res.Metrics)
			}
			acts := commitActions(t, tbl, res.Commit.Version)
			if got := acts[0].CommitInfo.OperationParameters["clusterBy"]; got != `["x","y"]` {
				t.Errorf("clusterBy %v", got)
			}
			for _, a := range acts {
				if a.Add != nil && a.Add.ClusteringProvider != actions.ClusteringProviderLiquid {
					t.Errorf("add without clusteringProvider: %+v", a.Add)
				}
			}
			// Clustered files are not clustered again.
			if res, err := tbl.Optimize(ctx, optimize.Options{}); err != nil || res.Committed {
				t.Fatalf("second OPTIMIZE: %+v %v", res, err)
			}
			// Incremental: only the new file is clustered.
			want = append(want, appendFiles(t, tbl, []string{"p"}, 1, 100, &next)...)
			res, err = tbl.Optimize(ctx, optimize.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Metrics.NumFilesRemoved != 1 {
				t.Errorf("incremental clustering rewrote %d files, want 1", res.Metrics.NumFilesRemoved)
			}
			if got := tableRows(t, tbl); !slices.Equal(got, sortedCopy(want)) {
				t.Fatal("rows changed")
			}
			// Z-order does not apply to a clustered table.
			if _, err := tbl.Optimize(ctx, optimize.Options{ZOrderBy: []string{"x"}}); !errors.Is(err, optimize.ErrOptions) {
				t.Errorf("ZORDER BY on a clustered table: %v", err)
			}
		})
	}
}

func TestClusterByRefusals(t *testing.T) {
	tests := []struct {
		spec delta.TableSpec
		want error
	}{
		{delta.TableSpec{Schema: eventSchema(), PartitionColumns: []string{"p"}, ClusterBy: []string{"x"}}, write.ErrInvalidSpec},
		{delta.TableSpec{Schema: eventSchema(), ClusterBy: []string{"nope"}}, deltaerr.ErrInvalidArgument},
		{delta.TableSpec{Schema: eventSchema(), ClusterBy: []string{"y"}, Properties: map[string]string{"delta.dataSkippingNumIndexedCols": "1"}}, write.ErrNoStats},
	}
	for _, tt := range tests {
		dir := filepath.Join(t.TempDir(), "t")
		_, err := delta.Create(ctx, dir, tt.spec)
		if !errors.Is(err, tt.want) {
			t.Errorf("%v: got %v, want %v", tt.spec.ClusterBy, err, tt.want)
		}
		if _, statErr := os.Stat(filepath.Join(dir, "_delta_log", "00000000000000000000.json")); statErr == nil {
			t.Errorf("%v: a table was created", tt.spec.ClusterBy)
		}
	}
}

// copyCorpus copies a corpus table into a temp dir.
func copyCorpus(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "shared", "testdata", name)
	if _, err := os.Stat(src); err != nil {
		src = filepath.Join("/work/shared/testdata", name)
		if _, err := os.Stat(src); err != nil {
			t.Skipf("corpus table %s not found", name)
		}
	}
	dst := filepath.Join(t.TempDir(), "t")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestCorpusClusteredTables: Databricks-written clustered tables stay
// readable and writable (append, then OPTIMIZE), the clustering feature's
// and the liquid preview's.
func TestCorpusClusteredTables(t *testing.T) {
	dir := copyCorpus(t, "kernel-rs/crc-full")
	tbl, err := delta.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	rows := [][]schema.Value{}
	for i := range 5 {
		rows = append(rows, []schema.Value{schema.LongValue(int64(i))})
	}
	for range 2 {
		if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatalf("append to a clustered table: %v", err)
		}
	}
	res, err := tbl.Optimize(ctx, optimize.Options{})
	if err != nil {
		t.Fatalf("OPTIMIZE: %v", err)
	}
	// The log has the feature but no delta.clustering domain (the .crc
	// alone lists one): no clustering columns, so OPTIMIZE compacts.
	if !res.Committed || res.Metrics.NumFilesRemoved != 2 || res.Metrics.NumFilesAdded != 1 {
		t.Errorf("metrics %+v", res.Metrics)
	}
	if got := len(tableRows(t, tbl)); got != 10 {
		t.Errorf("%d rows, want 10", got)
	}

	// The Databricks preview ("liquid", domain delta.liquid, clustered by
	// id): readable, and appends and OPTIMIZE work; OPTIMIZE clusters the
	// files the preview left unclustered (no clusteringProvider).
	dir = copyCorpus(t, "delta-rs/table_with_liquid_clustering")
	lt, err := delta.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lt.Close()
	want := tableRows(t, lt)
	if len(want) != 10 {
		t.Fatalf("liquid preview table: %d rows, want 10", len(want))
	}
	snap, err := lt.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cols, ok, err := optimize.ClusteringColumns(ctx, snap); err != nil || !ok || !slices.Equal(cols, []string{"id"}) {
		t.Fatalf("ClusteringColumns = %v %v %v", cols, ok, err)
	}
	var more [][]schema.Value
	for i := range 5 {
		r := []schema.Value{schema.LongValue(int64(100 + i))}
		more = append(more, r)
		want = append(want, rowString(r))
	}
	slices.Sort(want)
	if _, err := lt.AppendRows(ctx, more, delta.WriteOptions{}); err != nil {
		t.Fatalf("append to the liquid preview table: %v", err)
	}
	res, err = lt.Optimize(ctx, optimize.Options{})
	if err != nil {
		t.Fatalf("OPTIMIZE of the liquid preview table: %v", err)
	}
	if res.Metrics.NumFilesRemoved != 11 || res.Metrics.NumFilesAdded != 1 || res.Metrics.ClusteringStats == nil {
		t.Errorf("metrics %+v", res.Metrics)
	}
	if got := tableRows(t, lt); !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	// Row tracking: the adds got fresh row ids above the high-water mark.
	for _, a := range commitActions(t, lt, res.Commit.Version) {
		if a.Add != nil && (a.Add.BaseRowID == nil || *a.Add.BaseRowID <= 9 || a.Add.ClusteringProvider != actions.ClusteringProviderLiquid) {
			t.Errorf("add %+v", a.Add)
		}
	}
	if _, err := lt.ClusterBy(ctx, []string{"id"}); !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
		t.Errorf("ALTER CLUSTER BY of the liquid preview: %v", err)
	}
}

// TestAlterClusterBy: an unclustered table becomes clustered; OPTIMIZE then
// clusters every file; CLUSTER BY NONE leaves a clustered table that
// OPTIMIZE only compacts.
func TestAlterClusterBy(t *testing.T) {
	tbl := newTable(t, nil, nil)
	var next int64
	want := sortedCopy(appendFiles(t, tbl, []string{"p"}, 3, 50, &next))
	if _, err := tbl.ClusterBy(ctx, []string{"id"}); err != nil {
		t.Fatal(err)
	}
	snap, _ := tbl.Snapshot(ctx)
	if p := snap.Protocol(); p.MinWriterVersion != 7 || !slices.Contains(p.WriterFeatures, "clustering") || !slices.Contains(p.WriterFeatures, "domainMetadata") || !slices.Contains(p.WriterFeatures, "invariants") {
		t.Fatalf("protocol %+v", p)
	}
	if cols, ok, err := optimize.ClusteringColumns(ctx, snap); err != nil || !ok || !slices.Equal(cols, []string{"id"}) {
		t.Fatalf("ClusteringColumns %v %v %v", cols, ok, err)
	}
	res, err := tbl.Optimize(ctx, optimize.Options{})
	if err != nil || res.Metrics.NumFilesRemoved != 3 {
		t.Fatalf("OPTIMIZE: %+v %v", res.Metrics, err)
	}
	if _, err := tbl.ClusterBy(ctx, nil); err != nil {
		t.Fatal(err)
	}
	snap, _ = tbl.Snapshot(ctx)
	if cols, ok, err := optimize.ClusteringColumns(ctx, snap); err != nil || !ok || len(cols) != 0 {
		t.Fatalf("after CLUSTER BY NONE: %v %v %v", cols, ok, err)
	}
	if got := tableRows(t, tbl); !slices.Equal(got, want) {
		t.Fatal("rows changed")
	}
	part := newTable(t, []string{"p"}, nil)
	if _, err := part.ClusterBy(ctx, []string{"id"}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("CLUSTER BY on a partitioned table: %v", err)
	}
}
