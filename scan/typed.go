package scan

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/big"
	"reflect"
	"strings"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
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
		fields := bindStruct(rt, sch)
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
					if err := assign(dst.Field(fi), b.Columns[col][i], sch.Fields[col].Type); err != nil {
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

// bindStruct maps each field of sch to the index of the Go struct field
// that takes it, or -1.
func bindStruct(rt reflect.Type, sch *schema.StructType) []int {
	out := make([]int, len(sch.Fields))
	for i := range out {
		out[i] = -1
	}
	byName := map[string]int{}
	byFold := map[string]int{}
	for i := range rt.NumField() {
		f := rt.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		switch tag {
		case "-":
			continue
		case "":
			byFold[strings.ToLower(f.Name)] = i
		default:
			byName[tag] = i
		}
	}
	for c, sf := range sch.Fields {
		if i, ok := byName[sf.Name]; ok {
			out[c] = i
		} else if i, ok := byFold[strings.ToLower(sf.Name)]; ok {
			out[c] = i
		}
	}
	return out
}

var (
	timeType   = reflect.TypeFor[time.Time]()
	ratType    = reflect.TypeFor[big.Rat]()
	ratPtrType = reflect.TypeFor[*big.Rat]()
)

// assign stores v, of Delta type t, into dst.
func assign(dst reflect.Value, v schema.Value, t schema.DataType) error {
	if v.IsNull() {
		dst.SetZero()
		return nil
	}
	mismatch := func() error {
		return fmt.Errorf("%s value %s does not fit Go type %s: %w", v.Kind(), truncate(v.String()), dst.Type(), deltaerr.ErrInvalidArgument)
	}
	switch dst.Type() {
	case timeType:
		switch v.Kind() {
		case schema.KindTimestamp, schema.KindTimestampNTZ:
			dst.Set(reflect.ValueOf(time.UnixMicro(v.Int64()).UTC()))
		case schema.KindDate:
			dst.Set(reflect.ValueOf(time.Unix(v.Int64()*86400, 0).UTC()))
		default:
			return mismatch()
		}
		return nil
	case ratType, ratPtrType:
		if v.Kind() != schema.KindDecimal {
			return mismatch()
		}
		u, _, scale := v.Decimal()
		r := new(big.Rat).SetFrac(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
		if dst.Type() == ratType {
			dst.Set(reflect.ValueOf(*r))
		} else {
			dst.Set(reflect.ValueOf(r))
		}
		return nil
	}
	switch dst.Kind() {
	case reflect.Pointer:
		p := reflect.New(dst.Type().Elem())
		if err := assign(p.Elem(), v, t); err != nil {
			return err
		}
		dst.Set(p)
	case reflect.Bool:
		if v.Kind() != schema.KindBoolean {
			return mismatch()
		}
		dst.SetBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !isIntKind(v.Kind()) || dst.OverflowInt(v.Int64()) {
			return mismatch()
		}
		dst.SetInt(v.Int64())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !isIntKind(v.Kind()) || v.Int64() < 0 || dst.OverflowUint(uint64(v.Int64())) {
			return mismatch()
		}
		dst.SetUint(uint64(v.Int64()))
	case reflect.Float32, reflect.Float64:
		switch {
		case v.Kind() == schema.KindFloat || v.Kind() == schema.KindDouble:
			f := v.Float64()
			if dst.Kind() == reflect.Float32 && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
				return mismatch()
			}
			dst.SetFloat(f)
		case isIntKind(v.Kind()):
			dst.SetFloat(float64(v.Int64()))
		case v.Kind() == schema.KindDecimal:
			u, _, scale := v.Decimal()
			f, _ := new(big.Rat).SetFrac(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).Float64()
			dst.SetFloat(f)
		default:
			return mismatch()
		}
	case reflect.String:
		switch v.Kind() {
		case schema.KindStruct, schema.KindArray, schema.KindMap:
			return mismatch()
		}
		dst.SetString(v.String())
	case reflect.Slice:
		if dst.Type().Elem().Kind() == reflect.Uint8 && (v.Kind() == schema.KindBinary || v.Kind() == schema.KindString) {
			dst.SetBytes(v.Bytes())
			return nil
		}
		if v.Kind() != schema.KindArray {
			return mismatch()
		}
		var et schema.DataType
		if at, ok := t.(*schema.ArrayType); ok {
			et = at.ElementType
		}
		elems := v.Elements()
		s := reflect.MakeSlice(dst.Type(), len(elems), len(elems))
		for i, e := range elems {
			if err := assign(s.Index(i), e, et); err != nil {
				return err
			}
		}
		dst.Set(s)
	case reflect.Map:
		if v.Kind() != schema.KindMap {
			return mismatch()
		}
		var kt, vt schema.DataType
		if mt, ok := t.(*schema.MapType); ok {
			kt, vt = mt.KeyType, mt.ValueType
		}
		m := reflect.MakeMapWithSize(dst.Type(), v.MapLen())
		for i := range v.MapLen() {
			k, val := v.MapEntry(i)
			kv := reflect.New(dst.Type().Key()).Elem()
			if err := assign(kv, k, kt); err != nil {
				return err
			}
			vv := reflect.New(dst.Type().Elem()).Elem()
			if err := assign(vv, val, vt); err != nil {
				return err
			}
			m.SetMapIndex(kv, vv)
		}
		dst.Set(m)
	case reflect.Struct:
		st, ok := t.(*schema.StructType)
		if v.Kind() != schema.KindStruct || !ok {
			return mismatch()
		}
		fields := bindStruct(dst.Type(), st)
		vals := v.Fields()
		for c, fi := range fields {
			if fi < 0 || c >= len(vals) {
				continue
			}
			if err := assign(dst.Field(fi), vals[c], st.Fields[c].Type); err != nil {
				return err
			}
		}
	case reflect.Interface:
		if dst.NumMethod() != 0 {
			return mismatch()
		}
		dst.Set(reflect.ValueOf(goValue(v)))
	default:
		return mismatch()
	}
	return nil
}

func isIntKind(k schema.Kind) bool {
	return k == schema.KindByte || k == schema.KindShort || k == schema.KindInteger || k == schema.KindLong
}

// goValue is v as a plain Go value, for fields of type any.
func goValue(v schema.Value) any {
	switch v.Kind() {
	case schema.KindNull:
		return nil
	case schema.KindBoolean:
		return v.Bool()
	case schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindLong:
		return v.Int64()
	case schema.KindFloat, schema.KindDouble:
		return v.Float64()
	case schema.KindBinary:
		return v.Bytes()
	case schema.KindDate:
		return time.Unix(v.Int64()*86400, 0).UTC()
	case schema.KindTimestamp, schema.KindTimestampNTZ:
		return time.UnixMicro(v.Int64()).UTC()
	case schema.KindDecimal:
		u, _, scale := v.Decimal()
		return new(big.Rat).SetFrac(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	case schema.KindArray, schema.KindStruct:
		src := v.Elements()
		if v.Kind() == schema.KindStruct {
			src = v.Fields()
		}
		out := make([]any, len(src))
		for i, e := range src {
			out[i] = goValue(e)
		}
		return out
	case schema.KindMap:
		out := make(map[any]any, v.MapLen())
		for i := range v.MapLen() {
			k, val := v.MapEntry(i)
			key := goValue(k)
			switch kk := key.(type) {
			case []byte:
				key = string(kk) // slices cannot be map keys
			case []any, map[any]any:
				key = k.String()
			}
			out[key] = goValue(val)
		}
		return out
	}
	return v.String()
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
