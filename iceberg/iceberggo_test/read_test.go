package iceberggo_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	icebergpkg "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// allTypes has a column of every primitive type Iceberg v2 can hold, two
// of them partition columns.
func allTypes() *schema.StructType {
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "b", Type: schema.Byte, Nullable: true},
		{Name: "s", Type: schema.Short, Nullable: true},
		{Name: "i", Type: schema.Integer, Nullable: true},
		{Name: "f", Type: schema.Float, Nullable: true},
		{Name: "d", Type: schema.Double, Nullable: true},
		{Name: "dec", Type: schema.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "str", Type: schema.String, Nullable: true},
		{Name: "bin", Type: schema.Binary, Nullable: true},
		{Name: "flag", Type: schema.Boolean, Nullable: true},
		{Name: "day", Type: schema.Date, Nullable: true},
		{Name: "ts", Type: schema.Timestamp, Nullable: true},
		{Name: "ntz", Type: schema.TimestampNTZ, Nullable: true},
		{Name: "region", Type: schema.String, Nullable: true},
		{Name: "year", Type: schema.Integer, Nullable: true},
	}}
}

// row builds a row of allTypes from n, with nulls in some columns for
// some n.
func row(n int64) []schema.Value {
	dec, err := schema.DecimalValueInt64(n*101-500, 10, 2)
	if err != nil {
		panic(err)
	}
	r := []schema.Value{
		schema.LongValue(n),
		schema.ByteValue(int8(n % 100)),
		schema.ShortValue(int16(n * 3)),
		schema.IntegerValue(int32(n * 1000)),
		schema.FloatValue(float32(n) / 4),
		schema.DoubleValue(float64(n) * 1.5),
		dec,
		schema.StringValue(fmt.Sprintf("row %d", n)),
		schema.BinaryValue([]byte{byte(n), byte(n >> 8), 0xff}),
		schema.BooleanValue(n%2 == 0),
		schema.DateValue(int32(19000 + n)),
		schema.TimestampValue(1_700_000_000_000_000 + n*1_000_001),
		schema.TimestampNTZValue(1_600_000_000_000_000 + n*7),
		schema.StringValue([]string{"eu", "us", "apac"}[n%3]),
		schema.IntegerValue(int32(2020 + n%2)),
	}
	if n%5 == 4 { // nulls in every nullable data column
		for j := 1; j <= 12; j++ {
			r[j] = schema.Value{}
		}
	}
	if n%7 == 6 {
		r[13] = schema.Value{} // a null partition value
	}
	return r
}

func rows(from, to int64) [][]schema.Value {
	var out [][]schema.Value
	for n := from; n < to; n++ {
		out = append(out, row(n))
	}
	return out
}

// deltaRows reads the table at version with this library's reader and
// renders each row; where, when not empty, filters the rows.
func deltaRows(t *testing.T, ctx context.Context, tbl *delta.Table, version int64, where ...string) []string {
	t.Helper()
	snap, err := tbl.SnapshotAt(ctx, version)
	if err != nil {
		t.Fatal(err)
	}
	var opts delta.ScanOptions
	if len(where) > 0 {
		if opts.Predicate, err = delta.ParsePredicate(where[0]); err != nil {
			t.Fatal(err)
		}
	}
	s, err := tbl.Scan(snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r, err := range s.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		fields := r.Schema().Fields
		var parts []string
		for j, v := range r.Values() {
			parts = append(parts, fields[j].Name+"="+renderDelta(fields[j].Type, v))
		}
		out = append(out, strings.Join(parts, " "))
	}
	slices.Sort(out)
	return out
}

func renderDelta(t schema.DataType, v schema.Value) string {
	if v.IsNull() {
		return "NULL"
	}
	if _, ok := t.(schema.DecimalType); ok {
		u, _, scale := v.Decimal()
		return u.String() + "e-" + strconv.Itoa(scale)
	}
	switch t {
	case schema.Float, schema.Double:
		return strconv.FormatFloat(v.Float64(), 'g', -1, 64)
	case schema.String:
		return strconv.Quote(v.String())
	case schema.Binary:
		return hex.EncodeToString(v.Bytes())
	case schema.Boolean:
		return strconv.FormatBool(v.Bool())
	}
	return strconv.FormatInt(v.Int64(), 10)
}

// icebergRows reads the Iceberg table from its metadata location with
// iceberg-go, at the snapshot converted from Delta version version, and
// renders each row as deltaRows does (columns in the order of cols).
func icebergRows(t *testing.T, ctx context.Context, metadataLocation string, version int64, cols []string, opts ...table.ScanOption) []string {
	t.Helper()
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"uniform"}, metadataLocation,
		icebergio.LoadFSFunc(nil, metadataLocation), nil)
	if err != nil {
		t.Fatalf("iceberg-go cannot open %s: %v", metadataLocation, err)
	}
	var snapID int64 = -1
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[iceberg.PropDeltaVersion] == strconv.FormatInt(version, 10) {
			snapID = s.SnapshotID
		}
	}
	if snapID < 0 {
		t.Fatalf("no Iceberg snapshot of Delta version %d", version)
	}
	at, err := tbl.Scan(append([]table.ScanOption{table.WithSnapshotID(snapID)}, opts...)...).ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("iceberg-go scan of snapshot %d (Delta version %d): %v", snapID, version, err)
	}
	defer at.Release()
	return renderTable(t, at, cols)
}

