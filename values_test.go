package delta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

// Go types of allTypesSchema, with pointers where a row may be null.
type (
	goPoint struct {
		X *int32
		Y *string
	}
	goNested struct {
		Inner *goPoint
		Pts   []*goPoint
		MM    map[string][]*int64
	}
	goAllTypes struct {
		B    *int8
		Sh   *int16
		I    *int32
		L    *int64
		F    *float32
		D    *float64
		Bo   *bool
		S    *string
		Bin  []byte
		Dt   *time.Time
		Ts   *time.Time
		Ntz  *time.Time
		D1   *big.Rat
		D2   *float64 // decimal(10,2) from and to a float64
		D3   *string  // decimal(38,18) from and to its text
		Pt   *goPoint `parquet:"st"`
		Arr  []*int32
		M    map[string]*int64
		Nest *goNested `parquet:"nested"`
		Note string    `parquet:"-"` // not a column
	}
)

func ptr[T any](v T) *T { return &v }

// goAllTypesRows are allTypesRows as Go values, the last row all nulls.
func goAllTypesRows() []goAllTypes {
	pt := func(x int32, y string) *goPoint { return &goPoint{X: &x, Y: &y} }
	row := func(k int64) goAllTypes {
		return goAllTypes{
			B: ptr(int8(-k)), Sh: ptr(int16(300 * k)), I: ptr(int32(70000 * k)), L: ptr(int64(1<<40 + k)),
			F: ptr(1.5 * float32(k)), D: ptr(-2.25 * float64(k)), Bo: ptr(k%2 == 0), S: ptr(fmt.Sprintf("s%d é", k)),
			Bin: []byte{0, byte(k), 255}, Dt: ptr(time.Unix((19000+k)*86400, 0).UTC()),
			Ts: ptr(time.UnixMicro(1_700_000_000_123_456 + k).UTC()), Ntz: ptr(time.UnixMicro(1_600_000_000_000_001 + k).UTC()),
			D1: big.NewRat(-k*7, 1), D2: ptr(float64(123456+k) / 100),
			D3: ptr("12345678901234567890." + fmt.Sprintf("%018d", k)),
			Pt: pt(int32(k), "p"), Arr: []*int32{ptr(int32(1)), nil, ptr(int32(k))},
			M: map[string]*int64{"a": ptr(k), "b": nil},
			Nest: &goNested{Inner: pt(2, "q"), Pts: []*goPoint{pt(3, "r"), nil},
				MM: map[string][]*int64{"k": {ptr(k)}}},
			Note: "dropped",
		}
	}
	return []goAllTypes{row(1), row(2), row(3), {}}
}

// TestAppendStructsRoundTripAllTypes writes structs covering every type of
// the all-types table and checks both that the rows are the ones
// AppendRows writes for the same values and that scan.All reads the
// structs back unchanged.
func TestAppendStructsRoundTripAllTypes(t *testing.T) {
	for _, mode := range []string{"none", "name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: allTypesSchema(), Properties: map[string]string{"delta.columnMapping.mode": mode}})
			if err != nil {
				t.Fatal(err)
			}
			in := goAllTypesRows()
			v, err := AppendStructs(ctx, tbl, slices.Values(in), WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if v.Version != 1 {
				t.Errorf("version %d, want 1", v.Version)
			}
			diffRows(t, scanRows(t, tbl), formatRows(allTypesRows(t)))
			validateLog(t, tbl)

			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s, err := tbl.Scan(snap, ScanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for r, err := range scan.All[goAllTypes](ctx, s) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, jsonOf(t, r))
			}
			var want []string
			for _, r := range in {
				r.Note = ""
				want = append(want, jsonOf(t, r))
			}
			slices.Sort(got)
			slices.Sort(want)
			diffRows(t, got, want)
		})
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAppendStructsBatches checks that a stream longer than a batch is
// written whole, and that OverwriteStructs replaces the rows.
func TestAppendStructsBatches(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}, nf("name", schema.String)}}
	tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID   uint32
		Name string
	}
	const n = 10_000 // more than one batch of write.DefaultStructBatchRows
	rows := func(yield func(row) bool) {
		for i := range n {
			if !yield(row{ID: uint32(i), Name: fmt.Sprint("r", i)}) {
				return
			}
		}
	}
	if _, err := AppendStructs(ctx, tbl, rows, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := scanRows(t, tbl); len(got) != n {
		t.Fatalf("%d rows, want %d", len(got), n)
	}
	if _, err := OverwriteStructs(ctx, tbl, slices.Values([]row{{ID: 7, Name: "only"}}), OverwriteOptions{}); err != nil {
		t.Fatal(err)
	}
	diffRows(t, scanRows(t, tbl), []string{"long:7 | string:only"})
}

