package datafile

// The write side: Delta values to a Parquet data file, with the Delta
// per-file statistics of what was written.
//
// # Layout written
//
// The Parquet schema is the one Spark writes for the same Delta types, so
// that Spark, delta-rs and this package's reader all read the files:
// boolean as BOOLEAN; byte and short as INT32 annotated INT(8,true) and
// INT(16,true); integer as INT32; long as INT64; float; double; string as
// BYTE_ARRAY annotated STRING; binary as BYTE_ARRAY; date as INT32 DATE;
// timestamp as INT64 TIMESTAMP(MICROS, isAdjustedToUTC=true) and
// timestamp_ntz as INT64 TIMESTAMP(MICROS, false) (Spark's INT96 default
// is not used: it is deprecated and loses the time zone semantics);
// decimal(p,s) as DECIMAL(p,s) over INT32 for p <= 9, INT64 for p <= 18,
// else FIXED_LEN_BYTE_ARRAY of the fewest bytes that hold 10^p - 1 in two's
// complement; a struct as a group of its fields in schema order; an array
// as the three-level LIST (a repeated group "list" of one field
// "element"); a map as MAP over a repeated group "key_value" of a required
// "key" and a "value"; a variant as a plain group of two required binaries,
// "value" then "metadata". Void fields are left out: readers read a field
// absent from the file as null. Fields are optional when nullable, else
// required, as are array elements (containsNull) and map values
// (valueContainsNull). The root group is named spark_schema.
//
// # How a write works
//
// Write takes one column-major batch and, a chunk of rows at a time,
// shreds every column into the leaf columns of the file (the Dremel
// encoding): each leaf gets one parquet.Value per entry, with its
// repetition and definition levels, and the chunk's entries go to
// parquet-go's column writer in one call per leaf (parquet-go's
// ColumnWriter API: no row assembly, no reflection). A top-level primitive
// column, the common case, is converted in one typed loop per chunk that
// also updates its statistics; nested values are walked recursively.
// Statistics are gathered while shredding, from the Delta values
// themselves, never read back from the file.

