package datafile

// The schema of a written file: the Parquet schema elements of the
// footer and, built in the same walk, the write nodes the shredder
// follows. The layout is the one write.go describes ("Layout written").

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// maxLevel is the deepest definition or repetition level written: pages
// hold one byte per level (see page).
const maxLevel = math.MaxUint8

// rootName is the name of the root group, as Spark writes it.
const rootName = "spark_schema"

// wkind is the kind of a write node.
type wkind uint8

const (
	wLeaf wkind = iota
	wStruct
	wList
	wMap
)

// wnode is a field or element of the physical schema as the shredder walks
// it.
//
// Invariant: def is the definition level of an entry in which this node is
// present (not null): the number of optional and repeated nodes from the
// root down to it, itself included. A null value of the node is written as
// one entry at its parent's level in every leaf below it. For a list or
// map, rep is the repetition level of its repeated group: every entry but
// the first of a non-empty value starts with it.
type wnode struct {
	kind     wkind
	name     string // dotted path of physical names, for errors
	nullable bool
	def, rep int
	// children: a struct's fields in the order of its values (nil for a
	// void field; a variant's are metadata then value, the order the
	// reader returns), a list's element, a map's key and value.
	children []*wnode
	leaves   []*wleaf // the leaf columns below, for null and empty values
	leaf     *wleaf   // wLeaf only
	// stat is the accumulator of this node when it is an indexed stats
	// column; under lists are the accumulators of the indexed stats
	// columns at or below it (not inside arrays or maps), each of which
	// counts a null when this node is null.
	stat  *colAcc
	under []*colAcc
	typ   schema.DataType
}

// builder builds the schema elements and the write nodes together, in
// one depth-first walk: elements in the footer's order, leaf columns
// numbered in file order.
type builder struct {
	byID   bool
	elems  []format.SchemaElement
	leaves []*wleaf
	// nested and nestedKey, when byID, are the nested ids
	// (delta.columnMapping.nested.ids) of the nearest field above the
	// value being built, and that value's key in them: the field's
	// physical name, then ".element", ".key" or ".value" per level.
	nested    map[string]int64
	nestedKey string
}

// buildSchema returns the schema elements of a file of physical, and the
// write node of each of its fields (nil for a void field).
func buildSchema(physical *schema.StructType, byID bool) ([]format.SchemaElement, []*wnode, []*wleaf, error) {
	b := &builder{byID: byID, elems: []format.SchemaElement{{Name: rootName}}}
	top := make([]*wnode, len(physical.Fields))
	children := 0
	for i := range physical.Fields {
		f := &physical.Fields[i]
		wn, err := b.field(f, []string{f.Name}, 0, 0)
		if err != nil {
			return nil, nil, nil, err
		}
		if wn != nil {
			top[i] = wn
			children++
		}
	}
	if len(b.leaves) == 0 {
		return nil, nil, nil, unsupported(nil, "a schema with no columns to write")
	}
	b.elems[0].NumChildren = thrift.New(int32(children))
	return b.elems, top, b.leaves, nil
}

// field appends the elements of f at path, whose parent is present at
// definition level def and repeated at level rep, and returns its write
// node; a void field gives nil and no element.
func (b *builder) field(f *schema.StructField, path []string, def, rep int) (*wnode, error) {
	at := len(b.elems) // f's own element, when it has one
	savedNested, savedKey := b.nested, b.nestedKey
	if b.byID {
		b.nested, _ = f.NestedIDs()
		b.nestedKey = f.Name
	}
	wn, err := b.typ(f.Type, f.Nullable, path, def, rep)
	b.nested, b.nestedKey = savedNested, savedKey
	if err != nil || wn == nil {
		return nil, err
	}
	if b.byID {
		if id, ok := f.ColumnMappingID(); ok {
			if id <= 0 || id > math.MaxInt32 {
				return nil, fmt.Errorf("datafile: column %s: field id %d out of range: %w", strings.Join(path, "."), id, deltaerr.ErrInvalidArgument)
			}
			b.elems[at].FieldID = int32(id)
		}
	}
	return wn, nil
}

// nestedTyp is typ for the element of an array or the key or value of a
// map (part names which): under field ids, the element gets its nested id
// (IcebergCompatV2) when the nearest field above has one for it.
func (b *builder) nestedTyp(part string, t schema.DataType, nullable bool, path []string, def, rep int) (*wnode, error) {
	at := len(b.elems)
	saved := b.nestedKey
	b.nestedKey += "." + part
	key := b.nestedKey
	wn, err := b.typ(t, nullable, path, def, rep)
	b.nestedKey = saved
	if err != nil || wn == nil || !b.byID {
		return wn, err
	}
	if id, ok := b.nested[key]; ok {
		if id <= 0 || id > math.MaxInt32 {
			return nil, fmt.Errorf("datafile: column %s: nested field id %d out of range: %w", strings.Join(path, "."), id, deltaerr.ErrInvalidArgument)
		}
		b.elems[at].FieldID = int32(id)
	}
	return wn, nil
}

