package convert_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/convert"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil"
)

var ctx = context.Background()

type rec struct {
	ID   int64   `parquet:"id"`
	Name *string `parquet:"name,optional"`
}

func writeParquet(t *testing.T, path string, rows []rec) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
}

func sp(s string) *string { return &s }

func load(t *testing.T, dir string) *snapshot.Snapshot {
	t.Helper()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rowsOf returns the rows of a scan as sorted "col=value" lists, columns
// sorted by name, so that tables with columns in another order compare.
func rowsOf(t *testing.T, s *snapshot.Snapshot, where string) []string {
	t.Helper()
	opts := scan.Options{}
	if where != "" {
		e, err := expr.Parse(where)
		if err != nil {
			t.Fatal(err)
		}
		opts.Predicate = e
	}
	sc, err := scan.New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for b, err := range sc.Batches(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.Len {
			var cells []string
			for j, v := range b.Row(i) {
				cells = append(cells, sc.Schema().Fields[j].Name+"="+v.String())
			}
			slices.Sort(cells)
			out = append(out, strings.Join(cells, " "))
		}
	}
	slices.Sort(out)
	return out
}

// countFiles returns the files a scan with the predicate reads, after
// skipping on partition values and statistics.
func countFiles(t *testing.T, s *snapshot.Snapshot, where string) int {
	t.Helper()
	e, err := expr.Parse(where)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scan.New(s, scan.Options{Predicate: e})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range sc.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
	}
	m := sc.Metrics()
	return int(m.FilesTotal - m.FilesSkipped())
}

func TestConvertHiveDirectory(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i, country := range []string{"US", "FR", "a b/c", ""} {
		var rows []rec
		for j := range 3 {
			id := int64(i*100 + j)
			name := sp(fmt.Sprintf("n%d", id))
			if j == 2 {
				name = nil
			}
			rows = append(rows, rec{ID: id, Name: name})
			show := "null"
			if name != nil {
				show = *name
			}
			c := country
			if c == "" {
				c = "null"
			}
			want = append(want, fmt.Sprintf("country=%s id=%d name=%s", c, id, show))
		}
		d := "country=" + strings.NewReplacer(" ", "%20", "/", "%2F").Replace(country)
		if country == "" {
			d = "country=__HIVE_DEFAULT_PARTITION__"
		}
		writeParquet(t, filepath.Join(dir, d, fmt.Sprintf("part-%d.parquet", i)), rows)
	}
	// Hidden files Spark leaves are skipped.
	for _, junk := range []string{"_SUCCESS", "country=US/.part-0.parquet.crc", "_temporary/0/x.parquet"} {
		p := filepath.Join(dir, junk)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	parts, err := schema.ParseDDL("country STRING")
	if err != nil {
		t.Fatal(err)
	}
	var progress []int
	res, err := convert.Dir(ctx, dir, convert.Options{PartitionSchema: parts, Concurrency: 2,
		Progress: func(done, total int) { progress = append(progress, done*10+total) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 0 || res.Files != 4 || len(progress) != 4 || progress[3] != 44 {
		t.Fatalf("result %+v, progress %v", res, progress)
	}
	s := load(t, dir)
	slices.Sort(want)
	if got := rowsOf(t, s, ""); !slices.Equal(got, want) {
		t.Fatalf("rows:\n got %q\nwant %q", got, want)
	}
	if got := s.Metadata().PartitionColumns; !slices.Equal(got, []string{"country"}) {
		t.Fatalf("partition columns %v", got)
	}
	// Stats allow skipping: ids 100..102 are in one file; partitions prune too.
	if n := countFiles(t, s, "id >= 100 AND id < 103"); n != 1 {
		t.Fatalf("id range keeps %d files, want 1", n)
	}
	if n := countFiles(t, s, "country = 'FR'"); n != 1 {
		t.Fatalf("country = 'FR' keeps %d files, want 1", n)
	}
	if n := countFiles(t, s, "name IS NULL"); n != 4 {
		t.Fatalf("name IS NULL keeps %d files, want 4", n)
	}
	hist, err := snapshot.History(ctx, s.Store(), 1)
	if err != nil || hist[0].Info.Operation != convert.Operation {
		t.Fatalf("history %v %v", hist, err)
	}
	// A second conversion is refused.
	if _, err := convert.Dir(ctx, dir, convert.Options{PartitionSchema: parts}); !errors.Is(err, convert.ErrAlreadyDelta) {
		t.Fatalf("second conversion: %v", err)
	}
}

func TestConvertRefusesMismatch(t *testing.T) {
	type other struct {
		ID   int32  `parquet:"id"`
		Name string `parquet:"name"`
	}
	cases := map[string]func(dir string){
		"type": func(dir string) {
			if err := parquet.WriteFile(filepath.Join(dir, "b.parquet"), []other{{1, "x"}}); err != nil {
				t.Fatal(err)
			}
		},
		"partition": func(dir string) {
			writeParquet(t, filepath.Join(dir, "b.parquet"), []rec{{ID: 1}})
		},
		"not parquet": func(dir string) {
			os.WriteFile(filepath.Join(dir, "b.parquet"), []byte("not parquet at all"), 0o644)
		},
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var parts *schema.StructType
			if name == "partition" {
				parts, _ = schema.ParseDDL("p INT")
				writeParquet(t, filepath.Join(dir, "p=1", "a.parquet"), []rec{{ID: 1}})
			} else {
				writeParquet(t, filepath.Join(dir, "a.parquet"), []rec{{ID: 1}})
			}
			bad(dir)
			_, err := convert.Dir(ctx, dir, convert.Options{PartitionSchema: parts})
			var fe *convert.FileError
			if !errors.As(err, &fe) || fe.File != "b.parquet" {
				t.Fatalf("err %v, want a *FileError naming b.parquet", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "_delta_log")); err == nil {
				t.Fatal("a log was written")
			}
		})
	}
	parts, _ := schema.ParseDDL("p INT")
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "p=x", "a.parquet"), []rec{{ID: 1}})
	if _, err := convert.Dir(ctx, dir, convert.Options{PartitionSchema: parts}); !errors.Is(err, convert.ErrFile) {
		t.Fatalf("partition value not an INT: %v", err)
	}
	if _, err := convert.Dir(ctx, t.TempDir(), convert.Options{}); !errors.Is(err, convert.ErrNoFiles) {
		t.Fatalf("empty directory: %v", err)
	}
}

