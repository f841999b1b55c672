package schema

import "encoding/json"

// NestedIDs returns the field's delta.columnMapping.nested.ids metadata
// (IcebergCompatV2): the ids of the array elements and map keys and
// values below the field, keyed by "<physical name>.element",
// "<physical name>.key", "<physical name>.value", and those keys extended
// the same way for deeper arrays and maps. It returns false when the
// field has none or the metadata is not a JSON object of integers.
func (f *StructField) NestedIDs() (map[string]int64, bool) {
	raw, ok := f.Metadata.Get(MetadataNestedIDs)
	if !ok {
		return nil, false
	}
	var ids map[string]int64
	if err := json.Unmarshal(raw, &ids); err != nil || ids == nil {
		return nil, false
	}
	return ids, true
}
