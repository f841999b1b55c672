package delta_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

type schemaAddress struct {
	City string  `parquet:"city"`
	Zip  *string `parquet:"zip"`
}

type schemaEvent struct {
	ID     int64     `parquet:"id"`
	At     time.Time `parquet:"at"`
	Day    time.Time `parquet:"day,date"`
	Wall   time.Time `parquet:"wall,timestamp_ntz"`
	Amount *big.Rat  `parquet:"amount,decimal(10,2)"`
	Fee    big.Rat   `parquet:"fee,decimal(5,3)"`
	Score  *float64
	Tiny   int8
	Small  int16  `parquet:"small,optional"`
	Int    int32  `parquet:",optional"`
	U8     uint8  `parquet:"u8"`
	U16    uint16 `parquet:"u16"`
	U32    uint32 `parquet:"u32"`
	U64    uint64 `parquet:"u64"`
	N      int    `parquet:"n"`
	F32    float32
	Flag   bool               `parquet:"flag,snappy"` // a parquet-go option is ignored
	Raw    []byte             `parquet:"raw"`
	Tags   []string           `parquet:"tags"`
	Opt    []*int32           `parquet:"opt"`
	Days   []time.Time        `parquet:"days,date"`
	Attrs  map[string]int64   `parquet:"attrs"`
	Prices map[int32]*big.Rat `parquet:"prices,decimal(4,1)"`
	Home   schemaAddress      `parquet:"home"`
	Past   []schemaAddress    `parquet:"past"`
	Prev   *schemaAddress     `parquet:"prev"`
	Debug  string             `parquet:"-"`
	hidden int
}

