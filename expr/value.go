package expr

// Value expressions: arithmetic, unary minus, function calls and casts,
// evaluated to a value with Spark SQL semantics by EvalValue. They serve
// the write path: CHECK constraints (delta.constraints.<name>) and column
// invariants (delta.invariants) are predicates over a row, and generated
// columns (delta.generationExpression) are value expressions over a row.
//
// # Semantics
//
// EvalValue follows Spark SQL with the session time zone UTC. Spark has
// two modes that differ on bad input: ANSI off (Spark 3's default) and ANSI
// on (Spark 4's). EvalValue never yields a silently wrong value, so:
//
//   - Integer overflow (+, -, *, unary minus, abs, casts that narrow, a
//     float or decimal out of the target's range) fails with ErrOverflow,
//     as with ANSI on; ANSI off would wrap around.
//   - Division or remainder by zero gives NULL, as with ANSI off, for every
//     numeric type.
//   - A string that does not read as the target type of a cast (or of an
//     implicit cast: a string in arithmetic or a date function) gives NULL,
//     as with ANSI off and as try_cast does.
//
// Null propagates through every operator and function except coalesce,
// if, isnull and isnotnull, and the AND/OR/NOT, IS NULL and IN of a
// predicate, which keep SQL's three-valued logic.
//
// Types follow Spark: integer operands compute in the wider of their types
// (a source integer literal is INT when it fits, else BIGINT, and one with
// a fraction such as 1.5 is DECIMAL(2,1)); / on integers and floats gives
// DOUBLE, on decimals a DECIMAL; float with integer gives FLOAT, with
// double or decimal DOUBLE; a string operand of arithmetic is read as a
// DOUBLE. Decimal results take Spark's precision and scale (with
// spark.sql.decimalOperations.allowPrecisionLoss, its default): for + and
// -, scale max(s1,s2) and precision max(p1-s1,p2-s2)+scale+1; for *,
// p1+p2+1 and s1+s2; for /, scale max(6,s1+p2+1) and precision
// p1-s1+s2+scale; for %, min(p1-s1,p2-s2)+max(s1,s2) and max(s1,s2).
// Above 38 digits the scale is cut to keep the integral digits, to no less
// than min(scale,6), and the exact result is rounded half up to it; a
// result that still does not fit is ErrOverflow. Simplifications: coalesce
// and if return the value they pick without widening it to a common type
// of all their arguments, and a comparison between values of types that
// do not compare is NULL instead of an analysis error.

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// Errors of value evaluation. Each matches the deltaerr kind it wraps.
var (
	// ErrUnknownFunction is returned by Parse and EvalValue for a function
	// this package does not implement; it matches
	// deltaerr.ErrUnsupportedFeature, and the message names the function.
	ErrUnknownFunction = fmt.Errorf("expr: unknown function: %w", deltaerr.ErrUnsupportedFeature)

	// ErrOverflow is returned when an arithmetic result or a cast does not
	// fit its type; it matches deltaerr.ErrInvalidArgument.
	ErrOverflow = fmt.Errorf("expr: arithmetic overflow: %w", deltaerr.ErrInvalidArgument)

	// ErrEval is returned for an expression that cannot be evaluated: a
	// column the lookup has no value for, operand types an operator or
	// function does not take, a cast Spark does not allow, or a date
	// pattern letter this package does not implement. It matches
	// deltaerr.ErrInvalidArgument.
	ErrEval = deltaerr.Mark(errors.New("cannot evaluate"), deltaerr.ErrInvalidArgument)
)

// ArithOp is an arithmetic operator.
type ArithOp string

// Arithmetic operators.
const (
	Add ArithOp = "+"
	Sub ArithOp = "-"
	Mul ArithOp = "*"
	Div ArithOp = "/"
	Mod ArithOp = "%"
)

// Arith is Left Op Right.
type Arith struct {
	Op          ArithOp
	Left, Right Expr
}

// Neg is unary minus. The parser folds a minus before a number into the
// literal, so -5 is Literal -5 and -(5) or -x is a Neg.
type Neg struct{ Value Expr }

