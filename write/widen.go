package write

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/godelta/delta/schema"
)

// MetadataTypeChanges is the field metadata key of the history of a
// column's type changes (the typeWidening feature): a JSON array of
// {"fromType", "toType"[, "fieldPath"]}. Part of the on-disk format:
// never change it.
const MetadataTypeChanges = "delta.typeChanges"

// typeChange is one entry of delta.typeChanges.
type typeChange struct {
	FromType  string `json:"fromType"`
	ToType    string `json:"toType"`
	FieldPath string `json:"fieldPath,omitempty"`
}

// CanWiden reports whether the typeWidening feature allows changing a
// column of type from to type to: integers to wider integers (byte, short,
// integer, long), byte/short/integer to double, float to double, date to
// timestamp_ntz, a decimal to one with at least as many integer digits and
// at least as many fraction digits (precision up by at least the scale
// increase), and byte/short/integer to decimal(10+k1, k2), long to
// decimal(20+k1, k2), k1 >= k2 >= 0. icebergCompat leaves out what
// Iceberg cannot read: integers to double or decimal, date to
// timestamp_ntz, and scale increases.
func CanWiden(from, to schema.DataType, icebergCompat bool) bool {
	rank := map[schema.DataType]int{schema.Byte: 1, schema.Short: 2, schema.Integer: 3, schema.Long: 4}
	if td, ok := to.(schema.DecimalType); ok {
		if fd, ok := from.(schema.DecimalType); ok {
			k1, k2 := td.Precision-fd.Precision, td.Scale-fd.Scale
			return k2 >= 0 && k1 >= k2 && (k1 > 0 || k2 > 0) && !(icebergCompat && k2 > 0)
		}
		r, ok := rank[from]
		if !ok || icebergCompat {
			return false
		}
		digits := 10
		if r == 4 {
			digits = 20
		}
		return td.Precision-td.Scale >= digits
	}
	switch {
	case rank[from] > 0 && rank[to] > rank[from]:
		return true
	case from == schema.Float && to == schema.Double:
		return true
	case rank[from] > 0 && rank[from] < 4 && to == schema.Double:
		return !icebergCompat
	case from == schema.Date && to == schema.TimestampNTZ:
		return !icebergCompat
	}
	return false
}

// PartitionWidening reports whether the serialized partition values of
// type from parse as type to: integer to wider integer, float to double.
func PartitionWidening(from, to schema.DataType) bool {
	ints := []schema.DataType{schema.Byte, schema.Short, schema.Integer, schema.Long}
	switch {
	case slices.Contains(ints, from) && slices.Contains(ints, to):
		return true
	case from == schema.Float && to == schema.Double:
		return true
	}
	return false
}

// RecordTypeChange changes the type of field f to the wider type to and
// appends the change to its delta.typeChanges metadata, as the
// typeWidening feature asks. The caller has checked CanWiden.
func RecordTypeChange(f *schema.StructField, to schema.DataType) error {
	var history []typeChange
	if raw, ok := f.Metadata.Get(MetadataTypeChanges); ok {
		if err := json.Unmarshal(raw, &history); err != nil {
			return fmt.Errorf("%w: column %s: its %s metadata is not a list of type changes: %v", ErrInvalidSpec, f.Name, MetadataTypeChanges, err)
		}
	}
	history = append(history, typeChange{FromType: f.Type.String(), ToType: to.String()})
	raw, err := json.Marshal(history)
	if err != nil {
		return err
	}
	f.Metadata = setMeta(f.Metadata, MetadataTypeChanges, raw)
	f.Type = to
	return nil
}
