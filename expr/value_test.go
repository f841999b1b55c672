package expr

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

func dec(t testing.TB, u int64, p, s int) schema.Value {
	t.Helper()
	v, err := schema.DecimalValueInt64(u, p, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// testRow is a row of every type; n is a null long.
func testRow(t testing.TB) Lookup {
	ts, _ := schema.ParsePartitionValue(schema.Timestamp, "2024-03-05 14:07:09.250")
	d, _ := schema.ParsePartitionValue(schema.Date, "2024-03-05")
	row := map[string]schema.Value{
		"i": schema.IntegerValue(7), "neg": schema.IntegerValue(-7), "l": schema.LongValue(math.MaxInt64),
		"minl": schema.LongValue(math.MinInt64), "b": schema.ByteValue(100), "sh": schema.ShortValue(3),
		"f": schema.FloatValue(1.5), "x": schema.DoubleValue(2.5), "zero": schema.IntegerValue(0),
		"price": dec(t, 1999, 5, 2), "qty": schema.IntegerValue(3), "s": schema.StringValue("héllo"),
		"name": schema.StringValue("alice"), "pad": schema.StringValue("  hi  "), "num": schema.StringValue("12"),
		"ts": ts, "d": d, "flag": schema.BooleanValue(true), "bin": schema.BinaryValue([]byte("ab")),
		"big": dec(t, 99999999999999999, 38, 0),
	}
	types := map[string]schema.DataType{"n": schema.Long}
	return func(c string) (schema.DataType, schema.Value, bool) {
		if v, ok := row[c]; ok {
			return v.Type(), v, true
		}
		typ, ok := types[c]
		return typ, schema.Value{}, ok
	}
}

func TestParseValueRoundTrip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a + b * c", "(`a` + (`b` * `c`))"},
		{"(a + b) * c", "((`a` + `b`) * `c`)"},
		{"a - b - c", "((`a` - `b`) - `c`)"},
		{"a / b % c + 1", "(((`a` / `b`) % `c`) + 1)"},
		{"-a * 2", "(-(`a`) * 2)"},
		{"a - -5", "(`a` - -5)"},
		{"a-1", "(`a` - 1)"},
		{"-(5)", "-(5)"},
		{"- 2.50", "-2.50"},
		{"+a", "`a`"},
		{"price * qty <= 1000", "(`price` * `qty`) <= 1000"},
		{"NOT a + 1 > 2 AND b", "(NOT ((`a` + 1) > 2)) AND (`b`)"},
		{"LENGTH(name) < 10", "length(`name`) < 10"},
		{"Year(ts) = 2024", "year(`ts`) = 2024"},
		{"substr(s, -3, 2)", "substr(`s`, -3, 2)"},
		{"concat(a, '-', b)", "concat(`a`, '-', `b`)"},
		{"coalesce(a, b, 0)", "coalesce(`a`, `b`, 0)"},
		{"if(a > 1, 'x', NULL)", "if(`a` > 1, 'x', NULL)"},
		{"concat()", "concat()"},
		{"cast(ts as date)", "CAST(`ts` AS DATE)"},
		{"CAST(x AS Decimal(10, 2))", "CAST(`x` AS DECIMAL(10,2))"},
		{"CAST(x AS DECIMAL)", "CAST(`x` AS DECIMAL(10,0))"},
		{"CAST(x AS long) + CAST(y AS BYTE) + CAST(z AS short)", "((CAST(`x` AS BIGINT) + CAST(`y` AS TINYINT)) + CAST(`z` AS SMALLINT))"},
		{"CAST(x AS real) = CAST(y AS timestamp_ntz)", "CAST(`x` AS FLOAT) = CAST(`y` AS TIMESTAMP_NTZ)"},
		{"CAST(CAST(x AS STRING) AS BINARY)", "CAST(CAST(`x` AS STRING) AS BINARY)"},
		{"x IN (1 + 1, -2)", "`x` IN ((1 + 1), -2)"},
		{"isnotnull(a) AND isnull(b)", "(isnotnull(`a`)) AND (isnull(`b`))"},
		{"1.5e3 * 2", "(1.5e3 * 2)"},
		{"date_format(ts, 'yyyy-MM') = '2024-03'", "date_format(`ts`, 'yyyy-MM') = '2024-03'"},
		{"`AND` = 1", "`AND` = 1"},
	} {
		e, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := e.String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
		again, err := Parse(e.String())
		if err != nil {
			t.Errorf("Parse(%q): %v", e.String(), err)
			continue
		}
		if !reflect.DeepEqual(again, e) {
			t.Errorf("%q: reparse of %q = %#v, want %#v", tc.in, e.String(), again, e)
		}
	}
}

func TestParseValueErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kind error
	}{
		{"nosuch(a) = 1", ErrUnknownFunction},
		{"NoSuch(a)", deltaerr.ErrUnsupportedFeature},
		{"year(a, b)", ErrSyntax},
		{"substring(a)", ErrSyntax},
		{"if(a, b)", ErrSyntax},
		{"CAST(a AS varchar2)", ErrSyntax},
		{"CAST(a date)", ErrSyntax},
		{"CAST(a AS DECIMAL(40,2))", ErrSyntax},
		{"CAST(a AS DECIMAL(5,6))", ErrSyntax},
		{"CAST(a AS INT", ErrSyntax},
		{"a +", ErrSyntax},
		{"a * * b", ErrSyntax},
		{"year(a", ErrSyntax},
		{"f(a b)", ErrSyntax},
		{"`year`(ts)", ErrSyntax}, // a back-quoted name is a column, never a call
	} {
		_, err := Parse(tc.in)
		if !errors.Is(err, tc.kind) {
			t.Errorf("Parse(%q) err = %v, want %v", tc.in, err, tc.kind)
		}
	}
	_, err := Parse("NoSuch(a)")
	if err == nil || !strings.Contains(err.Error(), "NoSuch") {
		t.Errorf("unknown function error %v does not name it", err)
	}
	// A Call built in code with an unknown name fails at evaluation.
	_, err = EvalValue(Call{Name: "md5", Args: []Expr{Column{Name: "s"}}}, testRow(t))
	if !errors.Is(err, ErrUnknownFunction) || !strings.Contains(err.Error(), "md5") {
		t.Errorf("EvalValue(md5) err = %v, want ErrUnknownFunction naming md5", err)
	}
}

// valueCase is an expression, its expected value (by kind and String), or
// the error kind it must fail with.
type valueCase struct {
	text string
	want schema.Value
	err  error
}

func runValueCases(t *testing.T, cases []valueCase) {
	t.Helper()
	row := testRow(t)
	for _, tc := range cases {
		e, err := Parse(tc.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.text, err)
			continue
		}
		got, err := EvalValue(e, row)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: err = %v (value %v), want %v", tc.text, err, got, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.text, err)
			continue
		}
		if got.Kind() != tc.want.Kind() || got.String() != tc.want.String() || !reflect.DeepEqual(got.Type(), tc.want.Type()) {
			t.Errorf("%s = %v (%v), want %v (%v)", tc.text, got, got.Type(), tc.want, tc.want.Type())
		}
	}
}

