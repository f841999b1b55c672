package schema

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/godelta/delta/deltaerr"
)

// MetadataCollations is the field metadata key of the collations table
// feature: a JSON object mapping a path to a collation identifier
// ("ICU.de_DE", "spark.UTF8_LCASE"), for each string in the field that
// does not use the default UTF-8 binary collation. A path is the field's
// own name, followed for strings inside its arrays and maps (not inside a
// nested struct, whose fields carry their own) by ".element", ".key" or
// ".value" steps: {"col2.element.key": "ICU.en_US"}. Part of the on-disk
// format: never change it.
//
// Collations change how strings compare, never how they are stored: this
// library reads and writes collated strings as any string and compares
// them by their UTF-8 bytes, which the protocol lets a reader choose. The
// statistics it writes for them are UTF-8 binary minValues and maxValues
// (the protocol allows them for a string of any collation, a reader that
// compares under another collation must not skip on them, and the Java
// kernel's default engine writes the same) and no statsWithCollation,
// which is optional.
const MetadataCollations = "__COLLATIONS"

// HasCollations reports whether a field of t, at any depth (in structs
// inside arrays and maps too), carries collations metadata.
func HasCollations(t *StructType) bool {
	var inType func(DataType) bool
	inStruct := func(st *StructType) bool {
		for i := range st.Fields {
			if _, ok := st.Fields[i].Metadata.Get(MetadataCollations); ok || inType(st.Fields[i].Type) {
				return true
			}
		}
		return false
	}
	inType = func(t DataType) bool {
		switch t := t.(type) {
		case *StructType:
			return inStruct(t)
		case *ArrayType:
			return inType(t.ElementType)
		case *MapType:
			return inType(t.KeyType) || inType(t.ValueType)
		}
		return false
	}
	return t != nil && inStruct(t)
}

// RenameCollations returns metadata m of a field renamed from oldName to
// newName with the paths of its collations metadata renamed too, so that
// its strings keep their collations; m itself is not modified. Metadata
// without collations, or whose paths do not start with oldName, is
// returned as it is. A collations value that is not a JSON object of
// strings is an error matching deltaerr.ErrCorrupt.
func RenameCollations(m Metadata, oldName, newName string) (Metadata, error) {
	raw, ok := m.Get(MetadataCollations)
	if !ok || oldName == newName {
		return m, nil
	}
	type entry struct{ path, id string }
	var entries []entry
	bad := func() (Metadata, error) {
		return nil, &deltaerr.CorruptError{Path: "metaData.schemaString", Reason: "field " + oldName + ": " + MetadataCollations + " is not an object of collation names"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return bad()
	}
	changed := false
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return bad()
		}
		v, err := dec.Token()
		if err != nil {
			return bad()
		}
		path, ok1 := k.(string)
		id, ok2 := v.(string)
		if !ok1 || !ok2 {
			return bad()
		}
		if path == oldName {
			path, changed = newName, true
		} else if rest, ok := strings.CutPrefix(path, oldName+"."); ok {
			path, changed = newName+"."+rest, true
		}
		entries = append(entries, entry{path, id})
	}
	if !changed {
		return m, nil
	}
	b := []byte{'{'}
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, e.path)
		b = append(b, ':')
		b = appendString(b, e.id)
	}
	b = append(b, '}')
	out := make(Metadata, len(m))
	copy(out, m)
	for i := range out {
		if out[i].Key == MetadataCollations {
			out[i].Value = b
		}
	}
	return out, nil
}
