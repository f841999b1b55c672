package scan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil"
)

// field is the JSON of a schema field; meta is its metadata object body.
func fieldJSON(name, typ, meta string) string {
	return fmt.Sprintf(`{"name":%q,"type":%s,"nullable":true,"metadata":{%s}}`, name, typ, meta)
}

func structJSON(fields ...string) string {
	return `{"type":"struct","fields":[` + strings.Join(fields, ",") + `]}`
}

// newTable commits version 0 of a table in store and loads it.
func newTable(t *testing.T, store logstore.Store, p actions.Protocol, schemaJSON string, parts []string, conf map[string]string) *snapshot.Snapshot {
	t.Helper()
	m := actions.Metadata{ID: "t", Format: actions.Format{Provider: "parquet"}, SchemaString: schemaJSON,
		PartitionColumns: parts, Configuration: conf}
	return commitAndLoad(t, store, 0, []actions.Action{{Protocol: &p}, {Metadata: &m}})
}

// commitAndLoad commits acts as version v of the table in store and loads
// the table's latest snapshot.
func commitAndLoad(t *testing.T, store logstore.Store, v int64, acts []actions.Action) *snapshot.Snapshot {
	t.Helper()
	ctx := context.Background()
	data, err := actions.EncodeCommit(acts)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(ctx, deltalog.CommitKey(v), data); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// putParquet writes a Parquet file of physical schema physJSON with the
// given columns at key, and returns its size.
func putParquet(t *testing.T, store logstore.Store, key, physJSON string, byID bool, cols ...[]schema.Value) int64 {
	t.Helper()
	phys, err := schema.Parse(physJSON)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := datafile.NewWriter(&buf, phys, datafile.WriteOptions{ByFieldID: byID})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if len(cols) > 0 {
		n = len(cols[0])
	}
	if err := w.Write(cols, n); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(context.Background(), key, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return int64(buf.Len())
}

// readAll reads one file and returns its rows (as "kind:value" strings,
// one string a row) and their positions.
func readAll(t *testing.T, fr *scan.FileReader, add *actions.Add) ([]string, []int64, error) {
	t.Helper()
	var rows []string
	var pos []int64
	err := fr.ReadFile(context.Background(), add, func(b *scan.FileBatch) error {
		if len(b.Positions) != b.Len {
			t.Errorf("batch of %d rows has %d positions", b.Len, len(b.Positions))
		}
		for i := range b.Len {
			rows = append(rows, showValues(b.Row(i)))
			pos = append(pos, b.Positions[i])
		}
		return nil
	})
	return rows, pos, err
}

func showValues(vals []schema.Value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = fmt.Sprintf("%d:%s", v.Kind(), v)
	}
	return strings.Join(parts, " ")
}

func longs(from, to int64) []schema.Value {
	var out []schema.Value
	for i := from; i < to; i++ {
		out = append(out, schema.LongValue(i))
	}
	return out
}

var idOnly = structJSON(fieldJSON("id", `"long"`, ""))

func TestReadFilePaths(t *testing.T) {
	store := memory.New()
	newTable(t, store, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, idOnly, nil, map[string]string{})
	size := putParquet(t, store, "dir a/f-1.parquet", idOnly, false, longs(0, 3))
	tests := []struct {
		name, path, root string
		want             error // nil: the three rows
	}{
		{"relative, percent-encoded", "dir%20a/f-1.parquet", "", nil},
		{"relative, as is", "dir a/f-1.parquet", "", nil},
		{"relative with dot segments", "./dir%20a/../dir%20a/f-1.parquet", "", nil},
		{"absolute under the root", "s3://bucket/tbl/dir%20a/f-1.parquet", "s3://bucket/tbl", nil},
		{"absolute under the root given with a slash", "s3://bucket/tbl/dir%20a/f-1.parquet", "s3://bucket/tbl/", nil},
		{"absolute local path under the root", "/data/tbl/dir a/f-1.parquet", "file:///data/tbl", nil},
		{"file URI under the root", "file:/data/tbl/dir%20a/f-1.parquet", "file:///data/tbl", nil},
		{"absolute outside the root", "s3://bucket/other/dir%20a/f-1.parquet", "s3://bucket/tbl", deltaerr.ErrPathEscapesRoot},
		{"absolute in a sibling with the root as prefix", "s3://bucket/tbl2/dir%20a/f-1.parquet", "s3://bucket/tbl", deltaerr.ErrPathEscapesRoot},
		{"absolute, root unknown", "s3://bucket/tbl/dir%20a/f-1.parquet", "", deltaerr.ErrPathEscapesRoot},
		{"absolute escaping the root by dot segments", "s3://bucket/tbl/../other/f.parquet", "s3://bucket/tbl", deltaerr.ErrPathEscapesRoot},
		{"relative escaping the root", "../tbl/dir%20a/f-1.parquet", "", deltaerr.ErrPathEscapesRoot},
		{"relative escaping the root, encoded", "%2E%2E/f.parquet", "", deltaerr.ErrPathEscapesRoot},
		{"not a valid escape", "dir%zz/f.parquet", "", deltaerr.ErrCorrupt},
		{"missing from storage", "gone.parquet", "", deltaerr.ErrFileNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, err := snapshot.Load(context.Background(), testutil.AtURI(store, tt.root), deltalog.Latest)
			if err != nil {
				t.Fatal(err)
			}
			fr, err := scan.NewFileReader(at, scan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			add := &actions.Add{Path: tt.path, Size: size}
			if tt.path == "gone.parquet" {
				add.Size = 0 // the size is looked up
			}
			rows, _, err := readAll(t, fr, add)
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"5:0", "5:1", "5:2"}; !slices.Equal(rows, want) {
				t.Errorf("rows = %v, want %v", rows, want)
			}
		})
	}
}

