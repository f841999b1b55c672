package deltaarrow

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// Errors of the package.
var (
	// ErrSchemaMismatch is matched by every *SchemaError: records whose
	// schema does not fit the table's.
	ErrSchemaMismatch = fmt.Errorf("arrow schema does not match the table: %w", deltaerr.ErrInvalidArgument)
	// ErrUnsupportedType is returned for a Delta type with no Arrow form
	// here (geometry, geography).
	ErrUnsupportedType = fmt.Errorf("type has no arrow mapping: %w", deltaerr.ErrUnsupportedFeature)
)

// SchemaError says which column of an Arrow schema does not fit the
// table, and why.
type SchemaError struct {
	// Column is the column's path, as "a.b" for a struct field.
	Column string
	// Reason says what is wrong.
	Reason string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("arrow column %q: %s", e.Column, e.Reason)
}

// Is makes a *SchemaError match ErrSchemaMismatch and
// deltaerr.ErrInvalidArgument.
func (e *SchemaError) Is(target error) bool {
	return target == ErrSchemaMismatch || target == deltaerr.ErrInvalidArgument
}

var variantArrow = arrow.StructOf(
	arrow.Field{Name: "metadata", Type: arrow.BinaryTypes.Binary},
	arrow.Field{Name: "value", Type: arrow.BinaryTypes.Binary},
)

// Schema returns the Arrow schema of a Delta struct: one field per column,
// with the types the package doc lists and the nullability of the Delta
// schema. Field metadata is not carried.
func Schema(s *schema.StructType) (*arrow.Schema, error) {
	fields, err := arrowFields(s, "")
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(fields, nil), nil
}

func arrowFields(s *schema.StructType, prefix string) ([]arrow.Field, error) {
	fields := make([]arrow.Field, len(s.Fields))
	for i, f := range s.Fields {
		t, err := arrowType(f.Type, prefix+f.Name)
		if err != nil {
			return nil, err
		}
		fields[i] = arrow.Field{Name: f.Name, Type: t, Nullable: f.Nullable}
	}
	return fields, nil
}

// ArrowType returns the Arrow type of a Delta type.
func ArrowType(t schema.DataType) (arrow.DataType, error) { return arrowType(t, "") }

func arrowType(t schema.DataType, path string) (arrow.DataType, error) {
	switch t := t.(type) {
	case schema.PrimitiveType:
		switch t {
		case schema.Boolean:
			return arrow.FixedWidthTypes.Boolean, nil
		case schema.Byte:
			return arrow.PrimitiveTypes.Int8, nil
		case schema.Short:
			return arrow.PrimitiveTypes.Int16, nil
		case schema.Integer:
			return arrow.PrimitiveTypes.Int32, nil
		case schema.Long:
			return arrow.PrimitiveTypes.Int64, nil
		case schema.Float:
			return arrow.PrimitiveTypes.Float32, nil
		case schema.Double:
			return arrow.PrimitiveTypes.Float64, nil
		case schema.String:
			return arrow.BinaryTypes.String, nil
		case schema.Binary:
			return arrow.BinaryTypes.Binary, nil
		case schema.Date:
			return arrow.FixedWidthTypes.Date32, nil
		case schema.Timestamp:
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
		case schema.TimestampNTZ:
			return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
		case schema.Variant:
			return variantArrow, nil
		case schema.Void:
			return arrow.Null, nil
		}
	case schema.DecimalType:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}, nil
	case schema.GeometryType, schema.GeographyType:
		return arrow.BinaryTypes.Binary, nil // WKB
	case *schema.StructType:
		fields, err := arrowFields(t, path+".")
		if err != nil {
			return nil, err
		}
		return arrow.StructOf(fields...), nil
	case *schema.ArrayType:
		et, err := arrowType(t.ElementType, path+".element")
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: et, Nullable: t.ContainsNull}), nil
	case *schema.MapType:
		kt, err := arrowType(t.KeyType, path+".key")
		if err != nil {
			return nil, err
		}
		vt, err := arrowType(t.ValueType, path+".value")
		if err != nil {
			return nil, err
		}
		return arrow.MapOfFields(arrow.Field{Name: "key", Type: kt}, arrow.Field{Name: "value", Type: vt, Nullable: t.ValueContainsNull}), nil
	}
	return nil, fmt.Errorf("column %q of type %s: %w", path, t, ErrUnsupportedType)
}