// Call is a function call. Name is lower case: function names are
// case-insensitive. Functions lists the names EvalValue implements.
type Call struct {
	Name string
	Args []Expr
}

// Cast is CAST(Value AS To).
type Cast struct {
	Value Expr
	To    schema.DataType
}

func (Arith) isExpr() {}
func (Neg) isExpr()   {}
func (Call) isExpr()  {}
func (Cast) isExpr()  {}

// String writes the operation in parentheses, so that it parses back to
// the same tree whatever surrounds it.
func (a Arith) String() string {
	return "(" + a.Left.String() + " " + string(a.Op) + " " + a.Right.String() + ")"
}
func (n Neg) String() string { return "-(" + n.Value.String() + ")" }
func (c Call) String() string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.String()
	}
	return c.Name + "(" + strings.Join(parts, ", ") + ")"
}
func (c Cast) String() string { return "CAST(" + c.Value.String() + " AS " + sqlTypeName(c.To) + ")" }

// sqlTypeName is the Spark SQL name of t, which parseType reads back
// (nested types, which CAST in text does not take, are written as
// TypeName writes them).
func sqlTypeName(t schema.DataType) string {
	switch d := t.(type) {
	case schema.DecimalType:
		return fmt.Sprintf("DECIMAL(%d,%d)", d.Precision, d.Scale)
	case *schema.StructType, *schema.ArrayType, *schema.MapType:
		return TypeName(t)
	}
	switch t {
	case schema.Byte:
		return "TINYINT"
	case schema.Short:
		return "SMALLINT"
	case schema.Integer:
		return "INT"
	case schema.Long:
		return "BIGINT"
	case nil:
		return "VOID"
	}
	return strings.ToUpper(t.String())
}

// EvalValue computes the value of e for the row that lookup describes,
// with the semantics in this file's doc. Predicates (comparisons, IN, IS
// NULL, AND, OR, NOT) give a boolean, or NULL for Unknown. A column that
// lookup has no value for is ErrEval, unlike in Eval, where it makes the
// result Unknown.
//
// For a CHECK constraint or an invariant, a row violates it when EvalValue
// gives false (NULL passes, as in Spark); for a generated column, the value
// is EvalValue's, cast to the column's type.
//
// EvalValue compiles e for this one evaluation (see Compile, which is the
// one evaluator); to evaluate an expression over many rows, compile it
// once.
func EvalValue(e Expr, lookup Lookup) (schema.Value, error) {
	c := compiler{lookup: lookup}
	return c.value(e)(nil, nil)
}

func triValue(t Tri) schema.Value {
	switch t {
	case True:
		return schema.BooleanValue(true)
	case False:
		return schema.BooleanValue(false)
	}
	return schema.Value{}
}

// valueTri reads a value as a truth value: NULL and non-booleans are
// Unknown.
func valueTri(v schema.Value) Tri {
	if v.Kind() != schema.KindBoolean {
		return Unknown
	}
	if v.Bool() {
		return True
	}
	return False
}

// evalBool is Eval with errors: the same three-valued logic, but a failure
// to evaluate an operand is returned instead of read as Unknown; text
// compared with a date or timestamp reads as Spark casts it (sparkTextAs).
func evalBool(e Expr, lookup Lookup) (Tri, error) {
	c := compiler{lookup: lookup}
	return c.test(e)(nil, nil)
}

// sparkTextAs is textAs, except that text compared with a date or a
// timestamp is read as CAST reads it, as Spark does: ts >= '2020-01-01'
// means midnight UTC, and text that is not a date is NULL. Eval keeps
// textAs, so that pruning never depends on this reading.
func sparkTextAs(l Literal, hint schema.DataType) schema.Value {
	switch hint {
	case schema.Date, schema.Timestamp, schema.TimestampNTZ:
		if v, err := schema.ParsePartitionValue(hint, l.Text); err == nil {
			return v
		}
		v, _ := CastValue(l.Value, hint)
		return v // null when the text is not a date or time, as in Spark
	}
	return textAs(l, hint)
}