import (
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// DefaultRowGroupSize is the row group size when WriteOptions leaves
// RowGroupSize at zero: 128 MiB, as Spark's parquet.block.size.
const DefaultRowGroupSize = 128 << 20

// writeChunk is the most rows shredded before the entries are handed to
// parquet-go: it bounds the memory of the entry buffers whatever the
// batch size.
const writeChunk = 4096

// ErrValueMismatch is returned by Write for a value that does not fit its
// column: a null in a non-nullable field, a map key or a required array
// element; a value of another type; a decimal with more digits than its
// column holds, or a struct with the wrong number of fields. The error
// names the column and the row. It matches deltaerr.ErrInvalidArgument.
var ErrValueMismatch = fmt.Errorf("datafile: value does not fit its column: %w", deltaerr.ErrInvalidArgument)

// errClosed is returned by a Writer used after Close.
var errClosed = fmt.Errorf("datafile: writer is closed: %w", deltaerr.ErrInvalidArgument)

// WriteOptions tune NewWriter. The zero value writes snappy-compressed
// files with 128 MiB row groups, no field ids, and the default statistics.
type WriteOptions struct {
	// ByFieldID writes each field's "delta.columnMapping.id" metadata as
	// its Parquet field id, at every nesting level (column mapping in id
	// mode; Spark writes them in name mode too).
	ByFieldID bool
	// Stats chooses the columns that get statistics.
	Stats StatsOptions
	// Compression is the codec of every column: "snappy" (the default, as
	// Spark), "zstd", "gzip" or "none" ("uncompressed" too). Others give
	// deltaerr.ErrInvalidArgument.
	Compression string
	// RowGroupSize is the buffered size, in bytes before compression, at
	// which a row group is written; 0 means DefaultRowGroupSize.
	RowGroupSize int64
}

// Writer writes one Parquet data file. Create it with NewWriter, call
// Write for each batch, then Close, which writes the footer and returns
// the file's statistics; a Writer that is not closed leaves an incomplete
// file behind (the caller deletes it). A Writer is not safe for concurrent
// use. After an error, of the io.Writer or a value that does not fit, the
// Writer is unusable: every later call returns that error.
type Writer struct {
	pw     *parquet.GenericWriter[any]
	colws  []*parquet.ColumnWriter
	top    []*wnode // one per field of the physical schema; nil for void
	leaves []*wleaf // in file column order
	stats  *collector

	numRows      int64
	row          int64 // the row being shredded, for errors
	rowGroupSize int64
	rgStart      int64 // pw.Size() when the current row group began
	err          error // sticky
	closed       bool
}

// NewWriter returns a Writer of a Parquet file with schema physical (the
// caller has applied column mapping and left out partition columns) to w.
// Nothing is written to w before the first Write. A type that cannot be
// written (geometry, geography, a void array element or map key, a struct
// left with no field once void fields are dropped) gives a *ColumnError
// matching ErrUnsupportedType; bad options give deltaerr.ErrInvalidArgument.
func NewWriter(w io.Writer, physical *schema.StructType, opts WriteOptions) (*Writer, error) {
	if physical == nil || w == nil {
		return nil, fmt.Errorf("datafile: nil schema or writer: %w", deltaerr.ErrInvalidArgument)
	}
	codec, err := codecOf(opts.Compression)
	if err != nil {
		return nil, err
	}
	b := &builder{byID: opts.ByFieldID}
	root := &orderedGroup{}
	out := &Writer{rowGroupSize: opts.RowGroupSize}
	if out.rowGroupSize <= 0 {
		out.rowGroupSize = DefaultRowGroupSize
	}
	for i := range physical.Fields {
		f := &physical.Fields[i]
		node, wn, err := b.field(f, []string{f.Name}, 0, 0)
		if err != nil {
			return nil, err
		}
		out.top = append(out.top, wn)
		if node != nil {
			root.fields = append(root.fields, orderedField{Node: node, name: f.Name})
		}
	}
	if len(b.leaves) == 0 {
		return nil, unsupported(nil, "a schema with no columns to write")
	}
	if len(b.leaves) > parquet.MaxColumnIndex {
		return nil, unsupported(nil, "more than "+strconv.Itoa(parquet.MaxColumnIndex)+" leaf columns")
	}
	out.leaves = b.leaves
	out.stats, err = newCollector(physical, out.top, opts.Stats)
	if err != nil {
		return nil, err
	}
	cfg, err := parquet.NewWriterConfig(
		parquet.NewSchema("spark_schema", root),
		parquet.Compression(codec),
		parquet.CreatedBy("godelta", "", ""),
	)
	if err != nil {
		return nil, fmt.Errorf("datafile: writer configuration: %w: %w", deltaerr.ErrInvalidArgument, err)
	}
	if err := protect(func() error {
		out.pw = parquet.NewGenericWriter[any](w, cfg)
		out.colws = out.pw.ColumnWriters()
		return nil
	}); err != nil {
		return nil, err
	}
	if len(out.colws) != len(out.leaves) {
		return nil, fmt.Errorf("datafile: internal error: %d column writers for %d leaves", len(out.colws), len(out.leaves))
	}
	return out, nil
}

// codecOf returns the codec named by WriteOptions.Compression.
func codecOf(name string) (compress.Codec, error) {
	switch strings.ToLower(name) {
	case "", "snappy":
		return &parquet.Snappy, nil
	case "zstd":
		return &parquet.Zstd, nil
	case "gzip":
		return &parquet.Gzip, nil
	case "none", "uncompressed":
		return &parquet.Uncompressed, nil
	}
	return nil, fmt.Errorf("datafile: unknown compression %q: %w", name, deltaerr.ErrInvalidArgument)
}

// Write appends the first n rows of a column-major batch: cols holds one
// slice per field of the physical schema, in its order, each at least n
// long (values of void fields are ignored). A value that does not fit its
// column gives ErrValueMismatch; the rows of the batch may then be partly
// written, and the Writer is unusable.
func (w *Writer) Write(cols [][]schema.Value, n int) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errClosed
	}
	if len(cols) != len(w.top) || n < 0 {
		return fmt.Errorf("datafile: Write of %d columns, %d rows for a schema of %d fields: %w", len(cols), n, len(w.top), deltaerr.ErrInvalidArgument)
	}
	for i, c := range cols {
		if w.top[i] != nil && len(c) < n {
			return fmt.Errorf("datafile: column %s has %d values for %d rows: %w", w.top[i].name, len(c), n, deltaerr.ErrInvalidArgument)
		}
	}
	for start := 0; start < n; start += writeChunk {
		end := min(n, start+writeChunk)
		if err := w.writeChunk(cols, start, end); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// writeChunk shreds rows [start, end) and hands their entries to
// parquet-go, flushing a row group when the buffered size reaches the
// target.
func (w *Writer) writeChunk(cols [][]schema.Value, start, end int) error {
	err := protect(func() error {
		for i, n := range w.top {
			if n == nil {
				continue
			}
			vals := cols[i][start:end]
			if n.kind == wLeaf {
				n.leaf.putTop(w, n, vals)
				continue
			}
			for j, v := range vals {
				w.row = w.numRows + int64(j)
				w.shred(n, v, 0, 0)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.stats.numRecords += int64(end - start)
	w.numRows += int64(end - start)
	for _, l := range w.leaves {
		if _, err := w.colws[l.col].WriteRowValues(l.buf); err != nil {
			return writeErr(err)
		}
		clear(l.buf) // drop references to the caller's bytes
		l.buf = l.buf[:0]
	}
	if w.pw.Size()-w.rgStart >= w.rowGroupSize {
		if err := w.pw.Flush(); err != nil {
			return writeErr(err)
		}
		w.rgStart = w.pw.Size()
	}
	return nil
}

// Size returns the bytes written to the io.Writer so far plus an estimate,
// before compression, of the rows buffered for the current row group:
// what the file would be about if closed now, less the footer. Callers
// roll to a new file when it reaches their target size.
func (w *Writer) Size() int64 {
	if w.pw == nil {
		return 0
	}
	return w.pw.Size()
}

// Close writes the buffered rows and the footer, and returns the file's
// statistics (see Stats). It does not close the io.Writer. Closing twice,
// or after an error, returns the error again.
func (w *Writer) Close() (Stats, error) {
	if w.err != nil {
		return Stats{}, w.err
	}
	if w.closed {
		return Stats{}, errClosed
	}
	w.closed = true
	if err := protect(func() error { return w.pw.Close() }); err != nil {
		w.err = writeErr(err)
		return Stats{}, w.err
	}
	return w.stats.result(), nil
}

// writeErr wraps an error of parquet-go's writer, which is in most cases
// an error of the io.Writer, passed through.
func writeErr(err error) error {
	return fmt.Errorf("datafile: writing: %w", err)
}

// protect runs fn, turning an abort into its error and any other panic
// (of parquet-go's encoder) into an error: bad input never panics out of
// the Writer.
func protect(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if a, ok := v.(abort); ok {
				err = a.err
				return
			}
			err = fmt.Errorf("datafile: Parquet encoder failed: %w", panicError{v})
		}
	}()
	return fn()
}

// ---- the schema ----

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

// builder builds the Parquet schema and the write nodes together, leaf
// columns numbered in file order.
type builder struct {
	byID   bool
	leaves []*wleaf
}

// field returns the Parquet node and write node of f at path, whose parent
// is present at definition level def and repeated at level rep. A void
// field gives nil, nil.
func (b *builder) field(f *schema.StructField, path []string, def, rep int) (parquet.Node, *wnode, error) {
	node, wn, err := b.typ(f.Type, f.Nullable, path, def, rep)
	if err != nil || node == nil {
		return nil, nil, err
	}
	if b.byID {
		if id, ok := f.ColumnMappingID(); ok {
			if id <= 0 || id > 1<<31-1 {
				return nil, nil, fmt.Errorf("datafile: column %s: field id %d out of range: %w", strings.Join(path, "."), id, deltaerr.ErrInvalidArgument)
			}
			node = parquet.FieldID(node, int(id))
		}
	}
	return node, wn, nil
}

// typ returns the nodes of a value of type t.
func (b *builder) typ(t schema.DataType, nullable bool, path []string, def, rep int) (parquet.Node, *wnode, error) {
	wn := &wnode{name: strings.Join(path, "."), nullable: nullable, def: def, typ: t}
	if nullable {
		wn.def++
	}
	if wn.def > parquet.MaxDefinitionLevel || rep+1 > parquet.MaxRepetitionLevel {
		return nil, nil, unsupported(path, "nested too deeply")
	}
	wrap := func(n parquet.Node) parquet.Node {
		if nullable {
			return parquet.Optional(n)
		}
		return parquet.Required(n)
	}
	var node parquet.Node
	switch t := t.(type) {
	case *schema.StructType:
		wn.kind = wStruct
		g := &orderedGroup{}
		for i := range t.Fields {
			cf := &t.Fields[i]
			cn, cw, err := b.field(cf, child(path, cf.Name), wn.def, rep)
			if err != nil {
				return nil, nil, err
			}
			wn.children = append(wn.children, cw)
			if cn != nil {
				g.fields = append(g.fields, orderedField{Node: cn, name: cf.Name})
				wn.leaves = append(wn.leaves, cw.leaves...)
			}
		}
		if len(g.fields) == 0 {
			return nil, nil, unsupported(path, "a struct with no fields to write")
		}
		node = g
	case *schema.ArrayType:
		wn.kind, wn.rep = wList, rep+1
		en, ew, err := b.typ(t.ElementType, t.ContainsNull, child(path, "list", "element"), wn.def+1, rep+1)
		if err != nil {
			return nil, nil, err
		}
		if en == nil {
			return nil, nil, unsupported(path, "an array of void")
		}
		wn.children, wn.leaves = []*wnode{ew}, ew.leaves
		node = parquet.List(en)
	case *schema.MapType:
		wn.kind, wn.rep = wMap, rep+1
		kpath := child(path, "key_value", "key")
		kn, kw, err := b.typ(t.KeyType, false, kpath, wn.def+1, rep+1)
		if err != nil {
			return nil, nil, err
		}
		vpath := child(path, "key_value", "value")
		vn, vw, err := b.typ(t.ValueType, t.ValueContainsNull, vpath, wn.def+1, rep+1)
		if err != nil {
			return nil, nil, err
		}
		if kn == nil || vn == nil {
			return nil, nil, unsupported(path, "a map with void keys or values")
		}
		wn.children = []*wnode{kw, vw}
		wn.leaves = append(append([]*wleaf(nil), kw.leaves...), vw.leaves...)
		node = parquet.Map(kn, vn)
	case schema.DecimalType:
		if t.Precision < 1 || t.Precision > schema.MaxDecimalPrecision || t.Scale < 0 || t.Scale > t.Precision {
			return nil, nil, unsupported(path, t.String())
		}
		l := b.leaf(wn, encDecimal)
		l.prec, l.scale = t.Precision, t.Scale
		var pt parquet.Type
		switch {
		case t.Precision <= 9:
			pt, l.dec = parquet.Int32Type, decInt32
		case t.Precision <= 18:
			pt, l.dec = parquet.Int64Type, decInt64
		default:
			l.dec, l.flen = decFixed, decimalBytes(t.Precision)
			pt = parquet.FixedLenByteArrayType(l.flen)
		}
		node = parquet.Decimal(t.Scale, t.Precision, pt)
		if l.dec != decFixed {
			node = specLeaf(node)
		}
	case schema.PrimitiveType:
		switch t {
		case schema.Void:
			return nil, nil, nil
		case schema.Variant:
			// A variant is written as Spark does: a plain group of value,
			// then metadata; its Value is the struct (metadata, value).
			wn.kind = wStruct
			vn, vw, _ := b.typ(schema.Binary, false, child(path, "value"), wn.def, rep)
			mn, mw, _ := b.typ(schema.Binary, false, child(path, "metadata"), wn.def, rep)
			wn.children = []*wnode{mw, vw}
			wn.leaves = []*wleaf{vw.leaf, mw.leaf}
			node = &orderedGroup{fields: []orderedField{{Node: vn, name: "value"}, {Node: mn, name: "metadata"}}}
		default:
			pn, enc, ok := primitiveNode(t)
			if !ok {
				return nil, nil, unsupported(path, t.String())
			}
			b.leaf(wn, enc)
			node = pn
		}
	default:
		return nil, nil, unsupported(path, t.String())
	}
	return wrap(node), wn, nil
}

// child returns path extended by names, in a new slice.
func child(path []string, names ...string) []string {
	return append(path[:len(path):len(path)], names...)
}

// leaf makes wn the next leaf column.
func (b *builder) leaf(wn *wnode, enc leafEnc) *wleaf {
	l := &wleaf{col: len(b.leaves), enc: enc, node: wn, want: encKind(enc)}
	b.leaves = append(b.leaves, l)
	wn.kind, wn.leaf, wn.leaves = wLeaf, l, []*wleaf{l}
	return l
}

// primitiveNode returns the Parquet leaf of a primitive type.
func primitiveNode(t schema.PrimitiveType) (parquet.Node, leafEnc, bool) {
	switch t {
	case schema.Boolean:
		return bareLeaf(parquet.BooleanType), encBoolean, true
	case schema.Byte:
		return specLeaf(parquet.Int(8)), encByte, true
	case schema.Short:
		return specLeaf(parquet.Int(16)), encShort, true
	case schema.Integer:
		return bareLeaf(parquet.Int32Type), encInteger, true
	case schema.Long:
		return bareLeaf(parquet.Int64Type), encLong, true
	case schema.Float:
		return bareLeaf(parquet.FloatType), encFloat, true
	case schema.Double:
		return bareLeaf(parquet.DoubleType), encDouble, true
	case schema.String:
		return specLeaf(parquet.String()), encString, true
	case schema.Binary:
		return bareLeaf(parquet.ByteArrayType), encBinary, true
	case schema.Date:
		return specLeaf(parquet.Date()), encDate, true
	case schema.Timestamp:
		return specLeaf(parquet.TimestampAdjusted(parquet.Microsecond, true)), encTimestamp, true
	case schema.TimestampNTZ:
		return specLeaf(parquet.TimestampAdjusted(parquet.Microsecond, false)), encTimestampNTZ, true
	}
	return nil, 0, false
}

// The schema elements parquet-go writes differ from Spark's in two ways
// that these wrappers of parquet-go's leaf types undo: a type_length on
// every fixed-width type (the width in bits; the format defines it only
// for FIXED_LEN_BYTE_ARRAY), and an INT(32|64, signed) annotation on
// plain INT32 and INT64 columns. Everything else, encoding and
// statistics included, is the wrapped type's.

// specType is a leaf type written without type_length.
type specType struct{ parquet.Type }

func (specType) Length() int { return 0 }

// bareType is a leaf type written without type_length or annotation.
type bareType struct{ parquet.Type }

func (bareType) Length() int                              { return 0 }
func (bareType) LogicalType() *format.LogicalType         { return nil }
func (bareType) ConvertedType() *deprecated.ConvertedType { return nil }

func specLeaf(n parquet.Node) parquet.Node { return parquet.Leaf(specType{n.Type()}) }

func bareLeaf(t parquet.Type) parquet.Node { return parquet.Leaf(bareType{t}) }

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

// orderedGroup is a Parquet group whose fields keep the order given:
// parquet.Group sorts them by name, and Spark writes schema order.
type orderedGroup struct{ fields []orderedField }

type orderedField struct {
	parquet.Node
	name string
}

func (f orderedField) Name() string { return f.name }

// Value is used by parquet-go only to write Go values, which this package
// never does.
func (f orderedField) Value(reflect.Value) reflect.Value { return reflect.Value{} }

func (g *orderedGroup) ID() int                     { return 0 }
func (g *orderedGroup) String() string              { return "group" }
func (g *orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g *orderedGroup) Optional() bool              { return false }
func (g *orderedGroup) Repeated() bool              { return false }
func (g *orderedGroup) Required() bool              { return true }
func (g *orderedGroup) Leaf() bool                  { return false }
func (g *orderedGroup) Encoding() encoding.Encoding { return nil }
func (g *orderedGroup) Compression() compress.Codec { return nil }
func (g *orderedGroup) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }
func (g *orderedGroup) Fields() []parquet.Field {
	out := make([]parquet.Field, len(g.fields))
	for i := range g.fields {
		out[i] = g.fields[i]
	}
	return out
}

// ---- shredding ----

// leafEnc is how a leaf's values become Parquet values.
type leafEnc uint8

const (
	encBoolean leafEnc = iota
	encByte
	encShort
	encInteger
	encLong
	encFloat
	encDouble
	encString
	encBinary
	encDate
	encTimestamp
	encTimestampNTZ
	encDecimal
)

// decimal storage of a leaf.
const (
	decInt32 = iota + 1
	decInt64
	decFixed
)

// wleaf is one leaf column of the file and the entries of the current
// chunk not yet handed to parquet-go.
type wleaf struct {
	col  int
	enc  leafEnc
	want schema.Kind // the value kind the leaf takes; integers of other widths are accepted when they fit
	node *wnode
	buf  []parquet.Value
	// decimals
	dec, flen   int
	prec, scale int
}

// shred appends the entries of value v of node n to its leaves. The first
// entry gets repetition level r; parentDef is the definition level at which
// n's parent is present.
func (w *Writer) shred(n *wnode, v schema.Value, r, parentDef int) {
	if v.IsNull() {
		if !n.nullable {
			w.badValue(n, "null in a non-nullable field")
		}
		for _, a := range n.under {
			a.nulls++
		}
		for _, l := range n.leaves {
			l.buf = append(l.buf, parquet.Value{}.Level(r, parentDef, l.col))
		}
		return
	}
	switch n.kind {
	case wLeaf:
		pv := n.leaf.convert(w, v)
		n.leaf.buf = append(n.leaf.buf, pv.Level(r, n.def, n.leaf.col))
		if n.stat != nil {
			n.stat.add(v)
		}
	case wStruct:
		fields := v.Fields()
		if v.Kind() != schema.KindStruct || len(fields) != len(n.children) {
			w.badValue(n, fmt.Sprintf("%s value for a struct of %d fields", kindName(v), len(n.children)))
		}
		for i, c := range n.children {
			if c != nil {
				w.shred(c, fields[i], r, n.def)
			}
		}
	case wList:
		if v.Kind() != schema.KindArray {
			w.badValue(n, kindName(v)+" value for an array")
		}
		elems := v.Elements()
		if len(elems) == 0 {
			w.empty(n, r)
			return
		}
		e := n.children[0]
		for i, x := range elems {
			if i > 0 {
				r = n.rep
			}
			w.shred(e, x, r, n.def+1)
		}
	case wMap:
		if v.Kind() != schema.KindMap {
			w.badValue(n, kindName(v)+" value for a map")
		}
		k, vn := n.children[0], n.children[1]
		m := v.MapLen()
		if m == 0 {
			w.empty(n, r)
			return
		}
		for i := range m {
			if i > 0 {
				r = n.rep
			}
			key, val := v.MapEntry(i)
			w.shred(k, key, r, n.def+1)
			w.shred(vn, val, r, n.def+1)
		}
	}
}

// empty writes an empty array or map: one entry per leaf at the level of
// the present list, below that of its repeated group.
func (w *Writer) empty(n *wnode, r int) {
	for _, l := range n.leaves {
		l.buf = append(l.buf, parquet.Value{}.Level(r, n.def, l.col))
	}
}

// badValue aborts the write with ErrValueMismatch for the current row.
func (w *Writer) badValue(n *wnode, reason string) {
	fail(fmt.Errorf("%w: column %s, row %d: %s", ErrValueMismatch, n.name, w.row, reason))
}

func kindName(v schema.Value) string {
	if v.Kind() == schema.KindDecimal {
		return v.Type().String()
	}
	return v.Kind().String()
}

// putTop appends the entries of a top-level primitive column: one typed
// loop per chunk that converts, levels and gathers statistics, with the
// bounds kept in locals. Values of another kind than the column's take
// the general path (convert), which accepts integers of other widths
// that fit and aborts on the rest.
func (l *wleaf) putTop(w *Writer, n *wnode, vals []schema.Value) {
	start := len(l.buf)
	l.buf = slices.Grow(l.buf, len(vals))[:start+len(vals)]
	out := l.buf[start:]
	def, col, acc := n.def, l.col, n.stat
	var nulls int64
	null := func(j int) {
		if !n.nullable {
			w.row = w.numRows + int64(j)
			w.badValue(n, "null in a non-nullable field")
		}
		nulls++
		out[j] = parquet.Value{}
		out[j].SetColumnIndex(col)
	}
	other := func(j int) parquet.Value {
		w.row = w.numRows + int64(j)
		return l.convert(w, vals[j])
	}
	switch l.enc {
	case encLong, encTimestamp, encTimestampNTZ, encInteger, encDate, encByte, encShort:
		wide := l.enc == encLong || l.enc == encTimestamp || l.enc == encTimestampNTZ
		has, lo, hi := false, int64(math.MaxInt64), int64(math.MinInt64)
		for j := range vals {
			v := &vals[j]
			k := v.Kind()
			if k == schema.KindNull {
				null(j)
				continue
			}
			var x int64
			var pv parquet.Value
			switch {
			case k != l.want:
				pv = other(j)
				x = v.Int64()
			case wide:
				x = v.Int64()
				pv = parquet.Int64Value(x)
			default:
				x = v.Int64()
				pv = parquet.Int32Value(int32(x))
			}
			has = true
			lo, hi = min(lo, x), max(hi, x)
			pv.SetDefinitionLevel(def)
			pv.SetColumnIndex(col)
			out[j] = pv
		}
		if acc != nil && has {
			acc.addInt(lo)
			acc.addInt(hi)
		}
	case encDouble:
		has, nan, lo, hi := false, false, math.Inf(1), math.Inf(-1)
		for j := range vals {
			v := &vals[j]
			k := v.Kind()
			if k == schema.KindNull {
				null(j)
				continue
			}
			if k != schema.KindDouble {
				other(j)
			}
			f := v.Float64()
			pv := parquet.DoubleValue(f)
			switch {
			case f != f:
				nan = true
			case !has:
				has, lo, hi = true, f, f
			case f < lo:
				lo = f
			case f > hi:
				hi = f
			}
			pv.SetDefinitionLevel(def)
			pv.SetColumnIndex(col)
			out[j] = pv
		}
		if acc != nil {
			if has {
				acc.addFloat(lo)
				acc.addFloat(hi)
			}
			acc.nan = acc.nan || nan
		}
	case encString:
		has, lo, hi := false, "", ""
		for j := range vals {
			v := &vals[j]
			k := v.Kind()
			if k == schema.KindNull {
				null(j)
				continue
			}
			if k != schema.KindString {
				other(j)
			}
			s := v.String()
			pv := parquet.ByteArrayValue(stringBytes(s))
			switch {
			case !has:
				has, lo, hi = true, s, s
			case s < lo:
				lo = s
			case s > hi:
				hi = s
			}
			pv.SetDefinitionLevel(def)
			pv.SetColumnIndex(col)
			out[j] = pv
		}
		if acc != nil && has {
			acc.addString(lo)
			acc.addString(hi)
		}
	default:
		for j := range vals {
			v := &vals[j]
			if v.IsNull() {
				null(j)
				continue
			}
			pv := other(j)
			if acc != nil {
				acc.add(*v)
			}
			pv.SetDefinitionLevel(def)
			pv.SetColumnIndex(col)
			out[j] = pv
		}
	}
	if acc != nil {
		acc.nulls += nulls
	}
}

// encKind returns the value kind a leaf of enc takes.
func encKind(enc leafEnc) schema.Kind {
	switch enc {
	case encBoolean:
		return schema.KindBoolean
	case encByte:
		return schema.KindByte
	case encShort:
		return schema.KindShort
	case encInteger:
		return schema.KindInteger
	case encLong:
		return schema.KindLong
	case encFloat:
		return schema.KindFloat
	case encDouble:
		return schema.KindDouble
	case encString:
		return schema.KindString
	case encBinary:
		return schema.KindBinary
	case encDate:
		return schema.KindDate
	case encTimestamp:
		return schema.KindTimestamp
	case encTimestampNTZ:
		return schema.KindTimestampNTZ
	}
	return schema.KindDecimal
}

func (l *wleaf) mismatch(w *Writer, v schema.Value) {
	want := l.node.typ.String()
	w.badValue(l.node, kindName(v)+" value for a column of type "+want)
}

// intFits reports whether v is an integer of any width whose value fits a
// signed integer of bits.
func intFits(v schema.Value, bits int) bool {
	switch v.Kind() {
	case schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindLong:
		x := v.Int64()
		return bits == 64 || x >= -1<<(bits-1) && x < 1<<(bits-1)
	}
	return false
}

// convert returns the Parquet value of non-null v, aborting when v does not
// fit the leaf.
func (l *wleaf) convert(w *Writer, v schema.Value) parquet.Value {
	k := v.Kind()
	if k != l.want {
		bits := map[leafEnc]int{encByte: 8, encShort: 16, encInteger: 32, encLong: 64}[l.enc]
		if bits == 0 || !intFits(v, bits) {
			l.mismatch(w, v)
		}
	}
	switch l.enc {
	case encBoolean:
		return parquet.BooleanValue(v.Bool())
	case encByte, encShort, encInteger, encDate:
		return parquet.Int32Value(int32(v.Int64()))
	case encLong, encTimestamp, encTimestampNTZ:
		return parquet.Int64Value(v.Int64())
	case encFloat:
		return parquet.FloatValue(float32(v.Float64()))
	case encDouble:
		return parquet.DoubleValue(v.Float64())
	case encString:
		return parquet.ByteArrayValue(stringBytes(v.String()))
	case encBinary:
		return parquet.ByteArrayValue(v.Bytes())
	}
	return l.decimal(w, v)
}

// decimal returns the Parquet value of a decimal, rescaled to the
// column's scale when the value has fewer fraction digits.
func (l *wleaf) decimal(w *Writer, v schema.Value) parquet.Value {
	u, _, scale := v.Decimal()
	if scale != l.scale {
		if scale > l.scale {
			l.badDecimal(w, v)
		}
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(l.scale-scale)), nil))
	}
	if !fitsDigits(u, l.prec) {
		l.badDecimal(w, v)
	}
	switch l.dec {
	case decInt32:
		return parquet.Int32Value(int32(u.Int64()))
	case decInt64:
		return parquet.Int64Value(u.Int64())
	}
	// A fresh slice per value: parquet-go keeps the bytes of buffered
	// values without copying them.
	b := make([]byte, l.flen)
	putTwosComplement(b, u)
	return parquet.FixedLenByteArrayValue(b)
}

func (l *wleaf) badDecimal(w *Writer, v schema.Value) {
	w.badValue(l.node, "decimal "+v.String()+" does not fit "+l.node.typ.String())
}

// pow10 holds 10^p for the decimal precisions.
var pow10 = func() [schema.MaxDecimalPrecision + 1]*big.Int {
	var t [schema.MaxDecimalPrecision + 1]*big.Int
	for p := range t {
		t[p] = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil)
	}
	return t
}()

// fitsDigits reports whether |u| has at most p digits.
func fitsDigits(u *big.Int, p int) bool {
	return u.CmpAbs(pow10[p]) < 0
}

// putTwosComplement writes u big-endian in two's complement over all of b,
// which is wide enough.
func putTwosComplement(b []byte, u *big.Int) {
	if u.Sign() >= 0 {
		u.FillBytes(b)
		return
	}
	// -x = ^(x-1)
	t := new(big.Int).Neg(u)
	t.Sub(t, big.NewInt(1))
	t.FillBytes(b)
	for i := range b {
		b[i] = ^b[i]
	}
}

// stringBytes returns the bytes of s without copying. Invariant: the
// slice is only read (parquet-go copies byte array values into its own
// buffers when they are written).
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