// typ appends the elements of a value of type t named by the last part of
// path, and returns its write node (nil for void).
func (b *builder) typ(t schema.DataType, nullable bool, path []string, def, rep int) (*wnode, error) {
	wn := &wnode{name: strings.Join(path, "."), nullable: nullable, def: def, typ: t}
	repetition := format.Required
	if nullable {
		wn.def++
		repetition = format.Optional
	}
	if wn.def > maxLevel || rep+1 > maxLevel {
		return nil, unsupported(path, "nested too deeply")
	}
	name := path[len(path)-1]
	switch t := t.(type) {
	case *schema.StructType:
		wn.kind = wStruct
		at := b.group(name, repetition)
		for i := range t.Fields {
			cf := &t.Fields[i]
			cw, err := b.field(cf, child(path, cf.Name), wn.def, rep)
			if err != nil {
				return nil, err
			}
			wn.children = append(wn.children, cw)
			if cw != nil {
				wn.leaves = append(wn.leaves, cw.leaves...)
			}
		}
		if len(wn.leaves) == 0 {
			return nil, unsupported(path, "a struct with no fields to write")
		}
		b.elems[at].NumChildren = thrift.New(int32(countNonNil(wn.children)))
	case *schema.ArrayType:
		// The three-level LIST: name (LIST) > repeated list > element.
		wn.kind, wn.rep = wList, rep+1
		at := b.group(name, repetition)
		b.elems[at].NumChildren = thrift.New(int32(1))
		b.elems[at].ConvertedType = thrift.New(deprecated.List)
		b.elems[at].LogicalType = format.LogicalType{Value: &format.ListType{}}
		b.elems[b.group("list", format.Repeated)].NumChildren = thrift.New(int32(1))
		ew, err := b.nestedTyp("element", t.ElementType, t.ContainsNull, child(path, "list", "element"), wn.def+1, rep+1)
		if err != nil {
			return nil, err
		}
		if ew == nil {
			return nil, unsupported(path, "an array of void")
		}
		wn.children, wn.leaves = []*wnode{ew}, ew.leaves
	case *schema.MapType:
		// name (MAP) > repeated key_value > required key, value.
		wn.kind, wn.rep = wMap, rep+1
		at := b.group(name, repetition)
		b.elems[at].NumChildren = thrift.New(int32(1))
		b.elems[at].ConvertedType = thrift.New(deprecated.Map)
		b.elems[at].LogicalType = format.LogicalType{Value: &format.MapType{}}
		b.elems[b.group("key_value", format.Repeated)].NumChildren = thrift.New(int32(2))
		kw, err := b.nestedTyp("key", t.KeyType, false, child(path, "key_value", "key"), wn.def+1, rep+1)
		if err != nil {
			return nil, err
		}
		vw, err := b.nestedTyp("value", t.ValueType, t.ValueContainsNull, child(path, "key_value", "value"), wn.def+1, rep+1)
		if err != nil {
			return nil, err
		}
		if kw == nil || vw == nil {
			return nil, unsupported(path, "a map with void keys or values")
		}
		wn.children = []*wnode{kw, vw}
		wn.leaves = append(append([]*wleaf(nil), kw.leaves...), vw.leaves...)
	case schema.DecimalType:
		if t.Precision < 1 || t.Precision > schema.MaxDecimalPrecision || t.Scale < 0 || t.Scale > t.Precision {
			return nil, unsupported(path, t.String())
		}
		lt := leafType{enc: encDecimal, converted: thrift.New(deprecated.Decimal),
			logical: &format.DecimalType{Scale: int32(t.Scale), Precision: int32(t.Precision)}}
		dec, flen := decInt32, 0
		switch {
		case t.Precision <= 9:
			lt.phys = format.Int32
		case t.Precision <= 18:
			dec, lt.phys = decInt64, format.Int64
		default:
			dec, lt.phys, flen = decFixed, format.FixedLenByteArray, decimalBytes(t.Precision)
		}
		l := b.leaf(wn, name, repetition, lt, path, rep)
		l.dec, l.flen, l.prec, l.scale = dec, flen, t.Precision, t.Scale
		e := &b.elems[len(b.elems)-1]
		if flen > 0 {
			e.TypeLength = thrift.New(int32(flen))
		}
		e.Scale, e.Precision = thrift.New(int32(t.Scale)), thrift.New(int32(t.Precision))
	case schema.PrimitiveType:
		switch t {
		case schema.Void:
			return nil, nil
		case schema.Variant:
			// A variant is written as Spark does: a plain group of value,
			// then metadata; its Value is the struct (metadata, value).
			wn.kind = wStruct
			b.elems[b.group(name, repetition)].NumChildren = thrift.New(int32(2))
			vw, _ := b.typ(schema.Binary, false, child(path, "value"), wn.def, rep)
			mw, _ := b.typ(schema.Binary, false, child(path, "metadata"), wn.def, rep)
			wn.children = []*wnode{mw, vw}
			wn.leaves = []*wleaf{vw.leaf, mw.leaf}
		default:
			lt, ok := primitiveLeaf(t)
			if !ok {
				return nil, unsupported(path, t.String())
			}
			b.leaf(wn, name, repetition, lt, path, rep)
		}
	default:
		return nil, unsupported(path, t.String())
	}
	return wn, nil
}

