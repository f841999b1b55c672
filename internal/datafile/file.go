package datafile

import (
	"context"
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/parquetio"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
)

// readBuffer is the buffer size of parquet-go's page readers.
const readBuffer = 256 << 10

// footerRead is, for a stored file, the buffer size of the page readers
// and the number of bytes read from the end of the file to find its
// footer (OptimisticRead): one request for the footer of most files. The
// page readers read chunks that are already in memory.
const footerRead = 64 << 10

// File is an open Parquet data file. It holds the parsed footer and reads
// column chunks from the store object or io.ReaderAt it was opened on,
// which must stay valid while the File is used; the File itself holds
// nothing to close. Any number of Reads may run at once on one File if
// the io.ReaderAt allows concurrent ReadAt calls, as io.ReaderAt's
// contract requires (store objects do).
//
// A Read fetches only the column chunks it needs, which the footer
// locates: those of a row group in a few large requests, adjacent chunks
// coalesced, chunks over a few MiB a window at a time (package
// internal/parquetio).
type File struct {
	pf   *parquet.File
	root *pnode
	obj  *parquetio.Object
}

// Open parses the footer of the Parquet file of size bytes read through r.
// Bytes that are not a Parquet file, or whose schema is malformed, give an
// error matching deltaerr.ErrCorrupt; an I/O error of r is returned
// wrapped (it does not match deltaerr.ErrCorrupt). Errors name the file
// "Parquet data file": use [OpenObject] for a stored file.
func Open(r io.ReaderAt, size int64) (*File, error) {
	return open(context.Background(), parquetio.NewReaderObject(r, fileName, size))
}

// OpenObject is [Open] for the object at key in store, of size bytes
// (from Stat), whose footer is read with ctx. Reads then fetch column
// chunks in few, large requests, and errors name key.
func OpenObject(ctx context.Context, store logstore.Store, key string, size int64) (*File, error) {
	return open(ctx, parquetio.NewObject(ctx, store, key, size))
}

func open(ctx context.Context, obj *parquetio.Object) (*File, error) {
	size := obj.Size()
	if size < 12 {
		return nil, deltaerr.Corruptf(obj.Name(), "file of %d bytes is too small for Parquet", size)
	}
	opts := []parquet.FileOption{
		parquet.SkipPageIndex(true),
		parquet.SkipBloomFilters(true),
		parquet.ReadBufferSize(readBuffer),
	}
	if obj.Stored() {
		// The footer in one request: the last footerRead bytes.
		opts = append(opts, parquet.OptimisticRead(true), parquet.ReadBufferSize(footerRead))
	}
	var pf *parquet.File
	err := parquetio.Decode(obj.Name(), "", func() error {
		var err error
		pf, err = parquet.OpenFile(obj, size, opts...)
		return err
	})
	if err != nil {
		return nil, obj.Failed(ctx, err, "datafile", "not a valid Parquet file")
	}
	f := &File{pf: pf, obj: obj}
	if f.root, err = buildTree(pf.Metadata().Schema); err != nil {
		return nil, obj.Failed(ctx, err, "datafile", "")
	}
	for i, rg := range pf.Metadata().RowGroups {
		if len(rg.Columns) != len(f.root.leaves) {
			return nil, deltaerr.Corruptf(obj.Name(), "row group %d has %d column chunks for %d leaf columns", i, len(rg.Columns), len(f.root.leaves))
		}
		if rg.NumRows < 0 {
			return nil, deltaerr.Corruptf(obj.Name(), "row group %d has %d rows", i, rg.NumRows)
		}
	}
	return f, nil
}

// NumRows returns the number of rows of the file, by its footer.
func (f *File) NumRows() int64 { return f.pf.NumRows() }

// NumRowGroups returns the number of row groups of the file, by its
// footer: the units ReadOptions.RowGroups chooses among.
func (f *File) NumRowGroups() int { return len(f.pf.Metadata().RowGroups) }