// TestConvertSparkFiles converts the data files of a Spark-written table,
// without its log, and reads the same rows as the table itself.
func TestConvertSparkFiles(t *testing.T) {
	src := filepath.Join(testutil.CorpusDir(t), "kernel-rs", "basic_partitioned")
	orig := t.TempDir()
	if err := testutil.CopyTree(src, orig); err != nil {
		t.Fatal(err)
	}
	want := rowsOf(t, load(t, orig), "")
	dir := t.TempDir()
	if err := testutil.CopyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "_delta_log")); err != nil {
		t.Fatal(err)
	}
	parts, _ := schema.ParseDDL("letter STRING")
	if _, err := convert.Dir(ctx, dir, convert.Options{PartitionSchema: parts}); err != nil {
		t.Fatal(err)
	}
	s := load(t, dir)
	if got := rowsOf(t, s, ""); !slices.Equal(got, want) || len(got) == 0 {
		t.Fatalf("rows:\n got %q\nwant %q", got, want)
	}
	total := countFiles(t, s, "letter IS NULL OR letter IS NOT NULL")
	if n := countFiles(t, s, "number > 5"); n >= total {
		t.Fatalf("number > 5 keeps %d of %d files: stats do not skip", n, total)
	}
	if got, want := rowsOf(t, s, "number > 5"), filter(want, "number=", func(v string) bool { return len(v) > 0 && v > "5" && len(v) == 1 }); !slices.Equal(got, want) {
		t.Fatalf("number > 5:\n got %q\nwant %q", got, want)
	}
}

// filter keeps the rows whose cell col has a value ok accepts.
func filter(rows []string, col string, ok func(string) bool) []string {
	var out []string
	for _, r := range rows {
		for c := range strings.FieldsSeq(r) {
			if v, found := strings.CutPrefix(c, col); found && ok(v) {
				out = append(out, r)
			}
		}
	}
	return out
}

// Convert works on any store that lists directories, not just a local
// one: here a memory store, with a Hive partition and hidden files.
func TestConvertStoreNotLocal(t *testing.T) {
	store := memory.New()
	var want []string
	for _, p := range []string{"x", "y"} {
		var buf bytes.Buffer
		rows := []rec{{ID: 1, Name: sp(p)}, {ID: 2}}
		if err := parquet.Write(&buf, rows); err != nil {
			t.Fatal(err)
		}
		if err := store.PutIfAbsent(ctx, "p="+p+"/part-0.parquet", buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("id=1 name=%s p=%s", p, p), fmt.Sprintf("id=2 name=null p=%s", p))
	}
	for _, junk := range []string{"_SUCCESS", "p=x/.part-0.parquet.crc", "_temporary/0/x.parquet"} {
		if err := store.PutIfAbsent(ctx, junk, []byte("junk")); err != nil {
			t.Fatal(err)
		}
	}
	parts, err := schema.ParseDDL("p STRING")
	if err != nil {
		t.Fatal(err)
	}
	res, err := convert.Store(ctx, store, convert.Options{PartitionSchema: parts})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 2 {
		t.Fatalf("converted %d files, want 2", res.Files)
	}
	s, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	if got := rowsOf(t, s, ""); !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}
