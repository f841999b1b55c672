package schema

import (
	"encoding/json"
	"strconv"
	"strings"
)

// DataType is a Delta data type. Its implementations are PrimitiveType,
// DecimalType, GeometryType, GeographyType, *StructType, *ArrayType and
// *MapType; no other package can add one, so a type switch over them is
// complete.
type DataType interface {
	// String returns the type as a schema string writes it: the name of a
	// primitive, decimal or geospatial type ("long", "decimal(10,2)",
	// "geometry(OGC:CRS84)"), or the JSON object of a struct, array or map.
	String() string

	// appendJSON appends the type's JSON form to b.
	appendJSON(b []byte) []byte
}

// PrimitiveType is a type without parameters, named by one word.
type PrimitiveType string

// The primitive types. Their values are the names in the schema
// serialization format, part of the on-disk format: they must never change.
const (
	String       PrimitiveType = "string"
	Long         PrimitiveType = "long"
	Integer      PrimitiveType = "integer"
	Short        PrimitiveType = "short"
	Byte         PrimitiveType = "byte"
	Float        PrimitiveType = "float"
	Double       PrimitiveType = "double"
	Boolean      PrimitiveType = "boolean"
	Binary       PrimitiveType = "binary"
	Date         PrimitiveType = "date"
	Timestamp    PrimitiveType = "timestamp"
	TimestampNTZ PrimitiveType = "timestamp_ntz"
	// Variant is semi-structured data, stored as two binary values (the
	// variantType table feature). It cannot be a partition column.
	Variant PrimitiveType = "variant"
	// Void is Spark's NullType: a column whose every value is null. The
	// protocol leaves its behaviour undefined and recommends that readers
	// drop such columns; existing tables have them.
	Void PrimitiveType = "void"
)

// primitives maps every known name to its type.
var primitives = map[string]PrimitiveType{}

func init() {
	for _, t := range []PrimitiveType{String, Long, Integer, Short, Byte, Float, Double, Boolean,
		Binary, Date, Timestamp, TimestampNTZ, Variant, Void} {
		primitives[string(t)] = t
	}
}

func (t PrimitiveType) String() string { return string(t) }

func (t PrimitiveType) appendJSON(b []byte) []byte { return appendString(b, string(t)) }

// MaxDecimalPrecision is the largest precision a decimal type can have.
const MaxDecimalPrecision = 38

// DecimalType is a signed decimal number with a fixed precision (total
// number of digits, 1 to 38) and scale (digits right of the point, 0 to
// the precision). It is written "decimal(p,s)".
type DecimalType struct {
	Precision int
	Scale     int
}

func (t DecimalType) String() string {
	return "decimal(" + strconv.Itoa(t.Precision) + "," + strconv.Itoa(t.Scale) + ")"
}

func (t DecimalType) appendJSON(b []byte) []byte { return appendString(b, t.String()) }

// valid reports whether the parameters are in the protocol's range.
func (t DecimalType) valid() bool {
	return t.Precision >= 1 && t.Precision <= MaxDecimalPrecision && t.Scale >= 0 && t.Scale <= t.Precision
}

// GeometryType holds shapes in a Cartesian space as WKB (the geospatial
// table feature). It is written "geometry(<crs>)".
type GeometryType struct {
	// CRS is the coordinate reference system as written: "OGC:CRS84",
	// "EPSG:3857", "srid:<number>" or "projjson:<table property>".
	CRS string
}

func (t GeometryType) String() string { return "geometry(" + t.CRS + ")" }

func (t GeometryType) appendJSON(b []byte) []byte { return appendString(b, t.String()) }

// GeographyType holds shapes on an ellipsoid as WKB (the geospatial table
// feature). It is written "geography(<crs>, <algorithm>)", or
// "geography(<crs>)" when the algorithm is left out.
type GeographyType struct {
	// CRS is the coordinate reference system, as in GeometryType.
	CRS string
	// Algorithm is the edge interpolation algorithm as written ("spherical",
	// "vincenty", "thomas", "andoyer", "karney"), or "" when left out.
	Algorithm string
}

func (t GeographyType) String() string {
	if t.Algorithm == "" {
		return "geography(" + t.CRS + ")"
	}
	return "geography(" + t.CRS + ", " + t.Algorithm + ")"
}

func (t GeographyType) appendJSON(b []byte) []byte { return appendString(b, t.String()) }

// StructType is a sequence of named fields: the table schema, or a nested
// struct column. Field names are unique regardless of case.
type StructType struct {
	Fields []StructField
}

// String returns the struct as schema JSON, exactly as MarshalJSON does
// but without its checks.
func (t *StructType) String() string { return string(t.appendJSON(nil)) }

