package expr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/godelta/delta/schema"
)

// compileSchema is the row layout of the differential test: a column of
// each kind the functions and operators take, and a struct.
func compileSchema(t testing.TB) *schema.StructType {
	t.Helper()
	dec := schema.DecimalType{Precision: 10, Scale: 2}
	inner := &schema.StructType{Fields: []schema.StructField{
		{Name: "x", Type: schema.Integer, Nullable: true},
		{Name: "y", Type: schema.String, Nullable: true},
	}}
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "i", Type: schema.Integer, Nullable: true},
		{Name: "l", Type: schema.Long, Nullable: true},
		{Name: "d", Type: schema.Double, Nullable: true},
		{Name: "s", Type: schema.String, Nullable: true},
		{Name: "dt", Type: schema.Date, Nullable: true},
		{Name: "ts", Type: schema.Timestamp, Nullable: true},
		{Name: "dec", Type: dec, Nullable: true},
		{Name: "b", Type: schema.Boolean, Nullable: true},
		{Name: "st", Type: inner, Nullable: true},
	}}
}

// randomRow draws a row of compileSchema, with nulls, extremes and text
// that reads as a number or a date.
func randomRow(t testing.TB, r *rand.Rand) []schema.Value {
	pick := func(vs ...schema.Value) schema.Value {
		if r.IntN(6) == 0 {
			return schema.Value{}
		}
		return vs[r.IntN(len(vs))]
	}
	d1, _ := schema.DecimalValueInt64(12345, 10, 2)
	d2, _ := schema.DecimalValueInt64(-99999999, 10, 2)
	inner := pick(
		schema.StructValue([]schema.Value{schema.IntegerValue(3), schema.StringValue("a")}),
		schema.StructValue([]schema.Value{{}, schema.StringValue("zz")}),
	)
	return []schema.Value{
		pick(schema.IntegerValue(0), schema.IntegerValue(7), schema.IntegerValue(-3), schema.IntegerValue(math.MaxInt32)),
		pick(schema.LongValue(0), schema.LongValue(107), schema.LongValue(math.MaxInt64), schema.LongValue(math.MinInt64)),
		pick(schema.DoubleValue(0), schema.DoubleValue(2.5), schema.DoubleValue(math.NaN()), schema.DoubleValue(-1e300)),
		pick(schema.StringValue(""), schema.StringValue("12"), schema.StringValue("héllo"), schema.StringValue("2024-03-01"), schema.StringValue(" 7 ")),
		pick(schema.DateValue(0), schema.DateValue(19800)),
		pick(schema.TimestampValue(0), schema.TimestampValue(1_700_000_000_000_000)),
		pick(d1, d2),
		pick(schema.BooleanValue(true), schema.BooleanValue(false)),
		inner,
	}
}

// exprGen writes random expression text in the parser's language.
type exprGen struct{ r *rand.Rand }

func (g exprGen) value(depth int) string {
	cols := []string{"i", "l", "d", "s", "dt", "ts", "dec", "b", "st.x", "st.y", "ST.X", "nosuch", "st.nosuch"}
	lits := []string{"0", "1", "7", "100", "-3", "2.5", "3000000000", "'12'", "'x'", "'2024-03-01'", "'2024-03-01 10:00:00'", "NULL", "true", "false"}
	if depth <= 0 || g.r.IntN(3) == 0 {
		if g.r.IntN(2) == 0 {
			return cols[g.r.IntN(len(cols))]
		}
		return lits[g.r.IntN(len(lits))]
	}
	switch g.r.IntN(9) {
	case 0, 1:
		ops := []string{"+", "-", "*", "/", "%"}
		return "(" + g.value(depth-1) + " " + ops[g.r.IntN(len(ops))] + " " + g.value(depth-1) + ")"
	case 2:
		return "-(" + g.value(depth-1) + ")"
	case 3:
		types := []string{"INT", "BIGINT", "DOUBLE", "STRING", "DATE", "TIMESTAMP", "DECIMAL(12,3)", "BOOLEAN"}
		return "CAST(" + g.value(depth-1) + " AS " + types[g.r.IntN(len(types))] + ")"
	case 4:
		fns := []string{"length", "upper", "year", "abs", "floor", "trim", "isnull", "isnotnull"}
		return fns[g.r.IntN(len(fns))] + "(" + g.value(depth-1) + ")"
	case 5:
		switch g.r.IntN(4) {
		case 0:
			return "coalesce(" + g.value(depth-1) + ", " + g.value(depth-1) + ", " + g.value(depth-1) + ")"
		case 1:
			return "nvl(" + g.value(depth-1) + ", " + g.value(depth-1) + ")"
		case 2:
			return "concat(" + g.value(depth-1) + ", " + g.value(depth-1) + ")"
		}
		return "if(" + g.pred(depth-1) + ", " + g.value(depth-1) + ", " + g.value(depth-1) + ")"
	case 6:
		return "round(" + g.value(depth-1) + ", 1)"
	}
	return "(" + g.pred(depth-1) + ")"
}