// Violates reports whether a row violates a CHECK constraint or an
// invariant e: whether EvalValue gives false or NULL, as Delta's invariant
// checker refuses both. An evaluation error is returned as is, and a
// result that is not a boolean is ErrEval.
func Violates(e Expr, lookup Lookup) (bool, error) {
	v, err := EvalValue(e, lookup)
	switch {
	case err != nil:
		return false, err
	case v.IsNull():
		return true, nil
	case v.Kind() != schema.KindBoolean:
		return false, fmt.Errorf("%w: %s is not a boolean condition", ErrEval, e)
	}
	return !v.Bool(), nil
}

// literalValue is the value of a literal as Spark types source literals:
// an integer that fits is INT (the parser reads numbers with a fraction as
// exact decimals already, see parser.number). Literals built in code
// (without source Text) keep their value.
func literalValue(l Literal) schema.Value {
	if l.IsText || l.Text == "" {
		return l.Value
	}
	switch l.Value.Kind() {
	case schema.KindLong:
		if i := l.Value.Int64(); i >= math.MinInt32 && i <= math.MaxInt32 {
			return schema.IntegerValue(int32(i))
		}
	}
	return l.Value
}

// decimalLiteral reads [-]digits[.digits] as the narrowest decimal that
// holds it exactly, as Spark types such a literal.
func decimalLiteral(s string) (schema.Value, bool) {
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	digits := strings.TrimLeft(intPart+frac, "0")
	u, ok := new(big.Int).SetString("0"+digits, 10)
	if !ok {
		return schema.Value{}, false
	}
	if neg {
		u.Neg(u)
	}
	p := max(len(digits), len(frac), 1)
	if p > schema.MaxDecimalPrecision {
		return schema.Value{}, false
	}
	v, err := schema.DecimalValue(u, p, len(frac))
	return v, err == nil
}

// ---- Arithmetic ----

// numClass orders the numeric kinds for promotion.
type numClass int

const (
	classNone numClass = iota
	classInt
	classDecimal
	classFloat
	classDouble
)

func classOf(k schema.Kind) numClass {
	switch {
	case isInt(k):
		return classInt
	case k == schema.KindDecimal:
		return classDecimal
	case k == schema.KindFloat:
		return classFloat
	case k == schema.KindDouble:
		return classDouble
	}
	return classNone
}

