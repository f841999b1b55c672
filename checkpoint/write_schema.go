package checkpoint

import (
	"encoding/json"
	"math/big"
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/godelta/delta/schema"
)

// This file describes the Parquet schema of the checkpoints Write makes,
// and turns values into the column values (with their repetition and
// definition levels) of one row.
//
// The schema is the one Spark writes (PROTOCOL.md "Checkpoint Schema"):
// every group and value is optional, maps are MAP groups of a repeated
// key_value group with a required string key and an optional string value,
// lists are three-level LIST groups (list, element), longs are plain
// INT64 and ints plain INT32 (bytes and shorts INT32 annotated INT(8) and
// INT(16)), strings BYTE_ARRAY annotated STRING. Top-level columns come in Spark's order:
// txn, add, remove, metaData, protocol, domainMetadata, then
// checkpointMetadata and sidecar in V2 checkpoints. Readers find columns
// by name, so the order is a courtesy, not a rule.

// wkind is what a node of the written schema holds.
type wkind uint8

const (
	wStruct wkind = iota
	wString
	wBinary
	wBool
	wByte  // INT32 annotated INT(8,true)
	wShort // INT32 annotated INT(16,true)
	wInt   // INT32 annotated INT(32,true)
	wLong  // INT64 annotated INT(64,true)
	wFloat
	wDouble
	wDate         // INT32 DATE, days since the epoch
	wTimestamp    // INT64 TIMESTAMP(MICROS, UTC)
	wTimestampNTZ // INT64 TIMESTAMP(MICROS, local)
	wDecimal      // INT32, INT64 or FIXED_LEN_BYTE_ARRAY by precision
	wStringMap    // map<string,string>
	wStringList   // array<string>
)

// wnode is a node of the written schema. The values handed to a row for
// it are: nil for null; string, []byte, bool, int32, int64, float32,
// float64 or *big.Int (unscaled decimal) for a leaf; []any in the order of
// kids for a struct; map[string]string for a map and []string for a list.
type wnode struct {
	name  string
	kind  wkind
	prec  int
	scale int
	kids  []*wnode
	// emptyIsNull writes "" map values as nulls (partition values, where
	// the protocol treats the two alike and Spark writes null).
	emptyIsNull bool

	// Set by layout.
	col  int  // index of the first leaf column at or under the node
	ncol int  // number of leaf columns at or under the node
	def  byte // definition level at which the node is present
}

func wstruct(name string, kids ...*wnode) *wnode {
	return &wnode{name: name, kind: wStruct, kids: kids}
}
func wleaf(name string, k wkind) *wnode { return &wnode{name: name, kind: k} }

// layout numbers the leaf columns under n from col, with n present at
// definition level def, and returns the next free column.
func (n *wnode) layout(col int, def byte) int {
	n.col, n.def = col, def
	switch n.kind {
	case wStruct:
		for _, k := range n.kids {
			col = k.layout(col, def+1)
		}
	case wStringMap:
		col += 2
	default:
		col++
	}
	n.ncol = col - n.col
	return col
}

// parquetNode returns the Parquet schema node of n, optional.
func (n *wnode) parquetNode() parquet.Node {
	var p parquet.Node
	switch n.kind {
	case wStruct:
		g := &orderedGroup{fields: make([]parquet.Field, len(n.kids))}
		for i, k := range n.kids {
			g.fields[i] = &namedField{Node: k.parquetNode(), name: k.name}
		}
		p = g
	case wString:
		p = parquet.String()
	case wBinary:
		p = parquet.Leaf(parquet.ByteArrayType)
	case wBool:
		p = parquet.Leaf(parquet.BooleanType)
	case wByte:
		p = parquet.Int(8)
	case wShort:
		p = parquet.Int(16)
	case wInt:
		p = parquet.Leaf(parquet.Int32Type) // Spark writes ints and longs unannotated
	case wLong:
		p = parquet.Leaf(parquet.Int64Type)
	case wFloat:
		p = parquet.Leaf(parquet.FloatType)
	case wDouble:
		p = parquet.Leaf(parquet.DoubleType)
	case wDate:
		p = parquet.Date()
	case wTimestamp:
		p = parquet.TimestampAdjusted(parquet.Microsecond, true)
	case wTimestampNTZ:
		p = parquet.TimestampAdjusted(parquet.Microsecond, false)
	case wDecimal:
		switch {
		case n.prec <= 9:
			p = parquet.Decimal(n.scale, n.prec, parquet.Int32Type)
		case n.prec <= 18:
			p = parquet.Decimal(n.scale, n.prec, parquet.Int64Type)
		default:
			p = parquet.Decimal(n.scale, n.prec, parquet.FixedLenByteArrayType(decimalBytes(n.prec)))
		}
	case wStringMap:
		p = parquet.Map(parquet.String(), parquet.Optional(parquet.String()))
	case wStringList:
		p = parquet.List(parquet.Optional(parquet.String()))
	}
	return parquet.Optional(p)
}