func (g exprGen) pred(depth int) string {
	if depth <= 0 {
		return g.value(0) + " = " + g.value(0)
	}
	switch g.r.IntN(7) {
	case 0:
		return "(" + g.pred(depth-1) + " AND " + g.pred(depth-1) + ")"
	case 1:
		return "(" + g.pred(depth-1) + " OR " + g.pred(depth-1) + ")"
	case 2:
		return "NOT (" + g.pred(depth-1) + ")"
	case 3:
		if g.r.IntN(2) == 0 {
			return g.value(depth-1) + " IS NULL"
		}
		return g.value(depth-1) + " IS NOT NULL"
	case 4:
		neg := ""
		if g.r.IntN(2) == 0 {
			neg = "NOT "
		}
		return g.value(depth-1) + " " + neg + "IN (" + g.value(depth-1) + ", " + g.value(0) + ")"
	}
	ops := []string{"=", "!=", "<", "<=", ">", ">="}
	return g.value(depth-1) + " " + ops[g.r.IntN(len(ops))] + " " + g.value(depth-1)
}

// rowLookupOf is the Lookup EvalValue reads a row with, resolving names
// by FieldPath as the compiled program does.
func rowLookupOf(sch *schema.StructType, row []schema.Value) Lookup {
	return func(name string) (schema.DataType, schema.Value, bool) {
		path, typ, ok := FieldPath(sch, name)
		if !ok {
			return nil, schema.Value{}, false
		}
		return typ, valueAt(row, path), true
	}
}

func sameResult(v1 schema.Value, e1 error, v2 schema.Value, e2 error) bool {
	if (e1 == nil) != (e2 == nil) {
		return false
	}
	if e1 != nil {
		return e1.Error() == e2.Error()
	}
	if v1.IsNull() || v2.IsNull() {
		return v1.IsNull() == v2.IsNull()
	}
	if v1.Kind() != v2.Kind() {
		return false
	}
	if v1.Kind() == schema.KindDouble || v1.Kind() == schema.KindFloat {
		a, b := v1.Float64(), v2.Float64()
		return a == b || math.IsNaN(a) && math.IsNaN(b)
	}
	return v1.String() == v2.String()
}

// TestCompileMatchesEvalValue checks the invariant of compile.go: on
// random expressions over random rows, a program compiled against the
// rows gives the value, the truth and the error EvalValue gives through a
// Lookup by name.
func TestCompileMatchesEvalValue(t *testing.T) {
	sch := compileSchema(t)
	r := rand.New(rand.NewPCG(1, 2))
	g := exprGen{r: r}
	rows := make([][]schema.Value, 40)
	for i := range rows {
		rows[i] = randomRow(t, r)
	}
	rows = append(rows, nil, rows[0][:3]) // a missing row and a short one read as nulls
	n := 3000
	if testing.Short() {
		n = 500
	}
	checked := 0
	for range n {
		var text string
		if r.IntN(2) == 0 {
			text = g.pred(3)
		} else {
			text = g.value(3)
		}
		e, err := Parse(text)
		if err != nil {
			continue // the generator writes some text the parser refuses (e.g. NULL IN ...)
		}
		p := Compile(e, RowResolver(sch))
		for _, row := range rows {
			want, werr := EvalValue(e, rowLookupOf(sch, row))
			got, gerr := p.Value(row)
			if !sameResult(want, werr, got, gerr) {
				t.Fatalf("%s on %v:\n EvalValue %v, %v\n compiled  %v, %v", text, row, want, werr, got, gerr)
			}
			wt, wterr := evalBool(e, rowLookupOf(sch, row))
			gt, gterr := p.Test(row)
			if wt != gt || fmt.Sprint(wterr) != fmt.Sprint(gterr) {
				t.Fatalf("%s on %v: evalBool %v, %v; compiled %v, %v", text, row, wt, wterr, gt, gterr)
			}
			checked++
		}
	}
	if checked < n*len(rows)/2 {
		t.Fatalf("only %d evaluations compared: the generator writes too much the parser refuses", checked)
	}
}

