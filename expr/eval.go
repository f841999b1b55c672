package expr

import (
	"bytes"
	"cmp"
	"math"
	"math/big"
	"strconv"

	"github.com/godelta/delta/schema"
)

// Tri is a three-valued truth value.
type Tri int8

// Truth values.
const (
	Unknown Tri = iota
	False
	True
)

func (t Tri) not() Tri {
	switch t {
	case True:
		return False
	case False:
		return True
	}
	return Unknown
}

// Lookup returns the type and value of a column, and false when the
// evaluator has no value for it (the predicate's result is then Unknown
// wherever it depends on the column).
type Lookup func(column string) (schema.DataType, schema.Value, bool)

// Eval evaluates predicate e with column values from lookup. Value
// expressions inside it (Arith, Call, Cast, Neg) are computed by EvalValue;
// where that fails (a missing column, overflow) the result is Unknown, so
// that pruning keeps the file. To check a row against a constraint, use
// Violates, which reports those errors and reads text compared with dates
// and timestamps as Spark does.
func Eval(e Expr, lookup Lookup) Tri {
	switch e := e.(type) {
	case And:
		out := True
		for _, t := range e.Terms {
			switch Eval(t, lookup) {
			case False:
				return False
			case Unknown:
				out = Unknown
			}
		}
		return out
	case Or:
		out := False
		for _, t := range e.Terms {
			switch Eval(t, lookup) {
			case True:
				return True
			case Unknown:
				out = Unknown
			}
		}
		return out
	case Not:
		return Eval(e.Value, lookup).not()
	case IsNull:
		_, v, ok := operand(e.Value, nil, lookup)
		if !ok {
			return Unknown
		}
		if v.IsNull() != e.Negate {
			return True
		}
		return False
	case Compare:
		return compare(e.Op, e.Left, e.Right, lookup)
	case In:
		out := False
		for _, x := range e.List {
			switch compare(Eq, e.Value, x, lookup) {
			case True:
				if e.Negate {
					return False
				}
				return True
			case Unknown:
				out = Unknown
			}
		}
		if e.Negate {
			return out.not()
		}
		return out
	case Literal:
		if e.Value.Kind() == schema.KindBoolean {
			if e.Value.Bool() {
				return True
			}
			return False
		}
	case Column:
		if _, v, ok := lookup(e.Name); ok && v.Kind() == schema.KindBoolean {
			if v.Bool() {
				return True
			}
			return False
		}
	case Arith, Neg, Call, Cast:
		// A value expression used as a predicate (isnull(x), if(...)):
		// True or False by its boolean value; an evaluation error, like a
		// missing column, is Unknown.
		v, err := EvalValue(e, lookup)
		if err == nil {
			return valueTri(v)
		}
	}
	return Unknown
}

// operand resolves e to a value. A text literal compared with a column of
// type hint is read as that type (dates, timestamps, numbers). A value
// expression (Arith, Call, ...) is computed by EvalValue; when that fails
// the operand is unresolved, like a column lookup has no value for.
func operand(e Expr, hint schema.DataType, lookup Lookup) (schema.DataType, schema.Value, bool) {
	switch e := e.(type) {
	case Column:
		return lookup(e.Name)
	case Literal:
		if e.IsText && hint != nil {
			v := textAs(e, hint)
			return v.Type(), v, true
		}
		return e.Value.Type(), e.Value, true
	}
	v, err := EvalValue(e, lookup)
	if err != nil {
		return nil, schema.Value{}, false
	}
	return v.Type(), v, true
}

// textAs reads a text literal compared with a value of type hint: as a
// partition value of that type when it is one; for dates and timestamps
// also as Spark casts text ('2026-01-01' against a timestamp is midnight
// UTC, '2024-01-01T10:00:00Z' against a date is that day); else as the
// string it is, which compares with nothing but strings (Unknown, so
// pruning keeps the file).
func textAs(l Literal, hint schema.DataType) schema.Value {
	if hint == nil {
		return l.Value
	}
	if v, err := schema.ParsePartitionValue(hint, l.Text); err == nil {
		return v
	}
	switch hint {
	case schema.Date, schema.Timestamp, schema.TimestampNTZ:
		if v, err := CastValue(l.Value, hint); err == nil && !v.IsNull() {
			return v
		}
	}
	return l.Value
}

func isTextLiteral(e Expr) bool {
	l, ok := e.(Literal)
	return ok && l.IsText
}

