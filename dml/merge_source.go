package dml

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/write"
)

// TableSource is a merge source reading the table snap shows, at its
// version (load the snapshot at the version wanted: time travel), with
// the scan options opts (Columns to read a subset, Predicate to read
// some rows). The rows are read when the merge runs.
func TableSource(ctx context.Context, snap *snapshot.Snapshot, opts scan.Options) (Source, error) {
	s, err := scan.New(snap, opts)
	if err != nil {
		return Source{}, err
	}
	return Source{Schema: s.Schema(), Batches: func(yield func(schema.Batch, error) bool) {
		for b, err := range s.Batches(ctx) {
			if err != nil {
				yield(schema.Batch{}, err)
				return
			}
			if !yield(*b, nil) { // Merge copies the values it keeps
				return
			}
		}
	}}, nil
}

// RowsSource is a merge source of rows held as Go slices, each a value per
// field of sch, in order; a row of another length is write.ErrBatch.
func RowsSource(sch *schema.StructType, rows [][]schema.Value) Source {
	return Source{Schema: sch, Batches: func(yield func(schema.Batch, error) bool) {
		if len(rows) == 0 {
			return
		}
		b := schema.Batch{Len: len(rows), Columns: make([][]schema.Value, len(sch.Fields))}
		for j := range b.Columns {
			b.Columns[j] = make([]schema.Value, len(rows))
		}
		for i, r := range rows {
			if len(r) != len(sch.Fields) {
				yield(schema.Batch{}, fmt.Errorf("%w: source row %d has %d values for %d columns", write.ErrBatch, i, len(r), len(sch.Fields)))
				return
			}
			for j, v := range r {
				b.Columns[j][i] = v
			}
		}
		yield(b, nil)
	}}
}

// StructSource is a merge source of Go structs, bound to the columns of
// sch by package govalue as write.StructBatches binds them (a
// `parquet:"name"` tag, else the field's name ignoring case).
func StructSource[T any](sch *schema.StructType, rows iter.Seq[T]) Source {
	return Source{Schema: sch, Batches: write.StructBatches(sch, rows, insertBatchRows)}
}

// ErrMergeSourceValue is the error of a merge source row holding a value
// that does not fit the source schema's type for it (see SeqSource). It
// matches ErrInvalid.
var ErrMergeSourceValue = deltaerr.Mark(errors.New("merge: a source value does not fit its column"), ErrInvalid)

// SeqSource is a merge source of the rows rows yields, in that order, each
// a value per field of sch, checked against sch as it is read: a row of
// another length is write.ErrBatch, a value that does not fit its field's
// type ErrMergeSourceValue. A value fits when its kind is the type's (an
// integer of any width that fits the column's; a decimal of a scale up to
// the column's whose digits fit it once rescaled, as the row writer takes
// them; binary for geospatial types; the struct of two binaries a variant
// is read as), nested values field by field, element by element, entry by
// entry, and null only where the schema allows it (a nullable field, an
// array containing nulls, a map's values containing nulls). It is the
// source to give rows that come from elsewhere (a pipeline's, the wire),
// where RowsSource trusts rows built against sch. The rows are read when
// the merge runs, once, in batches; the merge keeps the values, not the
// slices, so rows may reuse a row's slice once it has been yielded.
func SeqSource(sch *schema.StructType, rows iter.Seq2[[]schema.Value, error]) Source {
	return Source{Schema: sch, Batches: func(yield func(schema.Batch, error) bool) {
		n := len(sch.Fields)
		var b schema.Batch
		flush := func() bool {
			if b.Len == 0 {
				return true
			}
			ok := yield(b, nil)
			b = schema.Batch{}
			return ok
		}
		i := int64(0)
		for r, err := range rows {
			if err != nil {
				yield(schema.Batch{}, err)
				return
			}
			if err := checkSourceRow(sch, r, i); err != nil {
				yield(schema.Batch{}, err)
				return
			}
			if b.Columns == nil {
				b.Columns = make([][]schema.Value, n)
				for j := range b.Columns {
					b.Columns[j] = make([]schema.Value, 0, insertBatchRows)
				}
			}
			for j, v := range r {
				b.Columns[j] = append(b.Columns[j], v)
			}
			b.Len++
			i++
			if b.Len == insertBatchRows && !flush() {
				return
			}
		}
		flush()
	}}
}