func TestReadFileDeletionVectorsAndPositions(t *testing.T) {
	ctx := context.Background()
	store := testutil.AtURI(memory.New(), "s3://bucket/tbl")
	p := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{actions.FeatureDeletionVectors}, WriterFeatures: []string{actions.FeatureDeletionVectors}}
	snap := newTable(t, store, p, idOnly, nil, map[string]string{})
	// id equals position: the rows kept show the positions reported.
	size := putParquet(t, store, "f.parquet", idOnly, false, longs(0, 10))

	deleted := dv.New(2, 5, 9)
	inline, err := dv.NewInline(deleted)
	if err != nil {
		t.Fatal(err)
	}
	file, err := dv.EncodeFile("", [16]byte{1, 2, 3}, deleted)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, file.Key, file.Data); err != nil {
		t.Fatal(err)
	}
	relative := file.Descriptors[0]
	if err := store.Put(ctx, "dvs/abs.bin", file.Data); err != nil {
		t.Fatal(err)
	}
	absolute := *relative
	absolute.StorageType, absolute.PathOrInlineDv = dv.StorageAbsolute, "s3://bucket/tbl/dvs/abs.bin"
	outside := absolute
	outside.PathOrInlineDv = "s3://bucket/elsewhere/dvs/abs.bin"

	all := []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	live := []int64{0, 1, 3, 4, 6, 7, 8}
	pred, err := expr.Parse("id >= 4")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dv   *actions.DeletionVector
		pred expr.Expr
		want []int64
		err  error
	}{
		{"no deletion vector", nil, nil, all, nil},
		{"inline", inline, nil, live, nil},
		{"relative file", relative, nil, live, nil},
		{"absolute file under the root", &absolute, nil, live, nil},
		{"absolute file outside the root", &outside, nil, nil, deltaerr.ErrPathEscapesRoot},
		{"predicate, no deletion vector", nil, pred, []int64{4, 5, 6, 7, 8, 9}, nil},
		{"predicate and deletion vector", inline, pred, []int64{4, 6, 7, 8}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Batches of 3 rows: positions must run on across batches.
			fr, err := scan.NewFileReader(snap, scan.Options{BatchSize: 3, Predicate: tt.pred})
			if err != nil {
				t.Fatal(err)
			}
			rows, pos, err := readAll(t, fr, &actions.Add{Path: "f.parquet", Size: size, DeletionVector: tt.dv})
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pos, tt.want) {
				t.Errorf("positions = %v, want %v", pos, tt.want)
			}
			var want []string
			for _, p := range tt.want {
				want = append(want, fmt.Sprintf("5:%d", p))
			}
			if !slices.Equal(rows, want) {
				t.Errorf("rows = %v, want %v", rows, want)
			}
		})
	}
}

