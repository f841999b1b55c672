package delta

import (
	"context"
	"fmt"
	"iter"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/schema/govalue"
	"github.com/godelta/delta/write"
)

// Errors of writing Go values and of adding files a program wrote itself.
var (
	// ErrNoColumn is returned by AppendStructs and OverwriteStructs for a
	// struct with an exported field that no column takes and that is not
	// tagged `parquet:"-"`.
	ErrNoColumn = govalue.ErrNoColumn
	// ErrValueMismatch is returned for a Go value that does not fit its
	// column: an integer out of the column's range, a decimal with more
	// digits or fraction digits than the column holds, a Go type that
	// cannot give the column's type.
	ErrValueMismatch = govalue.ErrMismatch
	// ErrFileSchema is matched by every *FileSchemaError.
	ErrFileSchema = write.ErrFileSchema
)

// FileSchemaError names the column of a data file given to FileStats that
// does not fit the table.
type FileSchemaError = write.FileSchemaError

// AppendStructs appends rows given as Go structs: Append of
// write.StructBatches(schema, rows). Each exported field of T goes to the
// column named by its `parquet:"name"` tag, else to the column whose name
// equals the field's ignoring case, the same binding scan.All reads with
// (see package govalue for the conversions of each type). A column with no
// field is null; a field with no column is ErrNoColumn unless tagged
// `parquet:"-"`; a value that does not fit its column is ErrValueMismatch;
// a null in a NOT NULL column is a *ConstraintError. For a slice, pass
// slices.Values(rows). rows is consumed once, a batch at a time.
//
// The batches are shaped by the schema of the snapshot the append is
// planned on (one load, as Append's); a schema change committed after it
// is a conflict, as for Append, never a write to the wrong columns.
func AppendStructs[T any](ctx context.Context, t *Table, rows iter.Seq[T], opts WriteOptions) (CommitResult, error) {
	snap, err := t.writableSnapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	return t.appendOn(ctx, snap, write.StructBatches(snap.Schema(), rows, 0), opts)
}

// OverwriteStructs is Overwrite of rows given as Go structs, mapped as
// AppendStructs maps them.
func OverwriteStructs[T any](ctx context.Context, t *Table, rows iter.Seq[T], opts OverwriteOptions) (CommitResult, error) {
	snap, err := t.writableSnapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	return t.overwriteOn(ctx, snap, write.StructBatches(snap.Schema(), rows, 0), opts)
}

// FileStats returns the add action of a Parquet file that the program
// wrote itself and put at path (a key relative to the table root, not
// URI-encoded) under the root of t, for Begin, Add and Commit: its Path
// (URI-encoded), Size, ModificationTime, DataChange and Stats, the
// statistics this library's writer would write for the same rows
// (numRecords, minValues, maxValues, nullCount, tightBounds; the table's
// delta.dataSkippingNumIndexedCols and delta.dataSkippingStatsColumns
// honoured). PartitionValues is empty: fill it in for a partitioned table.
// The file's schema is checked against the table's latest snapshot: a
// column that does not fit is a *FileSchemaError naming it; see
// write.FileAdd.
//
//	add, err := delta.FileStats(ctx, t, "part-0001.parquet")
//	tx, err := t.Begin(ctx, delta.TxnOptions{Operation: "WRITE"})
//	tx.Add(add)
//	version, err := tx.Commit(ctx)
func FileStats(ctx context.Context, t *Table, path string) (actions.Add, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return actions.Add{}, err
	}
	return write.FileAdd(ctx, snap, path)
}