// RowGroupRows returns the rows of the row groups in r: the position in
// the file of the first, and their count.
func (f *File) RowGroupRows(r RowGroupRange) (first, n int64) {
	for gi, rg := range f.pf.Metadata().RowGroups {
		switch {
		case r.contains(gi):
			n += rg.NumRows
		case n == 0:
			first += rg.NumRows
		}
	}
	return first, n
}

// Schema returns the Delta schema of the file's columns, inferred from its
// Parquet schema: for files that come with no Delta schema (expected-answer
// files, files being added to a table). The mapping follows what Spark
// reads: INT32 as integer, or byte, short or date by its annotation;
// INT64 as long or, annotated, timestamp (UTC-adjusted) or timestamp_ntz;
// INT96 as timestamp; BYTE_ARRAY as string when annotated STRING, ENUM or
// JSON, else binary; any DECIMAL as decimal; LIST (and the legacy forms)
// as array; MAP as map; VARIANT as variant; other groups as struct.
// Optional fields are nullable. A field with a Parquet field id carries
// it as delta.columnMapping.id metadata. A column with no Delta type gives
// ErrUnsupportedType.
func (f *File) Schema() (*schema.StructType, error) {
	st := &schema.StructType{}
	for _, c := range f.root.children {
		sf, err := inferField(c, []string{c.name})
		if err != nil {
			return nil, f.named(err)
		}
		st.Fields = append(st.Fields, sf)
	}
	return st, nil
}

// pnode is one element of the file's Parquet schema, with the levels that
// the Dremel encoding gives it.
type pnode struct {
	name     string
	rep      format.FieldRepetitionType
	leaf     bool
	phys     format.Type
	typeLen  int
	ann      annot
	groupAnn groupAnn
	fieldID  int
	children []*pnode
	// defLevel counts the optional and repeated nodes from the root down to
	// this one, itself included: a leaf entry whose definition level is at
	// least defLevel has this node present. repLevel counts the repeated
	// ones.
	defLevel, repLevel int
	// column is the leaf's index among the file's leaf columns; -1 for
	// groups.
	column int
	// leaves are the leaf nodes under this node (itself for a leaf), in
	// column order.
	leaves []*pnode
}

// groupAnn is the annotation of a group node.
type groupAnn uint8

const (
	groupPlain groupAnn = iota
	groupList
	groupMap // MAP or MAP_KEY_VALUE
	groupVariant
)

// annKind is the logical type of a leaf, from its LogicalType or, for files
// without one, its ConvertedType.
type annKind uint8

const (
	annNone annKind = iota
	annInt
	annDecimal
	annDate
	annTimestamp
	annString // STRING, ENUM, JSON: text
	annTime   // TIME: only a shredded variant's typed_value reads it
	annUUID   // UUID: likewise
	annGeo    // GEOMETRY, GEOGRAPHY: WKB, read as Delta's geospatial types
	annOther  // a type Delta has no equivalent for, or BSON
)

// annot is a leaf's logical type.
type annot struct {
	kind      annKind
	bits      int  // annInt: 8, 16, 32 or 64
	signed    bool // annInt
	precision int  // annDecimal
	scale     int  // annDecimal
	unit      int  // annTimestamp, annTime: 1000, 1 or -1000 for millis, micros, nanos
	utc       bool // annTimestamp, annTime: isAdjustedToUTC
	name      string
}