func countNonNil(nodes []*wnode) int {
	n := 0
	for _, c := range nodes {
		if c != nil {
			n++
		}
	}
	return n
}

// child returns path extended by names, in a new slice.
func child(path []string, names ...string) []string {
	return append(path[:len(path):len(path)], names...)
}

// group appends the element of a group and returns its index; the caller
// sets its number of children.
func (b *builder) group(name string, repetition format.FieldRepetitionType) int {
	b.elems = append(b.elems, format.SchemaElement{Name: name, RepetitionType: thrift.New(repetition)})
	return len(b.elems) - 1
}

// leafType is how a primitive type is written: the leaf's encoding from
// Delta values, its physical type and its annotations. The annotations
// are Spark's, pinned by TestWriteSchemaElements: none on plain INT32 and
// INT64, a converted type next to each logical type (TIMESTAMP_MICROS on
// timestamp_ntz too, as parquet-mr 1.13 writes it for Spark).
type leafType struct {
	enc       leafEnc
	phys      format.Type
	converted thrift.Null[deprecated.ConvertedType]
	logical   format.LogicalTypeValue
}

// primitiveLeaf returns the leaf type of a primitive type other than
// void, variant and decimal.
func primitiveLeaf(t schema.PrimitiveType) (leafType, bool) {
	conv := thrift.New[deprecated.ConvertedType]
	micros := format.TimeUnit{Value: &format.MicroSeconds{}}
	switch t {
	case schema.Boolean:
		return leafType{enc: encBoolean, phys: format.Boolean}, true
	case schema.Byte:
		return leafType{encByte, format.Int32, conv(deprecated.Int8), &format.IntType{BitWidth: 8, IsSigned: true}}, true
	case schema.Short:
		return leafType{encShort, format.Int32, conv(deprecated.Int16), &format.IntType{BitWidth: 16, IsSigned: true}}, true
	case schema.Integer:
		return leafType{enc: encInteger, phys: format.Int32}, true
	case schema.Long:
		return leafType{enc: encLong, phys: format.Int64}, true
	case schema.Float:
		return leafType{enc: encFloat, phys: format.Float}, true
	case schema.Double:
		return leafType{enc: encDouble, phys: format.Double}, true
	case schema.String:
		return leafType{encString, format.ByteArray, conv(deprecated.UTF8), &format.StringType{}}, true
	case schema.Binary:
		return leafType{enc: encBinary, phys: format.ByteArray}, true
	case schema.Date:
		return leafType{encDate, format.Int32, conv(deprecated.Date), &format.DateType{}}, true
	case schema.Timestamp:
		return leafType{encTimestamp, format.Int64, conv(deprecated.TimestampMicros), &format.TimestampType{IsAdjustedToUTC: true, Unit: micros}}, true
	case schema.TimestampNTZ:
		return leafType{encTimestampNTZ, format.Int64, conv(deprecated.TimestampMicros), &format.TimestampType{IsAdjustedToUTC: false, Unit: micros}}, true
	}
	return leafType{}, false
}

// leaf appends the element of a leaf column of type lt, makes wn that
// leaf and returns it; rep is the leaf's maximum repetition level. The
// caller of a decimal completes the element (length, scale, precision)
// and the leaf.
func (b *builder) leaf(wn *wnode, name string, repetition format.FieldRepetitionType, lt leafType, path []string, rep int) *wleaf {
	e := format.SchemaElement{Name: name, Type: thrift.New(lt.phys), RepetitionType: thrift.New(repetition), ConvertedType: lt.converted}
	if lt.logical != nil {
		e.LogicalType = format.LogicalType{Value: lt.logical}
	}
	b.elems = append(b.elems, e)
	l := &wleaf{
		enc: lt.enc, want: encKind(lt.enc), node: wn, phys: lt.phys,
		path: path, maxDef: wn.def, maxRep: rep,
	}
	b.leaves = append(b.leaves, l)
	wn.kind, wn.leaf, wn.leaves = wLeaf, l, []*wleaf{l}
	return l
}

// decimalBytes returns the fewest bytes whose two's complement holds every
// unscaled value of a decimal of precision p: the smallest n with
// 2^(8n-1) >= 10^p, as Spark sizes FIXED_LEN_BYTE_ARRAY decimals.
func decimalBytes(p int) int {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil)
	for n := 1; ; n++ {
		if new(big.Int).Lsh(big.NewInt(1), uint(8*n-1)).Cmp(limit) >= 0 {
			return n
		}
	}
}
