package schema_test

import (
	"errors"
	"fmt"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// ParseDDL reads Spark SQL column definitions; String gives the schema string
// a metaData action stores, which Parse reads back.
func ExampleParseDDL() {
	s, err := schema.ParseDDL("id BIGINT NOT NULL, name STRING, price DECIMAL(10,2), tags ARRAY<STRING>")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range s.Fields {
		fmt.Println(f.Name, f.Type, f.Nullable)
	}
	back, err := schema.Parse(s.String())
	fmt.Println(back.String() == s.String(), err)

	_, err = schema.ParseDDL("id BIGNUM")
	fmt.Println(errors.Is(err, deltaerr.ErrInvalidArgument))
	// Output:
	// id long false
	// name string true
	// price decimal(10,2) true
	// tags {"type":"array","elementType":"string","containsNull":true} true
	// true <nil>
	// true
}

// Parse decodes the schemaString of a metaData action; an error from bad log
// content matches deltaerr.ErrCorrupt.
func ExampleParse() {
	s, err := schema.Parse(`{"type":"struct","fields":[
		{"name":"Year","type":"integer","nullable":true,"metadata":{}},
		{"name":"event","type":{"type":"struct","fields":[
			{"name":"kind","type":"string","nullable":false,"metadata":{}}]},"nullable":true,"metadata":{}}]}`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.LeafColumns())
	_, exact := s.Field("year")
	f, folded := s.FieldFold("year")
	fmt.Println(exact, folded, f.Name)

	_, err = schema.Parse(`{"type":"struct","fields":[{"name":"x","type":"int128","nullable":true}]}`)
	fmt.Println(errors.Is(err, schema.ErrUnknownType), errors.Is(err, deltaerr.ErrCorrupt))
	// Output:
	// [[Year] [event kind]]
	// false true Year
	// true true
}

// Values are typed; partition values round-trip through their textual form.
func ExampleParsePartitionValue() {
	d, _ := schema.DecimalValueInt64(12345, 10, 2)
	for _, c := range []struct {
		t schema.DataType
		v schema.Value
	}{
		{schema.Integer, schema.IntegerValue(2024)},
		{schema.DecimalType{Precision: 10, Scale: 2}, d},
		{schema.Date, schema.DateValue(19723)},
		{schema.Timestamp, schema.TimestampValue(1_700_000_000_123_456)},
		{schema.String, schema.Value{}}, // null
	} {
		text := schema.FormatPartitionValue(c.v)
		back, err := schema.ParsePartitionValue(c.t, text)
		fmt.Printf("%s %q %v %v\n", c.t, text, back, err)
	}

	_, err := schema.ParsePartitionValue(schema.Integer, "twelve")
	fmt.Println(errors.Is(err, schema.ErrInvalidValue))
	// Output:
	// integer "2024" 2024 <nil>
	// decimal(10,2) "123.45" 123.45 <nil>
	// date "2024-01-01" 2024-01-01 <nil>
	// timestamp "2023-11-14T22:13:20.123456Z" 2023-11-14T22:13:20.123456Z <nil>
	// string "" null <nil>
	// true
}

// A Batch holds rows column by column.
func ExampleBatch() {
	b := schema.Batch{Len: 2, Columns: [][]schema.Value{
		{schema.LongValue(1), schema.LongValue(2)},
		{schema.StringValue("a"), {}},
	}}
	for i := 0; i < b.Len; i++ {
		fmt.Println(b.Row(i))
	}
	// Output:
	// [1 a]
	// [2 null]
}