// buildTree builds the node tree from the flattened schema elements,
// checking that their structure is well formed.
func buildTree(elems []format.SchemaElement) (*pnode, error) {
	if len(elems) == 0 {
		return nil, corruptf("empty schema")
	}
	pos, leaves := 0, 0
	var build func(depth, def, rep int) (*pnode, error)
	build = func(depth, def, rep int) (*pnode, error) {
		if pos >= len(elems) {
			return nil, corruptf("schema ends inside a group")
		}
		if depth > 64 {
			return nil, corruptf("schema nested deeper than 64 levels")
		}
		e := &elems[pos]
		pos++
		n := &pnode{name: e.Name, fieldID: int(e.FieldID), column: -1}
		if depth > 0 {
			r, ok := e.RepetitionType.Get()
			if !ok {
				r = format.Optional
			}
			n.rep = r
			switch r {
			case format.Optional:
				def++
			case format.Repeated:
				def++
				rep++
			case format.Required:
			default:
				return nil, corruptf("field %q has repetition type %d", e.Name, r)
			}
		}
		n.defLevel, n.repLevel = def, rep
		nc, isGroup := e.NumChildren.Get()
		if depth == 0 || (isGroup && nc >= 0 && !e.Type.Valid) {
			if nc < 0 || int(nc) > len(elems) {
				return nil, corruptf("group %q has %d children", e.Name, nc)
			}
			n.groupAnn = groupAnnOf(e)
			for range nc {
				c, err := build(depth+1, def, rep)
				if err != nil {
					return nil, err
				}
				n.children = append(n.children, c)
				n.leaves = append(n.leaves, c.leaves...)
			}
			if depth > 0 && nc == 0 {
				return nil, corruptf("group %q has no children", e.Name)
			}
			return n, nil
		}
		t, ok := e.Type.Get()
		if !ok {
			return nil, corruptf("leaf %q has no type", e.Name)
		}
		if def > 255 || rep > 255 {
			return nil, corruptf("leaf %q nested too deeply", e.Name)
		}
		n.leaf, n.phys = true, t
		if l, ok := e.TypeLength.Get(); ok {
			n.typeLen = int(l)
		}
		if t == format.FixedLenByteArray && (n.typeLen <= 0 || n.typeLen > 1<<20) {
			return nil, corruptf("leaf %q: fixed length %d", e.Name, n.typeLen)
		}
		n.ann = annotOf(e)
		n.column = leaves
		leaves++
		n.leaves = []*pnode{n}
		return n, nil
	}
	root, err := build(0, 0, 0)
	if err != nil {
		return nil, err
	}
	if pos != len(elems) {
		return nil, corruptf("schema has %d elements after its root group", len(elems)-pos)
	}
	return root, nil
}

func groupAnnOf(e *format.SchemaElement) groupAnn {
	switch e.LogicalType.Value.(type) {
	case *format.ListType:
		return groupList
	case *format.MapType:
		return groupMap
	case *format.VariantType:
		return groupVariant
	}
	if ct, ok := e.ConvertedType.Get(); ok {
		switch ct {
		case deprecated.List:
			return groupList
		case deprecated.Map, deprecated.MapKeyValue:
			return groupMap
		}
	}
	return groupPlain
}

