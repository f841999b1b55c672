package write

import (
	"fmt"
	"iter"
	"reflect"

	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/schema/govalue"
)

// DefaultStructBatchRows is the number of rows per batch StructBatches
// makes when asked for 0 or fewer.
const DefaultStructBatchRows = 4096

// StructBatches converts rows, values of a struct type T, into batches of
// at most batchRows rows of the table schema sch (logical, partition
// columns included), for Rows. Fields go to columns by name, by the
// binding scan.All reads with (package govalue): a `parquet:"name"` tag,
// else the field's name ignoring case. A column with no field is null in
// every row (Rows then refuses it if it is NOT NULL, with its
// *ConstraintError); an exported field with no column is an error
// matching govalue.ErrNoColumn, unless tagged `parquet:"-"`; a value that
// does not fit its column (an integer out of range, a decimal with too many
// digits, a Go type that cannot give the column's type) matches
// govalue.ErrMismatch. Both match deltaerr.ErrInvalidArgument and name the
// row, the field and the column.
//
// It streams: it holds one batch of rows at a time and pulls rows only as
// the consumer asks for batches. rows is consumed once.
func StructBatches[T any](sch *schema.StructType, rows iter.Seq[T], batchRows int) iter.Seq2[Batch, error] {
	return func(yield func(Batch, error) bool) {
		rt := reflect.TypeFor[T]()
		if rt.Kind() != reflect.Struct {
			yield(Batch{}, fmt.Errorf("write: StructBatches needs a struct type, not %s: %w", rt, govalue.ErrNotStruct))
			return
		}
		if batchRows <= 0 {
			batchRows = DefaultStructBatchRows
		}
		var m govalue.Mapper
		bind := m.Bind(rt, sch)
		if len(bind.Unbound) > 0 {
			yield(Batch{}, fmt.Errorf("write: %w", govalue.NoColumnError(rt, bind.Unbound[0])))
			return
		}
		newBatch := func() Batch {
			b := Batch{Columns: make([][]schema.Value, len(sch.Fields))}
			for j := range b.Columns {
				b.Columns[j] = make([]schema.Value, 0, batchRows)
			}
			return b
		}
		b := newBatch()
		row := int64(0)
		for r := range rows {
			src := reflect.ValueOf(&r).Elem()
			for c, fi := range bind.Columns {
				var v schema.Value
				if fi >= 0 {
					var err error
					if v, err = m.Value(src.Field(fi), sch.Fields[c].Type); err != nil {
						yield(Batch{}, fmt.Errorf("write: row %d: field %s.%s into column %s: %w", row, rt.Name(), rt.Field(fi).Name, sch.Fields[c].Name, err))
						return
					}
				}
				b.Columns[c] = append(b.Columns[c], v)
			}
			b.Len++
			row++
			if b.Len == batchRows {
				if !yield(b, nil) {
					return
				}
				b = newBatch() // the consumer may keep the batch it got
			}
		}
		if b.Len > 0 {
			yield(b, nil)
		}
	}
}
