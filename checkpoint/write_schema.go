package checkpoint

import (
	"encoding/json"
	"math/big"

	"github.com/godelta/delta/internal/statsjson"
	"github.com/godelta/delta/schema"
)

// This file describes the schema of the checkpoints Write makes, as a
// Delta schema of nullable fields (deltaType), and turns the values of
// actions into the values of one row (value), which the data file writer
// (internal/datafile) encodes as it encodes Spark's types in data files.
//
// The Parquet schema is so the one Spark writes (PROTOCOL.md "Checkpoint
// Schema"): every group and value is optional, maps are MAP groups of a
// repeated key_value group with a required string key and an optional
// string value, lists are three-level LIST groups (list, element), longs
// are plain INT64 and ints plain INT32 (bytes and shorts INT32 annotated
// INT(8) and INT(16)), strings BYTE_ARRAY annotated STRING. Top-level
// columns come in Spark's order:
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
	// index maps a kid's name to its index, in the nodes of stats_parsed
	// (filled by statsNode), which parsedStatsValue looks keys up in.
	index map[string]int
}

func wstruct(name string, kids ...*wnode) *wnode {
	return &wnode{name: name, kind: wStruct, kids: kids}
}
func wleaf(name string, k wkind) *wnode { return &wnode{name: name, kind: k} }

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
	fNumRecords              = statsjson.KeyNumRecords
	fMinValues               = statsjson.KeyMinValues
	fMaxValues               = statsjson.KeyMaxValues
	fNullCount               = statsjson.KeyNullCount
	fTightBounds             = statsjson.KeyTightBounds
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

// value returns v, the value of node n (see wnode for the Go types), as
// the data file writer takes it. Every node is optional: nil is a null,
// and so is a value of the wrong Go type (a bug of this package) or out
// of the range of its column.
func (n *wnode) value(v any) schema.Value {
	if v == nil {
		return schema.Value{}
	}
	switch n.kind {
	case wStruct:
		vals, ok := v.([]any)
		if !ok {
			return schema.Value{}
		}
		out := make([]schema.Value, len(n.kids))
		for i, k := range n.kids {
			if i < len(vals) {
				out[i] = k.value(vals[i])
			}
		}
		return schema.StructValue(out)
	case wStringMap:
		m, ok := v.(map[string]string)
		if !ok {
			return schema.Value{}
		}
		kv := make([]schema.Value, 0, 2*len(m))
		for _, k := range sortedKeys(m) {
			val := schema.StringValue(m[k])
			if m[k] == "" && n.emptyIsNull {
				val = schema.Value{}
			}
			kv = append(kv, schema.StringValue(k), val)
		}
		return schema.MapValue(kv)
	case wStringList:
		l, ok := v.([]string)
		if !ok {
			return schema.Value{}
		}
		out := make([]schema.Value, len(l))
		for i, s := range l {
			out[i] = schema.StringValue(s)
		}
		return schema.ArrayValue(out)
	}
	return n.leafValue(v)
}

// leafValue converts v to the value of leaf n, or a null.
func (n *wnode) leafValue(v any) schema.Value {
	switch x := v.(type) {
	case string:
		switch n.kind {
		case wString:
			return schema.StringValue(x)
		case wBinary:
			return schema.BinaryValueString(x)
		}
	case []byte:
		switch n.kind {
		case wString:
			return schema.StringValue(string(x))
		case wBinary:
			return schema.BinaryValue(x)
		}
	case bool:
		if n.kind == wBool {
			return schema.BooleanValue(x)
		}
	case int32:
		switch n.kind {
		case wByte:
			if x == int32(int8(x)) {
				return schema.ByteValue(int8(x))
			}
		case wShort:
			if x == int32(int16(x)) {
				return schema.ShortValue(int16(x))
			}
		case wInt:
			return schema.IntegerValue(x)
		case wDate:
			return schema.DateValue(x)
		}
	case int64:
		switch n.kind {
		case wLong:
			return schema.LongValue(x)
		case wTimestamp:
			return schema.TimestampValue(x)
		case wTimestampNTZ:
			return schema.TimestampNTZValue(x)
		}
	case float32:
		if n.kind == wFloat {
			return schema.FloatValue(x)
		}
	case float64:
		if n.kind == wDouble {
			return schema.DoubleValue(x)
		}
	case *big.Int:
		if n.kind == wDecimal {
			if d, err := schema.DecimalValue(x, n.prec, n.scale); err == nil {
				return d
			}
		}
	}
	return schema.Value{}
}