// intRange gives the bounds of an integer kind.
func intRange(k schema.Kind) (lo, hi int64) {
	switch k {
	case schema.KindByte:
		return math.MinInt8, math.MaxInt8
	case schema.KindShort:
		return math.MinInt16, math.MaxInt16
	case schema.KindInteger:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// intValue makes a value of integer kind k, or ErrOverflow.
func intValue(k schema.Kind, i int64) (schema.Value, error) {
	lo, hi := intRange(k)
	if i < lo || i > hi {
		return schema.Value{}, fmt.Errorf("%w: %d does not fit %s", ErrOverflow, i, k)
	}
	switch k {
	case schema.KindByte:
		return schema.ByteValue(int8(i)), nil
	case schema.KindShort:
		return schema.ShortValue(int16(i)), nil
	case schema.KindInteger:
		return schema.IntegerValue(int32(i)), nil
	}
	return schema.LongValue(i), nil
}

func arith(op ArithOp, l, r schema.Value) (schema.Value, error) {
	// Integers, the common case, are computed in the wider of their
	// kinds straight away (division gives a double, below).
	if lk, rk := l.Kind(), r.Kind(); isInt(lk) && isInt(rk) && op != Div {
		return intArith(op, max(lk, rk), l.Int64(), r.Int64())
	}
	if l.IsNull() || r.IsNull() {
		return schema.Value{}, nil
	}
	// A string operand is read as a double; one that is not a number
	// makes the result NULL.
	var err error
	if l.Kind() == schema.KindString {
		if l, err = CastValue(l, schema.Double); err != nil || l.IsNull() {
			return schema.Value{}, err
		}
	}
	if r.Kind() == schema.KindString {
		if r, err = CastValue(r, schema.Double); err != nil || r.IsNull() {
			return schema.Value{}, err
		}
	}
	lc, rc := classOf(l.Kind()), classOf(r.Kind())
	if lc == classNone || rc == classNone {
		return schema.Value{}, fmt.Errorf("%w: %s %s %s", ErrEval, l.Kind(), op, r.Kind())
	}
	switch c := max(lc, rc); {
	case c == classDouble || (op == Div && c != classDecimal) || (c == classFloat && (lc == classDecimal || rc == classDecimal)):
		return floatArith(op, toFloat(l), toFloat(r), 64)
	case c == classFloat:
		return floatArith(op, toFloat(l), toFloat(r), 32)
	case c == classDecimal:
		return decimalArith(op, l, r)
	}
	k := l.Kind()
	if r.Kind() > k { // KindByte < KindShort < KindInteger < KindLong
		k = r.Kind()
	}
	return intArith(op, k, l.Int64(), r.Int64())
}

func floatArith(op ArithOp, a, b float64, bits int) (schema.Value, error) {
	var r float64
	switch op {
	case Add:
		r = a + b
	case Sub:
		r = a - b
	case Mul:
		r = a * b
	case Div:
		if b == 0 {
			return schema.Value{}, nil
		}
		r = a / b
	case Mod:
		if b == 0 {
			return schema.Value{}, nil
		}
		r = math.Mod(a, b)
	default:
		return schema.Value{}, fmt.Errorf("%w: operator %q", ErrEval, op)
	}
	if bits == 32 {
		return schema.FloatValue(float32(r)), nil
	}
	return schema.DoubleValue(r), nil
}

func intArith(op ArithOp, k schema.Kind, a, b int64) (schema.Value, error) {
	var r int64
	overflow := false
	switch op {
	case Add:
		r = a + b
		overflow = (a > 0 && b > 0 && r < 0) || (a < 0 && b < 0 && r >= 0)
	case Sub:
		r = a - b
		overflow = (a >= 0 && b < 0 && r < 0) || (a < 0 && b > 0 && r >= 0)
	case Mul:
		r = a * b
		overflow = a != 0 && (r/a != b || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64))
	case Mod:
		if b == 0 {
			return schema.Value{}, nil
		}
		r = a % b // the sign of the dividend, as in Java
	default:
		return schema.Value{}, fmt.Errorf("%w: operator %q", ErrEval, op)
	}
	if overflow {
		return schema.Value{}, fmt.Errorf("%w: %d %s %d does not fit %s", ErrOverflow, a, op, b, k)
	}
	return intValue(k, r)
}

// asDecimal returns an integer or decimal value as unscaled, precision and
// scale; integers take Spark's widths (3, 5, 10 and 20 digits).
func asDecimal(v schema.Value) (*big.Int, int, int) {
	switch v.Kind() {
	case schema.KindDecimal:
		return v.Decimal()
	case schema.KindByte:
		return big.NewInt(v.Int64()), 3, 0
	case schema.KindShort:
		return big.NewInt(v.Int64()), 5, 0
	case schema.KindInteger:
		return big.NewInt(v.Int64()), 10, 0
	}
	return big.NewInt(v.Int64()), 20, 0
}

func decimalArith(op ArithOp, l, r schema.Value) (schema.Value, error) {
	lu, p1, s1 := asDecimal(l)
	ru, p2, s2 := asDecimal(r)
	a, b := ratOf(lu, s1), ratOf(ru, s2)
	var p, s int
	res := new(big.Rat)
	switch op {
	case Add, Sub:
		s = max(s1, s2)
		p = max(p1-s1, p2-s2) + s + 1
		if op == Add {
			res.Add(a, b)
		} else {
			res.Sub(a, b)
		}
	case Mul:
		p, s = p1+p2+1, s1+s2
		res.Mul(a, b)
	case Div:
		if b.Sign() == 0 {
			return schema.Value{}, nil
		}
		s = max(6, s1+p2+1)
		p = p1 - s1 + s2 + s
		res.Quo(a, b)
	case Mod:
		if b.Sign() == 0 {
			return schema.Value{}, nil
		}
		s = max(s1, s2)
		p = min(p1-s1, p2-s2) + s
		// a - b*trunc(a/b): the sign of the dividend.
		q := new(big.Rat).Quo(a, b)
		t := new(big.Int).Quo(q.Num(), q.Denom())
		res.Sub(a, new(big.Rat).Mul(b, new(big.Rat).SetInt(t)))
	default:
		return schema.Value{}, fmt.Errorf("%w: operator %q", ErrEval, op)
	}
	if p > schema.MaxDecimalPrecision {
		intDigits := p - s
		s = max(schema.MaxDecimalPrecision-intDigits, min(s, 6))
		p = schema.MaxDecimalPrecision
	}
	return ratDecimal(res, p, s)
}

// ratOf is unscaled × 10^-scale.
func ratOf(unscaled *big.Int, scale int) *big.Rat {
	return new(big.Rat).SetFrac(unscaled, pow10Big(scale))
}

func pow10Big(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// roundHalfUp rounds r to scale digits, halves away from zero, and returns
// the unscaled result.
func roundHalfUp(r *big.Rat, scale int) *big.Int {
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt(pow10Big(scale)))
	num, den := new(big.Int).Abs(x.Num()), x.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Lsh(m, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if x.Sign() < 0 {
		q.Neg(q)
	}
	return q
}

// ratDecimal rounds r half up to decimal(p,s), or fails with ErrOverflow.
func ratDecimal(r *big.Rat, p, s int) (schema.Value, error) {
	v, err := schema.DecimalValue(roundHalfUp(r, s), p, s)
	if err != nil {
		return schema.Value{}, fmt.Errorf("%w: %s does not fit DECIMAL(%d,%d)", ErrOverflow, r.FloatString(s+1), p, s)
	}
	return v, nil
}

func negate(v schema.Value) (schema.Value, error) {
	switch k := v.Kind(); {
	case v.IsNull():
		return v, nil
	case isInt(k):
		if lo, _ := intRange(k); v.Int64() == lo {
			return schema.Value{}, fmt.Errorf("%w: -(%d) does not fit %s", ErrOverflow, v.Int64(), k)
		}
		return intValue(k, -v.Int64())
	case k == schema.KindFloat:
		return schema.FloatValue(-float32(v.Float64())), nil
	case k == schema.KindDouble:
		return schema.DoubleValue(-v.Float64()), nil
	case k == schema.KindDecimal:
		u, p, s := v.Decimal()
		return schema.DecimalValue(u.Neg(u), p, s)
	case k == schema.KindString:
		d, err := CastValue(v, schema.Double)
		if err != nil || d.IsNull() {
			return schema.Value{}, err
		}
		return schema.DoubleValue(-d.Float64()), nil
	}
	return schema.Value{}, fmt.Errorf("%w: -(%s)", ErrEval, v.Kind())
}

// ---- Casts ----

const (
	microsPerSecond = 1_000_000
	microsPerDay    = 86_400 * microsPerSecond
)

// CastValue converts v to type to as CAST(v AS to) evaluates it: as
// Spark's CAST does, with the choices in this file's doc. A string that
// does not read as the type is NULL, a number out of the target's range is
// ErrOverflow, a conversion Spark does not allow is ErrEval.
//
// Nested values cast as Spark casts them: a struct field by field BY
// POSITION into a struct of as many fields (the names do not count), an
// array element by element, a map key by key and value by value (a key
// that casts to null or to a key already in the map is ErrEval); null
// fields, elements and values stay null. Storing a value into a column
// matches struct fields by name instead: see NewAssigner.
func CastValue(v schema.Value, to schema.DataType) (schema.Value, error) {
	if v.IsNull() {
		return v, nil
	}
	switch to.(type) {
	case *schema.StructType, *schema.ArrayType, *schema.MapType:
		return castNested(v, to)
	}
	k := v.Kind()
	if d, ok := to.(schema.DecimalType); ok {
		return castDecimal(v, d)
	}
	p, _ := to.(schema.PrimitiveType)
	switch p {
	case schema.String:
		return schema.StringValue(sparkString(v)), nil
	case schema.Binary:
		if k == schema.KindString || k == schema.KindBinary {
			return schema.BinaryValue(v.Bytes()), nil
		}
	case schema.Boolean:
		switch {
		case k == schema.KindBoolean:
			return v, nil
		case isInt(k):
			return schema.BooleanValue(v.Int64() != 0), nil
		case k == schema.KindFloat || k == schema.KindDouble:
			return schema.BooleanValue(v.Float64() != 0), nil
		case k == schema.KindDecimal:
			u, _, _ := v.Decimal()
			return schema.BooleanValue(u.Sign() != 0), nil
		case k == schema.KindString:
			switch strings.ToLower(strings.TrimSpace(string(v.Bytes()))) {
			case "t", "true", "y", "yes", "1":
				return schema.BooleanValue(true), nil
			case "f", "false", "n", "no", "0":
				return schema.BooleanValue(false), nil
			}
			return schema.Value{}, nil
		}
	case schema.Byte, schema.Short, schema.Integer, schema.Long:
		return castInt(v, p)
	case schema.Float, schema.Double:
		var f float64
		switch {
		case isNumeric(k):
			f = toFloat(v)
		case k == schema.KindBoolean:
			f = float64(boolInt(v.Bool()))
		case k == schema.KindTimestamp:
			f = float64(v.Int64()) / microsPerSecond
		case k == schema.KindString:
			x, ok := parseFloatText(string(v.Bytes()))
			if !ok {
				return schema.Value{}, nil
			}
			f = x
		case k == schema.KindDate:
			return schema.Value{}, nil
		default:
			return schema.Value{}, castErr(v, to)
		}
		if p == schema.Float {
			return schema.FloatValue(float32(f)), nil
		}
		return schema.DoubleValue(f), nil
	case schema.Date:
		switch k {
		case schema.KindDate:
			return v, nil
		case schema.KindTimestamp, schema.KindTimestampNTZ:
			return schema.DateValue(int32(floorDiv(v.Int64(), microsPerDay))), nil
		case schema.KindString:
			if d, ok := parseDateText(string(v.Bytes())); ok {
				return schema.DateValue(d), nil
			}
			return schema.Value{}, nil
		}
	case schema.Timestamp, schema.TimestampNTZ:
		mk := func(m int64) schema.Value {
			if p == schema.Timestamp {
				return schema.TimestampValue(m)
			}
			return schema.TimestampNTZValue(m)
		}
		switch {
		case k == schema.KindTimestamp || k == schema.KindTimestampNTZ:
			return mk(v.Int64()), nil // the session time zone is UTC
		case k == schema.KindDate:
			return mk(v.Int64() * microsPerDay), nil
		case k == schema.KindString:
			if m, ok := parseTimestampText(string(v.Bytes()), p == schema.Timestamp); ok {
				return mk(m), nil
			}
			return schema.Value{}, nil
		case p == schema.Timestamp && isInt(k):
			s := v.Int64()
			if s > math.MaxInt64/microsPerSecond || s < math.MinInt64/microsPerSecond {
				return schema.Value{}, fmt.Errorf("%w: %d seconds as a timestamp", ErrOverflow, s)
			}
			return mk(s * microsPerSecond), nil
		case p == schema.Timestamp && (k == schema.KindFloat || k == schema.KindDouble || k == schema.KindDecimal):
			f := toFloat(v) * microsPerSecond
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return schema.Value{}, nil
			}
			if f >= math.MaxInt64 || f < math.MinInt64 {
				return schema.Value{}, fmt.Errorf("%w: %v seconds as a timestamp", ErrOverflow, toFloat(v))
			}
			return mk(int64(f)), nil
		}
	}
	return schema.Value{}, castErr(v, to)
}

// castNested is CastValue into a struct, array or map type.
func castNested(v schema.Value, to schema.DataType) (schema.Value, error) {
	switch to := to.(type) {
	case *schema.StructType:
		in := v.Fields()
		if v.Kind() != schema.KindStruct || len(in) != len(to.Fields) {
			break
		}
		out := make([]schema.Value, len(in))
		for i, f := range in {
			var err error
			if out[i], err = CastValue(f, to.Fields[i].Type); err != nil {
				return schema.Value{}, err
			}
		}
		return schema.StructValue(out), nil
	case *schema.ArrayType:
		if v.Kind() != schema.KindArray {
			break
		}
		in := v.Elements()
		out := make([]schema.Value, len(in))
		for i, e := range in {
			var err error
			if out[i], err = CastValue(e, to.ElementType); err != nil {
				return schema.Value{}, err
			}
		}
		return schema.ArrayValue(out), nil
	case *schema.MapType:
		if v.Kind() != schema.KindMap {
			break
		}
		key := func(k schema.Value) (schema.Value, error) { return CastValue(k, to.KeyType) }
		val := func(x schema.Value) (schema.Value, error) { return CastValue(x, to.ValueType) }
		return convertMap(v, key, val, "CAST", ErrEval)
	}
	if v.Kind() == schema.KindStruct {
		return schema.Value{}, fmt.Errorf("%w: cannot cast a struct of %d fields to %s", ErrEval, len(v.Fields()), sqlTypeName(to))
	}
	return schema.Value{}, castErr(v, to)
}

func castErr(v schema.Value, to schema.DataType) error {
	return fmt.Errorf("%w: cannot cast %s to %s", ErrEval, v.Kind(), sqlTypeName(to))
}

// castInt converts v to the integer type p.
func castInt(v schema.Value, p schema.PrimitiveType) (schema.Value, error) {
	target := map[schema.PrimitiveType]schema.Kind{
		schema.Byte: schema.KindByte, schema.Short: schema.KindShort,
		schema.Integer: schema.KindInteger, schema.Long: schema.KindLong,
	}[p]
	k := v.Kind()
	switch {
	case isInt(k):
		return intValue(target, v.Int64())
	case k == schema.KindBoolean:
		return intValue(target, int64(boolInt(v.Bool())))
	case k == schema.KindFloat || k == schema.KindDouble:
		f := math.Trunc(v.Float64())
		if math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64 {
			return schema.Value{}, fmt.Errorf("%w: %v does not fit %s", ErrOverflow, v.Float64(), target)
		}
		return intValue(target, int64(f))
	case k == schema.KindDecimal:
		u, _, s := v.Decimal()
		t := new(big.Int).Quo(u, pow10Big(s))
		if !t.IsInt64() {
			return schema.Value{}, fmt.Errorf("%w: %s does not fit %s", ErrOverflow, v, target)
		}
		return intValue(target, t.Int64())
	case k == schema.KindTimestamp:
		return intValue(target, floorDiv(v.Int64(), microsPerSecond))
	case k == schema.KindDate:
		return schema.Value{}, nil
	case k == schema.KindString:
		s := strings.TrimSpace(string(v.Bytes()))
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			if out, err := intValue(target, i); err == nil {
				return out, nil
			}
			return schema.Value{}, nil
		}
		// "1.9" reads as 1, as in Spark with ANSI off.
		if f, ok := parseFloatText(s); ok && !strings.ContainsAny(s, "nNiI") {
			if out, err := castInt(schema.DoubleValue(f), p); err == nil {
				return out, nil
			}
		}
		return schema.Value{}, nil
	}
	return schema.Value{}, castErr(v, p)
}

