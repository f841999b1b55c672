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
	"github.com/godelta/delta/write"
)

// MetadataTypeChanges is the field metadata key of a column's type
// changes; see write.MetadataTypeChanges.
const MetadataTypeChanges = write.MetadataTypeChanges

// WidenColumn changes the type of the column at path to the wider type
// to, without rewriting a file: readers read the values of old files as
// the new type (see write.CanWiden for what is allowed). The table must have
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
		if !write.CanWiden(f.Type, to, iceberg) {
			return change{}, invalid("column %s: %s cannot be widened to %s", strings.Join(path, "."), f.Type, to)
		}
		if st == sch && slices.Contains(s.Metadata().PartitionColumns, f.Name) && !write.PartitionWidening(f.Type, to) {
			// Partition values are strings in the log, parsed as the
			// column's type: a date is not a timestamp_ntz string, and a
			// decimal's scale is part of its string.
			return change{}, invalid("partition column %s: %s cannot be widened to %s (its partition values would not parse)", strings.Join(path, "."), f.Type, to)
		}
		if err := write.RecordTypeChange(f, to); err != nil {
			return change{}, err
		}
		// Spark logs the changed field, named by its path.
		logged := *f
		logged.Name = strings.Join(path, ".")
		params["column"] = fieldJSON(logged)
		return evolve(s, sch, cloneProps(s))
	})
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
