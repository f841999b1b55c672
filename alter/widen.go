package alter

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
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

// WidenColumn changes the type of the column at path to the wider type
// to, without rewriting a file: readers read the values of old files as
// the new type (see CanWiden for what is allowed). The table must have
// delta.enableTypeWidening set to true (ErrTypeWideningDisabled otherwise,
// as the protocol requires); the change is appended to the field's
// delta.typeChanges metadata. A change to the same type commits nothing
// and returns a zero result. The commit is Spark's CHANGE COLUMN.
func WidenColumn(ctx context.Context, snap *snapshot.Snapshot, path []string, to schema.DataType, opts Options) (txn.CommitResult, error) {
	if st, j, err := lookup(snap.Schema(), path); err == nil && st.Fields[j].Type.String() == to.String() {
		return txn.CommitResult{}, nil
	}
	params := map[string]any{}
	return run(ctx, snap, opts, OpChangeColumn, params, func(_ context.Context, s *snapshot.Snapshot) (change, error) {
		cfg := s.Config()
		if !cfg.IsFeatureEnabled(actions.FeatureTypeWidening) && !cfg.IsFeatureEnabled(actions.FeatureTypeWideningPreview) {
			return change{}, ErrTypeWideningDisabled
		}
		sch, err := cloneSchema(s)
		if err != nil {
			return change{}, err
		}
		st, j, err := lookup(sch, path)
		if err != nil {
			return change{}, err
		}
		f := &st.Fields[j]
		iceberg := cfg.IsFeatureSupported(actions.FeatureIcebergCompatV1) || cfg.IsFeatureSupported(actions.FeatureIcebergCompatV2)
		if !CanWiden(f.Type, to, iceberg) {
			return change{}, invalid("column %s: %s cannot be widened to %s", strings.Join(path, "."), f.Type, to)
		}
		var history []typeChange
		if raw, ok := f.Metadata.Get(MetadataTypeChanges); ok {
			if err := json.Unmarshal(raw, &history); err != nil {
				return change{}, invalid("column %s: its %s metadata is not a list of type changes: %v", strings.Join(path, "."), MetadataTypeChanges, err)
			}
		}
		if st == sch && slices.Contains(s.Metadata().PartitionColumns, f.Name) && !partitionWidening(f.Type, to) {
			// Partition values are strings in the log, parsed as the
			// column's type: a date is not a timestamp_ntz string, and a
			// decimal's scale is part of its string.
			return change{}, invalid("partition column %s: %s cannot be widened to %s (its partition values would not parse)", strings.Join(path, "."), f.Type, to)
		}
		history = append(history, typeChange{FromType: f.Type.String(), ToType: to.String()})
		raw, err := json.Marshal(history)
		if err != nil {
			return change{}, err
		}
		f.Metadata = setMeta(f.Metadata, MetadataTypeChanges, raw)
		f.Type = to
		// Spark logs the changed field, named by its path.
		logged := *f
		logged.Name = strings.Join(path, ".")
		params["column"] = fieldJSON(logged)
		return evolve(s, sch, cloneProps(s))
	})
}

// partitionWidening reports whether the serialized partition values of
// type from parse as type to: integer to wider integer, float to double.
func partitionWidening(from, to schema.DataType) bool {
	ints := []schema.DataType{schema.Byte, schema.Short, schema.Integer, schema.Long}
	switch {
	case slices.Contains(ints, from) && slices.Contains(ints, to):
		return true
	case from == schema.Float && to == schema.Double:
		return true
	}
	return false
}

// fieldJSON returns a field as schema JSON.
func fieldJSON(f schema.StructField) string {
	var one struct {
		Fields []json.RawMessage `json:"fields"`
	}
	text := (&schema.StructType{Fields: []schema.StructField{f}}).String()
	if err := json.Unmarshal([]byte(text), &one); err != nil || len(one.Fields) != 1 {
		return text
	}
	return string(one.Fields[0])
}

func setMeta(m schema.Metadata, key string, v json.RawMessage) schema.Metadata {
	for i := range m {
		if m[i].Key == key {
			out := append(schema.Metadata(nil), m...)
			out[i].Value = v
			return out
		}
	}
	return append(append(schema.Metadata(nil), m...), schema.MetadataEntry{Key: key, Value: v})
}
