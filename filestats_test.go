package delta

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
)

// A row as a program writing its own Parquet with parquet-go holds it.
type pqPoint struct {
	X int32  `parquet:"x"`
	Y string `parquet:"y"`
}

type pqRow struct {
	ID     int64     `parquet:"id"`
	Small  int8      `parquet:"small"`
	Score  *float64  `parquet:"score,optional"`
	Name   *string   `parquet:"name,optional"`
	Day    int32     `parquet:"day,date"`
	At     time.Time `parquet:"at,timestamp(microsecond:utc)"`
	Amount int64     `parquet:"amount,decimal(2:10)"`
	Tags   []string  `parquet:"tags,list"`
	Pt     pqPoint   `parquet:"pt"`
}

// pqSchema is the Delta schema of pqRow's file.
func pqSchema() *schema.StructType {
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		nf("small", schema.Byte), nf("score", schema.Double), nf("name", schema.String),
		nf("day", schema.Date), nf("at", schema.Timestamp), nf("amount", schema.DecimalType{Precision: 10, Scale: 2}),
		nf("tags", &schema.ArrayType{ElementType: schema.String, ContainsNull: true}),
		nf("pt", &schema.StructType{Fields: []schema.StructField{nf("x", schema.Integer), nf("y", schema.String)}}),
	}}
}

func pqRows() []pqRow {
	long := strings.Repeat("z", 40) + "é" // longer than the 32-character prefix of string bounds
	return []pqRow{
		{ID: 1, Small: -5, Score: ptr(2.5), Name: ptr("alpha"), Day: 19000, At: time.UnixMicro(1_700_000_000_123_456).UTC(), Amount: 12345, Tags: []string{"a"}, Pt: pqPoint{1, "p"}},
		{ID: 7, Small: 9, Score: nil, Name: ptr(long), Day: 19100, At: time.UnixMicro(1_700_000_500_999_999).UTC(), Amount: -1, Tags: nil, Pt: pqPoint{-3, "q"}},
		{ID: 4, Small: 0, Score: ptr(-1e10), Name: nil, Day: 18000, At: time.UnixMicro(1_600_000_000_000_000).UTC(), Amount: 0, Tags: []string{"b", "c"}, Pt: pqPoint{8, ""}},
	}
}

// valuesOf is pqRows as rows of pqSchema, for AppendRows.
func valuesOf(t *testing.T, rows []pqRow) [][]schema.Value {
	var out [][]schema.Value
	for _, r := range rows {
		score, name := schema.Value{}, schema.Value{}
		if r.Score != nil {
			score = schema.DoubleValue(*r.Score)
		}
		if r.Name != nil {
			name = schema.StringValue(*r.Name)
		}
		tags := make([]schema.Value, len(r.Tags))
		for i, s := range r.Tags {
			tags[i] = schema.StringValue(s)
		}
		out = append(out, []schema.Value{
			schema.LongValue(r.ID), schema.ByteValue(r.Small), score, name, schema.DateValue(r.Day),
			schema.TimestampValue(r.At.UnixMicro()), dec(t, fmt.Sprint(r.Amount), 10, 2), schema.ArrayValue(tags),
			schema.StructValue([]schema.Value{schema.IntegerValue(r.Pt.X), schema.StringValue(r.Pt.Y)}),
		})
	}
	return out
}