func TestEvalArithmetic(t *testing.T) {
	null := schema.Value{}
	runValueCases(t, []valueCase{
		// Integers compute in the wider type; literals are INT.
		{text: "i + 1", want: schema.IntegerValue(8)},
		{text: "i - 10", want: schema.IntegerValue(-3)},
		{text: "i * qty", want: schema.IntegerValue(21)},
		{text: "i % 4", want: schema.IntegerValue(3)},
		{text: "neg % 4", want: schema.IntegerValue(-3)}, // sign of the dividend
		{text: "b + sh", want: schema.ShortValue(103)},
		{text: "b + b", err: ErrOverflow}, // TINYINT 200
		{text: "i + 3000000000", want: schema.LongValue(3000000007)},
		{text: "l + 1", err: ErrOverflow},
		{text: "minl - 1", err: ErrOverflow},
		{text: "l * 2", err: ErrOverflow},
		{text: "minl * -1", err: ErrOverflow},
		{text: "-minl", err: ErrOverflow},
		{text: "-i", want: schema.IntegerValue(-7)},
		{text: "-(-i)", want: schema.IntegerValue(7)},
		{text: "-9223372036854775808", want: schema.LongValue(math.MinInt64)},
		// / gives a double for integers; by zero is NULL.
		{text: "i / 2", want: schema.DoubleValue(3.5)},
		{text: "i / zero", want: null},
		{text: "i % zero", want: null},
		{text: "x / 0", want: null},
		{text: "x * 2", want: schema.DoubleValue(5)},
		{text: "f + 1", want: schema.FloatValue(2.5)},
		{text: "f + x", want: schema.DoubleValue(4)},
		{text: "x % 1", want: schema.DoubleValue(0.5)},
		{text: "1e3 + 1", want: schema.DoubleValue(1001)},
		// Null propagates.
		{text: "n + 1", want: null},
		{text: "-n", want: null},
		{text: "1 + NULL", want: null},
		// Strings in arithmetic are doubles; not a number is NULL.
		{text: "num + 1", want: schema.DoubleValue(13)},
		{text: "name + 1", want: null},
		{text: "flag + 1", err: ErrEval},
		{text: "missing + 1", err: ErrEval},
		// Decimals: exact, with Spark's result types.
		{text: "price * qty", want: dec(t, 5997, 16, 2)},
		{text: "price + 0.01", want: dec(t, 2000, 6, 2)},
		{text: "price - 20", want: dec(t, -1, 13, 2)},
		{text: "1.5", want: dec(t, 15, 2, 1)},
		{text: "0.05", want: dec(t, 5, 2, 2)},
		{text: "-2.50", want: dec(t, -250, 3, 2)},
		{text: "price / 3", want: dec(t, 66633333333333, 16, 13)},
		{text: "1.0 / 3", want: dec(t, 333333333333, 13, 12)},
		{text: "price / 0", want: null},
		{text: "price % 7", want: dec(t, 599, 5, 2)},
		{text: "-price % 7", want: dec(t, -599, 5, 2)},
		{text: "price + x", want: schema.DoubleValue(22.49)},
		{text: "CAST(big * big AS STRING)", want: schema.StringValue("9999999999999999800000000000000001")},
		{text: "big * big * big", err: ErrOverflow},
		{text: "-price", want: dec(t, -1999, 5, 2)},
	})
}