func annotOf(e *format.SchemaElement) annot {
	switch lt := e.LogicalType.Value.(type) {
	case *format.IntType:
		return annot{kind: annInt, bits: int(lt.BitWidth), signed: lt.IsSigned, name: lt.String()}
	case *format.DecimalType:
		return annot{kind: annDecimal, precision: int(lt.Precision), scale: int(lt.Scale), name: lt.String()}
	case *format.DateType:
		return annot{kind: annDate, name: "DATE"}
	case *format.TimestampType:
		a := annot{kind: annTimestamp, utc: lt.IsAdjustedToUTC, name: lt.String()}
		switch lt.Unit.Value.(type) {
		case *format.MilliSeconds:
			a.unit = 1000
		case *format.MicroSeconds:
			a.unit = 1
		case *format.NanoSeconds:
			a.unit = -1000
		default:
			return annot{kind: annOther, name: lt.String()}
		}
		return a
	case *format.StringType, *format.EnumType, *format.JsonType:
		return annot{kind: annString, name: lt.String()}
	case *format.TimeType:
		a := annot{kind: annTime, utc: lt.IsAdjustedToUTC, name: lt.String()}
		switch lt.Unit.Value.(type) {
		case *format.MilliSeconds:
			a.unit = 1000
		case *format.MicroSeconds:
			a.unit = 1
		case *format.NanoSeconds:
			a.unit = -1000
		}
		return a
	case *format.UUIDType:
		return annot{kind: annUUID, name: "UUID"}
	case *format.GeometryType, *format.GeographyType:
		return annot{kind: annGeo, name: lt.String()}
	case nil:
	default:
		return annot{kind: annOther, name: lt.String()}
	}
	ct, ok := e.ConvertedType.Get()
	if !ok {
		return annot{}
	}
	name := "ConvertedType(" + strconv.Itoa(int(ct)) + ")"
	if int(ct) < len(convertedNames) && convertedNames[ct] != "" {
		name = convertedNames[ct]
	}
	switch ct {
	case deprecated.UTF8, deprecated.Enum, deprecated.Json:
		return annot{kind: annString, name: name}
	case deprecated.Decimal:
		return annot{kind: annDecimal, precision: int(e.Precision.V), scale: int(e.Scale.V), name: name}
	case deprecated.Date:
		return annot{kind: annDate, name: name}
	case deprecated.TimestampMillis:
		return annot{kind: annTimestamp, unit: 1000, utc: true, name: name}
	case deprecated.TimestampMicros:
		return annot{kind: annTimestamp, unit: 1, utc: true, name: name}
	case deprecated.Int8, deprecated.Int16, deprecated.Int32, deprecated.Int64:
		return annot{kind: annInt, bits: 8 << (ct - deprecated.Int8), signed: true, name: name}
	case deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
		return annot{kind: annInt, bits: 8 << (ct - deprecated.Uint8), name: name}
	}
	return annot{kind: annOther, name: name}
}

// describe names a leaf's Parquet type for errors: "INT64 (TIMESTAMP(...))".
func (n *pnode) describe() string {
	if !n.leaf {
		switch n.groupAnn {
		case groupList:
			return "LIST group"
		case groupMap:
			return "MAP group"
		case groupVariant:
			return "VARIANT group"
		}
		if n.rep == format.Repeated {
			return "repeated group"
		}
		return "group"
	}
	s := n.phys.String()
	if n.phys == format.FixedLenByteArray {
		s += "(" + strconv.Itoa(n.typeLen) + ")"
	}
	if n.ann.name != "" {
		s += " (" + n.ann.name + ")"
	}
	if n.rep == format.Repeated {
		s = "repeated " + s
	}
	return s
}

// inferField returns the Delta field for node n.
func inferField(n *pnode, path []string) (schema.StructField, error) {
	sf := schema.StructField{Name: n.name, Nullable: n.rep != format.Required}
	if n.fieldID != 0 {
		sf.Metadata = schema.Metadata{{Key: schema.MetadataColumnMappingID, Value: []byte(strconv.Itoa(n.fieldID))}}
	}
	var err error
	if n.rep == format.Repeated {
		// A repeated field outside a LIST: a required array of it.
		var elem schema.DataType
		elem, err = inferType(n, path)
		sf.Type, sf.Nullable = &schema.ArrayType{ElementType: elem}, false
	} else {
		sf.Type, err = inferType(n, path)
	}
	return sf, err
}

