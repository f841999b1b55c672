package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Parse decodes a schema string, the schemaString of a metaData action. The
// top level must be a struct type.
//
// Field objects need "name", "type" and "nullable"; "metadata" may be left
// out and then encodes as {}. Unknown keys in field and type objects are
// ignored and not kept. A primitive type may also be written as an object
// {"type":"<name>"}, as the protocol's variant example does; it encodes back
// as the bare name.
//
// Errors match ErrInvalidSchema or ErrUnknownType, and deltaerr.ErrCorrupt.
func Parse(schemaString string) (*StructType, error) {
	dec := json.NewDecoder(strings.NewReader(schemaString))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, corrupt(ErrInvalidSchema, nil, "not JSON", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, corrupt(ErrInvalidSchema, nil, "data after the schema object", nil)
	}
	t, err := parseType(raw, nil)
	if err != nil {
		return nil, err
	}
	st, ok := t.(*StructType)
	if !ok {
		return nil, corrupt(ErrInvalidSchema, nil, "top level is "+t.String()+", not a struct", nil)
	}
	return st, nil
}

// MarshalJSON returns the schema string of t: compact JSON with keys in
// Spark's order ("name", "type", "nullable", "metadata"), metadata members
// in their order and form, and non-ASCII characters unescaped.
//
// It fails, with ErrInvalidSchema and deltaerr.ErrInvalidArgument, for a
// schema Parse would refuse: a missing type, decimal parameters out of
// range, duplicate field names, metadata that is not valid JSON, or names
// that are not UTF-8. Note that encoding/json re-escapes <, > and & in the
// output of a MarshalJSON method unless told not to; String and
// MarshalJSON give the exact bytes.
func (t *StructType) MarshalJSON() ([]byte, error) {
	if err := t.check(nil); err != nil {
		return nil, err
	}
	return t.appendJSON(nil), nil
}

// UnmarshalJSON decodes a schema object, as Parse does.
func (t *StructType) UnmarshalJSON(data []byte) error {
	st, err := Parse(string(data))
	if err != nil {
		return err
	}
	*t = *st
	return nil
}

// parseType decodes the JSON value of a "type", "elementType", "keyType" or
// "valueType" key. path names the column, for errors.
func parseType(raw json.RawMessage, path []string) (DataType, error) {
	switch firstByte(raw) {
	case '"':
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return nil, corrupt(ErrInvalidSchema, path, "bad type name", err)
		}
		return parseTypeName(name, path)
	case '{':
		obj, err := decodeObject(raw)
		if err != nil {
			return nil, corrupt(ErrInvalidSchema, path, "bad type object", err)
		}
		name, err := obj.str("type", path)
		if err != nil {
			return nil, err
		}
		switch name {
		case "struct":
			return parseStruct(obj, path)
		case "array":
			return parseArray(obj, path)
		case "map":
			return parseMap(obj, path)
		}
		return parseTypeName(name, path)
	}
	return nil, corrupt(ErrInvalidSchema, path, "type is neither a name nor an object", nil)
}

// parseTypeName decodes a type written as a string.
func parseTypeName(name string, path []string) (DataType, error) {
	if t, ok := primitives[name]; ok {
		return t, nil
	}
	if params, ok := typeParams(name, "decimal"); ok && len(params) == 2 {
		p, err1 := strconv.Atoi(params[0])
		s, err2 := strconv.Atoi(params[1])
		t := DecimalType{Precision: p, Scale: s}
		if err1 != nil || err2 != nil || !t.valid() {
			return nil, corrupt(ErrInvalidSchema, path, "bad decimal type "+strconv.Quote(name)+
				": precision must be 1 to 38 and scale 0 to precision", nil)
		}
		return t, nil
	}
	if params, ok := typeParams(name, "geometry"); ok && len(params) == 1 {
		return GeometryType{CRS: params[0]}, nil
	}
	if params, ok := typeParams(name, "geography"); ok && (len(params) == 1 || len(params) == 2) {
		t := GeographyType{CRS: params[0]}
		if len(params) == 2 {
			t.Algorithm = params[1]
		}
		return t, nil
	}
	return nil, corrupt(ErrUnknownType, path, strconv.Quote(name), nil)
}

