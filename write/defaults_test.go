package write

import (
	"errors"
	"iter"
	"slices"
	"strconv"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

func defaultField(name string, t schema.DataType, sql string) schema.StructField {
	return schema.StructField{Name: name, Type: t, Nullable: true,
		Metadata: schema.Metadata{{Key: schema.MetadataCurrentDefault, Value: []byte(strconv.Quote(sql))}}}
}

// TestParseDefault: the defaults taken (literals, to the column's type)
// and those refused, each with its typed error.
func TestParseDefault(t *testing.T) {
	for _, tt := range []struct {
		typ     schema.DataType
		sql     string
		want    string // the value's display form
		wantErr error
	}{
		{schema.Integer, "42", "42", nil},
		{schema.Long, "-7", "-7", nil},
		{schema.Double, "1.5", "1.5", nil},
		{schema.DecimalType{Precision: 5, Scale: 2}, "3.14", "3.14", nil},
		{schema.String, "'n/a'", "n/a", nil},
		{schema.Boolean, "true", "true", nil},
		{schema.Date, "DATE '2024-02-29'", "2024-02-29", nil},
		{schema.Date, "'2024-02-29'", "2024-02-29", nil},
		{schema.Timestamp, "TIMESTAMP '2024-01-02 03:04:05'", "2024-01-02T03:04:05Z", nil},
		{schema.Integer, "NULL", "NULL", nil},
		{schema.Integer, "CAST('12' AS INT)", "12", nil},
		{schema.Variant, "NULL", "NULL", nil},
		{schema.Timestamp, "current_timestamp()", "", deltaerr.ErrUnsupportedFeature},
		{schema.Integer, "1 + 1", "", deltaerr.ErrUnsupportedFeature},
		{schema.Integer, "other_column", "", deltaerr.ErrUnsupportedFeature},
		{schema.Integer, "'abc'", "", ErrInvalidSpec},
		{schema.Date, "DATE 'x'", "", ErrInvalidSpec},
	} {
		f := defaultField("c", tt.typ, tt.sql)
		raw, _ := f.Metadata.Get(schema.MetadataCurrentDefault)
		v, err := parseDefault(&f, raw)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s DEFAULT %s: %v, want %v", tt.typ, tt.sql, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s DEFAULT %s: %v", tt.typ, tt.sql, err)
			continue
		}
		got := v.String()
		if v.IsNull() {
			got = "NULL"
		}
		if got != tt.want && !(len(got) > len(tt.want) && got[:len(tt.want)] == tt.want) {
			t.Errorf("%s DEFAULT %s = %s, want %s", tt.typ, tt.sql, got, tt.want)
		}
	}
}

// TestNewTableDefaults: a column default turns allowColumnDefaults on
// (writer 7), and NewTable refuses what Spark and the protocol refuse.
func TestNewTableDefaults(t *testing.T) {
	p, _, err := NewTable(TableSpec{Schema: st(field("id", schema.Long), defaultField("n", schema.Integer, "0"))})
	if err != nil {
		t.Fatal(err)
	}
	if p.MinWriterVersion != 7 || !slices.Contains(p.WriterFeatures, actions.FeatureAllowColumnDefaults) {
		t.Errorf("protocol %+v, want writer 7 with %s", p, actions.FeatureAllowColumnDefaults)
	}
	for name, spec := range map[string]TableSpec{
		"not a literal": {Schema: st(defaultField("ts", schema.Timestamp, "now()"))},
		"not the type":  {Schema: st(defaultField("n", schema.Integer, "'x'"))},
		"identity": {Schema: st(schema.StructField{Name: "id", Type: schema.Long, Nullable: true,
			Metadata: append(schema.IdentityMetadata(schema.Identity{Start: 1, Step: 1}), schema.MetadataEntry{Key: schema.MetadataCurrentDefault, Value: []byte(`"1"`)})})},
		"nested": {Schema: st(schema.StructField{Name: "s", Type: st(defaultField("n", schema.Integer, "1")), Nullable: true})},
	} {
		if _, _, err := NewTable(spec); !errors.Is(err, deltaerr.ErrInvalidArgument) && !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
			t.Errorf("%s: %v, want a typed error", name, err)
		}
	}
}

// TestAppendDefaults: new rows that give no value get the default; rows
// a rewrite keeps keep their null (a default applies to writes only);
// MERGE-style inserts (Rewrite's Insert) get defaults too.
func TestAppendDefaults(t *testing.T) {
	ctx := t.Context()
	spec := TableSpec{Schema: st(field("id", schema.Long), defaultField("n", schema.Integer, "-1"), defaultField("s", schema.String, "'none'"))}
	snap := newSnapshot(t, spec)
	null := schema.Value{}
	res, err := Append(ctx, snap, batchOf(
		[]schema.Value{l(1), null, null},
		[]schema.Value{l(2), in(5), s("given")},
	), CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap = post(t, res)
	show := func(v []schema.Value) string { return showRow(snap.Schema(), v) }
	var got []string
	sc, err := scan.New(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for r, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, show(r.Values()))
	}
	slices.Sort(got)
	want := []string{"{id: 1, n: -1, s: none}", "{id: 2, n: 5, s: given}"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	// A rewrite keeps rows as they are and fills the inserted ones.
	var files []*actions.Add
	for f, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	r, err := Rewrite(ctx, snap, files, func(_ *actions.Add, _ int64, row []schema.Value) (Verdict, []schema.Value, error) {
		if row[0].Int64() == 2 {
			return Update, []schema.Value{row[0], null, row[2]}, nil
		}
		return Keep, nil, nil
	}, RewriteOptions{Copy: true, Insert: func() (iter.Seq2[Batch, error], error) { return batchOf([]schema.Value{l(3), null, s("x")}), nil }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Inserted != 1 || r.Updated != 1 {
		t.Errorf("inserted %d, updated %d", r.Inserted, r.Updated)
	}
	fr, err := scan.NewFileReader(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	got = nil
	for i := range r.Adds {
		err := fr.ReadFile(ctx, &r.Adds[i], func(b *scan.FileBatch) error {
			for j := range b.Len {
				got = append(got, show([]schema.Value{b.Columns[0][j], b.Columns[1][j], b.Columns[2][j]}))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(got)
	// The updated row keeps the null it was given; the inserted one gets
	// the default.
	want = []string{"{id: 1, n: -1, s: none}", "{id: 2, n: null, s: given}", "{id: 3, n: -1, s: x}"}
	if !slices.Equal(got, want) {
		t.Errorf("rewritten rows %v, want %v", got, want)
	}
}