// renderTable renders each row of an Arrow table as deltaRows does
// (columns in the order of cols), sorted.
func renderTable(t *testing.T, at arrow.Table, cols []string) []string {
	t.Helper()
	rd := array.NewTableReader(at, 1024)
	defer rd.Release()
	var out []string
	for rd.Next() {
		rec := rd.RecordBatch()
		sch := rec.Schema()
		idx := map[string]int{}
		for j, f := range sch.Fields() {
			idx[f.Name] = j
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			var parts []string
			for _, c := range cols {
				j, ok := idx[c]
				if !ok {
					t.Fatalf("iceberg-go result has no column %s (has %v)", c, sch)
				}
				parts = append(parts, c+"="+renderArrow(t, rec.Column(j), i))
			}
			out = append(out, strings.Join(parts, " "))
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func renderArrow(t *testing.T, col arrow.Array, i int) string {
	if col.IsNull(i) {
		return "NULL"
	}
	switch a := col.(type) {
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10)
	case *array.Float32:
		return strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 64)
	case *array.Float64:
		return strconv.FormatFloat(a.Value(i), 'g', -1, 64)
	case *array.Decimal128:
		dt := a.DataType().(*arrow.Decimal128Type)
		return a.Value(i).BigInt().String() + "e-" + strconv.Itoa(int(dt.Scale))
	case *array.String:
		return strconv.Quote(a.Value(i))
	case *array.LargeString:
		return strconv.Quote(a.Value(i))
	case *array.Binary:
		return hex.EncodeToString(a.Value(i))
	case *array.LargeBinary:
		return hex.EncodeToString(a.Value(i))
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i))
	case *array.Date32:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		v := int64(a.Value(i))
		switch unit {
		case arrow.Nanosecond:
			v /= 1000
		case arrow.Millisecond:
			v *= 1000
		case arrow.Second:
			v *= 1_000_000
		}
		return strconv.FormatInt(v, 10)
	}
	t.Fatalf("unexpected Arrow type %s", col.DataType())
	return ""
}

func columnNames(sch *schema.StructType) []string {
	var out []string
	for _, f := range sch.Fields {
		out = append(out, f.Name)
	}
	return out
}

// addColumn commits a metadata change through a transaction that adds a
// nullable column, with the next column id and a physical name, as an
// ALTER TABLE ADD COLUMN does under column mapping.
func addColumn(t *testing.T, ctx context.Context, tbl *delta.Table, f schema.StructField) {
	t.Helper()
	_, err := tbl.Update(ctx, delta.TxnOptions{Operation: "ADD COLUMNS"}, func(tx *delta.Transaction) error {
		snap := tx.Snapshot()
		m := snap.Metadata()
		sch, err := schema.Parse(m.SchemaString)
		if err != nil {
			return err
		}
		maxID, _ := snap.Config().MaxColumnID()
		maxID++
		f.Metadata = schema.Metadata{
			{Key: schema.MetadataColumnMappingID, Value: []byte(strconv.FormatInt(maxID, 10))},
			{Key: schema.MetadataPhysicalName, Value: []byte(strconv.Quote("col-" + uuid.NewString()))},
		}
		sch.Fields = append(sch.Fields, f)
		raw, err := sch.MarshalJSON()
		if err != nil {
			return err
		}
		conf := map[string]string{}
		for k, v := range m.Configuration {
			conf[k] = v
		}
		conf[tableconfig.KeyColumnMappingMaxColumnID] = strconv.FormatInt(maxID, 10)
		m.SchemaString, m.Configuration = string(raw), conf
		tx.SetMetadata(m)
		return nil
	})
	if err != nil {
		t.Fatalf("adding column %s: %v", f.Name, err)
	}
}