// typeParams splits a parameterized type name such as "decimal(10, 2)" into
// its parameters, trimmed of spaces. It reports false when s is not name
// followed by a parenthesized list of non-empty parameters.
func typeParams(s, name string) ([]string, bool) {
	inner, ok := strings.CutPrefix(s, name+"(")
	if !ok {
		return nil, false
	}
	inner, ok = strings.CutSuffix(inner, ")")
	if !ok {
		return nil, false
	}
	params := strings.Split(inner, ",")
	for i, p := range params {
		params[i] = strings.TrimSpace(p)
		if !validParam(params[i]) {
			return nil, false
		}
	}
	return params, true
}

// validParam reports whether p can be a type parameter that reads back
// the same: not empty, no surrounding space, no comma or parenthesis.
func validParam(p string) bool {
	return p != "" && p == strings.TrimSpace(p) && !strings.ContainsAny(p, "(),")
}

// child returns path extended by name, never sharing memory with path.
func child(path []string, name string) []string {
	return append(path[:len(path):len(path)], name)
}

func parseStruct(obj object, path []string) (*StructType, error) {
	raw, err := obj.need("fields", path)
	if err != nil {
		return nil, err
	}
	elems, err := decodeArray(raw)
	if err != nil {
		return nil, corrupt(ErrInvalidSchema, path, `"fields" is not an array`, err)
	}
	st := &StructType{Fields: make([]StructField, 0, len(elems))}
	seen := make(map[string]string, len(elems))
	for _, elem := range elems {
		f, err := parseField(elem, path)
		if err != nil {
			return nil, err
		}
		key := foldKey(f.Name)
		if prev, dup := seen[key]; dup {
			return nil, corrupt(ErrInvalidSchema, child(path, f.Name), "name is not unique regardless of case (also "+strconv.Quote(prev)+")", nil)
		}
		seen[key] = f.Name
		st.Fields = append(st.Fields, f)
	}
	return st, nil
}

func parseField(raw json.RawMessage, parent []string) (StructField, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return StructField{}, corrupt(ErrInvalidSchema, parent, "field is not an object", err)
	}
	name, err := obj.str("name", parent)
	if err != nil {
		return StructField{}, err
	}
	path := child(parent, name)
	typeRaw, err := obj.need("type", path)
	if err != nil {
		return StructField{}, err
	}
	t, err := parseType(typeRaw, path)
	if err != nil {
		return StructField{}, err
	}
	nullable, err := obj.boolean("nullable", path)
	if err != nil {
		return StructField{}, err
	}
	f := StructField{Name: name, Type: t, Nullable: nullable}
	if mdRaw, ok := obj.get("metadata"); ok {
		if f.Metadata, err = parseMetadata(mdRaw); err != nil {
			return StructField{}, corrupt(ErrInvalidSchema, path, `bad "metadata"`, err)
		}
	}
	return f, nil
}

// parseMetadata keeps the members of a metadata object in order, each value
// compacted.
func parseMetadata(raw json.RawMessage) (Metadata, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	if len(obj) == 0 {
		return nil, nil
	}
	md := make(Metadata, len(obj))
	for i, m := range obj {
		var buf bytes.Buffer
		if err := json.Compact(&buf, m.value); err != nil {
			return nil, err
		}
		md[i] = MetadataEntry{Key: m.key, Value: buf.Bytes()}
	}
	return md, nil
}

func parseArray(obj object, path []string) (*ArrayType, error) {
	elemRaw, err := obj.need("elementType", path)
	if err != nil {
		return nil, err
	}
	elem, err := parseType(elemRaw, child(path, "element"))
	if err != nil {
		return nil, err
	}
	containsNull, err := obj.boolean("containsNull", path)
	if err != nil {
		return nil, err
	}
	return &ArrayType{ElementType: elem, ContainsNull: containsNull}, nil
}

func parseMap(obj object, path []string) (*MapType, error) {
	keyRaw, err := obj.need("keyType", path)
	if err != nil {
		return nil, err
	}
	key, err := parseType(keyRaw, child(path, "key"))
	if err != nil {
		return nil, err
	}
	valueRaw, err := obj.need("valueType", path)
	if err != nil {
		return nil, err
	}
	value, err := parseType(valueRaw, child(path, "value"))
	if err != nil {
		return nil, err
	}
	valueContainsNull, err := obj.boolean("valueContainsNull", path)
	if err != nil {
		return nil, err
	}
	return &MapType{KeyType: key, ValueType: value, ValueContainsNull: valueContainsNull}, nil
}

