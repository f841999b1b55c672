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

// Eval evaluates predicate e with column values from lookup.
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
	}
	return Unknown
}

// operand resolves e to a value. A text literal compared with a column of
// type hint is read as that type (dates, timestamps, numbers).
func operand(e Expr, hint schema.DataType, lookup Lookup) (schema.DataType, schema.Value, bool) {
	switch e := e.(type) {
	case Column:
		return lookup(e.Name)
	case Literal:
		if e.IsText && hint != nil {
			if v, err := schema.ParsePartitionValue(hint, e.Text); err == nil {
				return hint, v, true
			}
		}
		return e.Value.Type(), e.Value, true
	}
	return nil, schema.Value{}, false
}

func compare(op Op, l, r Expr, lookup Lookup) Tri {
	lt, _, lok := operand(l, nil, lookup)
	rt, _, rok := operand(r, nil, lookup)
	if !lok || !rok {
		return Unknown
	}
	// Resolve each side again with the other's type, for text literals.
	_, lv, _ := operand(l, rt, lookup)
	_, rv, _ := operand(r, lt, lookup)
	if lv.IsNull() || rv.IsNull() {
		return Unknown
	}
	lv, rv = coerce(lv, rv), coerce(rv, lv)
	c, ok := Order(lv, rv)
	if !ok {
		return Unknown
	}
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