// deltaType returns the Delta type of the values of n. Every field is
// nullable, as every Parquet node of the checkpoint is optional.
func (n *wnode) deltaType() schema.DataType {
	switch n.kind {
	case wStruct:
		st := &schema.StructType{Fields: make([]schema.StructField, len(n.kids))}
		for i, k := range n.kids {
			st.Fields[i] = schema.StructField{Name: k.name, Type: k.deltaType(), Nullable: true}
		}
		return st
	case wDecimal:
		return schema.DecimalType{Precision: n.prec, Scale: n.scale}
	case wStringMap:
		return &schema.MapType{KeyType: schema.String, ValueType: schema.String, ValueContainsNull: true}
	case wStringList:
		return &schema.ArrayType{ElementType: schema.String, ContainsNull: true}
	}
	for t, k := range primitiveKinds {
		if k == n.kind {
			return t
		}
	}
	return nil // not reached: every leaf kind is in primitiveKinds
}

// maxSchemaJSON is the longest checkpointSchema written to
// _last_checkpoint: Spark's checkpointSchema.writeThresholdLength default.
const maxSchemaJSON = 20000

// schemaJSON returns the Delta schema of the file whose top-level columns
// are root's children, as _last_checkpoint's checkpointSchema holds it, or
// nil when it is longer than maxSchemaJSON.
func schemaJSON(root *wnode) json.RawMessage {
	b, err := json.Marshal(root.deltaType())
	if err != nil || len(b) > maxSchemaJSON {
		return nil
	}
	return b
}

// decimalBytes is the fewest bytes that hold every unscaled value of a
// decimal of precision prec in two's complement, as Spark sizes them.
func decimalBytes(prec int) int {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(prec)), nil)
	for n := 1; ; n++ {
		if new(big.Int).Lsh(big.NewInt(1), uint(8*n-1)).Cmp(limit) >= 0 {
			return n
		}
	}
}

// orderedGroup is a Parquet group whose fields keep the order they were
// given in (parquet.Group sorts them by name).
type orderedGroup struct{ fields []parquet.Field }

func (g *orderedGroup) ID() int                         { return 0 }
func (g *orderedGroup) String() string                  { return "group" }
func (g *orderedGroup) Type() parquet.Type              { return parquet.Group{}.Type() }
func (g *orderedGroup) Optional() bool                  { return false }
func (g *orderedGroup) Repeated() bool                  { return false }
func (g *orderedGroup) Required() bool                  { return true }
func (g *orderedGroup) Leaf() bool                      { return false }
func (g *orderedGroup) Fields() []parquet.Field         { return g.fields }
func (g *orderedGroup) Encoding() encoding.Encoding     { return nil }
func (g *orderedGroup) Compression() compress.Codec     { return nil }
func (g *orderedGroup) GoType() reflect.Type            { return reflect.TypeFor[map[string]any]() }
func (f *namedField) Name() string                      { return f.name }
func (f *namedField) Value(reflect.Value) reflect.Value { return reflect.Value{} }

type namedField struct {
	parquet.Node
	name string
}

// Column names of the actions' fields. They are part of the on-disk format
// shared with every Delta implementation and must never change.
const (
	fPath                    = "path"
	fPartitionValues         = "partitionValues"
	fSize                    = "size"
	fModificationTime        = "modificationTime"
	fDataChange              = "dataChange"
	fTags                    = "tags"
	fDeletionVector          = "deletionVector"
	fBaseRowID               = "baseRowId"
	fDefaultRowCommitVersion = "defaultRowCommitVersion"
	fClusteringProvider      = "clusteringProvider"
	fStats                   = "stats"
	fNumRecords              = "numRecords"
	fMinValues               = "minValues"
	fMaxValues               = "maxValues"
	fNullCount               = "nullCount"
	fTightBounds             = "tightBounds"
)

func dvNode() *wnode {
	return wstruct(fDeletionVector,
		wleaf("storageType", wString),
		wleaf("pathOrInlineDv", wString),
		wleaf("offset", wInt),
		wleaf("sizeInBytes", wInt),
		wleaf("cardinality", wLong),
		wleaf("maxRowIndex", wLong),
	)
}

