package actions

import (
	"bytes"
	"encoding/json"
	"sort"
)

// The protocol's partitionValues map holds a JSON null for a null value;
// the model keeps it as "" (which the protocol reads as null too, and
// which is the only form a checkpoint's map can also hold). Written JSON
// uses null, never "": Spark casts the map's text, so "" would read back as
// an empty string for a string partition, and Delta Kernel Java refuses ""
// for int, date, timestamp and decimal partitions. The MarshalJSON methods
// below only change how partitionValues is written; decoding is the
// default one, which reads null as "".

// MarshalJSON writes a with null for each null ("") partition value.
func (a Add) MarshalJSON() ([]byte, error) {
	type plain Add // without the methods, so that this does not recurse
	return EncodeJSON(struct {
		plain
		PartitionValues partitionValues `json:"partitionValues"`
	}{plain(a), partitionValues(a.PartitionValues)})
}

// MarshalJSON writes c with null for each null ("") partition value.
func (c CDC) MarshalJSON() ([]byte, error) {
	type plain CDC
	return EncodeJSON(struct {
		plain
		PartitionValues partitionValues `json:"partitionValues"`
	}{plain(c), partitionValues(c.PartitionValues)})
}

// MarshalJSON writes r with null for each null ("") partition value. With
// extendedFileMetadata true the protocol requires partitionValues (and
// size), so it is written even when empty ({} on an unpartitioned table);
// without, it is left out when the remove has none.
func (r Remove) MarshalJSON() ([]byte, error) {
	type plain Remove
	if r.ExtendedFileMetadata != nil && *r.ExtendedFileMetadata {
		return EncodeJSON(struct {
			plain
			PartitionValues partitionValues `json:"partitionValues"`
		}{plain(r), partitionValues(r.PartitionValues)})
	}
	return EncodeJSON(struct {
		plain
		PartitionValues partitionValues `json:"partitionValues,omitempty"`
	}{plain(r), partitionValues(r.PartitionValues)})
}

// partitionValues encodes a partitionValues map: keys in order, "" as
// null, nil as {}.
type partitionValues map[string]string

func (m partitionValues) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, err := EncodeJSON(k)
		if err != nil {
			return nil, err
		}
		b = append(append(b, kb...), ':')
		if v := m[k]; v == "" {
			b = append(b, "null"...)
		} else {
			vb, err := EncodeJSON(v)
			if err != nil {
				return nil, err
			}
			b = append(b, vb...)
		}
	}
	return append(b, '}'), nil
}

// EncodeJSON is json.Marshal without HTML escaping: '<', '>' and '&' stay
// as they are, as Spark writes them, instead of \u003c, \u003e and \u0026.
// Commit files are written this way; so must be the JSON text that goes
// into them as a string (commitInfo's operationParameters).
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
