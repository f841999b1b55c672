package checkpoint

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// fakeState is a State held in slices.
type fakeState struct {
	p     actions.Protocol
	m     actions.Metadata
	s     *schema.StructType
	files []*actions.Add
}

func (f *fakeState) Version() int64             { return 3 }
func (f *fakeState) Protocol() actions.Protocol { return f.p }
func (f *fakeState) Metadata() actions.Metadata { return f.m }
func (f *fakeState) Schema() *schema.StructType { return f.s }
func (f *fakeState) Files(context.Context) iter.Seq2[*actions.Add, error] {
	return func(yield func(*actions.Add, error) bool) {
		for _, a := range f.files {
			if !yield(a, nil) {
				return
			}
		}
	}
}
func (f *fakeState) Tombstones(context.Context) iter.Seq2[*actions.Remove, error] {
	return func(func(*actions.Remove, error) bool) {}
}
func (f *fakeState) Txns(context.Context) iter.Seq2[actions.Txn, error] {
	return func(func(actions.Txn, error) bool) {}
}
func (f *fakeState) Domains(context.Context) iter.Seq2[actions.DomainMetadata, error] {
	return func(func(actions.DomainMetadata, error) bool) {}
}

// Config builds the configuration of p and m; a test that gives bad
// properties gets a nil Config, and Write then fails loudly.
func (f *fakeState) Config() *tableconfig.Config {
	c, _ := tableconfig.New(f.p, f.m)
	return c
}

// TestWriteParsedColumns reads partitionValues_parsed and stats_parsed
// back in preference to the string forms written next to them, under
// column mapping, and checks they say the same.
func TestWriteParsedColumns(t *testing.T) {
	const schemaString = `{"type":"struct","fields":[` +
		`{"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-id"}},` +
		`{"name":"d","type":"date","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-d"}},` +
		`{"name":"ts","type":"timestamp","nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-ts"}},` +
		`{"name":"dec","type":"decimal(5,2)","nullable":true,"metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-dec"}},` +
		`{"name":"b","type":"boolean","nullable":true,"metadata":{"delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-b"}}]}`
	sch, err := schema.Parse(schemaString)
	if err != nil {
		t.Fatal(err)
	}
	st := &fakeState{
		p: actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5},
		m: actions.Metadata{ID: "x", SchemaString: schemaString, PartitionColumns: []string{"d", "ts", "dec", "b"},
			Configuration: map[string]string{"delta.columnMapping.mode": "name", "delta.checkpoint.writeStatsAsStruct": "true"}},
		s: sch,
		files: []*actions.Add{
			{Path: "a", PartitionValues: map[string]string{"col-d": "2024-02-29", "col-ts": "2024-01-01T10:00:00.000001Z", "col-dec": "-1.50", "col-b": "true"},
				Stats: `{"numRecords":2,"minValues":{"col-id":-5},"maxValues":{"col-id":9},"nullCount":{"col-id":0}}`},
			{Path: "b", PartitionValues: map[string]string{"col-d": "", "col-ts": "", "col-dec": "", "col-b": "false"}},
		},
	}
	ctx := context.Background()
	store := memory.New()
	if _, err := Write(ctx, store, st, WriteOptions{Now: time.Now}); err != nil {
		t.Fatal(err)
	}
	testPreferParsed = true
	defer func() { testPreferParsed = false }()
	var got []*actions.Add
	err = Read(ctx, store, []string{deltalog.ClassicCheckpointKey(3)}, Add, func(b []actions.Action) error {
		for _, a := range b {
			got = append(got, a.Add)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d adds", len(got))
	}
	for i, a := range got {
		w := st.files[i]
		if !maps.Equal(a.PartitionValues, w.PartitionValues) {
			t.Errorf("%s: partition values from partitionValues_parsed %v, want %v", a.Path, a.PartitionValues, w.PartitionValues)
		}
	}
	if want := `{"numRecords":2,"minValues":{"col-id":-5},"maxValues":{"col-id":9},"nullCount":{"col-id":0}}`; got[0].Stats != want {
		t.Errorf("stats from stats_parsed %s, want %s", got[0].Stats, want)
	}
}

// TestParsedStatsValue reads stats into stats_parsed values, hostile ones
// included: a value that does not fit its column is null, malformed or
// too deeply nested JSON gives no stats_parsed, and nothing panics.
func TestParsedStatsValue(t *testing.T) {
	phys := &schema.StructType{Fields: []schema.StructField{
		{Name: "i", Type: schema.Integer, Nullable: true},
		{Name: "s", Type: schema.String, Nullable: true},
		{Name: "n", Type: &schema.StructType{Fields: []schema.StructField{
			{Name: "ts", Type: schema.Timestamp, Nullable: true},
			{Name: "d", Type: schema.DecimalType{Precision: 5, Scale: 2}, Nullable: true},
			{Name: "f", Type: schema.Double, Nullable: true},
		}}, Nullable: true},
	}}
	n := statsNode(phys, true)
	deep := `{"minValues":` + strings.Repeat(`{"n":`, 3000) + "1" + strings.Repeat("}", 3000) + "}"
	for _, tc := range []struct{ stats, want string }{
		{``, `<nil>`},
		{` `, `<nil>`},
		{`{}`, `[<nil> <nil> <nil> <nil> <nil>]`},
		{`{"numRecords":3,"minValues":{"i":1,"s":"a","n":{"ts":"2026-01-01T00:00:00.123Z","d":1.5,"f":"NaN"}},"tightBounds":false}`,
			`[3 [1 a [1767225600123000 150 NaN]] <nil> <nil> false]`},
		{`{"numRecords":"3","minValues":{"i":1e400,"s":1,"n":[1]},"maxValues":{"i":99999999999,"n":{"d":1.234,"ts":5}}}`,
			`[<nil> [<nil> <nil> <nil>] [<nil> <nil> [<nil> <nil> <nil>]] <nil> <nil>]`},
		{`{"nullCount":{"i":-1,"s":9223372036854775808,"n":{"f":2}},"unknown":{"deep":[[[]]]}}`,
			`[<nil> <nil> <nil> [-1 <nil> [<nil> <nil> 2]] <nil>]`},
		{`{"minValues":{"s":"a\ud800"}}`, "[<nil> [<nil> a\ufffd <nil>] <nil> <nil> <nil>]"},
		{"{\"minValues\":{\"s\":\"a\xffb\"}}", "[<nil> [<nil> a\ufffdb <nil>] <nil> <nil> <nil>]"},
		{`{"numRecords":1,"numRecords":null}`, `[<nil> <nil> <nil> <nil> <nil>]`},
		{`{"numRecords":3`, `<nil>`},
		{`{"numRecords":3} x`, `<nil>`},
		{`[1]`, `<nil>`},
		{`null`, `<nil>`},
		{deep, `<nil>`},
	} {
		got := fmt.Sprint(parsedStatsValue(n, tc.stats))
		if got != tc.want {
			t.Errorf("parsedStatsValue(%.60q) = %s, want %s", tc.stats, got, tc.want)
		}
	}
}