func TestReadFileColumnMapping(t *testing.T) {
	table := structJSON(
		fieldJSON("a", `"long"`, `"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-a"`),
		fieldJSON("b", `"string"`, `"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-b"`))
	// Files as name mode writes them, and as written before a rename under
	// id mode: other names, the same field ids.
	byName := structJSON(fieldJSON("col-a", `"long"`, `"delta.columnMapping.id":1`), fieldJSON("col-b", `"string"`, `"delta.columnMapping.id":2`))
	oldNames := structJSON(fieldJSON("a_old", `"long"`, `"delta.columnMapping.id":1`), fieldJSON("b_old", `"string"`, `"delta.columnMapping.id":2`))
	a := []schema.Value{schema.LongValue(1), schema.LongValue(2)}
	b := []schema.Value{schema.StringValue("x"), schema.StringValue("y")}
	tests := []struct {
		name, mode, file string
		columns          []string
		want             []string
	}{
		{"name mode", "name", byName, nil, []string{"5:1 8:x", "5:2 8:y"}},
		{"name mode, columns reordered", "name", byName, []string{"b", "A"}, []string{"8:x 5:1", "8:y 5:2"}},
		{"id mode, by field id", "id", oldNames, nil, []string{"5:1 8:x", "5:2 8:y"}},
		{"id mode, one column", "id", oldNames, []string{"b"}, []string{"8:x", "8:y"}},
		// Name mode matches physical names only: the old names are absent.
		{"name mode ignores field ids", "name", oldNames, nil, []string{"0:null 0:null", "0:null 0:null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memory.New()
			snap := newTable(t, store, actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, table, nil,
				map[string]string{"delta.columnMapping.mode": tt.mode, "delta.columnMapping.maxColumnId": "2"})
			size := putParquet(t, store, "f.parquet", tt.file, true, a, b)
			fr, err := scan.NewFileReader(snap, scan.Options{Columns: tt.columns})
			if err != nil {
				t.Fatal(err)
			}
			rows, _, err := readAll(t, fr, &actions.Add{Path: "f.parquet", Size: size})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rows, tt.want) {
				t.Errorf("rows = %v, want %v", rows, tt.want)
			}
		})
	}
}

