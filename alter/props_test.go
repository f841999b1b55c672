package alter_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/alter"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/write"
)

func TestWidenColumn(t *testing.T) {
	s := create(t, "id INT, f FLOAT, d DATE, n DECIMAL(5,2), s STRUCT<b: SMALLINT>", nil)
	s = appendRows(t, s, []schema.Value{integer(7), schema.FloatValue(1.5), schema.DateValue(1), dec(t, 12345, 5, 2), strct(schema.ShortValue(3))})
	if _, err := alter.WidenColumn(ctx, s, path("id"), schema.Long, alter.Options{}); !errors.Is(err, alter.ErrTypeWideningDisabled) ||
		!strings.Contains(err.Error(), tableconfig.KeyEnableTypeWidening) {
		t.Fatalf("widen without the property: %v", err)
	}
	res, err := alter.SetProperties(ctx, s, map[string]string{tableconfig.KeyEnableTypeWidening: "true"}, alter.Options{})
	s = must(t, s, res, err)
	if p := s.Protocol(); p.MinReaderVersion != 3 || !slices.Contains(p.ReaderFeatures, actions.FeatureTypeWidening) || !slices.Contains(p.WriterFeatures, actions.FeatureTypeWidening) {
		t.Fatalf("protocol %+v: want typeWidening on 3/7", p)
	}
	for _, c := range []struct {
		col string
		to  schema.DataType
	}{
		{"id", schema.Long}, {"f", schema.Double}, {"d", schema.TimestampNTZ},
		{"n", schema.DecimalType{Precision: 8, Scale: 3}}, {"s.b", schema.Integer},
	} {
		res, err := alter.WidenColumn(ctx, s, path(c.col), c.to, alter.Options{})
		s = must(t, s, res, err)
		if op, params := lastOperation(t, s); op != alter.OpChangeColumn || !strings.Contains(params["column"].(string), c.to.String()) {
			t.Fatalf("commitInfo %s %v", op, params)
		}
	}
	// The old file reads as the wider types.
	equal(t, read(t, s), []string{"id=7 f=1.5 d=1970-01-02T00:00:00 n=123.450 s={3}"})
	sc := s.Schema()
	if f, _ := sc.Field("id"); f.Type != schema.Long {
		t.Fatalf("id is %s", f.Type)
	}
	f, _ := sc.Field("n")
	raw, _ := f.Metadata.Get(alter.MetadataTypeChanges)
	var hist []map[string]string
	if err := json.Unmarshal(raw, &hist); err != nil || len(hist) != 1 || hist[0]["fromType"] != "decimal(5,2)" || hist[0]["toType"] != "decimal(8,3)" {
		t.Fatalf("delta.typeChanges %s (%v)", raw, err)
	}
	if p := s.Protocol(); !slices.Contains(p.ReaderFeatures, actions.FeatureTimestampNtz) {
		t.Fatalf("date to timestamp_ntz without timestampNtz: %+v", p)
	}
	// New rows use the new types; the old file still reads.
	s = appendRows(t, s, []schema.Value{long(1 << 40), schema.DoubleValue(2.25), schema.TimestampNTZValue(0), dec(t, 1, 8, 3), strct(integer(1 << 20))})
	equal(t, read(t, s), []string{"id=7 f=1.5 d=1970-01-02T00:00:00 n=123.450 s={3}",
		"id=1099511627776 f=2.25 d=1970-01-01T00:00:00 n=0.001 s={1048576}"})
	// A predicate on the widened column finds the old file's row.
	q, err := scan.New(s, scan.Options{Predicate: mustParse(t, "id = 7 AND d < '1970-01-03'")})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r, err := range q.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		_ = r
		n++
	}
	if n != 1 {
		t.Fatalf("id = 7 finds %d rows, want 1", n)
	}
	for _, c := range []struct {
		col string
		to  schema.DataType
	}{
		{"id", schema.Integer}, {"f", schema.Long}, {"n", schema.DecimalType{Precision: 9, Scale: 5}}, {"id", schema.String},
	} {
		if _, err := alter.WidenColumn(ctx, s, path(c.col), c.to, alter.Options{}); !errors.Is(err, alter.ErrInvalidChange) {
			t.Errorf("widen %s to %s: %v, want ErrInvalidChange", c.col, c.to, err)
		}
	}
}