// SchemaFor returns the table schema of struct type T: the columns that
// AppendStructs writes T's fields to and scan.All reads them back from,
// so that a program holding []T need not spell its table in DDL:
//
//	sch, err := delta.SchemaFor[Event]()
//	t, err := delta.Create(ctx, uri, delta.TableSpec{Schema: sch})
//	res, err := delta.AppendStructs(ctx, t, slices.Values(events), delta.WriteOptions{})
//
// The columns follow the binding's rules (package govalue): each exported
// field, in field order, is a column named by its `parquet:"name"` tag,
// else by the field's name as written; fields tagged `parquet:"-"` and
// unexported fields are left out. An embedded struct is one struct column
// named by its type, as the binding sees it. Two fields naming one column
// (ignoring case, as Delta names match) are an error.
//
// Types: bool is BOOLEAN; int8 TINYINT, int16 SMALLINT, int32 INT, int
// and int64 BIGINT; uint8 SMALLINT, uint16 INT, uint32, uint and uint64
// BIGINT (a uint64 above the BIGINT range fails when written, as the
// binding refuses it); float32 FLOAT, float64 DOUBLE; string STRING;
// []byte BINARY; time.Time TIMESTAMP (an instant, as the binding writes
// it; read back in UTC), DATE with the tag option date (the calendar date
// in the time's location, as the binding writes it) or TIMESTAMP_NTZ
// with timestamp_ntz (the wall clock); big.Rat and *big.Rat
// DECIMAL(p,s) with the tag option decimal(p,s), precision first as in
// SQL (`parquet:"amount,decimal(10,2)"`), which they need; a struct
// STRUCT, by these rules; a slice ARRAY; a map MAP. The options date,
// timestamp_ntz and decimal(p,s) apply to the field's value, or its
// elements, keys and values when it is a slice or a map. Interfaces,
// schema.Value, Go arrays, channels, functions and complex numbers have
// no Delta type, nor has a struct type that contains itself.
//
// Nullability: a field is NOT NULL unless Go can give it no value: a
// pointer, a slice or a map is nullable (nil is null); any other field is
// NOT NULL (its zero value is written, never null), unless tagged with the
// option optional, parquet-go's spelling, which makes the column nullable
// and changes nothing else. The same holds for array elements
// (containsNull) and map values (valueContainsNull); a map key cannot be a
// pointer. Other options in the tag, such as parquet-go's encodings, are
// ignored. Errors wrap ErrInvalidArgument and name the field.
func SchemaFor[T any]() (*schema.StructType, error) {
	return schemaOfType(reflect.TypeFor[T]())
}

// SchemaOf is SchemaFor of the type of v, a struct or a pointer to one (a
// nil pointer of the type will do).
func SchemaOf(v any) (*schema.StructType, error) {
	if v == nil {
		return nil, fmt.Errorf("delta: SchemaOf(nil): not a struct: %w", ErrInvalidArgument)
	}
	rt := reflect.TypeOf(v)
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	return schemaOfType(rt)
}

func schemaOfType(rt reflect.Type) (*schema.StructType, error) {
	if rt.Kind() != reflect.Struct || rt == timeType || rt == ratType || rt == valueType {
		return nil, fmt.Errorf("delta: schema of %s: %s is not a struct: %w", rt, rt, ErrInvalidArgument)
	}
	b := schemaBuilder{active: map[reflect.Type]bool{}}
	st, err := b.structType(rt)
	if err != nil {
		return nil, fmt.Errorf("delta: schema of %s: %w: %w", rt, err, ErrInvalidArgument)
	}
	return st, nil
}

var (
	timeType  = reflect.TypeFor[time.Time]()
	ratType   = reflect.TypeFor[big.Rat]()
	valueType = reflect.TypeFor[schema.Value]()
)

// schemaBuilder derives schemas from struct types, keeping the struct
// types being derived to refuse one that contains itself.
type schemaBuilder struct {
	active map[reflect.Type]bool
}

// fieldOptions are the options of a field's tag that SchemaFor reads.
type fieldOptions struct {
	optional, date, ntz bool
	decimal             *schema.DecimalType
	decimalText         string // as written, for messages
	used                struct{ date, ntz, decimal bool }
}

func (b *schemaBuilder) structType(rt reflect.Type) (*schema.StructType, error) {
	if b.active[rt] {
		return nil, fmt.Errorf("type %s contains itself", rt)
	}
	b.active[rt] = true
	defer delete(b.active, rt)
	st := &schema.StructType{}
	seen := map[string]string{} // column name, lower case: the Go field
	for i := range rt.NumField() {
		f := rt.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, err := parseFieldTag(f.Tag.Get("parquet"))
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if prev, dup := seen[strings.ToLower(name)]; dup {
			return nil, fmt.Errorf("fields %s and %s both name column %q", prev, f.Name, name)
		}
		seen[strings.ToLower(name)] = f.Name
		t, nullable, err := b.goType(f.Type, &opts)
		if err == nil {
			err = opts.unused()
		}
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		st.Fields = append(st.Fields, schema.StructField{Name: name, Type: t, Nullable: nullable || opts.optional})
	}
	if len(st.Fields) == 0 {
		return nil, fmt.Errorf("no column: %s has no exported field that is not tagged `parquet:\"-\"`", rt)
	}
	return st, nil
}