func TestReadFileTypeWidening(t *testing.T) {
	store := memory.New()
	p := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{actions.FeatureTypeWidening}, WriterFeatures: []string{actions.FeatureTypeWidening}}
	table := structJSON(fieldJSON("i", `"long"`, ""), fieldJSON("s", `"integer"`, ""), fieldJSON("f", `"double"`, ""),
		fieldJSON("d", `"decimal(10,4)"`, ""), fieldJSON("t", `"timestamp_ntz"`, ""), fieldJSON("n", `"double"`, ""))
	snap := newTable(t, store, p, table, nil, map[string]string{})
	// The file holds the narrower types the columns had before widening.
	narrow := structJSON(fieldJSON("i", `"integer"`, ""), fieldJSON("s", `"short"`, ""), fieldJSON("f", `"float"`, ""),
		fieldJSON("d", `"decimal(5,2)"`, ""), fieldJSON("t", `"date"`, ""), fieldJSON("n", `"integer"`, ""))
	dec, err := schema.DecimalValueInt64(-12345, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	size := putParquet(t, store, "f.parquet", narrow, false,
		[]schema.Value{schema.IntegerValue(-7)}, []schema.Value{schema.ShortValue(300)}, []schema.Value{schema.FloatValue(1.5)},
		[]schema.Value{dec}, []schema.Value{schema.DateValue(1)}, []schema.Value{schema.IntegerValue(3)})
	fr, err := scan.NewFileReader(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []schema.Value
	err = fr.ReadFile(context.Background(), &actions.Add{Path: "f.parquet", Size: size}, func(b *scan.FileBatch) error {
		got = b.Row(0)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantDec, err := schema.DecimalValueInt64(-1234500, 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.Value{schema.LongValue(-7), schema.IntegerValue(300), schema.DoubleValue(1.5), wantDec,
		schema.TimestampNTZValue(86_400_000_000), schema.DoubleValue(3)}
	if showValues(got) != showValues(want) {
		t.Errorf("row = %s, want %s", showValues(got), showValues(want))
	}
	for i, v := range got {
		if tt := snap.Schema().Fields[i].Type; v.Type().String() != tt.String() {
			t.Errorf("column %s reads as %s, want %s", snap.Schema().Fields[i].Name, v.Type(), tt)
		}
	}
}

func TestReadFilePartitionValues(t *testing.T) {
	types := []struct{ name, typ, raw string }{
		{"str", `"string"`, "a b/c"},
		{"lng", `"long"`, "-9000000000"},
		{"int", `"integer"`, "42"},
		{"sht", `"short"`, "-3"},
		{"byt", `"byte"`, "7"},
		{"bool", `"boolean"`, "true"},
		{"dt", `"date"`, "2021-09-08"},
		{"ts", `"timestamp"`, "2021-09-08 11:11:11"},
		{"ntz", `"timestamp_ntz"`, "2021-09-08 11:11:11.5"},
		{"dec", `"decimal(5,2)"`, "-12.34"},
		{"dbl", `"double"`, "2.5"},
		{"flt", `"float"`, "-0.25"},
		{"bin", `"binary"`, "\x01z"},
		{"empty", `"string"`, ""},       // the empty string is null
		{"absent", `"integer"`, "\x00"}, // no key in partitionValues: null
	}
	ts := time.Date(2021, 9, 8, 11, 11, 11, 0, time.UTC).UnixMicro()
	dec, err := schema.DecimalValueInt64(-1234, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.Value{schema.LongValue(1), schema.StringValue("a b/c"), schema.LongValue(-9000000000), schema.IntegerValue(42),
		schema.ShortValue(-3), schema.ByteValue(7), schema.BooleanValue(true), schema.DateValue(18878),
		schema.TimestampValue(ts), schema.TimestampNTZValue(ts + 500_000), dec, schema.DoubleValue(2.5),
		schema.FloatValue(-0.25), schema.BinaryValueString("\x01z"), {}, {}}
	for _, mode := range []string{"none", "name"} {
		t.Run(mode, func(t *testing.T) {
			meta := func(i int, name string) string {
				if mode == "none" {
					return ""
				}
				return fmt.Sprintf(`"delta.columnMapping.id":%d,"delta.columnMapping.physicalName":"col-%s"`, i+1, name)
			}
			fields := []string{fieldJSON("x", `"long"`, meta(99, "x"))}
			var parts []string
			pv := map[string]string{}
			for i, ty := range types {
				fields = append(fields, fieldJSON(ty.name, ty.typ, meta(i, ty.name)))
				parts = append(parts, ty.name)
				key := ty.name
				if mode == "name" {
					key = "col-" + ty.name
				}
				if ty.raw != "\x00" {
					pv[key] = ty.raw
				}
			}
			conf := map[string]string{"delta.columnMapping.mode": mode, "delta.columnMapping.maxColumnId": "100"}
			store := memory.New()
			snap := newTable(t, store, actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, structJSON(fields...), parts, conf)
			physX := "x"
			if mode == "name" {
				physX = "col-x"
			}
			size := putParquet(t, store, "f.parquet", structJSON(fieldJSON(physX, `"long"`, "")), false, []schema.Value{schema.LongValue(1)})
			fr, err := scan.NewFileReader(snap, scan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rows, _, err := readAll(t, fr, &actions.Add{Path: "f.parquet", Size: size, PartitionValues: pv})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0] != showValues(want) {
				t.Errorf("rows = %v\nwant   %s", rows, showValues(want))
			}
		})
	}
	t.Run("unparsable", func(t *testing.T) {
		store := memory.New()
		snap := newTable(t, store, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
			structJSON(fieldJSON("x", `"long"`, ""), fieldJSON("p", `"integer"`, "")), []string{"p"}, map[string]string{})
		size := putParquet(t, store, "f.parquet", structJSON(fieldJSON("x", `"long"`, "")), false, []schema.Value{schema.LongValue(1)})
		fr, err := scan.NewFileReader(snap, scan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = readAll(t, fr, &actions.Add{Path: "f.parquet", Size: size, PartitionValues: map[string]string{"p": "x1"}})
		if !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("err = %v, want ErrCorrupt", err)
		}
	})
}

// A callback's error stops the read and comes back to the caller.
func TestReadFileStops(t *testing.T) {
	store := memory.New()
	snap := newTable(t, store, actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, idOnly, nil, map[string]string{})
	size := putParquet(t, store, "f.parquet", idOnly, false, longs(0, 10))
	fr, err := scan.NewFileReader(snap, scan.Options{BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	calls := 0
	err = fr.ReadFile(context.Background(), &actions.Add{Path: "f.parquet", Size: size}, func(*scan.FileBatch) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("err = %v after %d calls, want %v after 1", err, calls, stop)
	}
}

// On Spark-written tables with deletion vectors (one at a relative path,
// one under column mapping and in a checkpoint), the positions read and
// the rows the vector deletes partition the file's rows.
func TestReadFilePositionsCorpus(t *testing.T) {
	ctx := context.Background()
	for _, table := range []string{"kernel-rs/table-with-dv-small", "golden/dv-with-columnmapping/delta"} {
		t.Run(table, func(t *testing.T) {
			store, err := local.New(filepath.Join(testutil.CorpusDir(t), table))
			if err != nil {
				t.Fatal(err)
			}
			snap, err := snapshot.Load(ctx, store, deltalog.Latest)
			if err != nil {
				t.Fatal(err)
			}
			fr, err := scan.NewFileReader(snap, scan.Options{BatchSize: 7})
			if err != nil {
				t.Fatal(err)
			}
			withDV := 0
			for add, err := range snap.Files(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
				if add.DeletionVector == nil {
					continue
				}
				withDV++
				deleted, err := dv.Load(ctx, store, add.DeletionVector, nil)
				if err != nil {
					t.Fatal(err)
				}
				_, pos, err := readAll(t, fr, add)
				if err != nil {
					t.Fatal(err)
				}
				var st struct{ NumRecords int64 }
				if err := json.Unmarshal([]byte(add.Stats), &st); err != nil || st.NumRecords == 0 {
					t.Fatalf("stats of %s: %q", add.Path, add.Stats)
				}
				if int64(len(pos))+int64(deleted.Cardinality()) != st.NumRecords {
					t.Errorf("%s: %d rows read + %d deleted, want the file's %d", add.Path, len(pos), deleted.Cardinality(), st.NumRecords)
				}
				for i, p := range pos {
					if deleted.Contains(uint64(p)) || i > 0 && p <= pos[i-1] || p >= st.NumRecords {
						t.Fatalf("%s: position %d read (deleted %v, after %v)", add.Path, p, deleted.Contains(uint64(p)), pos[max(i-1, 0)])
					}
				}
			}
			if withDV == 0 {
				t.Fatal("no file with a deletion vector: the test shows nothing")
			}
		})
	}
}