func TestEvalCast(t *testing.T) {
	null := schema.Value{}
	ts0, _ := schema.ParsePartitionValue(schema.Timestamp, "2024-03-05 00:00:00")
	runValueCases(t, []valueCase{
		{text: "CAST(ts AS DATE)", want: schema.DateValue(19787)},
		{text: "CAST(d AS TIMESTAMP)", want: ts0},
		{text: "CAST(ts AS STRING)", want: schema.StringValue("2024-03-05 14:07:09.25")},
		{text: "CAST(d AS STRING)", want: schema.StringValue("2024-03-05")},
		{text: "CAST(ts AS TIMESTAMP_NTZ)", want: schema.TimestampNTZValue(ts0.Int64() + (14*3600+7*60+9)*1e6 + 250000)},
		{text: "CAST(ts AS BIGINT)", want: schema.LongValue(ts0.Int64()/1e6 + 14*3600 + 7*60 + 9)},
		{text: "CAST(0 AS TIMESTAMP)", want: schema.TimestampValue(0)},
		{text: "CAST(1.5 AS TIMESTAMP)", want: schema.TimestampValue(1500000)},
		{text: "CAST('2024-03-05' AS DATE)", want: schema.DateValue(19787)},
		{text: "CAST(' 2024-3-5 ' AS DATE)", want: schema.DateValue(19787)},
		{text: "CAST('2024-03-05T10:00:00' AS DATE)", want: schema.DateValue(19787)},
		{text: "CAST('2024' AS DATE)", want: schema.DateValue(19723)},
		{text: "CAST('2024-02-30' AS DATE)", want: null},
		{text: "CAST('soon' AS DATE)", want: null},
		{text: "CAST('2024-03-05' AS TIMESTAMP)", want: ts0},
		{text: "CAST('2024-03-05T00:00:00+01:00' AS TIMESTAMP)", want: schema.TimestampValue(ts0.Int64() - 3600e6)},
		{text: "CAST('nope' AS TIMESTAMP)", want: null},
		{text: "CAST(' 42 ' AS INT)", want: schema.IntegerValue(42)},
		{text: "CAST('1.9' AS INT)", want: schema.IntegerValue(1)},
		{text: "CAST('abc' AS INT)", want: null},
		{text: "CAST('300' AS TINYINT)", want: null},
		{text: "CAST(300 AS TINYINT)", err: ErrOverflow},
		{text: "CAST(l AS INT)", err: ErrOverflow},
		{text: "CAST(x AS INT)", want: schema.IntegerValue(2)},
		{text: "CAST(-2.7 AS BIGINT)", want: schema.LongValue(-2)},
		{text: "CAST(1e30 AS BIGINT)", err: ErrOverflow},
		{text: "CAST(flag AS INT)", want: schema.IntegerValue(1)},
		{text: "CAST(d AS INT)", want: null},
		{text: "CAST(x AS DECIMAL(5,0))", want: dec(t, 3, 5, 0)}, // half up
		{text: "CAST(price AS DECIMAL(3,1))", want: dec(t, 200, 3, 1)},
		{text: "CAST(price AS DECIMAL(2,1))", err: ErrOverflow},
		{text: "CAST('12.345' AS DECIMAL(4,2))", want: dec(t, 1235, 4, 2)},
		{text: "CAST('123456' AS DECIMAL(4,2))", want: null},
		{text: "CAST('x' AS DECIMAL(4,2))", want: null},
		{text: "CAST(i AS DOUBLE)", want: schema.DoubleValue(7)},
		{text: "CAST('1e3' AS DOUBLE)", want: schema.DoubleValue(1000)},
		{text: "CAST('NaN' AS DOUBLE)", want: schema.DoubleValue(math.NaN())},
		{text: "CAST('x' AS FLOAT)", want: null},
		{text: "CAST(price AS FLOAT)", want: schema.FloatValue(19.99)},
		{text: "CAST(x AS STRING)", want: schema.StringValue("2.5")},
		{text: "CAST(1e10 AS STRING)", want: schema.StringValue("1.0E10")},
		{text: "CAST(1e-5 AS STRING)", want: schema.StringValue("1.0E-5")},
		{text: "CAST(price AS STRING)", want: schema.StringValue("19.99")},
		{text: "CAST(flag AS STRING)", want: schema.StringValue("true")},
		{text: "CAST(bin AS STRING)", want: schema.StringValue("ab")},
		{text: "CAST(s AS BINARY)", want: schema.BinaryValue([]byte("héllo"))},
		{text: "CAST(' yes ' AS BOOLEAN)", want: schema.BooleanValue(true)},
		{text: "CAST('0' AS BOOLEAN)", want: schema.BooleanValue(false)},
		{text: "CAST('maybe' AS BOOLEAN)", want: null},
		{text: "CAST(zero AS BOOLEAN)", want: schema.BooleanValue(false)},
		{text: "CAST(n AS INT)", want: null},
		{text: "CAST(d AS BINARY)", err: ErrEval},
		{text: "CAST(flag AS DATE)", err: ErrEval},
	})
}