func TestAppendStructsErrors(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		nf("small", schema.Byte),
		nf("amount", schema.DecimalType{Precision: 5, Scale: 2}),
		nf("label", schema.String),
	}}
	tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	type full struct {
		ID     *int64
		Small  int
		Amount string
		Label  any
	}
	type unknown struct {
		ID    int64
		Color string
	}
	type noID struct {
		Label string
	}
	tests := []struct {
		name   string
		append func() error
		is     []error
		msg    string
	}{
		{"overflow", func() error {
			_, err := AppendStructs(ctx, tbl, slices.Values([]full{{ID: ptr(int64(1)), Small: 1000, Amount: "1"}}), WriteOptions{})
			return err
		}, []error{ErrValueMismatch, deltaerr.ErrInvalidArgument}, "out of range of byte"},
		{"wrong type", func() error {
			_, err := AppendStructs(ctx, tbl, slices.Values([]full{{ID: ptr(int64(1)), Amount: "1", Label: 3}}), WriteOptions{})
			return err
		}, []error{ErrValueMismatch}, "column label"},
		{"decimal scale too big", func() error {
			_, err := AppendStructs(ctx, tbl, slices.Values([]full{{ID: ptr(int64(1)), Amount: "1.234"}}), WriteOptions{})
			return err
		}, []error{ErrValueMismatch}, "fraction digits"},
		{"decimal too many digits", func() error {
			_, err := AppendStructs(ctx, tbl, slices.Values([]full{{ID: ptr(int64(1)), Amount: "1234"}}), WriteOptions{})
			return err
		}, []error{ErrValueMismatch}, "more than 5 digits"},
		{"unknown field", func() error {
			_, err := AppendStructs(ctx, tbl, slices.Values([]unknown{{ID: 1, Color: "red"}}), WriteOptions{})
			return err
		}, []error{ErrNoColumn, deltaerr.ErrInvalidArgument}, "Color"},
		{"nil for NOT NULL", func() error {
			_, err := AppendStructs(ctx, tbl, slices.Values([]full{{Amount: "1"}}), WriteOptions{})
			return err
		}, []error{ErrConstraint}, "id"},
		{"no field for a NOT NULL column", func() error {
			_, err := AppendStructs(ctx, tbl, slices.Values([]noID{{Label: "x"}}), WriteOptions{})
			return err
		}, []error{ErrConstraint}, "id"},
		{"not a struct", func() error {
			_, err := AppendStructs(ctx, tbl, slices.Values([]int{1}), WriteOptions{})
			return err
		}, []error{deltaerr.ErrInvalidArgument}, "struct"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.append()
			if err == nil {
				t.Fatal("append succeeded")
			}
			for _, want := range tc.is {
				if !errors.Is(err, want) {
					t.Errorf("%v does not match %v", err, want)
				}
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%q does not say %q", err, tc.msg)
			}
			var ce *ConstraintError
			if errors.Is(err, ErrConstraint) && !errors.As(err, &ce) {
				t.Errorf("%v is not a *ConstraintError", err)
			}
		})
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != 0 {
		t.Errorf("refused appends committed: version %d", snap.Version())
	}
	// A good row goes in, fields mapped by name whatever their order.
	if _, err := AppendStructs(ctx, tbl, slices.Values([]full{{ID: ptr(int64(1)), Small: -3, Amount: "12.5", Label: "x"}}), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	diffRows(t, scanRows(t, tbl), []string{"long:1 | byte:-3 | decimal:12.50 | string:x"})
}