// inferType returns the Delta type of n, leaving aside its repetition.
func inferType(n *pnode, path []string) (schema.DataType, error) {
	if n.leaf {
		return inferLeaf(n, path)
	}
	switch n.groupAnn {
	case groupList:
		if lv, ok := listLayout(n, nil); ok {
			et, err := inferType(lv.elem, append(path, lv.elem.name))
			if err != nil {
				return nil, err
			}
			return &schema.ArrayType{ElementType: et, ContainsNull: lv.elem.rep == format.Optional}, nil
		}
		return nil, corruptf("column %v: malformed LIST group", path)
	case groupMap:
		if mv, ok := mapLayout(n); ok {
			kt, err := inferType(mv.key, append(path, mv.key.name))
			if err != nil {
				return nil, err
			}
			mt := &schema.MapType{KeyType: kt, ValueType: schema.Void}
			if mv.value != nil {
				if mt.ValueType, err = inferType(mv.value, append(path, mv.value.name)); err != nil {
					return nil, err
				}
				mt.ValueContainsNull = mv.value.rep == format.Optional
			}
			return mt, nil
		}
		return nil, corruptf("column %v: malformed MAP group", path)
	case groupVariant:
		return schema.Variant, nil
	}
	st := &schema.StructType{}
	for _, c := range n.children {
		sf, err := inferField(c, append(path, c.name))
		if err != nil {
			return nil, err
		}
		st.Fields = append(st.Fields, sf)
	}
	return st, nil
}

func inferLeaf(n *pnode, path []string) (schema.DataType, error) {
	a := n.ann
	if a.kind == annDecimal {
		t := schema.DecimalType{Precision: a.precision, Scale: a.scale}
		if t.Precision < 1 || t.Precision > schema.MaxDecimalPrecision || t.Scale < 0 || t.Scale > t.Precision {
			return nil, unsupported(path, n.describe())
		}
		return t, nil
	}
	switch n.phys {
	case format.Boolean:
		if a.kind == annNone {
			return schema.Boolean, nil
		}
	case format.Int32:
		switch a.kind {
		case annNone:
			return schema.Integer, nil
		case annDate:
			return schema.Date, nil
		case annInt:
			bits := a.bits
			if !a.signed {
				bits *= 2 // the next signed type holds it
			}
			switch {
			case bits <= 8:
				return schema.Byte, nil
			case bits <= 16:
				return schema.Short, nil
			case bits <= 32:
				return schema.Integer, nil
			default:
				return schema.Long, nil
			}
		}
	case format.Int64:
		switch a.kind {
		case annNone:
			return schema.Long, nil
		case annInt:
			if a.signed || a.bits < 64 {
				return schema.Long, nil
			}
		case annTimestamp:
			if a.utc {
				return schema.Timestamp, nil
			}
			return schema.TimestampNTZ, nil
		}
	case format.Int96:
		return schema.Timestamp, nil
	case format.Float:
		if a.kind == annNone {
			return schema.Float, nil
		}
	case format.Double:
		if a.kind == annNone {
			return schema.Double, nil
		}
	case format.ByteArray:
		if a.kind == annString {
			return schema.String, nil
		}
		return schema.Binary, nil
	case format.FixedLenByteArray:
		return schema.Binary, nil
	}
	return nil, unsupported(path, n.describe())
}

// convertedNames names the legacy converted types for errors.
var convertedNames = [...]string{
	deprecated.UTF8: "UTF8", deprecated.Map: "MAP", deprecated.MapKeyValue: "MAP_KEY_VALUE",
	deprecated.List: "LIST", deprecated.Enum: "ENUM", deprecated.Decimal: "DECIMAL",
	deprecated.Date: "DATE", deprecated.TimeMillis: "TIME_MILLIS", deprecated.TimeMicros: "TIME_MICROS",
	deprecated.TimestampMillis: "TIMESTAMP_MILLIS", deprecated.TimestampMicros: "TIMESTAMP_MICROS",
	deprecated.Uint8: "UINT_8", deprecated.Uint16: "UINT_16", deprecated.Uint32: "UINT_32",
	deprecated.Uint64: "UINT_64", deprecated.Int8: "INT_8", deprecated.Int16: "INT_16",
	deprecated.Int32: "INT_32", deprecated.Int64: "INT_64", deprecated.Json: "JSON",
	deprecated.Bson: "BSON", deprecated.Interval: "INTERVAL",
}