// addNode is the add column. partitions and stats are the
// partitionValues_parsed and stats_parsed structs, or nil to leave them
// out; withStats is false to leave out the stats string.
func addNode(withStats bool, partitions, stats *wnode) *wnode {
	n := wstruct(colAdd,
		wleaf(fPath, wString),
		&wnode{name: fPartitionValues, kind: wStringMap, emptyIsNull: true},
		wleaf(fSize, wLong),
		wleaf(fModificationTime, wLong),
		wleaf(fDataChange, wBool),
		wleaf(fTags, wStringMap),
		dvNode(),
		wleaf(fBaseRowID, wLong),
		wleaf(fDefaultRowCommitVersion, wLong),
		wleaf(fClusteringProvider, wString),
	)
	if withStats {
		n.kids = append(n.kids, wleaf(fStats, wString))
	}
	if partitions != nil {
		n.kids = append(n.kids, partitions)
	}
	if stats != nil {
		n.kids = append(n.kids, stats)
	}
	return n
}

// removeNode is the remove column: the tombstone fields, without stats and
// tags (PROTOCOL.md "Checkpoints").
func removeNode() *wnode {
	return wstruct(colRemove,
		wleaf(fPath, wString),
		wleaf("deletionTimestamp", wLong),
		wleaf(fDataChange, wBool),
		wleaf("extendedFileMetadata", wBool),
		&wnode{name: fPartitionValues, kind: wStringMap, emptyIsNull: true},
		wleaf(fSize, wLong),
		dvNode(),
		wleaf(fBaseRowID, wLong),
		wleaf(fDefaultRowCommitVersion, wLong),
	)
}

func txnNode() *wnode {
	return wstruct(colTxn, wleaf("appId", wString), wleaf("version", wLong), wleaf("lastUpdated", wLong))
}

func metadataNode() *wnode {
	return wstruct(colMetadata,
		wleaf("id", wString),
		wleaf("name", wString),
		wleaf("description", wString),
		wstruct("format", wleaf("provider", wString), wleaf("options", wStringMap)),
		wleaf("schemaString", wString),
		wleaf("partitionColumns", wStringList),
		wleaf("configuration", wStringMap),
		wleaf("createdTime", wLong),
	)
}

func protocolNode() *wnode {
	return wstruct(colProtocol,
		wleaf("minReaderVersion", wInt),
		wleaf("minWriterVersion", wInt),
		wleaf("readerFeatures", wStringList),
		wleaf("writerFeatures", wStringList),
	)
}

func domainMetadataNode() *wnode {
	return wstruct(colDomainMetadata, wleaf("domain", wString), wleaf("configuration", wString), wleaf("removed", wBool))
}

func checkpointMetadataNode() *wnode {
	return wstruct(colCheckpointMetadata, wleaf("version", wLong), wleaf(fTags, wStringMap))
}

func sidecarNode() *wnode {
	return wstruct(colSidecar, wleaf(fPath, wString), wleaf("sizeInBytes", wLong), wleaf(fModificationTime, wLong), wleaf(fTags, wStringMap))
}

// typedNode returns the node holding values of Delta type t under name,
// and false for types that have no typed form here (variant, void,
// geospatial, and nested types other than structs). minMaxNode leaves out
// binary and boolean, which have no min/max statistics.
func typedNode(name string, t schema.DataType) (*wnode, bool) {
	switch t := t.(type) {
	case schema.PrimitiveType:
		k, ok := primitiveKinds[t]
		return wleaf(name, k), ok
	case schema.DecimalType:
		if t.Precision < 1 || t.Precision > schema.MaxDecimalPrecision || t.Scale < 0 || t.Scale > t.Precision {
			return nil, false
		}
		return &wnode{name: name, kind: wDecimal, prec: t.Precision, scale: t.Scale}, true
	}
	return nil, false
}

var primitiveKinds = map[schema.PrimitiveType]wkind{
	schema.String:       wString,
	schema.Long:         wLong,
	schema.Integer:      wInt,
	schema.Short:        wShort,
	schema.Byte:         wByte,
	schema.Float:        wFloat,
	schema.Double:       wDouble,
	schema.Boolean:      wBool,
	schema.Binary:       wBinary,
	schema.Date:         wDate,
	schema.Timestamp:    wTimestamp,
	schema.TimestampNTZ: wTimestampNTZ,
}

// rowBuilder collects the column values of one row.
type rowBuilder struct {
	cols [][]parquet.Value // per leaf column
}

func newRowBuilder(ncols int) *rowBuilder {
	return &rowBuilder{cols: make([][]parquet.Value, ncols)}
}