// checkSourceRow checks row i of a source against sch, as SeqSource says.
func checkSourceRow(sch *schema.StructType, row []schema.Value, i int64) error {
	if len(row) != len(sch.Fields) {
		return fmt.Errorf("%w: source row %d has %d values for %d columns", write.ErrBatch, i, len(row), len(sch.Fields))
	}
	for j, v := range row {
		f := &sch.Fields[j]
		if why := valueMismatch(v, f.Type, f.Nullable); why != "" {
			return fmt.Errorf("%w: source row %d, column %s: %s", ErrMergeSourceValue, i, f.Name, why)
		}
	}
	return nil
}

// valueMismatch says why v does not fit type t (null only when nullable),
// or "" when it fits.
func valueMismatch(v schema.Value, t schema.DataType, nullable bool) string {
	if v.IsNull() {
		if nullable {
			return ""
		}
		return "null where the schema says NOT NULL"
	}
	bad := func() string {
		what := v.Kind().String()
		if v.Kind() == schema.KindDecimal {
			what = v.Type().String()
		}
		return what + " value for type " + t.String()
	}
	switch t := t.(type) {
	case schema.PrimitiveType:
		switch t {
		case schema.Byte, schema.Short, schema.Integer, schema.Long:
			bits := 64
			switch t {
			case schema.Byte:
				bits = 8
			case schema.Short:
				bits = 16
			case schema.Integer:
				bits = 32
			}
			switch v.Kind() {
			case schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindLong:
				if x := v.Int64(); bits == 64 || x >= -1<<(bits-1) && x < 1<<(bits-1) {
					return ""
				}
				return v.String() + " out of the range of " + string(t)
			}
			return bad()
		case schema.Variant:
			if f := v.Fields(); v.Kind() == schema.KindStruct && len(f) == 2 && f[0].Kind() == schema.KindBinary && f[1].Kind() == schema.KindBinary {
				return ""
			}
			return bad()
		case schema.Void:
			return bad() // only null fits
		}
		if v.Type() == schema.DataType(t) {
			return ""
		}
		return bad()
	case schema.DecimalType:
		if v.Kind() != schema.KindDecimal {
			return bad()
		}
		u, _, scale := v.Decimal()
		if scale > t.Scale {
			return bad()
		}
		if u.Sign() != 0 && len(u.Abs(u).String())+t.Scale-scale > t.Precision {
			return bad()
		}
		return ""
	case schema.GeometryType, schema.GeographyType:
		if v.Kind() != schema.KindBinary {
			return bad()
		}
		return ""
	case *schema.StructType:
		f := v.Fields()
		if v.Kind() != schema.KindStruct || len(f) != len(t.Fields) {
			if v.Kind() == schema.KindStruct {
				return fmt.Sprintf("a struct of %d fields for a struct of %d", len(f), len(t.Fields))
			}
			return bad()
		}
		for k, fv := range f {
			if why := valueMismatch(fv, t.Fields[k].Type, t.Fields[k].Nullable); why != "" {
				return "field " + t.Fields[k].Name + ": " + why
			}
		}
		return ""
	case *schema.ArrayType:
		if v.Kind() != schema.KindArray {
			return bad()
		}
		for k, e := range v.Elements() {
			if why := valueMismatch(e, t.ElementType, t.ContainsNull); why != "" {
				return fmt.Sprintf("element %d: %s", k, why)
			}
		}
		return ""
	case *schema.MapType:
		if v.Kind() != schema.KindMap {
			return bad()
		}
		for k := range v.MapLen() {
			key, val := v.MapEntry(k)
			if why := valueMismatch(key, t.KeyType, false); why != "" {
				return fmt.Sprintf("key %d: %s", k, why)
			}
			if why := valueMismatch(val, t.ValueType, t.ValueContainsNull); why != "" {
				return fmt.Sprintf("value %d: %s", k, why)
			}
		}
		return ""
	}
	return bad()
}