// goType returns the Delta type of Go type t and whether it is nullable.
func (b *schemaBuilder) goType(t reflect.Type, opts *fieldOptions) (schema.DataType, bool, error) {
	nullable := false
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	none := func(hint string) (schema.DataType, bool, error) {
		//lint:ignore ST1005 "Go" is a proper noun, and callers prefix the field's name.
		return nil, false, fmt.Errorf("Go type %s has no Delta type%s", t, hint)
	}
	switch t {
	case timeType:
		switch {
		case opts.date && opts.ntz:
			return nil, false, fmt.Errorf("the tag options date and timestamp_ntz exclude each other")
		case opts.date:
			opts.used.date = true
			return schema.Date, nullable, nil
		case opts.ntz:
			opts.used.ntz = true
			return schema.TimestampNTZ, nullable, nil
		}
		return schema.Timestamp, nullable, nil
	case ratType:
		if opts.decimal == nil {
			return nil, false, fmt.Errorf("a big.Rat needs the tag option decimal(p,s), such as `parquet:\"amount,decimal(10,2)\"`")
		}
		opts.used.decimal = true
		return *opts.decimal, nullable, nil
	case valueType:
		return none("")
	}
	switch t.Kind() {
	case reflect.Bool:
		return schema.Boolean, nullable, nil
	case reflect.Int8:
		return schema.Byte, nullable, nil
	case reflect.Int16, reflect.Uint8:
		return schema.Short, nullable, nil
	case reflect.Int32, reflect.Uint16:
		return schema.Integer, nullable, nil
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return schema.Long, nullable, nil
	case reflect.Float32:
		return schema.Float, nullable, nil
	case reflect.Float64:
		return schema.Double, nullable, nil
	case reflect.String:
		return schema.String, nullable, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return schema.Binary, true, nil
		}
		et, en, err := b.goType(t.Elem(), opts)
		if err != nil {
			return nil, false, err
		}
		return &schema.ArrayType{ElementType: et, ContainsNull: en}, true, nil
	case reflect.Map:
		if k := t.Key().Kind(); k == reflect.Pointer || k == reflect.Interface {
			return nil, false, fmt.Errorf("a map key cannot be null, so not a %s", t.Key())
		}
		kt, _, err := b.goType(t.Key(), opts)
		if err != nil {
			return nil, false, err
		}
		vt, vn, err := b.goType(t.Elem(), opts)
		if err != nil {
			return nil, false, err
		}
		return &schema.MapType{KeyType: kt, ValueType: vt, ValueContainsNull: vn}, true, nil
	case reflect.Struct:
		st, err := b.structType(t)
		if err != nil {
			return nil, false, err
		}
		return st, nullable, nil
	case reflect.Array:
		return none(" (use a slice)")
	}
	return none("")
}

// unused returns an error for a type option no part of the field took.
func (o *fieldOptions) unused() error {
	switch {
	case o.date && !o.used.date:
		return fmt.Errorf("the tag option date applies to time.Time fields (and their pointers, slices and maps)")
	case o.ntz && !o.used.ntz:
		return fmt.Errorf("the tag option timestamp_ntz applies to time.Time fields (and their pointers, slices and maps)")
	case o.decimal != nil && !o.used.decimal:
		return fmt.Errorf("the tag option %s applies to big.Rat fields (and their pointers, slices and maps)", o.decimalText)
	}
	return nil
}

// parseFieldTag splits a `parquet:"..."` tag into the column name (the
// part before the first comma, as the binding reads it) and the options
// SchemaFor reads. Options are separated by commas outside parentheses,
// so that decimal(10,2) is one option.
func parseFieldTag(tag string) (string, fieldOptions, error) {
	var opts fieldOptions
	name, rest, _ := strings.Cut(tag, ",")
	for rest != "" {
		end, depth := len(rest), 0
		for i := 0; i < len(rest) && end == len(rest); i++ {
			switch rest[i] {
			case '(':
				depth++
			case ')':
				depth--
			case ',':
				if depth == 0 {
					end = i
				}
			}
		}
		opt := strings.TrimSpace(rest[:end])
		rest = rest[min(end+1, len(rest)):]
		switch {
		case opt == "optional":
			opts.optional = true
		case opt == "date":
			opts.date = true
		case opt == "timestamp_ntz":
			opts.ntz = true
		case strings.HasPrefix(opt, "decimal("):
			d, ok := parseDecimalOption(opt)
			if !ok {
				return "", opts, fmt.Errorf("the tag option %s is not decimal(p,s) with a precision p from 1 to 38 and a scale s from 0 to p", opt)
			}
			opts.decimal, opts.decimalText = &d, opt
		}
	}
	return name, opts, nil
}

// parseDecimalOption reads "decimal(p,s)".
func parseDecimalOption(opt string) (schema.DecimalType, bool) {
	inner, ok := strings.CutSuffix(strings.TrimPrefix(opt, "decimal("), ")")
	if !ok {
		return schema.DecimalType{}, false
	}
	ps, ss, ok := strings.Cut(inner, ",")
	if !ok {
		return schema.DecimalType{}, false
	}
	p, err1 := strconv.Atoi(strings.TrimSpace(ps))
	sc, err2 := strconv.Atoi(strings.TrimSpace(ss))
	if err1 != nil || err2 != nil || p < 1 || p > 38 || sc < 0 || sc > p {
		return schema.DecimalType{}, false
	}
	return schema.DecimalType{Precision: p, Scale: sc}, true
}
