package checkpoint

import (
	"encoding/json"

	"github.com/godelta/delta/actions"
)

func jsonNumber(d decimalValue) json.Number { return json.Number(d) }

func getString(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return partitionString(v)
	}
}

func getInt64(m map[string]any, k string) int64 {
	p := getInt64Ptr(m, k)
	if p == nil {
		return 0
	}
	return *p
}

func getInt64Ptr(m map[string]any, k string) *int64 {
	switch v := m[k].(type) {
	case int64:
		return &v
	case float64:
		x := int64(v)
		return &x
	case timestampValue:
		x := v.t.UnixMilli()
		return &x
	}
	return nil
}

func getInt32Ptr(m map[string]any, k string) *int32 {
	p := getInt64Ptr(m, k)
	if p == nil {
		return nil
	}
	x := int32(*p)
	return &x
}

func getBoolPtr(m map[string]any, k string) *bool {
	if v, ok := m[k].(bool); ok {
		return &v
	}
	return nil
}

func getBool(m map[string]any, k string) bool {
	v, _ := m[k].(bool)
	return v
}

func getStruct(m map[string]any, k string) map[string]any {
	v, _ := m[k].(map[string]any)
	return v
}

// getStringMap returns the MAP<string,string> field k; null values become
// "". An absent or null map is nil.
func getStringMap(m map[string]any, k string) map[string]string {
	v, ok := m[k].(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(v))
	for key, val := range v {
		out[key] = partitionString(val)
	}
	return out
}

func getStrings(m map[string]any, k string) []string {
	v, ok := m[k].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(v))
	for _, e := range v {
		out = append(out, partitionString(e))
	}
	return out
}

func toProtocol(m map[string]any) *actions.Protocol {
	return &actions.Protocol{
		MinReaderVersion: int32(getInt64(m, "minReaderVersion")),
		MinWriterVersion: int32(getInt64(m, "minWriterVersion")),
		ReaderFeatures:   getStrings(m, "readerFeatures"),
		WriterFeatures:   getStrings(m, "writerFeatures"),
	}
}

func toMetadata(m map[string]any) *actions.Metadata {
	md := &actions.Metadata{
		ID:               getString(m, "id"),
		Name:             getString(m, "name"),
		Description:      getString(m, "description"),
		SchemaString:     getString(m, "schemaString"),
		PartitionColumns: getStrings(m, "partitionColumns"),
		CreatedTime:      getInt64Ptr(m, "createdTime"),
		Configuration:    getStringMap(m, "configuration"),
	}
	if f := getStruct(m, "format"); f != nil {
		md.Format.Provider = getString(f, "provider")
		md.Format.Options = getStringMap(f, "options")
	}
	if md.PartitionColumns == nil {
		md.PartitionColumns = []string{}
	}
	if md.Configuration == nil {
		md.Configuration = map[string]string{}
	}
	return md
}

func toDeletionVector(m map[string]any) *actions.DeletionVector {
	if m == nil {
		return nil
	}
	return &actions.DeletionVector{
		StorageType:    getString(m, "storageType"),
		PathOrInlineDv: getString(m, "pathOrInlineDv"),
		Offset:         getInt32Ptr(m, "offset"),
		SizeInBytes:    int32(getInt64(m, "sizeInBytes")),
		Cardinality:    getInt64(m, "cardinality"),
		MaxRowIndex:    getInt64Ptr(m, "maxRowIndex"),
	}
}

// fileStats returns the stats string of an add or remove, built from
// stats_parsed when stats is absent.
func fileStats(m map[string]any) string {
	if s, ok := m["stats"].(string); ok {
		return s
	}
	sp, ok := m["stats_parsed"].(map[string]any)
	if !ok {
		return ""
	}
	v, _ := jsonStatsValue(sp)
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// filePartitionValues returns the partition values of an add or remove,
// built from partitionValues_parsed when partitionValues is absent.
func filePartitionValues(m map[string]any) map[string]string {
	if pv := getStringMap(m, "partitionValues"); pv != nil {
		return pv
	}
	if pp, ok := m["partitionValues_parsed"].(map[string]any); ok {
		out := make(map[string]string, len(pp))
		for k, v := range pp {
			out[k] = partitionString(v)
		}
		return out
	}
	return nil
}

func toAdd(m map[string]any) *actions.Add {
	a := &actions.Add{
		Path:                    getString(m, "path"),
		PartitionValues:         filePartitionValues(m),
		Size:                    getInt64(m, "size"),
		ModificationTime:        getInt64(m, "modificationTime"),
		DataChange:              getBool(m, "dataChange"),
		Stats:                   fileStats(m),
		Tags:                    getStringMap(m, "tags"),
		DeletionVector:          toDeletionVector(getStruct(m, "deletionVector")),
		BaseRowID:               getInt64Ptr(m, "baseRowId"),
		DefaultRowCommitVersion: getInt64Ptr(m, "defaultRowCommitVersion"),
		ClusteringProvider:      getString(m, "clusteringProvider"),
	}
	if a.PartitionValues == nil {
		a.PartitionValues = map[string]string{}
	}
	return a
}

func toRemove(m map[string]any) *actions.Remove {
	return &actions.Remove{
		Path:                    getString(m, "path"),
		DeletionTimestamp:       getInt64Ptr(m, "deletionTimestamp"),
		DataChange:              getBool(m, "dataChange"),
		ExtendedFileMetadata:    getBoolPtr(m, "extendedFileMetadata"),
		PartitionValues:         filePartitionValues(m),
		Size:                    getInt64Ptr(m, "size"),
		Stats:                   fileStats(m),
		Tags:                    getStringMap(m, "tags"),
		DeletionVector:          toDeletionVector(getStruct(m, "deletionVector")),
		BaseRowID:               getInt64Ptr(m, "baseRowId"),
		DefaultRowCommitVersion: getInt64Ptr(m, "defaultRowCommitVersion"),
	}
}

func toTxn(m map[string]any) *actions.Txn {
	return &actions.Txn{
		AppID:       getString(m, "appId"),
		Version:     getInt64(m, "version"),
		LastUpdated: getInt64Ptr(m, "lastUpdated"),
	}
}

func toDomainMetadata(m map[string]any) *actions.DomainMetadata {
	return &actions.DomainMetadata{
		Domain:        getString(m, "domain"),
		Configuration: getString(m, "configuration"),
		Removed:       getBool(m, "removed"),
	}
}

func toSidecar(m map[string]any) *actions.Sidecar {
	return &actions.Sidecar{
		Path:             getString(m, "path"),
		SizeInBytes:      getInt64(m, "sizeInBytes"),
		ModificationTime: getInt64(m, "modificationTime"),
		Tags:             getStringMap(m, "tags"),
	}
}

func toCheckpointMetadata(m map[string]any) *actions.CheckpointMetadata {
	return &actions.CheckpointMetadata{
		Version: getInt64(m, "version"),
		Tags:    getStringMap(m, "tags"),
	}
}
