package report_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/report"
)

// writeLog writes commit files into dir's _delta_log, one per element,
// each the given JSON lines, dated times[v] (the commit time readers use
// without in-commit timestamps).
func writeLog(t *testing.T, dir string, times []int64, commits ...[]string) {
	t.Helper()
	log := filepath.Join(dir, "_delta_log")
	if err := os.MkdirAll(log, 0o755); err != nil {
		t.Fatal(err)
	}
	for v, lines := range commits {
		name := filepath.Join(log, fmt.Sprintf("%020d.json", v))
		if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := time.UnixMilli(times[v])
		if err := os.Chtimes(name, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	day  = int64(24 * time.Hour / time.Millisecond)
	t0   = int64(1_767_225_600_000) // 2026-01-01T00:00:00Z
	mib  = int64(1 << 20)
	meta = `{"metaData":{"id":"r","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"s\",\"type\":{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]},\"nullable\":true,\"metadata\":{}},{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["p"],"configuration":{},"createdTime":1767225600000}}`
)

func add(path, p string, size int64, stats, dv string) string {
	s := fmt.Sprintf(`{"add":{"path":%q,"partitionValues":{"p":%q},"size":%d,"modificationTime":%d,"dataChange":true`, path, p, size, t0)
	if stats != "" {
		s += fmt.Sprintf(`,"stats":%q`, stats)
	}
	if dv != "" {
		s += `,"deletionVector":` + dv
	}
	return s + "}}"
}

func info(op string, ts int64) string {
	return fmt.Sprintf(`{"commitInfo":{"timestamp":%d,"operation":%q}}`, ts, op)
}

// TestBuild checks every figure against a log written here with known
// sizes, stats, deletion vectors, tombstones and commits.
func TestBuild(t *testing.T) {
	dir := t.TempDir()
	full := `{"numRecords":100,"minValues":{"id":1,"s":{"a":"x"}},"maxValues":{"id":9,"s":{"a":"y"}},"nullCount":{"id":0,"s":{"a":0}}}`
	idOnly := `{"numRecords":50,"minValues":{"id":1},"maxValues":{"id":2},"nullCount":{"id":0}}`
	dv := `{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":20}`
	now := t0 + 30*day
	writeLog(t, dir, []int64{t0, t0 + day, t0 + day + 1000, t0 + 3*day},
		[]string{info("CREATE TABLE", t0), `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}`, meta},
		[]string{info("WRITE", t0+day),
			add("p=a/1.parquet", "a", 1*mib/2, full, ""),   // < 1 MiB
			add("p=a/2.parquet", "a", 2*mib, full, dv),     // < 8 MiB, DV of 20 rows
			add("p=a/3.parquet", "a", 40*mib, idOnly, ""),  // < 64 MiB
			add("p=b/4.parquet", "b", 200*mib, "", ""),     // < 256 MiB, no stats
			add("p=b/5.parquet", "b", 10*mib, full, ""),    // < 32 MiB
			add("p=a/gone.parquet", "a", 3*mib, full, "")}, // removed below
		[]string{info("DELETE", t0+day+1000),
			fmt.Sprintf(`{"remove":{"path":"p=a/gone.parquet","deletionTimestamp":%d,"dataChange":true,"size":%d}}`, t0+day, 3*mib)},
		[]string{info("WRITE", t0+3*day),
			fmt.Sprintf(`{"remove":{"path":"p=a/old.parquet","deletionTimestamp":%d,"dataChange":true,"size":%d}}`, now-day, 5*mib),
			fmt.Sprintf(`{"remove":{"path":"p=a/nosize.parquet","deletionTimestamp":%d,"dataChange":true}}`, now-day)},
	)
	ctx := context.Background()
	tb, err := delta.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Build(ctx, snap, report.Options{Name: "t", Now: time.UnixMilli(now)})
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("version", r.Version, 3)
	check("files", r.Files, 5)
	check("bytes", r.Bytes, mib/2+2*mib+40*mib+200*mib+10*mib)
	check("rows", r.Rows, 100+100+50+100)
	check("rows known files", r.RowsKnownFiles, 4)
	check("target", r.TargetFileSize, 128*mib)
	check("small files", r.SmallFiles, 3) // below 32 MiB: 0.5, 2, 10
	check("small bytes", r.SmallBytes, mib/2+2*mib+10*mib)
	hist := map[string]int64{}
	for _, b := range r.Sizes {
		hist[b.Label] = b.Files
	}
	check("histogram", hist, map[string]int64{"< 1 MiB": 1, "< 8 MiB": 1, "< 32 MiB": 1, "< 64 MiB": 1, "< 128 MiB": 0,
		"< 256 MiB": 1, "< 512 MiB": 0, "< 1 GiB": 0, "≥ 1 GiB": 0})
	check("partitions", len(r.Partitions), 2)
	check("largest partition", r.Partitions[0].Values, "p=b")
	check("p=b", []int64{r.Partitions[0].Files, r.Partitions[0].Bytes}, []int64{2, 210 * mib})
	check("p=a", []int64{r.Partitions[1].Files, r.Partitions[1].Bytes}, []int64{3, mib/2 + 42*mib})
	check("skew", fmt.Sprintf("%.3f", r.Skew()), fmt.Sprintf("%.3f", float64(210*mib)/float64(210*mib)))
	check("dv files", r.DVFiles, 1)
	check("deleted rows", r.DeletedRows, 20)
	check("rows in dv files", r.RowsInDVFiles, 100)
	check("stats files", r.StatsFiles, 4)
	cols := map[string][2]int64{}
	for _, c := range r.Columns {
		cols[c.Name] = [2]int64{c.MinMax, c.NullCount}
	}
	check("columns", cols, map[string][2]int64{"id": {4, 4}, "s.a": {3, 3}})
	check("commits", len(r.Commits), 4)
	check("operations", r.Operations, map[string]int{"CREATE TABLE": 1, "WRITE": 2, "DELETE": 1})
	check("days", len(r.CommitsByDay()), 3)
	check("checkpoint", r.CheckpointVersion, -1)
	check("log tail", r.LogTail, 4)
	// OPTIMIZE: p=a has 3 files below 128 MiB (42.5 MiB, one file after);
	// p=b has one (10 MiB) and is left alone.
	check("optimize", r.Optimize, report.Optimize{Partitions: 1, Files: 3, Bytes: mib/2 + 42*mib, FilesAfter: 1, FilesRemovedTotal: 2})
	check("vacuum", r.Vacuum, report.Vacuum{Retention: 7 * 24 * time.Hour, Tombstones: 3, Bytes: 8 * mib, UnknownSize: 1, Expired: 1, ExpiredBytes: 3 * mib})

	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"live files", "small files (< 32 MiB)  3 (60.0% of files", "p=b", "deleted rows     20 (20.0%",
		"s.a", "DELETE", "OPTIMIZE  3 files (42.5 MiB) in 1 partitions would become about 1", "estimates from the log"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}

	// After a checkpoint, the tail is what follows it.
	if _, err := tb.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err = tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err = report.Build(ctx, snap, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	check("checkpoint after", r.CheckpointVersion, 3)
	check("tail after", r.LogTail, 0)
	if r.CheckpointTime.IsZero() {
		t.Error("checkpoint time unknown")
	}
}
