package iceberg

import (
	"encoding/json"
	"fmt"

	"github.com/godelta/delta/schema"
)

// PropNameMapping is the table property that holds the table's default
// name mapping (spec: "Column Projection"): for data files without field
// ids, which column of the file is which field. Spark's UniForm writes it
// in every metadata file it converts, and so does Convert.
const PropNameMapping = "schema.name-mapping.default"

// mappedField is one entry of a name mapping: the names a field goes by
// in data files, its field id, and the mapping of its nested fields.
type mappedField struct {
	FieldID int           `json:"field-id"`
	Names   []string      `json:"names"`
	Fields  []mappedField `json:"fields,omitempty"`
}

// nameMapping returns the JSON name mapping of an Iceberg schema, given
// the JSON of its fields, as Spark writes it (Iceberg's MappingUtil.create
// of the converted schema): each field mapped from its name to its id,
// recursively, list elements as "element", map keys and values as "key"
// and "value". physical gives the physical names of Delta fields by column
// mapping id: the names their columns have in data files under column
// mapping, which Spark's mapping lacks. A physical name that differs from
// the field's name is mapped too, unless another field of the same struct
// is named so (a column renamed, then a new column given the old name):
// a name must map to one field, or readers refuse the mapping.
func nameMapping(fields json.RawMessage, physical map[int]string) (string, error) {
	m, err := mapFields(fields, physical)
	if err != nil {
		return "", fmt.Errorf("%w: the Iceberg schema: %v", ErrCorruptMetadata, err)
	}
	if m == nil {
		m = []mappedField{}
	}
	out, err := json.Marshal(m)
	return string(out), err
}

// rawField and rawType are the JSON of an Iceberg schema's fields and
// nested types, as field and structType, listType and mapType write them.
type rawField struct {
	ID   int             `json:"id"`
	Name string          `json:"name"`
	Type json.RawMessage `json:"type"`
}

type rawType struct {
	Type      string          `json:"type"`
	Fields    json.RawMessage `json:"fields"`
	ElementID int             `json:"element-id"`
	Element   json.RawMessage `json:"element"`
	KeyID     int             `json:"key-id"`
	Key       json.RawMessage `json:"key"`
	ValueID   int             `json:"value-id"`
	Value     json.RawMessage `json:"value"`
}

func mapFields(raw json.RawMessage, physical map[int]string) ([]mappedField, error) {
	var fs []rawField
	if err := json.Unmarshal(raw, &fs); err != nil {
		return nil, err
	}
	taken := make(map[string]bool, len(fs))
	for _, f := range fs {
		taken[f.Name] = true
	}
	out := make([]mappedField, 0, len(fs))
	for _, f := range fs {
		nested, err := mapNested(f.Type, physical)
		if err != nil {
			return nil, err
		}
		m := mappedField{FieldID: f.ID, Names: []string{f.Name}, Fields: nested}
		if p, ok := physical[f.ID]; ok && p != "" && !taken[p] {
			taken[p] = true
			m.Names = append(m.Names, p)
		}
		out = append(out, m)
	}
	return out, nil
}

// mapNested returns the mapping of the fields nested in a type: none for a
// primitive (a JSON string).
func mapNested(raw json.RawMessage, physical map[int]string) ([]mappedField, error) {
	if len(raw) == 0 || raw[0] == '"' {
		return nil, nil
	}
	var t rawType
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, err
	}
	one := func(name string, id int, typ json.RawMessage) (mappedField, error) {
		nested, err := mapNested(typ, physical)
		return mappedField{FieldID: id, Names: []string{name}, Fields: nested}, err
	}
	switch t.Type {
	case "struct":
		return mapFields(t.Fields, physical)
	case "list":
		e, err := one("element", t.ElementID, t.Element)
		return []mappedField{e}, err
	case "map":
		k, err := one("key", t.KeyID, t.Key)
		if err != nil {
			return nil, err
		}
		v, err := one("value", t.ValueID, t.Value)
		return []mappedField{k, v}, err
	}
	return nil, fmt.Errorf("unknown type %q", t.Type)
}

// physicalNames adds to names the physical name of every field of st, at
// any depth, by column mapping id.
func physicalNames(names map[int]string, st *schema.StructType) {
	var walk func(t schema.DataType)
	walk = func(t schema.DataType) {
		switch t := t.(type) {
		case *schema.StructType:
			for i := range t.Fields {
				f := &t.Fields[i]
				if id, ok := f.ColumnMappingID(); ok {
					names[int(id)] = f.PhysicalName(schema.ColumnMappingByName)
				}
				walk(f.Type)
			}
		case *schema.ArrayType:
			walk(t.ElementType)
		case *schema.MapType:
			walk(t.KeyType)
			walk(t.ValueType)
		}
	}
	walk(st)
}