func castDecimal(v schema.Value, d schema.DecimalType) (schema.Value, error) {
	var r *big.Rat
	switch k := v.Kind(); {
	case isInt(k) || k == schema.KindDecimal:
		u, _, s := asDecimal(v)
		r = ratOf(u, s)
	case k == schema.KindBoolean:
		r = new(big.Rat).SetInt64(int64(boolInt(v.Bool())))
	case k == schema.KindFloat || k == schema.KindDouble:
		f := v.Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return schema.Value{}, fmt.Errorf("%w: %v does not fit %s", ErrOverflow, f, sqlTypeName(d))
		}
		bits := 64
		if k == schema.KindFloat {
			bits = 32
		}
		// The shortest decimal that reads back as f, as Spark's
		// BigDecimal(double) does.
		r, _ = new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, bits))
	case k == schema.KindString:
		s := strings.TrimSpace(string(v.Bytes()))
		var ok bool
		r, ok = new(big.Rat).SetString(s)
		if !ok || strings.ContainsAny(s, "/") {
			return schema.Value{}, nil
		}
		out, err := ratDecimal(r, d.Precision, d.Scale)
		if err != nil {
			return schema.Value{}, nil // a string out of range reads as NULL
		}
		return out, nil
	default:
		return schema.Value{}, castErr(v, d)
	}
	return ratDecimal(r, d.Precision, d.Scale)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// parseFloatText reads a trimmed decimal or exponent number, NaN, Infinity
