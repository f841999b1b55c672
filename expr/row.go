package expr

import (
	"strings"

	"github.com/godelta/delta/schema"
)

// RowLookup returns a Lookup over one row of sch: row holds a value per
// top-level field, in schema order. A name is a top-level column or a
// dotted path into nested structs ("a.b.c"); each part is matched exactly
// first, then ignoring case, as Spark resolves names. A field of a null
// struct is null. A name sch does not have is not found (false).
//
// The Lookup reads row when it is called, not when it is made: a caller
// may fill the same slice with row after row and reuse one Lookup.
func RowLookup(sch *schema.StructType, row []schema.Value) Lookup {
	return func(name string) (schema.DataType, schema.Value, bool) {
		if i := fieldIndex(sch, name); i >= 0 {
			var v schema.Value
			if i < len(row) {
				v = row[i]
			}
			return sch.Fields[i].Type, v, true
		}
		st, vals := sch, row
		parts := strings.Split(name, ".")
		for k, p := range parts {
			i := fieldIndex(st, p)
			if i < 0 {
				return nil, schema.Value{}, false
			}
			f := &st.Fields[i]
			var v schema.Value
			if i < len(vals) {
				v = vals[i]
			}
			if k == len(parts)-1 {
				return f.Type, v, true
			}
			sub, ok := f.Type.(*schema.StructType)
			if !ok {
				return nil, schema.Value{}, false
			}
			st, vals = sub, nil
			if !v.IsNull() {
				vals = v.Fields()
			}
		}
		return nil, schema.Value{}, false
	}
}

// fieldIndex finds a field of st by name, exactly first, then ignoring
// case; -1 when there is none.
func fieldIndex(st *schema.StructType, name string) int {
	for i := range st.Fields {
		if st.Fields[i].Name == name {
			return i
		}
	}
	for i := range st.Fields {
		if strings.EqualFold(st.Fields[i].Name, name) {
			return i
		}
	}
	return -1
}

// MapColumns returns e with every column reference replaced by what fn
// returns for it (a renamed Column, or any operand), the rest of the tree
// kept as it is. The first error of fn ends the walk and is returned.
// It is how a caller moves a predicate between name spaces: the target
// side of a MERGE condition (t.id) becomes a predicate over the table's
// own columns (id) for file skipping.
func MapColumns(e Expr, fn func(Column) (Expr, error)) (Expr, error) {
	var err error
	var walk func(Expr) Expr
	list := func(xs []Expr) []Expr {
		out := make([]Expr, len(xs))
		for i, x := range xs {
			out[i] = walk(x)
		}
		return out
	}
	walk = func(e Expr) Expr {
		if err != nil {
			return e
		}
		switch e := e.(type) {
		case Column:
			var r Expr
			r, err = fn(e)
			return r
		case Compare:
			return Compare{Op: e.Op, Left: walk(e.Left), Right: walk(e.Right)}
		case In:
			return In{Value: walk(e.Value), List: list(e.List), Negate: e.Negate}
		case IsNull:
			return IsNull{Value: walk(e.Value), Negate: e.Negate}
		case Not:
			return Not{Value: walk(e.Value)}
		case And:
			return And{Terms: list(e.Terms)}
		case Or:
			return Or{Terms: list(e.Terms)}
		case Arith:
			return Arith{Op: e.Op, Left: walk(e.Left), Right: walk(e.Right)}
		case Neg:
			return Neg{Value: walk(e.Value)}
		case Cast:
			return Cast{Value: walk(e.Value), To: e.To}
		case Call:
			return Call{Name: e.Name, Args: list(e.Args)}
		}
		return e
	}
	out := walk(e)
	if err != nil {
		return nil, err
	}
	return out, nil
}
