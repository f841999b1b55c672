package beamio

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/godelta/delta"
)

// TestBenchOptimize times OPTIMIZE of a table of BEAMIO_BENCH_OPT_FILES
// small files (100 rows each) on Prism and in process, on twin tables, for
// bench/RESULTS.md; skipped without the variable. It times, it asserts
// only that both commit.
func TestBenchOptimize(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BEAMIO_BENCH_OPT_FILES"))
	if n <= 0 {
		t.Skip("BEAMIO_BENCH_OPT_FILES not set")
	}
	ctx := context.Background()
	dir := t.TempDir()
	beamT, procT := filepath.Join(dir, "beam"), filepath.Join(dir, "inproc")
	for _, d := range []string{beamT, procT} {
		newOptTable(t, d, false, int64(n), 100)
	}
	// Eight target-size outputs, so that the work spreads over tasks.
	opts := OptimizeOptions{ZOrderBy: zorderCols(), TargetSize: tableBytes(t, beamT) / 8}
	start := time.Now()
	res, err := optimizeOnPrism(t, beamT, opts)
	if err != nil || !res.Committed {
		t.Fatal(res, err)
	}
	beamTime := time.Since(start)
	lo, _ := opts.libOptions()
	tb, err := delta.Open(ctx, procT)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	start = time.Now()
	pres, err := tb.Optimize(ctx, lo)
	if err != nil || !pres.Committed {
		t.Fatal(err)
	}
	t.Logf("OPTIMIZE %s of %d files: Prism %v (%d tasks, %d files added), in-process %v (%d files added)",
		os.Getenv("BEAMIO_BENCH_OPT_MODE"), n, beamTime, res.Tasks, res.FilesAdded, time.Since(start), pres.Metrics.NumFilesAdded)
}

func zorderCols() []string {
	if os.Getenv("BEAMIO_BENCH_OPT_MODE") == "zorder" {
		return []string{"x", "y"}
	}
	return nil
}
