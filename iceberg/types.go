package iceberg

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// field is one field of an Iceberg schema (spec: "Schemas and Data
// Types", JSON serialization of a struct field).
type field struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Type     any    `json:"type"` // a string for a primitive, else *structType, *listType or *mapType
}

type structType struct {
	Type   string  `json:"type"` // "struct"
	Fields []field `json:"fields"`
}

type listType struct {
	Type            string `json:"type"` // "list"
	ElementID       int    `json:"element-id"`
	Element         any    `json:"element"`
	ElementRequired bool   `json:"element-required"`
}

type mapType struct {
	Type          string `json:"type"` // "map"
	KeyID         int    `json:"key-id"`
	Key           any    `json:"key"`
	ValueID       int    `json:"value-id"`
	Value         any    `json:"value"`
	ValueRequired bool   `json:"value-required"`
}

// converter maps a Delta schema under column mapping to the Iceberg
// schema with the same field ids: a field's delta.columnMapping.id, an
// array element's or a map key's or value's id from the nearest field's
// delta.columnMapping.nested.ids.
type converter struct {
	maxID int
}

// icebergFields returns the Iceberg fields of a Delta struct and the
// largest id used.
func icebergFields(st *schema.StructType) ([]field, int, error) {
	c := &converter{}
	fs, err := c.fields(st)
	return fs, c.maxID, err
}

func (c *converter) fields(st *schema.StructType) ([]field, error) {
	out := make([]field, 0, len(st.Fields))
	for i := range st.Fields {
		f := &st.Fields[i]
		id, ok := f.ColumnMappingID()
		if !ok || id <= 0 || id > math.MaxInt32 {
			return nil, fmt.Errorf("%w: column %s has no column mapping id", ErrNotConvertible, f.Name)
		}
		nested, _ := f.NestedIDs()
		t, err := c.typ(f.Type, f.PhysicalName(schema.ColumnMappingByName), nested, f.Name)
		if err != nil {
			return nil, err
		}
		c.maxID = max(c.maxID, int(id))
		out = append(out, field{ID: int(id), Name: f.Name, Required: !f.Nullable, Type: t})
	}
	return out, nil
}

func (c *converter) nestedID(nested map[string]int64, key, col string) (int, error) {
	id, ok := nested[key]
	if !ok || id <= 0 || id > math.MaxInt32 {
		return 0, fmt.Errorf("%w: column %s has no nested id for %s (delta.columnMapping.nested.ids)", ErrNotConvertible, col, key)
	}
	c.maxID = max(c.maxID, int(id))
	return int(id), nil
}

func (c *converter) typ(t schema.DataType, key string, nested map[string]int64, col string) (any, error) {
	switch t := t.(type) {
	case *schema.StructType:
		fs, err := c.fields(t)
		if err != nil {
			return nil, err
		}
		return &structType{Type: "struct", Fields: fs}, nil
	case *schema.ArrayType:
		id, err := c.nestedID(nested, key+".element", col)
		if err != nil {
			return nil, err
		}
		et, err := c.typ(t.ElementType, key+".element", nested, col)
		if err != nil {
			return nil, err
		}
		return &listType{Type: "list", ElementID: id, Element: et, ElementRequired: !t.ContainsNull}, nil
	case *schema.MapType:
		kid, err := c.nestedID(nested, key+".key", col)
		if err != nil {
			return nil, err
		}
		vid, err := c.nestedID(nested, key+".value", col)
		if err != nil {
			return nil, err
		}
		kt, err := c.typ(t.KeyType, key+".key", nested, col)
		if err != nil {
			return nil, err
		}
		vt, err := c.typ(t.ValueType, key+".value", nested, col)
		if err != nil {
			return nil, err
		}
		return &mapType{Type: "map", KeyID: kid, Key: kt, ValueID: vid, Value: vt, ValueRequired: !t.ValueContainsNull}, nil
	}
	p, ok := primitive(t)
	if !ok {
		return nil, fmt.Errorf("%w: column %s has type %s, which Iceberg v2 has not", ErrNotConvertible, col, t)
	}
	return p, nil
}

// primitive returns the Iceberg name of a Delta primitive type. Delta's
// timestamp is an instant (Iceberg timestamptz), timestamp_ntz a wall
// clock time (Iceberg timestamp); byte and short widen to int, as Iceberg
// has no narrower integer.
func primitive(t schema.DataType) (string, bool) {
	if d, ok := t.(schema.DecimalType); ok {
		return fmt.Sprintf("decimal(%d, %d)", d.Precision, d.Scale), true
	}
	switch t {
	case schema.Byte, schema.Short, schema.Integer:
		return "int", true
	case schema.Long:
		return "long", true
	case schema.Float:
		return "float", true
	case schema.Double:
		return "double", true
	case schema.String:
		return "string", true
	case schema.Binary:
		return "binary", true
	case schema.Boolean:
		return "boolean", true
	case schema.Date:
		return "date", true
	case schema.Timestamp:
		return "timestamptz", true
	case schema.TimestampNTZ:
		return "timestamp", true
	}
	return "", false
}

// singleValue serializes v, a value of a column of Delta type t, as the
// Iceberg spec's "Binary single-value serialization" (Appendix D): little
// endian integers, dates as int days, timestamps as long microseconds,
// IEEE floats, strings as UTF-8, binary as is, decimals as the unscaled
// value in big-endian two's complement with the fewest bytes. It returns
// false for a null or a type it cannot serialize.
func singleValue(t schema.DataType, v schema.Value) ([]byte, bool) {
	if v.IsNull() {
		return nil, false
	}
	if _, ok := t.(schema.DecimalType); ok {
		unscaled, _, _ := v.Decimal()
		if unscaled == nil {
			return nil, false
		}
		return twosComplement(unscaled.Int64(), unscaled), true
	}
	switch t {
	case schema.Boolean:
		if v.Bool() {
			return []byte{1}, true
		}
		return []byte{0}, true
	case schema.Byte, schema.Short, schema.Integer, schema.Date:
		return binary.LittleEndian.AppendUint32(nil, uint32(int32(v.Int64()))), true
	case schema.Long, schema.Timestamp, schema.TimestampNTZ:
		return binary.LittleEndian.AppendUint64(nil, uint64(v.Int64())), true
	case schema.Float:
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v.Float64()))), true
	case schema.Double:
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v.Float64())), true
	case schema.String, schema.Binary:
		return slices.Clone(v.Bytes()), true
	}
	return nil, false
}

// ErrNotConvertible is returned when a table cannot be described in
// Iceberg metadata: a column without a column mapping id, a type Iceberg
// v2 has not. It matches deltaerr.ErrUnsupportedFeature.
var ErrNotConvertible = fmt.Errorf("iceberg: table cannot be converted: %w", deltaerr.ErrUnsupportedFeature)

// ErrCorruptMetadata is returned when the Iceberg metadata this package
// wrote (metadata/vN.metadata.json, a manifest list or manifest) cannot
// be decoded. It matches deltaerr.ErrCorrupt.
var ErrCorruptMetadata = fmt.Errorf("iceberg: corrupt Iceberg metadata: %w", deltaerr.ErrCorrupt)

// fieldsJSON encodes Iceberg fields; a marshal of these types cannot fail.
func fieldsJSON(fs []field) json.RawMessage {
	b, _ := json.Marshal(fs)
	return b
}
