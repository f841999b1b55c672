package expr

import (
	"fmt"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// ErrNotPredicate marks a predicate that cannot be evaluated as one: an
// operand that is not a boolean where a condition is wanted ("WHERE id"),
// or a text literal that cannot be read as the type of the column it is
// compared with ("d = '2026-13-45'" on a DATE). Such a predicate would be
// Unknown on every row and so match nothing; it matches
// deltaerr.ErrInvalidArgument.
var ErrNotPredicate = fmt.Errorf("expr: not a usable predicate: %w", deltaerr.ErrInvalidArgument)

// CheckPredicate reports, as ErrNotPredicate, a predicate that can never
// be TRUE because of its form, before any row is read: a condition that is
// not boolean-valued (a non-boolean column or literal, arithmetic), or a
// text literal compared with a date, timestamp, number or boolean column
// that does not read as that type. typeOf gives the type of a column the
// predicate names; columns it does not know are left to the caller.
func CheckPredicate(e Expr, typeOf func(column string) (schema.DataType, bool)) error {
	switch e := e.(type) {
	case And:
		for _, t := range e.Terms {
			if err := CheckPredicate(t, typeOf); err != nil {
				return err
			}
		}
	case Or:
		for _, t := range e.Terms {
			if err := CheckPredicate(t, typeOf); err != nil {
				return err
			}
		}
	case Not:
		return CheckPredicate(e.Value, typeOf)
	case Compare:
		return checkOperands(e.Left, e.Right, typeOf)
	case In:
		for _, x := range e.List {
			if err := checkOperands(e.Value, x, typeOf); err != nil {
				return err
			}
		}
	case Literal:
		if !e.Value.IsNull() && (e.IsText || e.Value.Kind() != schema.KindBoolean) {
			return fmt.Errorf("%w: the literal %s is not a condition", ErrNotPredicate, e)
		}
	case Column:
		if t, ok := typeOf(e.Name); ok && t != schema.Boolean {
			return fmt.Errorf("%w: column %s is of type %s, not a condition (compare it: %s = ...)", ErrNotPredicate, e, t, e)
		}
	case Arith, Neg:
		return fmt.Errorf("%w: %s is a number, not a condition", ErrNotPredicate, e)
	case Cast:
		if e.To != schema.Boolean {
			return fmt.Errorf("%w: %s is not a condition", ErrNotPredicate, e)
		}
	}
	return nil
}

// checkOperands checks a comparison of a and b: a text literal compared
// with a column of a non-string type must read as that type.
func checkOperands(a, b Expr, typeOf func(string) (schema.DataType, bool)) error {
	for _, pair := range [][2]Expr{{a, b}, {b, a}} {
		l, ok := pair[0].(Literal)
		c, isCol := pair[1].(Column)
		if !ok || !l.IsText || !isCol {
			continue
		}
		t, ok := typeOf(c.Name)
		if !ok {
			continue
		}
		switch t := t.(type) {
		case schema.PrimitiveType:
			if t == schema.String || t == schema.Binary {
				continue
			}
		case schema.DecimalType:
		default:
			continue // structs, arrays, maps: compared as they are
		}
		if v := textAs(l, t); v.Kind() == schema.KindString {
			if coerce(v, schema.DoubleValue(0)).Kind() == schema.KindString || !isNumericType(t) {
				return fmt.Errorf("%w: %s cannot be read as %s, the type of column %s", ErrNotPredicate, l, t, c)
			}
		}
	}
	return nil
}

func isNumericType(t schema.DataType) bool {
	if _, ok := t.(schema.DecimalType); ok {
		return true
	}
	switch t {
	case schema.Byte, schema.Short, schema.Integer, schema.Long, schema.Float, schema.Double:
		return true
	}
	return false
}