func TestEvalFunctions(t *testing.T) {
	null := schema.Value{}
	ts := func(s string) schema.Value {
		v, err := schema.ParsePartitionValue(schema.Timestamp, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	runValueCases(t, []valueCase{
		{text: "year(ts)", want: schema.IntegerValue(2024)},
		{text: "YEAR(d)", want: schema.IntegerValue(2024)},
		{text: "year('2021-07-04')", want: schema.IntegerValue(2021)},
		{text: "year('July')", want: null},
		{text: "year(n)", want: null},
		{text: "year(i)", err: ErrEval},
		{text: "month(ts)", want: schema.IntegerValue(3)},
		{text: "day(ts)", want: schema.IntegerValue(5)},
		{text: "dayofmonth(d)", want: schema.IntegerValue(5)},
		{text: "hour(ts)", want: schema.IntegerValue(14)},
		{text: "minute(ts)", want: schema.IntegerValue(7)},
		{text: "second(ts)", want: schema.IntegerValue(9)},
		{text: "hour(d)", want: schema.IntegerValue(0)},
		{text: "to_date(ts)", want: schema.DateValue(19787)},
		{text: "date('2024-03-05')", want: schema.DateValue(19787)},
		{text: "to_date('05/03/2024', 'dd/MM/yyyy')", want: schema.DateValue(19787)},
		{text: "to_date('5/3/24', 'd/M/yy')", want: schema.DateValue(19787)},
		{text: "to_date('31/02/2024', 'dd/MM/yyyy')", want: null},
		{text: "to_date('2024-03-05', 'dd/MM/yyyy')", want: null},
		{text: "to_date('x', 'yyyy-ww')", err: ErrEval},
		{text: "to_timestamp('2024-03-05 02:07:09 PM', 'yyyy-MM-dd hh:mm:ss a')", want: ts("2024-03-05 14:07:09")},
		{text: "to_timestamp('Mar 5, 2024 14:07:09.25', 'MMM d, yyyy HH:mm:ss.SS')", want: ts("2024-03-05 14:07:09.25")},
		{text: "date_format(ts, 'yyyy-MM')", want: schema.StringValue("2024-03")},
		{text: "date_format(ts, 'yyyy-MM-dd HH:mm:ss.SSS')", want: schema.StringValue("2024-03-05 14:07:09.250")},
		{text: "date_format(ts, 'EEE, d MMM yy h a ''Q''Q')", want: schema.StringValue("Tue, 5 Mar 24 2 PM Q1")},
		{text: "date_format(ts, 'EEEE MMMM D')", want: schema.StringValue("Tuesday March 65")},
		{text: "date_format(d, 'yyyyMMdd')", want: schema.StringValue("20240305")},
		{text: "date_format(ts, 'yyyy-ww')", err: ErrEval},
		{text: "trunc(d, 'YEAR')", want: schema.DateValue(19723)},
		{text: "trunc(ts, 'mm')", want: schema.DateValue(19783)},
		{text: "trunc(d, 'QUARTER')", want: schema.DateValue(19723)},
		{text: "trunc(d, 'WEEK')", want: schema.DateValue(19787 - 1)},
		{text: "trunc(d, 'DAY')", want: null},
		{text: "date_trunc('YEAR', ts)", want: ts("2024-01-01 00:00:00")},
		{text: "date_trunc('month', ts)", want: ts("2024-03-01 00:00:00")},
		{text: "date_trunc('DAY', ts)", want: ts("2024-03-05 00:00:00")},
		{text: "date_trunc('HOUR', ts)", want: ts("2024-03-05 14:00:00")},
		{text: "date_trunc('MINUTE', ts)", want: ts("2024-03-05 14:07:00")},
		{text: "date_trunc('SECOND', ts)", want: ts("2024-03-05 14:07:09")},
		{text: "date_trunc('fortnight', ts)", want: null},
		{text: "length(s)", want: schema.IntegerValue(5)},
		{text: "char_length(bin)", want: schema.IntegerValue(2)},
		{text: "length(i * 100)", want: schema.IntegerValue(3)},
		{text: "upper(s)", want: schema.StringValue("HÉLLO")},
		{text: "lower('ABC')", want: schema.StringValue("abc")},
		{text: "trim(pad)", want: schema.StringValue("hi")},
		{text: "ltrim(pad)", want: schema.StringValue("hi  ")},
		{text: "rtrim(pad)", want: schema.StringValue("  hi")},
		{text: "substring(s, 1, 3)", want: schema.StringValue("hél")},
		{text: "substr(s, 2)", want: schema.StringValue("éllo")},
		{text: "substring(s, 0, 2)", want: schema.StringValue("hé")},
		{text: "substring(s, -3, 2)", want: schema.StringValue("ll")},
		{text: "substring(s, -10, 7)", want: schema.StringValue("he"[:1] + "é")},
		{text: "substring(s, 3, -1)", want: schema.StringValue("")},
		{text: "substring(s, 10)", want: schema.StringValue("")},
		{text: "substring(bin, 2, 1)", want: schema.BinaryValue([]byte("b"))},
		{text: "substring(s, n)", want: null},
		{text: "concat(name, '-', i)", want: schema.StringValue("alice-7")},
		{text: "concat(name, n)", want: null},
		{text: "concat(bin, bin)", want: schema.BinaryValue([]byte("abab"))},
		{text: "coalesce(n, NULL, i)", want: schema.IntegerValue(7)},
		{text: "coalesce(n)", want: null},
		{text: "coalesce(i, l + 1)", want: schema.IntegerValue(7)}, // lazy: no overflow
		{text: "nvl(n, 3)", want: schema.IntegerValue(3)},
		{text: "if(i > 5, 'big', 'small')", want: schema.StringValue("big")},
		{text: "if(n > 5, 'big', 'small')", want: schema.StringValue("small")},
		{text: "if(flag, i, l + 1)", want: schema.IntegerValue(7)},
		{text: "isnull(n)", want: schema.BooleanValue(true)},
		{text: "isnotnull(n)", want: schema.BooleanValue(false)},
		{text: "abs(neg)", want: schema.IntegerValue(7)},
		{text: "abs(-price)", want: dec(t, 1999, 5, 2)},
		{text: "abs(-2.5e0)", want: schema.DoubleValue(2.5)},
		{text: "abs(minl)", err: ErrOverflow},
		{text: "round(x)", want: schema.DoubleValue(3)},
		{text: "round(-2.5e0)", want: schema.DoubleValue(-3)},
		{text: "round(0.125e0, 2)", want: schema.DoubleValue(0.13)},
		{text: "round(price, 1)", want: dec(t, 200, 5, 1)},
		{text: "round(price)", want: dec(t, 20, 4, 0)},
		{text: "round(1234, -2)", want: schema.IntegerValue(1200)},
		{text: "round(1250, -2)", want: schema.IntegerValue(1300)},
		{text: "round(i, 2)", want: schema.IntegerValue(7)},
		{text: "floor(x)", want: schema.LongValue(2)},
		{text: "ceil(x)", want: schema.LongValue(3)},
		{text: "floor(-price)", want: dec(t, -20, 4, 0)},
		{text: "ceiling(price)", want: dec(t, 20, 4, 0)},
		{text: "floor(i)", want: schema.LongValue(7)},
		{text: "ceil(1e30)", err: ErrOverflow},
		{text: "upper(n)", want: null},
	})
	if names := Functions(); !slices.IsSorted(names) || !slices.Contains(names, "date_format") || !slices.Contains(names, "substr") {
		t.Errorf("Functions() = %v", names)
	}
}

// TestEvalPredicates checks constraint-style predicates through Eval and
// Violates.
func TestEvalPredicates(t *testing.T) {
	row := testRow(t)
	for _, tc := range []struct {
		text    string
		eval    Tri
		violate bool
		err     error
	}{
		{text: "i > 0 AND name IS NOT NULL", eval: True},
		{text: "length(name) < 10", eval: True},
		{text: "length(name) < 3", eval: False, violate: true},
		{text: "price * qty <= 1000", eval: True},
		{text: "price * qty <= 50", eval: False, violate: true},
		{text: "i + qty > 3", eval: True},
		{text: "CAST(ts AS DATE) = '2024-03-05'", eval: True},
		{text: "CAST(ts AS DATE) = DATE '2024-03-06'", eval: False, violate: true},
		{text: "year(ts) IN (2023, 2024)", eval: True},
		{text: "n + 1 > 0", eval: Unknown, violate: true}, // NULL violates, as in Delta
		{text: "isnotnull(n)", eval: False, violate: true},
		{text: "isnull(n)", eval: True},
		{text: "upper(name) = 'ALICE'", eval: True},
		{text: "NOT (abs(neg) = 7)", eval: False, violate: true},
		{text: "if(flag, i > 100, TRUE)", eval: False, violate: true},
		// Eval reads text against a timestamp only in the partition-value
		// form; Violates reads it as Spark does.
		// Text against a date or timestamp is cast as Spark casts it.
		{text: "ts >= '2020-01-01'", eval: True},
		{text: "ts >= '2025-01-01'", eval: False, violate: true},
		{text: "d < '2024-03-05 10:00:00'", eval: False, violate: true}, // the text is cast to a date
		// Errors: Eval is Unknown, Violates reports them.
		{text: "l + 1 > 0", eval: Unknown, err: ErrOverflow},
		{text: "nosuchcol * 2 > 1", eval: Unknown, err: ErrEval},
		{text: "i + 1", eval: Unknown, err: ErrEval}, // not a condition
	} {
		e, err := Parse(tc.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.text, err)
			continue
		}
		if got := Eval(e, row); got != tc.eval {
			t.Errorf("Eval(%s) = %v, want %v", tc.text, got, tc.eval)
		}
		v, err := Violates(e, row)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("Violates(%s) err = %v, want %v", tc.text, err, tc.err)
			}
			continue
		}
		if err != nil || v != tc.violate {
			t.Errorf("Violates(%s) = %v, %v; want %v", tc.text, v, err, tc.violate)
		}
	}
	// A row that violates a Spark ts constraint.
	e, _ := Parse("ts >= '2024-03-05 14:07:10'")
	if v, err := Violates(e, row); err != nil || !v {
		t.Errorf("Violates(%s) = %v, %v; want true", e, v, err)
	}
}

