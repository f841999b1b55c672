package schema

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Column mapping field metadata keys. They are part of the on-disk format:
// they must never change. The table properties of column mapping
// (delta.columnMapping.mode and maxColumnId) are package tableconfig's.
const (
	// MetadataColumnMappingID holds a field's column id, a 32-bit integer
	// written as a JSON number; it is the Parquet field_id.
	MetadataColumnMappingID = "delta.columnMapping.id"
	// MetadataPhysicalName holds the name of a field in the data files.
	MetadataPhysicalName = "delta.columnMapping.physicalName"
	// MetadataNestedIDs holds, for IcebergCompatV2, the ids of the array
	// elements and map keys and values below a field, as a JSON object.
	MetadataNestedIDs = "delta.columnMapping.nested.ids"

	// MetadataInvariants holds a column invariant (writer version 2) as
	// JSON {"expression": {"expression": "<sql>"}}.
	MetadataInvariants = "delta.invariants"
	// MetadataGenerationExpression holds a generated column's expression.
	MetadataGenerationExpression = "delta.generationExpression"
	// MetadataIdentityPrefix starts the keys of an identity column
	// (delta.identity.start, .step, .highWaterMark, .allowExplicitInsert).
	MetadataIdentityPrefix = "delta.identity."
)

// ColumnMappingMode says how columns in data files are matched to the
// schema: by display name (none), by Parquet field id (id), or by physical
// name (name). In id and name mode, partition values and statistics are
// keyed by physical name. The values are those of the table property.
//
// The property counts only when the protocol supports the columnMapping
// feature; tableconfig.Config.ColumnMappingMode decides that.
type ColumnMappingMode string

// The column mapping modes, as written in the table property; they must
// never change.
const (
	ColumnMappingNone   ColumnMappingMode = "none"
	ColumnMappingByID   ColumnMappingMode = "id"
	ColumnMappingByName ColumnMappingMode = "name"
)

// ParseColumnMappingMode decodes the value of the delta.columnMapping.mode
// table property, ignoring case as Spark does. The empty string, an absent
// property, means none. Other values give ErrInvalidColumnMapping, which
// matches deltaerr.ErrCorrupt.
func ParseColumnMappingMode(s string) (ColumnMappingMode, error) {
	switch m := ColumnMappingMode(strings.ToLower(s)); m {
	case "", ColumnMappingNone:
		return ColumnMappingNone, nil
	case ColumnMappingByID, ColumnMappingByName:
		return m, nil
	}
	return "", corrupt(ErrInvalidColumnMapping, nil, "unknown mode "+strconv.Quote(s), nil)
}

// ColumnMappingID returns the field's column id. It reports false when the
// metadata has none or it is not an integer.
func (f *StructField) ColumnMappingID() (int64, bool) {
	raw, ok := f.Metadata.Get(MetadataColumnMappingID)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(string(raw), 10, 64)
	return id, err == nil
}

// PhysicalName returns the name of the field in data files, partition
// values and statistics: under mode none, or when the metadata holds no
// physical name, the field's own name.
func (f *StructField) PhysicalName(mode ColumnMappingMode) string {
	if mode == ColumnMappingNone {
		return f.Name
	}
	if name, ok := f.physicalName(); ok {
		return name
	}
	return f.Name
}

// physicalName returns the physical name in the metadata, if it is a
// string.
func (f *StructField) physicalName() (string, bool) {
	raw, ok := f.Metadata.Get(MetadataPhysicalName)
	if !ok || firstByte(raw) != '"' {
		return "", false
	}
	var name string
	err := json.Unmarshal(raw, &name)
	return name, err == nil
}

// PhysicalSchema returns the schema as data files hold it under mode: every
// field, nested ones included and those inside arrays and maps, renamed to
// its physical name. Types, nullability and metadata are kept (so ids stay
// at hand for Parquet field ids); the metadata slices are shared with t.
// Under mode none it returns t itself.
//
// In id and name mode every field must have a physical name, and in id mode
// a column id as well; a field without one gives ErrInvalidColumnMapping.
func (t *StructType) PhysicalSchema(mode ColumnMappingMode) (*StructType, error) {
	if mode == ColumnMappingNone {
		return t, nil
	}
	return t.physical(mode, nil)
}

func (t *StructType) physical(mode ColumnMappingMode, path []string) (*StructType, error) {
	out := &StructType{Fields: make([]StructField, len(t.Fields))}
	for i := range t.Fields {
		f := &t.Fields[i]
		fpath := child(path, f.Name)
		name, err := f.mappedName(mode, fpath)
		if err != nil {
			return nil, err
		}
		typ, err := physicalType(f.Type, mode, fpath)
		if err != nil {
			return nil, err
		}
		out.Fields[i] = StructField{Name: name, Type: typ, Nullable: f.Nullable, Metadata: f.Metadata}
	}
	return out, nil
}

func physicalType(t DataType, mode ColumnMappingMode, path []string) (DataType, error) {
	switch t := t.(type) {
	case *StructType:
		return t.physical(mode, path)
	case *ArrayType:
		elem, err := physicalType(t.ElementType, mode, child(path, "element"))
		if err != nil {
			return nil, err
		}
		return &ArrayType{ElementType: elem, ContainsNull: t.ContainsNull}, nil
	case *MapType:
		key, err := physicalType(t.KeyType, mode, child(path, "key"))
		if err != nil {
			return nil, err
		}
		value, err := physicalType(t.ValueType, mode, child(path, "value"))
		if err != nil {
			return nil, err
		}
		return &MapType{KeyType: key, ValueType: value, ValueContainsNull: t.ValueContainsNull}, nil
	}
	return t, nil
}

// mappedName returns the physical name of a field under mode id or name,
// checking that the metadata the mode requires is there.
func (f *StructField) mappedName(mode ColumnMappingMode, path []string) (string, error) {
	name, ok := f.physicalName()
	if !ok {
		return "", corrupt(ErrInvalidColumnMapping, path, "mode "+string(mode)+" needs a string "+MetadataPhysicalName, nil)
	}
	if _, ok := f.ColumnMappingID(); mode == ColumnMappingByID && !ok {
		return "", corrupt(ErrInvalidColumnMapping, path, "mode id needs an integer "+MetadataColumnMappingID, nil)
	}
	return name, nil
}

// PhysicalPath returns the physical names along the path of logical names
// logical, which walks struct fields only (names matched case-sensitively).
// Under mode none it returns a copy of logical after checking the column
// exists.
//
// A path that names no column gives ErrColumnNotFound, which matches
// deltaerr.ErrInvalidArgument; a field on the path without the metadata
// the mode requires gives ErrInvalidColumnMapping.
func (t *StructType) PhysicalPath(logical []string, mode ColumnMappingMode) ([]string, error) {
	if len(logical) == 0 {
		return nil, badArgument(ErrColumnNotFound, nil, "empty path")
	}
	out := make([]string, 0, len(logical))
	st := t
	for i, name := range logical {
		if st == nil {
			return nil, badArgument(ErrColumnNotFound, logical[:i+1], "parent is not a struct")
		}
		f, ok := st.Field(name)
		if !ok {
			return nil, badArgument(ErrColumnNotFound, logical[:i+1], "")
		}
		physical := f.Name
		if mode != ColumnMappingNone {
			var err error
			if physical, err = f.mappedName(mode, logical[:i+1]); err != nil {
				return nil, err
			}
		}
		out = append(out, physical)
		st, _ = f.Type.(*StructType)
	}
	return out, nil
}