// or -Infinity.
func parseFloatText(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	switch s {
	case "NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity", "inf", "+inf":
		return math.Inf(1), true
	case "-Infinity", "-inf":
		return math.Inf(-1), true
	}
	if s == "" || strings.ContainsAny(s, "xXpP_nNiI") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

// parseDateText reads a string as Spark casts it to a date: yyyy,
// yyyy-[m]m, or yyyy-[m]m-[d]d, optionally followed by a space or T and
// anything; surrounding spaces are ignored.
func parseDateText(s string) (int32, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " T"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, "-")
	if len(parts) > 3 || len(parts[0]) != 4 {
		return 0, false
	}
	f := [3]int{0, 1, 1}
	for i, part := range parts {
		if part == "" || (i > 0 && len(part) > 2) {
			return 0, false
		}
		n, err := strconv.Atoi(part)
		if err != nil || part[0] == '+' || part[0] == '-' {
			return 0, false
		}
		f[i] = n
	}
	days, ok := civilDays(f[0], f[1], f[2])
	return int32(days), ok
}

// parseTimestampText reads a string as Spark casts it to a timestamp: a
// date as parseDateText reads it (midnight), or yyyy-mm-dd[ T]hh:mm:ss
// with up to six fraction digits and, for a timestamp with zone, an
// optional Z or ±hh:mm (UTC when absent).
func parseTimestampText(s string, zone bool) (int64, bool) {
	s = strings.TrimSpace(s)
	t := schema.Timestamp
	if !zone {
		t = schema.TimestampNTZ
	}
	if v, err := schema.ParsePartitionValue(t, s); err == nil && !v.IsNull() {
		return v.Int64(), true
	}
	if strings.ContainsAny(s, ":") {
		return 0, false
	}
	d, ok := parseDateText(s)
	return int64(d) * microsPerDay, ok
}