// row returns the values of the row built, in column order, and resets the
// builder. The returned row is appended to buf.
func (b *rowBuilder) row(buf parquet.Row) parquet.Row {
	for i, c := range b.cols {
		buf = append(buf, c...)
		b.cols[i] = c[:0]
	}
	return buf
}

// nulls marks every column under n null at definition level def.
func (b *rowBuilder) nulls(n *wnode, def byte) {
	for c := n.col; c < n.col+n.ncol; c++ {
		b.cols[c] = append(b.cols[c], parquet.NullValue().Level(0, int(def), c))
	}
}

// put writes v, the value of node n (see wnode for the Go types), into the
// row. Every node is optional: nil writes a null. A value of the wrong Go
// type is a bug of this package and is written as null.
func (b *rowBuilder) put(n *wnode, v any) {
	if v == nil {
		b.nulls(n, n.def-1)
		return
	}
	switch n.kind {
	case wStruct:
		vals, _ := v.([]any)
		for i, k := range n.kids {
			var kv any
			if i < len(vals) {
				kv = vals[i]
			}
			b.put(k, kv)
		}
		return
	case wStringMap:
		m, _ := v.(map[string]string)
		if len(m) == 0 {
			b.nulls(n, n.def)
			return
		}
		kc, vc := n.col, n.col+1
		keys := sortedKeys(m)
		for i, k := range keys {
			rep := 0
			if i > 0 {
				rep = 1
			}
			b.cols[kc] = append(b.cols[kc], parquet.ByteArrayValue([]byte(k)).Level(rep, int(n.def+1), kc))
			val := m[k]
			if val == "" && n.emptyIsNull {
				b.cols[vc] = append(b.cols[vc], parquet.NullValue().Level(rep, int(n.def+1), vc))
			} else {
				b.cols[vc] = append(b.cols[vc], parquet.ByteArrayValue([]byte(val)).Level(rep, int(n.def+2), vc))
			}
		}
		return
	case wStringList:
		l, _ := v.([]string)
		if len(l) == 0 {
			b.nulls(n, n.def)
			return
		}
		for i, s := range l {
			rep := 0
			if i > 0 {
				rep = 1
			}
			b.cols[n.col] = append(b.cols[n.col], parquet.ByteArrayValue([]byte(s)).Level(rep, int(n.def+2), n.col))
		}
		return
	}
	pv, ok := leafValue(n, v)
	if !ok {
		b.nulls(n, n.def-1)
		return
	}
	b.cols[n.col] = append(b.cols[n.col], pv.Level(0, int(n.def), n.col))
}

// leafValue converts v to the physical value of leaf n.
func leafValue(n *wnode, v any) (parquet.Value, bool) {
	switch x := v.(type) {
	case string:
		if n.kind == wString || n.kind == wBinary {
			return parquet.ByteArrayValue([]byte(x)), true
		}
	case []byte:
		if n.kind == wString || n.kind == wBinary {
			return parquet.ByteArrayValue(x), true
		}
	case bool:
		if n.kind == wBool {
			return parquet.BooleanValue(x), true
		}
	case int32:
		switch n.kind {
		case wByte, wShort, wInt, wDate:
			return parquet.Int32Value(x), true
		}
	case int64:
		switch n.kind {
		case wLong, wTimestamp, wTimestampNTZ:
			return parquet.Int64Value(x), true
		}
	case float32:
		if n.kind == wFloat {
			return parquet.FloatValue(x), true
		}
	case float64:
		if n.kind == wDouble {
			return parquet.DoubleValue(x), true
		}
	case *big.Int:
		if n.kind == wDecimal {
			return decimalValue(n, x)
		}
	}
	return parquet.Value{}, false
}

// decimalValue encodes an unscaled decimal in the physical type of n.
func decimalValue(n *wnode, u *big.Int) (parquet.Value, bool) {
	switch {
	case n.prec <= 9:
		if !u.IsInt64() || u.Int64() != int64(int32(u.Int64())) {
			return parquet.Value{}, false
		}
		return parquet.Int32Value(int32(u.Int64())), true
	case n.prec <= 18:
		if !u.IsInt64() {
			return parquet.Value{}, false
		}
		return parquet.Int64Value(u.Int64()), true
	}
	size := decimalBytes(n.prec)
	// Two's complement, big-endian, sign-extended to size bytes.
	b := make([]byte, size)
	v := new(big.Int).Set(u)
	if v.Sign() < 0 {
		v.Add(v, new(big.Int).Lsh(big.NewInt(1), uint(8*size)))
	}
	raw := v.Bytes()
	if len(raw) > size || v.Sign() < 0 {
		return parquet.Value{}, false
	}
	copy(b[size-len(raw):], raw)
	return parquet.FixedLenByteArrayValue(b), true
}