func (t *StructType) appendJSON(b []byte) []byte {
	b = append(b, `{"type":"struct","fields":[`...)
	for i := range t.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = t.Fields[i].appendJSON(b)
	}
	return append(b, "]}"...)
}

// Field returns the field named name, compared case-sensitively.
func (t *StructType) Field(name string) (*StructField, bool) {
	for i := range t.Fields {
		if t.Fields[i].Name == name {
			return &t.Fields[i], true
		}
	}
	return nil, false
}

// FieldFold returns the field whose name equals name under Unicode case
// folding, the way the protocol requires names to be unique.
func (t *StructType) FieldFold(name string) (*StructField, bool) {
	for i := range t.Fields {
		if strings.EqualFold(t.Fields[i].Name, name) {
			return &t.Fields[i], true
		}
	}
	return nil, false
}

// Index returns the position of the top-level field named name, matched
// exactly first, then under case folding (as Spark resolves column names),
// or -1 when there is none.
func (t *StructType) Index(name string) int {
	for i := range t.Fields {
		if t.Fields[i].Name == name {
			return i
		}
	}
	for i := range t.Fields {
		if strings.EqualFold(t.Fields[i].Name, name) {
			return i
		}
	}
	return -1
}

// Walk calls fn for every leaf column in schema order, depth first, with
// its path of logical names from the top. Struct-typed fields are walked
// into; every other field, arrays and maps included, is a leaf. fn gets a
// fresh path slice each call. An error from fn stops the walk and is
// returned.
func (t *StructType) Walk(fn func(path []string, field *StructField) error) error {
	return t.walk(nil, fn)
}

func (t *StructType) walk(prefix []string, fn func([]string, *StructField) error) error {
	for i := range t.Fields {
		f := &t.Fields[i]
		path := child(prefix, f.Name)
		if st, ok := f.Type.(*StructType); ok {
			if err := st.walk(path, fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(path, f); err != nil {
			return err
		}
	}
	return nil
}

// LeafColumns returns the paths of the leaf columns, in the order of Walk.
func (t *StructType) LeafColumns() [][]string {
	var out [][]string
	_ = t.Walk(func(path []string, _ *StructField) error {
		out = append(out, path)
		return nil
	})
	return out
}

// StructField is one column of a struct: a top-level or nested column.
type StructField struct {
	Name     string
	Type     DataType
	Nullable bool
	Metadata Metadata
}

func (f *StructField) appendJSON(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, f.Name)
	b = append(b, `,"type":`...)
	b = appendType(b, f.Type)
	b = append(b, `,"nullable":`...)
	b = strconv.AppendBool(b, f.Nullable)
	b = append(b, `,"metadata":`...)
	b = f.Metadata.appendJSON(b)
	return append(b, '}')
}

// Metadata is a field's metadata: a JSON object whose members are kept in
// the order written, each value as compact raw JSON, so that numbers,
// nested objects and arrays re-encode exactly as they were read.
type Metadata []MetadataEntry

// MetadataEntry is one member of a field's metadata.
type MetadataEntry struct {
	Key   string
	Value json.RawMessage
}

// Get returns the raw JSON value stored under key.
func (m Metadata) Get(key string) (json.RawMessage, bool) {
	for _, e := range m {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

func (m Metadata) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, e := range m {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, e.Key)
		b = append(b, ':')
		b = append(b, e.Value...)
	}
	return append(b, '}')
}

// ArrayType is a variable-length sequence of elements of one type.
type ArrayType struct {
	ElementType  DataType
	ContainsNull bool
}

// String returns the array type as schema JSON.
func (t *ArrayType) String() string { return string(t.appendJSON(nil)) }

func (t *ArrayType) appendJSON(b []byte) []byte {
	b = append(b, `{"type":"array","elementType":`...)
	b = appendType(b, t.ElementType)
	b = append(b, `,"containsNull":`...)
	b = strconv.AppendBool(b, t.ContainsNull)
	return append(b, '}')
}

// MapType is a collection of key-value pairs with one key type and one
// value type. Keys are never null.
type MapType struct {
	KeyType           DataType
	ValueType         DataType
	ValueContainsNull bool
}

// String returns the map type as schema JSON.
func (t *MapType) String() string { return string(t.appendJSON(nil)) }

func (t *MapType) appendJSON(b []byte) []byte {
	b = append(b, `{"type":"map","keyType":`...)
	b = appendType(b, t.KeyType)
	b = append(b, `,"valueType":`...)
	b = appendType(b, t.ValueType)
	b = append(b, `,"valueContainsNull":`...)
	b = strconv.AppendBool(b, t.ValueContainsNull)
	return append(b, '}')
}

// appendType appends t's JSON, or null for a missing type.
func appendType(b []byte, t DataType) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return t.appendJSON(b)
}