func compare(op Op, l, r Expr, lookup Lookup) Tri {
	lt, lv, lok := operand(l, nil, lookup)
	rt, rv, rok := operand(r, nil, lookup)
	if !lok || !rok {
		return Unknown
	}
	// Resolve a text literal again with the other side's type.
	if isTextLiteral(l) {
		_, lv, _ = operand(l, rt, lookup)
	}
	if isTextLiteral(r) {
		_, rv, _ = operand(r, lt, lookup)
	}
	return compareTri(op, lv, rv)
}

// compareTri compares two resolved operands: Unknown when either is null
// or their kinds do not compare.
func compareTri(op Op, lv, rv schema.Value) Tri {
	// Two integers, the common case, compare as Order compares them,
	// with nothing to coerce.
	if isInt(lv.Kind()) && isInt(rv.Kind()) {
		return opResult(op, cmp.Compare(lv.Int64(), rv.Int64()))
	}
	if lv.IsNull() || rv.IsNull() {
		return Unknown
	}
	lv, rv = coerce(lv, rv), coerce(rv, lv)
	c, ok := Order(lv, rv)
	if !ok {
		return Unknown
	}
	return opResult(op, c)
}

// opResult is the truth of op for an order c of its operands (negative,
// zero or positive).
func opResult(op Op, c int) Tri {
	var res bool
	switch op {
	case Eq:
		res = c == 0
	case Ne:
		res = c != 0
	case Lt:
		res = c < 0
	case Le:
		res = c <= 0
	case Gt:
		res = c > 0
	case Ge:
		res = c >= 0
	default:
		return Unknown
	}
	if res {
		return True
	}
	return False
}

// Order compares two non-null values: numbers of any kind numerically
// (decimals exactly; NaN above every number and equal to itself, as in
// Spark), strings and binaries by bytes, booleans false first,
// dates and timestamps in time. It returns false for values of kinds that
// do not compare.
func Order(a, b schema.Value) (int, bool) {
	ak, bk := a.Kind(), b.Kind()
	switch {
	case isNumeric(ak) && isNumeric(bk):
		if isInt(ak) && isInt(bk) {
			return cmp.Compare(a.Int64(), b.Int64()), true
		}
		if (ak == schema.KindFloat || ak == schema.KindDouble) || (bk == schema.KindFloat || bk == schema.KindDouble) {
			return floatOrder(toFloat(a), toFloat(b)), true
		}
		return toRat(a).Cmp(toRat(b)), true
	case (ak == schema.KindString || ak == schema.KindBinary) && (bk == schema.KindString || bk == schema.KindBinary):
		return bytes.Compare(a.Bytes(), b.Bytes()), true
	case ak == schema.KindBoolean && bk == schema.KindBoolean:
		return cmp.Compare(boolInt(a.Bool()), boolInt(b.Bool())), true
	case ak == bk && (ak == schema.KindDate || ak == schema.KindTimestamp || ak == schema.KindTimestampNTZ):
		return cmp.Compare(a.Int64(), b.Int64()), true
	}
	return 0, false
}

// floatOrder is cmp.Compare with Spark's NaN: greater than any number.
func floatOrder(a, b float64) int {
	switch an, bn := math.IsNaN(a), math.IsNaN(b); {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

func isInt(k schema.Kind) bool {
	return k == schema.KindByte || k == schema.KindShort || k == schema.KindInteger || k == schema.KindLong
}

func isNumeric(k schema.Kind) bool {
	return isInt(k) || k == schema.KindFloat || k == schema.KindDouble || k == schema.KindDecimal
}

func toFloat(v schema.Value) float64 {
	switch {
	case isInt(v.Kind()):
		return float64(v.Int64())
	case v.Kind() == schema.KindDecimal:
		f, _ := toRat(v).Float64()
		return f
	}
	return v.Float64()
}

func toRat(v schema.Value) *big.Rat {
	if v.Kind() == schema.KindDecimal {
		u, _, scale := v.Decimal()
		r := new(big.Rat).SetInt(u)
		return r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	}
	return new(big.Rat).SetInt64(v.Int64())
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// coerce reads a string compared with a number as a number, as SQL engines
// cast a string column compared with a numeric literal; a string that is
// not a number stays a string (and the comparison is Unknown).
func coerce(v, other schema.Value) schema.Value {
	if v.Kind() != schema.KindString || !isNumeric(other.Kind()) {
		return v
	}
	s := string(v.Bytes())
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return schema.LongValue(i)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return schema.DoubleValue(f)
	}
	return v
}