// SchemaFor gives the schema a struct binds to, by the binding's own
// rules (tag name, else the field's name; `parquet:"-"` and unexported
// fields left out), non-pointer fields NOT NULL, pointers, slices and
// maps nullable; a table created with it takes the struct's rows from
// AppendStructs and gives them back through scan.All unchanged.
// (Issue 30, item 12.)
func TestSchemaFor(t *testing.T) {
	sch, err := delta.SchemaFor[schemaEvent]()
	if err != nil {
		t.Fatal(err)
	}
	want, err := schema.Parse(`{"type":"struct","fields":[
		{"name":"id","type":"long","nullable":false,"metadata":{}},
		{"name":"at","type":"timestamp","nullable":false,"metadata":{}},
		{"name":"day","type":"date","nullable":false,"metadata":{}},
		{"name":"wall","type":"timestamp_ntz","nullable":false,"metadata":{}},
		{"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},
		{"name":"fee","type":"decimal(5,3)","nullable":false,"metadata":{}},
		{"name":"Score","type":"double","nullable":true,"metadata":{}},
		{"name":"Tiny","type":"byte","nullable":false,"metadata":{}},
		{"name":"small","type":"short","nullable":true,"metadata":{}},
		{"name":"Int","type":"integer","nullable":true,"metadata":{}},
		{"name":"u8","type":"short","nullable":false,"metadata":{}},
		{"name":"u16","type":"integer","nullable":false,"metadata":{}},
		{"name":"u32","type":"long","nullable":false,"metadata":{}},
		{"name":"u64","type":"long","nullable":false,"metadata":{}},
		{"name":"n","type":"long","nullable":false,"metadata":{}},
		{"name":"F32","type":"float","nullable":false,"metadata":{}},
		{"name":"flag","type":"boolean","nullable":false,"metadata":{}},
		{"name":"raw","type":"binary","nullable":true,"metadata":{}},
		{"name":"tags","type":{"type":"array","elementType":"string","containsNull":false},"nullable":true,"metadata":{}},
		{"name":"opt","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{}},
		{"name":"days","type":{"type":"array","elementType":"date","containsNull":false},"nullable":true,"metadata":{}},
		{"name":"attrs","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":false},"nullable":true,"metadata":{}},
		{"name":"prices","type":{"type":"map","keyType":"integer","valueType":"decimal(4,1)","valueContainsNull":true},"nullable":true,"metadata":{}},
		{"name":"home","type":{"type":"struct","fields":[
			{"name":"city","type":"string","nullable":false,"metadata":{}},
			{"name":"zip","type":"string","nullable":true,"metadata":{}}]},"nullable":false,"metadata":{}},
		{"name":"past","type":{"type":"array","elementType":{"type":"struct","fields":[
			{"name":"city","type":"string","nullable":false,"metadata":{}},
			{"name":"zip","type":"string","nullable":true,"metadata":{}}]},"containsNull":false},"nullable":true,"metadata":{}},
		{"name":"prev","type":{"type":"struct","fields":[
			{"name":"city","type":"string","nullable":false,"metadata":{}},
			{"name":"zip","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}
	]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, sch), mustJSON(t, want); got != want {
		t.Fatalf("SchemaFor:\n%s\nwant:\n%s", got, want)
	}
	if other, err := delta.SchemaOf(&schemaEvent{}); err != nil || mustJSON(t, other) != mustJSON(t, sch) {
		t.Errorf("SchemaOf(&v) = %v, %v; want SchemaFor's", other, err)
	}
	if other, err := delta.SchemaOf(schemaEvent{}); err != nil || mustJSON(t, other) != mustJSON(t, sch) {
		t.Errorf("SchemaOf(v) = %v, %v; want SchemaFor's", other, err)
	}

	// The round trip.
	ctx := context.Background()
	tbl, err := delta.Create(ctx, "memory://schema-for-round-trip", delta.TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	zip, score, seven := "75001", 0.5, int32(7)
	rows := []schemaEvent{
		{
			ID: 1, At: time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC), Day: time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC),
			Wall: time.Date(2026, 3, 4, 23, 59, 0, 1000, time.UTC), Amount: big.NewRat(-123456, 100), Fee: *big.NewRat(12345, 1000),
			Score: &score, Tiny: -8, Small: 300, Int: -70000, U8: 255, U16: 65535, U32: 1<<32 - 1, U64: 1 << 62, N: -5,
			F32: 1.5, Flag: true, Raw: []byte{0, 1, 2}, Tags: []string{"a", "b"}, Opt: []*int32{&seven, nil},
			Days:  []time.Time{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
			Attrs: map[string]int64{"x": 1, "y": 2}, Prices: map[int32]*big.Rat{1: big.NewRat(15, 10), 2: nil},
			Home: schemaAddress{City: "Paris", Zip: &zip}, Past: []schemaAddress{{City: "Lyon"}}, Prev: &schemaAddress{City: "Nice"},
		},
		{ID: 2, Tags: []string{}, Attrs: map[string]int64{}, Home: schemaAddress{City: ""}}, // zero values, nils
	}
	for i := range rows {
		rows[i].Debug, rows[i].hidden = "not stored", 42
	}
	if _, err := delta.AppendStructs(ctx, tbl, slices.Values(rows), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []schemaEvent
	for e, err := range scan.All[schemaEvent](ctx, s) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	slices.SortFunc(got, func(a, b schemaEvent) int { return int(a.ID - b.ID) })
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, want %d", len(got), len(rows))
	}
	for i := range rows {
		w, g := rows[i], got[i]
		w.Debug, w.hidden = "", 0
		// Decimals compare by value; the rest as they are.
		if !sameRat(w.Amount, g.Amount) || w.Fee.Cmp(&g.Fee) != 0 || len(w.Prices) != len(g.Prices) {
			t.Errorf("row %d: decimals %v %v %v, want %v %v %v", i, g.Amount, &g.Fee, g.Prices, w.Amount, &w.Fee, w.Prices)
		}
		for k, v := range w.Prices {
			if !sameRat(v, g.Prices[k]) {
				t.Errorf("row %d: prices[%d] = %v, want %v", i, k, g.Prices[k], v)
			}
		}
		w.Amount, g.Amount, w.Fee, g.Fee, w.Prices, g.Prices = nil, nil, big.Rat{}, big.Rat{}, nil, nil
		if !reflect.DeepEqual(w, g) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func sameRat(a, b *big.Rat) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Cmp(b) == 0
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type schemaNode struct {
	Name     string
	Children []schemaNode
}

type schemaBase struct{ ID int64 }

type schemaEmbeds struct {
	schemaBase        // unexported: left out, as the binding leaves it
	Name       string `parquet:"name"`
}

// What SchemaFor refuses names the field and the reason.
func TestSchemaForRefuses(t *testing.T) {
	check := func(name string, got *schema.StructType, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, delta.ErrInvalidArgument) {
			t.Errorf("%s: %v, %v; want an invalid-argument error with %q", name, got, err, want)
		}
	}
	s, err := delta.SchemaFor[struct{ C chan int }]()
	check("chan", s, err, "field C: Go type chan int has no Delta type")
	s, err = delta.SchemaFor[struct{ C complex128 }]()
	check("complex", s, err, "field C: Go type complex128 has no Delta type")
	s, err = delta.SchemaFor[struct{ A any }]()
	check("any", s, err, "field A: Go type interface {} has no Delta type")
	s, err = delta.SchemaFor[struct{ V schema.Value }]()
	check("schema.Value", s, err, "field V: Go type schema.Value has no Delta type")
	s, err = delta.SchemaFor[struct{ A [4]byte }]()
	check("array", s, err, "field A: Go type [4]uint8 has no Delta type (use a slice)")
	s, err = delta.SchemaFor[struct{ M map[*string]int }]()
	check("pointer key", s, err, "field M: a map key cannot be null")
	s, err = delta.SchemaFor[struct{ R *big.Rat }]()
	check("rat without decimal", s, err, "field R: a big.Rat needs the tag option decimal(p,s)")
	s, err = delta.SchemaFor[struct {
		I int64 `parquet:"i,decimal(10,2)"`
	}]()
	check("decimal on int", s, err, "field I: the tag option decimal(10,2) applies to big.Rat")
	s, err = delta.SchemaFor[struct {
		R big.Rat `parquet:"r,decimal(40,2)"`
	}]()
	check("decimal precision", s, err, "field R: the tag option decimal(40,2) is not decimal(p,s)")
	s, err = delta.SchemaFor[struct {
		R big.Rat `parquet:"r,decimal(2:10)"`
	}]()
	check("decimal form", s, err, "field R: the tag option decimal(2:10) is not decimal(p,s)")
	s, err = delta.SchemaFor[struct {
		S string `parquet:"s,date"`
	}]()
	check("date on string", s, err, "field S: the tag option date applies to time.Time")
	s, err = delta.SchemaFor[struct {
		T time.Time `parquet:"t,date,timestamp_ntz"`
	}]()
	check("date and ntz", s, err, "field T: the tag options date and timestamp_ntz")
	s, err = delta.SchemaFor[struct {
		ID  int64
		Key int64 `parquet:"id"`
	}]()
	check("duplicate", s, err, `fields ID and Key both name column "id"`)
	s, err = delta.SchemaFor[schemaNode]()
	check("recursive", s, err, "field Children: type delta_test.schemaNode contains itself")
	s, err = delta.SchemaFor[int]()
	check("not a struct", s, err, "int is not a struct")
	s, err = delta.SchemaOf(nil)
	check("nil", s, err, "not a struct")
	s, err = delta.SchemaFor[struct{ _ int }]()
	check("no column", s, err, "no column")

	// Unexported embedded structs are left out, as the binding leaves
	// them out.
	if s, err := delta.SchemaFor[schemaEmbeds](); err != nil || len(s.Fields) != 1 || s.Fields[0].Name != "name" {
		t.Errorf("embedded: %v, %v", s, err)
	}
}