// object is a decoded JSON object: its members in order, values raw.
type object []member

type member struct {
	key   string
	value json.RawMessage
}

func (o object) get(key string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// need returns the value of a required key.
func (o object) need(key string, path []string) (json.RawMessage, error) {
	raw, ok := o.get(key)
	if !ok {
		return nil, corrupt(ErrInvalidSchema, path, "missing "+strconv.Quote(key), nil)
	}
	return raw, nil
}

// str returns the value of a required key that must be a string.
func (o object) str(key string, path []string) (string, error) {
	raw, err := o.need(key, path)
	if err != nil {
		return "", err
	}
	var s string
	if firstByte(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", corrupt(ErrInvalidSchema, path, strconv.Quote(key)+" is not a string", nil)
	}
	return s, nil
}

// boolean returns the value of a required key that must be true or false.
func (o object) boolean(key string, path []string) (bool, error) {
	raw, err := o.need(key, path)
	if err != nil {
		return false, err
	}
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, corrupt(ErrInvalidSchema, path, strconv.Quote(key)+" is not a boolean", nil)
}

// decodeObject splits a JSON object into its members, refusing duplicate
// keys, which would make the schema ambiguous.
func decodeObject(raw json.RawMessage) (object, error) {
	if firstByte(raw) != '{' {
		return nil, errors.New("not an object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var obj object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if _, dup := obj.get(key); dup {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		obj = append(obj, member{key: key, value: value})
	}
	_, err := dec.Token()
	return obj, err
}

// decodeArray splits a JSON array into its raw elements.
func decodeArray(raw json.RawMessage) ([]json.RawMessage, error) {
	if firstByte(raw) != '[' {
		return nil, errors.New("not an array")
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	return elems, nil
}

func firstByte(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// foldKey maps s to a key equal for exactly the strings strings.EqualFold
// treats as equal: each rune becomes the smallest rune of its case-folding
// orbit.
func foldKey(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}

// appendString appends s as a JSON string the way Spark and delta-rs write
// one: only '"', '\\' and control characters are escaped, with the short
// forms where JSON has them.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// check reports the first reason t would not encode to a schema string
// that Parse accepts.
func (t *StructType) check(path []string) error {
	seen := make(map[string]bool, len(t.Fields))
	for i := range t.Fields {
		f := &t.Fields[i]
		fpath := child(path, f.Name)
		if !utf8.ValidString(f.Name) {
			return badArgument(ErrInvalidSchema, fpath, "name is not UTF-8")
		}
		key := foldKey(f.Name)
		if seen[key] {
			return badArgument(ErrInvalidSchema, fpath, "name is not unique regardless of case")
		}
		seen[key] = true
		keys := make(map[string]bool, len(f.Metadata))
		for _, e := range f.Metadata {
			if keys[e.Key] || !utf8.ValidString(e.Key) || !json.Valid(e.Value) {
				return badArgument(ErrInvalidSchema, fpath, "bad metadata key "+strconv.Quote(e.Key))
			}
			keys[e.Key] = true
		}
		if err := checkType(f.Type, fpath); err != nil {
			return err
		}
	}
	return nil
}

func checkType(t DataType, path []string) error {
	switch t := t.(type) {
	case nil:
		return badArgument(ErrInvalidSchema, path, "no type")
	case PrimitiveType:
		if primitives[string(t)] != t {
			return badArgument(ErrInvalidSchema, path, "unknown primitive type "+strconv.Quote(string(t)))
		}
	case DecimalType:
		if !t.valid() {
			return badArgument(ErrInvalidSchema, path, "decimal parameters out of range: "+t.String())
		}
	case GeometryType:
		if !validParam(t.CRS) {
			return badArgument(ErrInvalidSchema, path, "bad type "+strconv.Quote(t.String()))
		}
	case GeographyType:
		if !validParam(t.CRS) || (t.Algorithm != "" && !validParam(t.Algorithm)) {
			return badArgument(ErrInvalidSchema, path, "bad type "+strconv.Quote(t.String()))
		}
	case *StructType:
		return t.check(path)
	case *ArrayType:
		return checkType(t.ElementType, child(path, "element"))
	case *MapType:
		if err := checkType(t.KeyType, child(path, "key")); err != nil {
			return err
		}
		return checkType(t.ValueType, child(path, "value"))
	}
	return nil
}