// TestCompileTwoInputs checks that Input 1 reads the second row.
func TestCompileTwoInputs(t *testing.T) {
	resolve := func(c string) (Ref, bool) {
		switch strings.ToLower(c) {
		case "t.id":
			return Ref{Input: 0, Path: []int{0}}, true
		case "s.id":
			return Ref{Input: 1, Path: []int{0}}, true
		case "s.st.x":
			return Ref{Input: 1, Path: []int{1, 0}}, true
		}
		return Ref{}, false
	}
	e := mustParse(t, "t.id = s.id AND s.st.x > 1")
	p := Compile(e, resolve)
	tr := []schema.Value{schema.LongValue(5)}
	sr := []schema.Value{schema.LongValue(5), schema.StructValue([]schema.Value{schema.IntegerValue(2)})}
	if got, err := p.Test2(tr, sr); err != nil || got != True {
		t.Fatalf("Test2 = %v, %v; want True", got, err)
	}
	sr[0] = schema.LongValue(6)
	if got, err := p.Test2(tr, sr); err != nil || got != False {
		t.Fatalf("Test2 = %v, %v; want False", got, err)
	}
	if got, err := p.Test2(tr, nil); err != nil || got != Unknown {
		t.Fatalf("Test2 with no source row = %v, %v; want Unknown (nulls)", got, err)
	}
	if _, err := Compile(mustParse(t, "s.nosuch = 1"), resolve).Test2(tr, sr); err == nil {
		t.Fatal("an unresolved column evaluated without error")
	}
}

func mustParse(t testing.TB, text string) Expr {
	t.Helper()
	e, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func BenchmarkCompiledPredicate(b *testing.B) {
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}}
	e := mustParse(b, "id % 100 = 7")
	row := []schema.Value{schema.LongValue(0)}
	b.Run("EvalValue", func(b *testing.B) {
		for i := range b.N {
			row[0] = schema.LongValue(int64(i))
			if _, err := EvalValue(e, rowLookupOf(sch, row)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Compiled", func(b *testing.B) {
		p := Compile(e, RowResolver(sch))
		for i := range b.N {
			row[0] = schema.LongValue(int64(i))
			if _, err := p.Matches(row); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzCompile checks compile.go's invariant on any text the parser takes:
// over the rows of TestCompileMatchesEvalValue, a compiled program gives
// the value, truth and error EvalValue gives, and never panics.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"i % 100 = 7 AND s IS NOT NULL",
		"coalesce(st.x, i, 0) + 1 > l",
		"if(b, dec * 2, CAST(s AS DECIMAL(12,3))) >= 1.5",
		"dt = '2024-03-01' OR ts < '2024-03-01 10:00:00'",
		"s IN ('12', 'x', NULL) AND NOT (d / 0 IS NULL)",
		"year(CAST(s AS DATE)) = 2024 OR nosuch = 1",
		"-(l) - 1 < 0",
	} {
		f.Add(s)
	}
	sch := compileSchema(f)
	r := rand.New(rand.NewPCG(3, 4))
	rows := [][]schema.Value{nil}
	for range 12 {
		rows = append(rows, randomRow(f, r))
	}
	f.Fuzz(func(t *testing.T, text string) {
		e, err := Parse(text)
		if err != nil {
			return
		}
		p := Compile(e, RowResolver(sch))
		for _, row := range rows {
			want, werr := EvalValue(e, rowLookupOf(sch, row))
			got, gerr := p.Value(row)
			if !sameResult(want, werr, got, gerr) {
				t.Fatalf("%s on %v:\n EvalValue %v, %v\n compiled  %v, %v", text, row, want, werr, got, gerr)
			}
			wt, wterr := evalBool(e, rowLookupOf(sch, row))
			gt, gterr := p.Test(row)
			if wt != gt || fmt.Sprint(wterr) != fmt.Sprint(gterr) {
				t.Fatalf("%s on %v: evalBool %v, %v; compiled %v, %v", text, row, wt, wterr, gt, gterr)
			}
		}
	})
}