// TestIcebergGoReadsUniform writes a partitioned table of every primitive
// type with UniForm Iceberg on: two appends, an overwrite of the rows a
// data predicate matches (files removed and rewritten), an added column
// and an append that fills it. After each version, iceberg-go opened from
// the latest metadata location must read, at the Iceberg snapshot of every
// Delta version so far, exactly the rows the Delta reader returns at that
// version.
func TestIcebergGoReadsUniform(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tbl, err := delta.Create(ctx, "file://"+dir, delta.TableSpec{
		Schema:           allTypes(),
		PartitionColumns: []string{"region", "year"},
		Properties:       map[string]string{tableconfig.KeyUniversalFormatEnabledFormats: "iceberg"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()

	steps := []struct {
		name string
		do   func() error
	}{
		{"append 0-20", func() error { _, err := tbl.AppendRows(ctx, rows(0, 20), delta.WriteOptions{}); return err }},
		{"append 20-35", func() error { _, err := tbl.AppendRows(ctx, rows(20, 35), delta.WriteOptions{}); return err }},
		{"overwrite id < 10", func() error {
			pred, err := delta.ParsePredicate("id < 10")
			if err != nil {
				return err
			}
			// Rows with ids 0-9 replaced by two new ones (ids 3 and 7, from
			// rows 103 and 107): the files holding them are removed, their
			// other rows written again.
			_, err = tbl.OverwriteRows(ctx, [][]schema.Value{withID(row(103), 3), withID(row(107), 7)}, delta.OverwriteOptions{ReplaceWhere: pred})
			return err
		}},
		{"add column extra", func() error {
			addColumn(t, ctx, tbl, schema.StructField{Name: "extra", Type: schema.Long, Nullable: true})
			return nil
		}},
		{"append with extra", func() error {
			var rs [][]schema.Value
			for n := int64(40); n < 46; n++ {
				rs = append(rs, append(row(n), schema.LongValue(n*n)))
			}
			_, err := tbl.AppendRows(ctx, rs, delta.WriteOptions{})
			return err
		}},
		// DML on a UniForm table rewrites files (copy-on-write: icebergCompatV2
		// allows no deletion vectors); Iceberg sees the removed files
		// deleted and the rewritten ones added.
		{"delete id % 5 = 0", func() error {
			_, err := tbl.Delete(ctx, "id % 5 = 0", delta.DMLOptions{})
			return err
		}},
		{"update extra where id > 40", func() error {
			_, err := tbl.UpdateRows(ctx, "extra = -extra", "id > 40", delta.DMLOptions{})
			return err
		}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		latest, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		status, err := tbl.IcebergStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if status.ConvertedVersion != latest.Version() {
			t.Fatalf("%s: Iceberg metadata at Delta version %d, table at %d", st.name, status.ConvertedVersion, latest.Version())
		}
		for v := int64(0); v <= latest.Version(); v++ {
			snap, err := tbl.SnapshotAt(ctx, v)
			if err != nil {
				t.Fatal(err)
			}
			want := deltaRows(t, ctx, tbl, v)
			got := icebergRows(t, ctx, status.MetadataLocation, v, columnNames(snap.Schema()))
			if !slices.Equal(got, want) {
				t.Fatalf("%s: Delta version %d: iceberg-go read %d rows, Delta %d\niceberg: %q\ndelta:   %q", st.name, v, len(got), len(want), head(got), head(want))
			}
		}
		t.Logf("%s: Delta version %d, iceberg-go reads the same rows at every version", st.name, latest.Version())
	}
	// With filters on a partition column and a data column, iceberg-go
	// prunes by the manifests' partition values and the files' bounds:
	// it must still find exactly the matching rows.
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	status, err := tbl.IcebergStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	filters := []struct {
		delta   string
		iceberg icebergpkg.BooleanExpression
	}{
		{"region = 'eu'", icebergpkg.EqualTo(icebergpkg.Reference("region"), "eu")},
		{"id >= 20 AND year = 2021", icebergpkg.NewAnd(icebergpkg.GreaterThanEqual(icebergpkg.Reference("id"), int64(20)),
			icebergpkg.EqualTo(icebergpkg.Reference("year"), int32(2021)))},
		{"day < '2022-01-20'", icebergpkg.LessThan(icebergpkg.Reference("day"), icebergpkg.Date(19012))},
	}
	for _, f := range filters {
		want := deltaRows(t, ctx, tbl, snap.Version(), f.delta)
		got := icebergRows(t, ctx, status.MetadataLocation, snap.Version(), columnNames(snap.Schema()), table.WithRowFilter(f.iceberg))
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("filter %s: iceberg-go read %d rows, Delta %d\niceberg: %q\ndelta:   %q", f.delta, len(got), len(want), head(got), head(want))
		}
	}
	// The overwrite removed files: its snapshot must say so.
	if err != nil {
		t.Fatal(err)
	}
	// Ids 3, 7, 10-34 and 40-45, less the DELETE's 10, 15, 20, 25, 30, 40, 45.
	if n := len(deltaRows(t, ctx, tbl, snap.Version())); n != 35-10+2+6-7 {
		t.Fatalf("latest version has %d rows, want %d", n, 35-10+2+6-7)
	}
}

func withID(r []schema.Value, id int64) []schema.Value {
	r[0] = schema.LongValue(id)
	return r
}

func head(xs []string) []string {
	if len(xs) > 3 {
		return xs[:3]
	}
	return xs
}
