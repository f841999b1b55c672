package scan

import (
	"context"
	"fmt"
	"iter"
	"reflect"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/schema/govalue"
)

// All yields the rows of s as values of T, a struct type. Each exported
// field takes the column named by its `parquet:"name"` tag (the part
// before any comma), else the column whose name equals the field's,
// ignoring case; `parquet:"-"` fields and fields with no column are left
// alone. Values convert to the field's Go type: integers to any integer
// type they fit, floats to float32/float64, decimals to *big.Rat, big.Rat,
// float64 or string, dates and timestamps to time.Time (UTC), binary to
// []byte, strings to string, structs to structs (recursively, by the same
// rules), arrays to slices, maps to maps; a pointer field is nil for null,
// and a non-pointer field gets its zero value. A value that does not fit
// its field is an error wrapping deltaerr.ErrInvalidArgument, naming both.
// A field of type schema.Value takes the value as it is. The mapping is
// package govalue's, the same one write.StructBatches and
// delta.AppendStructs use, so a struct read here writes back unchanged.
func All[T any](ctx context.Context, s *Scan) iter.Seq2[T, error] {
	return allOf[T](s.Schema(), s.Batches(ctx))
}

// AllChanges is All for a change data feed: the change columns go to fields
// tagged `parquet:"_change_type"` and so on.
func AllChanges[T any](ctx context.Context, c *Changes) iter.Seq2[T, error] {
	return allOf[T](c.Schema(), c.Batches(ctx))
}

func allOf[T any](sch *schema.StructType, batches iter.Seq2[*Batch, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		rt := reflect.TypeFor[T]()
		if rt.Kind() != reflect.Struct {
			yield(zero, fmt.Errorf("All needs a struct type, not %s: %w", rt, deltaerr.ErrInvalidArgument))
			return
		}
		var m govalue.Mapper
		fields := m.Bind(rt, sch).Columns
		for b, err := range batches {
			if err != nil {
				yield(zero, err)
				return
			}
			for i := range b.Len {
				var out T
				dst := reflect.ValueOf(&out).Elem()
				for col, fi := range fields {
					if fi < 0 {
						continue
					}
					if err := m.Assign(dst.Field(fi), b.Columns[col][i], sch.Fields[col].Type); err != nil {
						yield(zero, fmt.Errorf("column %q into field %s.%s: %w", sch.Fields[col].Name, rt.Name(), rt.Field(fi).Name, err))
						return
					}
				}
				if !yield(out, nil) {
					return
				}
			}
		}
	}
}