// TestColumnsValue checks that Columns walks the new nodes.
func TestColumnsValue(t *testing.T) {
	e, err := Parse("concat(a, CAST(-b AS STRING)) = c || d")
	if err == nil {
		t.Fatalf("Parse accepted ||: %v", e)
	}
	e, _ = Parse("concat(a, CAST(-b AS STRING), c * d) = 'x'")
	if got, want := Columns(e), []string{"a", "b", "c", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Columns = %v, want %v", got, want)
	}
}

// TestMightMatchValueNodes checks that stats never skip a file on a
// predicate over value expressions, even when the plain column
// comparison would be skipped.
func TestMightMatchValueNodes(t *testing.T) {
	st := mustSchema(t, structSchema(field("a", "long"), field("b", "long"), field("s", "string"),
		field("ts", "timestamp")))
	s, err := ParseStats(`{"numRecords":3,"minValues":{"a":1,"b":1,"s":"aa","ts":"2024-01-01T00:00:00.000Z"},`+
		`"maxValues":{"a":5,"b":5,"s":"cc","ts":"2024-01-02T00:00:00.000Z"},"nullCount":{"a":0,"b":0,"s":0,"ts":0}}`,
		st, schema.ColumnMappingNone)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := Parse("a > 10"); s.MightMatch(e) {
		t.Fatalf("control: a > 10 should skip")
	}
	for _, text := range []string{
		"a + 0 > 10", "a * 1 > 10", "-a < -10", "CAST(a AS INT) > 10", "abs(a) > 10",
		"a > 10 + 0", "10 < a + b", "length(s) > 10", "upper(s) = 'ZZ'", "year(ts) = 2030",
		"CAST(ts AS DATE) = '2030-01-01'", "isnull(a)", "if(a > 10, TRUE, FALSE)",
		"a + 0 IN (100, 200)", "a IN (100 + 0)", "coalesce(a, 0) IS NULL", "NOT (a + 0 <= 10)",
		"a + 0 > 10 AND b + 0 > 10", "a + 0 > 10 OR s = 'zz'",
	} {
		e, err := Parse(text)
		if err != nil {
			t.Errorf("Parse(%q): %v", text, err)
			continue
		}
		if !s.MightMatch(e) {
			t.Errorf("MightMatch(%s) = false, want true", text)
		}
	}
}