// civilDays returns the days since 1970-01-01 of a valid date.
func civilDays(y, m, d int) (int64, bool) {
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, false
	}
	t := dateTime(y, m, d)
	if t.Year() != y || int(t.Month()) != m || t.Day() != d {
		return 0, false
	}
	return floorDiv(t.Unix(), 86_400), true
}

// sparkString is the text CAST(v AS STRING) gives in Spark: dates as
// 2024-01-31, timestamps as 2024-01-31 08:09:10 with the fraction cut
// after its last non-zero digit (UTC), doubles as Java prints them.
func sparkString(v schema.Value) string {
	switch v.Kind() {
	case schema.KindFloat:
		return javaFloat(v.Float64(), 32)
	case schema.KindDouble:
		return javaFloat(v.Float64(), 64)
	case schema.KindBinary:
		return string(v.Bytes())
	case schema.KindTimestamp, schema.KindTimestampNTZ:
		m := v.Int64()
		t := microsTime(m)
		out := t.Format("2006-01-02 15:04:05")
		if frac := ((m % microsPerSecond) + microsPerSecond) % microsPerSecond; frac != 0 {
			out += "." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
		}
		return out
	}
	return v.String()
}

// javaFloat formats f as Java's Double.toString (Float.toString for 32
// bits): plain between 1e-3 and 1e7, else computerized scientific
// notation such as 1.0E10.
func javaFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, bits)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
