package write

import (
	"errors"
	"testing"

	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/schema/govalue"
)

// TestStructBatches checks the batch sizes, that columns are filled by
// name (a column with no field is null), and that rows are pulled only as
// batches are asked for.
func TestStructBatches(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "b", Type: schema.String, Nullable: true},
		{Name: "a", Type: schema.Long},
		{Name: "missing", Type: schema.Integer, Nullable: true},
	}}
	type row struct {
		A int
		B string
	}
	pulled := 0
	rows := func(yield func(row) bool) {
		for i := range 5 {
			pulled++
			if !yield(row{A: i, B: string(rune('p' + i))}) {
				return
			}
		}
	}
	var sizes []int
	var firstA []int64
	for b, err := range StructBatches(sch, rows, 2) {
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, b.Len)
		firstA = append(firstA, b.Columns[1][0].Int64())
		if got := b.Columns[0][0].String(); got != string(rune('p'+firstA[len(firstA)-1])) {
			t.Errorf("column b = %q", got)
		}
		if !b.Columns[2][0].IsNull() {
			t.Errorf("column missing = %s, want null", b.Columns[2][0])
		}
	}
	if want := []int{2, 2, 1}; len(sizes) != 3 || sizes[0] != want[0] || sizes[1] != want[1] || sizes[2] != want[2] {
		t.Errorf("batch sizes %v, want %v", sizes, want)
	}
	if firstA[1] != 2 || firstA[2] != 4 {
		t.Errorf("first rows %v", firstA)
	}

	pulled = 0
	for _, err := range StructBatches(sch, rows, 2) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if pulled != 2 {
		t.Errorf("stopping after one batch pulled %d rows, want 2", pulled)
	}

	type extra struct {
		A     int
		Color string
	}
	for _, err := range StructBatches(sch, func(yield func(extra) bool) { yield(extra{}) }, 0) {
		if !errors.Is(err, govalue.ErrNoColumn) {
			t.Errorf("field with no column: %v", err)
		}
	}
}
