package expr_test

import (
	"errors"
	"fmt"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
)

// rowLookup describes one row: each column's type and value; a column missing
// from the map is one the evaluator has no value for.
func rowLookup(row map[string]schema.Value) expr.Lookup {
	return func(column string) (schema.DataType, schema.Value, bool) {
		v, ok := row[column]
		if !ok {
			return nil, schema.Value{}, false
		}
		return v.Type(), v, true
	}
}

// Parse a predicate, print it back, and evaluate it three-valued against rows.
func ExampleParse() {
	e, err := expr.Parse("year >= 2024 AND country IN ('FR', 'DE')")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e)
	fmt.Println(expr.Columns(e))

	truth := map[expr.Tri]string{expr.True: "true", expr.False: "false", expr.Unknown: "unknown"}
	rows := []map[string]schema.Value{
		{"year": schema.IntegerValue(2025), "country": schema.StringValue("FR")},
		{"year": schema.IntegerValue(2023), "country": schema.StringValue("FR")},
		{"year": schema.IntegerValue(2025)}, // no value for country
	}
	for _, row := range rows {
		fmt.Println(truth[expr.Eval(e, rowLookup(row))])
	}

	_, err = expr.Parse("year >=")
	fmt.Println(errors.Is(err, expr.ErrSyntax), errors.Is(err, deltaerr.ErrInvalidArgument))
	// Output:
	// (`year` >= 2024) AND (`country` IN ('FR', 'DE'))
	// [year country]
	// true
	// false
	// unknown
	// true true
}

// A value expression, as a CHECK constraint or a generated column uses it.
func ExampleEvalValue() {
	e, err := expr.Parse("price * 2 + 1")
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := expr.EvalValue(e, rowLookup(map[string]schema.Value{"price": schema.LongValue(20)}))
	fmt.Println(v, err)

	check, _ := expr.Parse("price > 0")
	bad, err := expr.Violates(check, rowLookup(map[string]schema.Value{"price": schema.LongValue(-5)}))
	fmt.Println(bad, err)
	// Output:
	// 41 <nil>
	// true <nil>
}

// Compile a predicate once against a row layout, then test many rows: no
// name lookup and no allocation per row.
func ExampleCompile() {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "name", Type: schema.String, Nullable: true},
	}}
	e, err := expr.Parse("id % 100 = 7 AND name IS NOT NULL")
	if err != nil {
		fmt.Println(err)
		return
	}
	p := expr.Compile(e, expr.RowResolver(sch))
	for _, row := range [][]schema.Value{
		{schema.LongValue(107), schema.StringValue("a")},
		{schema.LongValue(107), {}},
		{schema.LongValue(8), schema.StringValue("b")},
	} {
		ok, err := p.Matches(row)
		fmt.Println(row[0], ok, err)
	}
	// Output:
	// 107 true <nil>
	// 107 false <nil>
	// 8 false <nil>
}