func mustParse(t *testing.T, text string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func dec(t *testing.T, unscaled int64, p, s int) schema.Value {
	v, err := schema.DecimalValueInt64(unscaled, p, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCanWiden(t *testing.T) {
	d := func(p, s int) schema.DataType { return schema.DecimalType{Precision: p, Scale: s} }
	for _, c := range []struct {
		from, to schema.DataType
		ok, ice  bool
	}{
		{schema.Byte, schema.Short, true, true}, {schema.Short, schema.Long, true, true}, {schema.Long, schema.Integer, false, false},
		{schema.Integer, schema.Double, true, false}, {schema.Long, schema.Double, false, false}, {schema.Float, schema.Double, true, true},
		{schema.Date, schema.TimestampNTZ, true, false}, {schema.Date, schema.Timestamp, false, false},
		{d(10, 2), d(12, 2), true, true}, {d(10, 2), d(12, 4), true, false}, {d(10, 2), d(11, 4), false, false}, {d(10, 2), d(10, 2), false, false},
		{schema.Integer, d(10, 0), true, false}, {schema.Integer, d(11, 2), false, false}, {schema.Long, d(20, 0), true, false}, {schema.Long, d(19, 0), false, false},
	} {
		if got := write.CanWiden(c.from, c.to, false); got != c.ok {
			t.Errorf("%s -> %s: %v, want %v", c.from, c.to, got, c.ok)
		}
		if got := write.CanWiden(c.from, c.to, true); got != c.ice {
			t.Errorf("%s -> %s under icebergCompat: %v, want %v", c.from, c.to, got, c.ice)
		}
	}
}

func TestSetUnsetProperties(t *testing.T) {
	s := create(t, "id BIGINT", nil)
	res, err := alter.SetProperties(ctx, s, map[string]string{"owner": "ops", tableconfig.KeyCheckpointInterval: "5"}, alter.Options{})
	s = must(t, s, res, err)
	if s.Config().CheckpointInterval() != 5 || s.Metadata().Configuration["owner"] != "ops" {
		t.Fatalf("configuration %v", s.Metadata().Configuration)
	}
	if p := s.Protocol(); p.MinReaderVersion != 1 || p.MinWriterVersion != 2 {
		t.Fatalf("protocol %+v changed for plain properties", p)
	}
	if op, params := lastOperation(t, s); op != alter.OpSetProperties || !strings.Contains(params["properties"].(string), `"owner":"ops"`) {
		t.Fatalf("commitInfo %s %v", op, params)
	}
	for _, props := range []map[string]string{
		{"delta.noSuchThing": "1"},
		{tableconfig.KeyCheckpointInterval: "abc"},
		{tableconfig.KeyAppendOnly: "maybe"},
	} {
		_, err := alter.SetProperties(ctx, s, props, alter.Options{})
		var pe *tableconfig.PropertyError
		if !errors.As(err, &pe) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("set %v: %v, want a *PropertyError", props, err)
		}
	}
	if _, err := alter.SetProperties(ctx, s, map[string]string{"delta.constraints.c": "id > 0"}, alter.Options{}); !errors.Is(err, alter.ErrInvalidChange) {
		t.Errorf("constraint through SET: %v", err)
	}
	res, err = alter.SetProperties(ctx, s, map[string]string{tableconfig.KeyEnableDeletionVectors: "true"}, alter.Options{})
	s = must(t, s, res, err)
	p := s.Protocol()
	if p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || !slices.Equal(p.ReaderFeatures, []string{actions.FeatureDeletionVectors}) ||
		!slices.Equal(p.WriterFeatures, []string{actions.FeatureAppendOnly, actions.FeatureDeletionVectors, actions.FeatureInvariants}) {
		t.Fatalf("protocol %+v", p)
	}
	res, err = alter.UnsetProperties(ctx, s, []string{"owner"}, false, alter.Options{})
	s = must(t, s, res, err)
	if _, ok := s.Metadata().Configuration["owner"]; ok {
		t.Fatal("owner still set")
	}
	if _, err := alter.UnsetProperties(ctx, s, []string{"owner"}, false, alter.Options{}); !errors.Is(err, alter.ErrPropertyNotFound) {
		t.Fatalf("unset missing: %v", err)
	}
	res, err = alter.UnsetProperties(ctx, s, []string{"owner"}, true, alter.Options{})
	s = must(t, s, res, err)
	if op, params := lastOperation(t, s); op != alter.OpUnsetProperties || params["ifExists"] != true {
		t.Fatalf("commitInfo %s %v", op, params)
	}
}

func TestConstraints(t *testing.T) {
	s := create(t, "id BIGINT, v INT", nil)
	s = appendRows(t, s, []schema.Value{long(1), integer(5)}, []schema.Value{long(2), integer(-3)})
	_, err := alter.AddConstraint(ctx, s, "positive", "v > 0", alter.Options{})
	var ce *write.ConstraintError
	if !errors.As(err, &ce) || !errors.Is(err, write.ErrConstraint) || !strings.Contains(ce.Values, "-3") {
		t.Fatalf("add violated constraint: %v", err)
	}
	if _, err := alter.AddConstraint(ctx, s, "bad", "nope > 0", alter.Options{}); !errors.Is(err, write.ErrInvalidSpec) {
		t.Fatalf("constraint on a missing column: %v", err)
	}
	res, err := alter.AddConstraint(ctx, s, "big", "v > -10", alter.Options{})
	s = must(t, s, res, err)
	if p := s.Protocol(); p.MinWriterVersion != 3 {
		t.Fatalf("protocol %+v, want writer 3", p)
	}
	if op, params := lastOperation(t, s); op != alter.OpAddConstraint || params["name"] != "big" || params["expr"] != "v > -10" {
		t.Fatalf("commitInfo %s %v", op, params)
	}
	if _, err := alter.AddConstraint(ctx, s, "BIG", "v > 0", alter.Options{}); !errors.Is(err, alter.ErrInvalidChange) {
		t.Fatalf("duplicate name: %v", err)
	}
	// The constraint binds new rows.
	if _, err := write.Append(ctx, s, rows([]schema.Value{long(3), integer(-20)}), write.CommitOptions{}); !errors.Is(err, write.ErrConstraint) {
		t.Fatalf("append breaking the constraint: %v", err)
	}
	// A null fails a CHECK constraint.
	s = appendRows(t, s, []schema.Value{long(4), integer(0)})
	res, err = alter.DropConstraint(ctx, s, "Big", false, alter.Options{})
	s = must(t, s, res, err)
	if len(s.Config().Constraints()) != 0 {
		t.Fatal("constraint still there")
	}
	if op, params := lastOperation(t, s); op != alter.OpDropConstraint || params["existed"] != "true" || params["expr"] != "v > -10" {
		t.Fatalf("commitInfo %s %v", op, params)
	}
	if _, err := alter.DropConstraint(ctx, s, "big", false, alter.Options{}); !errors.Is(err, alter.ErrConstraintNotFound) {
		t.Fatalf("drop missing: %v", err)
	}
	if res, err := alter.DropConstraint(ctx, s, "big", true, alter.Options{}); err != nil || res.Version != 0 {
		t.Fatalf("drop missing IF EXISTS: %v %v", res, err)
	}
	s = appendRows(t, s, []schema.Value{long(5), schema.Value{}})
	if _, err := alter.AddConstraint(ctx, s, "notnull", "v IS NOT NULL OR v > 0", alter.Options{}); !errors.As(err, &ce) {
		t.Fatalf("constraint a null row breaks: %v", err)
	}
}

func TestEnableFeature(t *testing.T) {
	for _, c := range []struct {
		feature string
		start   map[string]string
		r, w    int32
		rf, wf  []string
	}{
		{"deletionVectors", nil, 3, 7, []string{"deletionVectors"}, []string{"appendOnly", "deletionVectors", "invariants"}},
		{"changeDataFeed", nil, 1, 4, nil, nil},
		{"checkConstraints", nil, 1, 3, nil, nil},
		{"vacuumProtocolCheck", nil, 3, 7, []string{"vacuumProtocolCheck"}, []string{"appendOnly", "invariants", "vacuumProtocolCheck"}},
		{"domainMetadata", nil, 1, 7, nil, []string{"appendOnly", "domainMetadata", "invariants"}},
		{"deletionVectors", map[string]string{tableconfig.KeyColumnMappingMode: "name"}, 3, 7, []string{"columnMapping", "deletionVectors"},
			[]string{"appendOnly", "changeDataFeed", "checkConstraints", "columnMapping", "deletionVectors", "generatedColumns", "invariants"}},
	} {
		t.Run(c.feature, func(t *testing.T) {
			s := create(t, "id BIGINT", c.start)
			res, err := alter.EnableFeature(ctx, s, c.feature, alter.Options{})
			s = must(t, s, res, err)
			p := s.Protocol()
			if p.MinReaderVersion != c.r || p.MinWriterVersion != c.w || !slices.Equal(p.ReaderFeatures, c.rf) || !slices.Equal(p.WriterFeatures, c.wf) {
				t.Fatalf("protocol %+v, want %d/%d %v %v", p, c.r, c.w, c.rf, c.wf)
			}
			if !s.Config().IsFeatureSupported(c.feature) {
				t.Fatal("feature not supported")
			}
			// Again: nothing to do.
			if res, err := alter.EnableFeature(ctx, s, c.feature, alter.Options{}); err != nil || res.Version != 0 {
				t.Fatalf("enable again: %v %v", res, err)
			}
		})
	}
	s := create(t, "id BIGINT", nil)
	if _, err := alter.EnableFeature(ctx, s, "noSuchFeature", alter.Options{}); !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
		t.Fatalf("unknown feature: %v", err)
	}
}

// TestAddConstraintConcurrentAppend: rows appended after the snapshot an
// ADD CONSTRAINT starts from are checked too (the transaction read the
// whole table, so the append is a conflict and the check runs again).
func TestAddConstraintConcurrentAppend(t *testing.T) {
	s0 := create(t, "id BIGINT, v INT", nil)
	s0 = appendRows(t, s0, []schema.Value{long(1), integer(5)})
	appendRows(t, s0, []schema.Value{long(2), integer(-1)}) // after s0
	_, err := alter.AddConstraint(ctx, s0, "positive", "v > 0", alter.Options{})
	var ce *write.ConstraintError
	if !errors.As(err, &ce) || !strings.Contains(ce.Values, "-1") {
		t.Fatalf("constraint added over a concurrent violating row: %v", err)
	}
}

func TestWidenPartitionColumn(t *testing.T) {
	s := create(t, "id BIGINT, p INT, d DATE", map[string]string{tableconfig.KeyEnableTypeWidening: "true"}, "p", "d")
	s = appendRows(t, s, []schema.Value{long(1), integer(7), schema.DateValue(3)})
	res, err := alter.WidenColumn(ctx, s, path("p"), schema.Long, alter.Options{})
	s = must(t, s, res, err)
	equal(t, read(t, s), []string{"id=1 p=7 d=1970-01-04"})
	if _, err := alter.WidenColumn(ctx, s, path("d"), schema.TimestampNTZ, alter.Options{}); !errors.Is(err, alter.ErrInvalidChange) {
		t.Fatalf("date partition column to timestamp_ntz: %v", err)
	}
}

// TestSparkPropertyForms: property sets Spark writes (seen in the corpus'
// Spark and Databricks commits) give the protocol Spark gave.
func TestSparkPropertyForms(t *testing.T) {
	// kernel-rs/type-widening: a feature named in lower case.
	s := create(t, "id INT", nil)
	res, err := alter.SetProperties(ctx, s, map[string]string{tableconfig.KeyEnableTypeWidening: "true", "delta.feature.timestampntz": "supported"}, alter.Options{})
	s = must(t, s, res, err)
	p := s.Protocol()
	if p.MinReaderVersion != 3 || !slices.Equal(p.ReaderFeatures, []string{"timestampNtz", "typeWidening"}) ||
		!slices.Equal(p.WriterFeatures, []string{"appendOnly", "invariants", "timestampNtz", "typeWidening"}) {
		t.Fatalf("protocol %+v", p)
	}
	if _, ok := s.Metadata().Configuration["delta.feature.timestampntz"]; ok {
		t.Fatal("a feature property was stored")
	}
	// delta-rs/table_with_partitioning_mapping: column mapping with
	// protocol versions, on a deletion-vector table.
	s = create(t, "id INT, description STRING", map[string]string{tableconfig.KeyEnableDeletionVectors: "true"}, "id")
	s = appendRows(t, s, []schema.Value{integer(1), str("a")})
	res, err = alter.SetProperties(ctx, s, map[string]string{tableconfig.KeyColumnMappingMode: "name", "delta.minReaderVersion": "2", "delta.minWriterVersion": "5"}, alter.Options{})
	s = must(t, s, res, err)
	p = s.Protocol()
	if p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || !slices.Equal(p.ReaderFeatures, []string{"columnMapping", "deletionVectors"}) ||
		!slices.Equal(p.WriterFeatures, []string{"appendOnly", "changeDataFeed", "checkConstraints", "columnMapping", "deletionVectors", "generatedColumns", "invariants"}) {
		t.Fatalf("protocol %+v", p)
	}
	if got := s.Metadata().Configuration; got["delta.minReaderVersion"] != "" || got[tableconfig.KeyColumnMappingMaxColumnID] != "2" {
		t.Fatalf("configuration %v", got)
	}
	equal(t, read(t, s), []string{"id=1 description=a"})
	// Versions alone, on a legacy table.
	s = create(t, "id INT", nil)
	res, err = alter.SetProperties(ctx, s, map[string]string{"delta.minWriterVersion": "4"}, alter.Options{})
	s = must(t, s, res, err)
	if p := s.Protocol(); p.MinReaderVersion != 1 || p.MinWriterVersion != 4 {
		t.Fatalf("protocol %+v, want 1/4", p)
	}
	if _, err := alter.SetProperties(ctx, s, map[string]string{"delta.minWriterVersion": "9"}, alter.Options{}); err == nil {
		t.Fatal("writer version 9 accepted")
	}
}