// parquetFile writes rows with plain parquet-go.
func parquetFile[T any](t *testing.T, rows []T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFileStatsMatchesWriter checks that the stats FileStats computes for a
// file parquet-go wrote are the stats this library's writer writes for the
// same rows, under the table's stats options, and that a scan skips and
// reads the committed file as those stats say.
func TestFileStatsMatchesWriter(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		// whether id and pt.x have bounds, so that a scan can skip on them
		idStats, ptxStats bool
	}{
		{map[string]string{}, true, true},
		{map[string]string{"delta.dataSkippingNumIndexedCols": "3"}, true, false},
		{map[string]string{"delta.dataSkippingStatsColumns": "name,pt.x,at"}, false, true},
	} {
		props := tc.props
		t.Run(fmt.Sprint(props), func(t *testing.T) {
			ctx := context.Background()
			theirs, err := Create(ctx, filepath.Join(t.TempDir(), "theirs"), TableSpec{Schema: pqSchema(), Properties: maps.Clone(props)})
			if err != nil {
				t.Fatal(err)
			}
			ours, err := Create(ctx, filepath.Join(t.TempDir(), "ours"), TableSpec{Schema: pqSchema(), Properties: maps.Clone(props)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ours.AppendRows(ctx, valuesOf(t, pqRows()), WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			snap, err := ours.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var want string
			for a, err := range snap.Files(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				want = a.Stats
			}

			data := parquetFile(t, pqRows())
			if err := theirs.Store().Put(ctx, "data/part 1.parquet", data); err != nil {
				t.Fatal(err)
			}
			add, err := FileStats(ctx, theirs, "data/part 1.parquet")
			if err != nil {
				t.Fatal(err)
			}
			if add.Stats != want {
				t.Errorf("stats\n got  %s\n want %s", add.Stats, want)
			}
			if add.Path != "data/part%201.parquet" || add.Size != int64(len(data)) || !add.DataChange || add.ModificationTime <= 0 {
				t.Errorf("add %+v", add)
			}

			tx, err := theirs.Begin(ctx, TxnOptions{Operation: "WRITE"})
			if err != nil {
				t.Fatal(err)
			}
			tx.Add(add)
			if _, err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			validateLog(t, theirs)
			diffRows(t, scanRows(t, theirs), formatRows(valuesOf(t, pqRows())))

			for _, sc := range []struct {
				pred          string
				skipped, rows int64
			}{
				{"id > 7", b2i(tc.idStats), 0},     // above the max id
				{"id = 4", 0, 1},                   // within the bounds: read
				{"pt.x < -3", b2i(tc.ptxStats), 0}, // below the min pt.x
				{"name IS NULL", 0, 1},             // a null name: read
			} {
				snap, err := theirs.Snapshot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				s, err := theirs.Scan(snap, ScanOptions{Predicate: mustExpr(t, sc.pred)})
				if err != nil {
					t.Fatal(err)
				}
				var n int64
				for _, err := range s.Rows(ctx) {
					if err != nil {
						t.Fatal(err)
					}
					n++
				}
				m := s.Metrics()
				if m.FilesSkippedStat != sc.skipped || n != sc.rows {
					t.Errorf("%s: skipped %d files on stats, %d rows; want %d, %d (metrics %+v)", sc.pred, m.FilesSkippedStat, n, sc.skipped, sc.rows, m)
				}
			}
		})
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func TestFileStatsErrors(t *testing.T) {
	ctx := context.Background()
	tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: pqSchema()})
	if err != nil {
		t.Fatal(err)
	}
	type extraCol struct {
		ID    int64  `parquet:"id"`
		Color string `parquet:"color"`
	}
	type narrowID struct {
		ID int32 `parquet:"id"`
	}
	type noID struct {
		Name string `parquet:"name"`
	}
	type nullID struct {
		ID *int64 `parquet:"id,optional"`
	}
	type badPoint struct {
		X string `parquet:"x"`
	}
	type nestedBad struct {
		ID int64    `parquet:"id"`
		Pt badPoint `parquet:"pt"`
	}
	put := func(key string, data []byte) string {
		if err := tbl.Store().Put(ctx, key, data); err != nil {
			t.Fatal(err)
		}
		return key
	}
	tests := []struct {
		name   string
		key    string
		is     error
		column string // of the *FileSchemaError
		msg    string
	}{
		{"column not in the table", put("a.parquet", parquetFile(t, []extraCol{{1, "red"}})), ErrFileSchema, "color", "not a column of the table"},
		{"type mismatch", put("b.parquet", parquetFile(t, []narrowID{{1}})), ErrFileSchema, "id", "is integer in the file, long in the table"},
		{"NOT NULL column missing", put("c.parquet", parquetFile(t, []noID{{"x"}})), ErrFileSchema, "id", "missing from the file"},
		{"nested type mismatch", put("d.parquet", parquetFile(t, []nestedBad{{ID: 1}})), ErrFileSchema, "pt.x", "is string in the file, integer in the table"},
		{"null in a NOT NULL column", put("e.parquet", parquetFile(t, []nullID{{nil}})), ErrConstraint, "", "null in a non-nullable field"},
		{"not Parquet", put("f.parquet", []byte("not parquet at all")), ErrCorrupt, "", ""},
		{"missing file", "nope.parquet", logstore.ErrNotFound, "", ""},
		{"outside the root", "../x.parquet", deltaerr.ErrPathEscapesRoot, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			add, err := FileStats(ctx, tbl, tc.key)
			if err == nil {
				t.Fatalf("FileStats succeeded: %+v", add)
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("%v does not match %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%q does not say %q", err, tc.msg)
			}
			var fe *FileSchemaError
			if errors.As(err, &fe) != (tc.column != "") || (fe != nil && (fe.Column != tc.column || fe.File != tc.key)) {
				t.Errorf("FileSchemaError %+v, want column %q", fe, tc.column)
			}
		})
	}
}

// TestFileStatsColumnMappingID checks that under column mapping in id
// mode the file's columns match by field id, whatever their names, and
// that the stats are keyed by the table's physical names.
func TestFileStatsColumnMappingID(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}, nf("name", schema.String)}}
	tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch, Properties: map[string]string{"delta.columnMapping.mode": "id"}})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var phys []string
	for i, f := range snap.Schema().Fields {
		if id, ok := f.ColumnMappingID(); !ok || id != int64(i+1) {
			t.Fatalf("field %s has column id %d, the file below assumes %d", f.Name, id, i+1)
		}
		phys = append(phys, f.PhysicalName(schema.ColumnMappingByID))
	}
	type byID struct {
		A int64   `parquet:"anything,id(1)"`
		B *string `parquet:"else,id(2),optional"`
	}
	if err := tbl.Store().Put(ctx, "p.parquet", parquetFile(t, []byID{{A: 3, B: ptr("x")}, {A: 5}})); err != nil {
		t.Fatal(err)
	}
	add, err := FileStats(ctx, tbl, "p.parquet")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"numRecords":2,"minValues":{"%[1]s":3,"%[2]s":"x"},"maxValues":{"%[1]s":5,"%[2]s":"x"},"nullCount":{"%[1]s":0,"%[2]s":1}}`, phys[0], phys[1])
	if add.Stats != want {
		t.Errorf("stats\n got  %s\n want %s", add.Stats, want)
	}
	tx, err := tbl.Begin(ctx, TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tx.Add(add)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	diffRows(t, scanRows(t, tbl), []string{"long:3 | string:x", "long:5 | null:null"})

	type noIDs struct {
		ID int64 `parquet:"id"`
	}
	if err := tbl.Store().Put(ctx, "q.parquet", parquetFile(t, []noIDs{{1}})); err != nil {
		t.Fatal(err)
	}
	var fe *FileSchemaError
	if _, err := FileStats(ctx, tbl, "q.parquet"); !errors.As(err, &fe) || !strings.Contains(err.Error(), "no field id") {
		t.Errorf("file without field ids: %v", err)
	}
}

// TestFileStatsPartitioned adds a file to a partitioned table: the file
// holds the data columns only, the caller gives the partition values.
func TestFileStatsPartitioned(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{nf("region", schema.String), {Name: "id", Type: schema.Long}}}
	tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch, PartitionColumns: []string{"region"}})
	if err != nil {
		t.Fatal(err)
	}
	type data struct {
		ID int64 `parquet:"id"`
	}
	if err := tbl.Store().Put(ctx, "region=eu/a.parquet", parquetFile(t, []data{{4}, {2}})); err != nil {
		t.Fatal(err)
	}
	add, err := FileStats(ctx, tbl, "region=eu/a.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"numRecords":2,"minValues":{"id":2},"maxValues":{"id":4},"nullCount":{"id":0}}`; add.Stats != want {
		t.Errorf("stats %s, want %s", add.Stats, want)
	}
	add.PartitionValues["region"] = "eu"
	tx, err := tbl.Begin(ctx, TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tx.Add(add)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	validateLog(t, tbl)
	diffRows(t, scanRows(t, tbl), []string{"string:eu | long:2", "string:eu | long:4"})

	type withPartition struct {
		Region string `parquet:"region"`
		ID     int64  `parquet:"id"`
	}
	if err := tbl.Store().Put(ctx, "b.parquet", parquetFile(t, []withPartition{{"eu", 1}})); err != nil {
		t.Fatal(err)
	}
	var fe *FileSchemaError
	if _, err := FileStats(ctx, tbl, "b.parquet"); !errors.As(err, &fe) || fe.Column != "region" || !strings.Contains(fe.Reason, "partition column") {
		t.Errorf("file holding the partition column: %v", err)
	}
}
