package expr

// Compiled evaluation: the one evaluator of value expressions. Compile
// does, once, the work an evaluation over many rows would otherwise repeat
// per row: columns become positions in the row, literals values, function
// names functions, and the tree a tree of closures. EvalValue and evalBool
// compile too, with columns asked of a Lookup by name, for one-off
// evaluations (pruning, casts).
//
// # Invariant
//
// A Program over rows computes exactly what EvalValue computes with a
// Lookup over the same rows: the two differ only in how a column's value
// is found (a position resolved once by FieldPath, or a name asked per
// evaluation), and compile_test.go checks them against each other on
// random and fuzzed expressions.

import (
	"fmt"
	"strings"

	"github.com/godelta/delta/schema"
)

// Ref locates a column's value in the rows a Program evaluates. Input
// picks the row: 0 for the first, 1 for the second (MERGE evaluates a
// target row with a source row). Path is the field index at each level:
// the first in the row, the others in nested structs.
type Ref struct {
	Input int
	Path  []int
}

// Resolver locates a column for Compile, or reports false when the rows
// have no such column; evaluating the column then fails with ErrEval, as
// EvalValue fails when its Lookup has no value.
type Resolver func(column string) (Ref, bool)

// FieldPath resolves a column name against sch: each part of a dotted
// name matched as schema.StructType.Index matches it (exactly, then
// ignoring case), the parts after the first reaching into struct fields.
// It returns the index path and the column's type.
func FieldPath(sch *schema.StructType, name string) ([]int, schema.DataType, bool) {
	var path []int
	st := sch
	for rest, more := name, true; more; {
		var p string
		p, rest, more = strings.Cut(rest, ".")
		idx := st.Index(p)
		if idx < 0 {
			return nil, nil, false
		}
		path = append(path, idx)
		f := &st.Fields[idx]
		if !more {
			return path, f.Type, true
		}
		sub, ok := f.Type.(*schema.StructType)
		if !ok {
			return nil, nil, false
		}
		st = sub
	}
	return nil, nil, false
}

// RowResolver resolves columns against one row of schema sch (Input 0),
// by FieldPath.
func RowResolver(sch *schema.StructType) Resolver {
	return func(column string) (Ref, bool) {
		path, _, ok := FieldPath(sch, column)
		return Ref{Path: path}, ok
	}
}

// valueAt returns the value at path in row: a field of a null struct, or
// of a row or struct shorter than the path, is null.
func valueAt(row []schema.Value, path []int) schema.Value {
	vals := row
	var v schema.Value
	for _, i := range path {
		if i >= len(vals) {
			return schema.Value{}
		}
		v = vals[i]
		if v.IsNull() {
			return v
		}
		vals = v.Fields()
	}
	return v
}

// Program is an expression compiled against a row layout by Compile. It
// holds no state between calls and is safe for concurrent use.
type Program struct {
	src  Expr
	eval valueFn
	test testFn
}

// valueFn and testFn are compiled nodes: the value of an expression
// (EvalValue) and the truth of a predicate (evalBool) over two input rows.
type (
	valueFn func(a, b []schema.Value) (schema.Value, error)
	testFn  func(a, b []schema.Value) (Tri, error)
)

// Compile compiles e, resolving its columns with resolve. It does not fail:
// what EvalValue would fail on (a column resolve does not know, an unknown
// function) fails each evaluation with the error EvalValue returns.
func Compile(e Expr, resolve Resolver) *Program {
	c := compiler{resolve: resolve}
	return &Program{src: e, eval: c.value(e), test: c.test(e)}
}

// Expr returns the expression p was compiled from.
func (p *Program) Expr() Expr { return p.src }

// Value is EvalValue of the expression over row (input 0).
func (p *Program) Value(row []schema.Value) (schema.Value, error) {
	return p.eval(row, nil)
}

// Value2 is EvalValue over two rows, inputs 0 and 1.
func (p *Program) Value2(a, b []schema.Value) (schema.Value, error) {
	return p.eval(a, b)
}

// Test is the predicate's truth over row: EvalValue's three-valued result,
// evaluation errors returned, not read as Unknown (Eval's pruning reading).
func (p *Program) Test(row []schema.Value) (Tri, error) {
	return p.test(row, nil)
}

// Test2 is Test over two rows, inputs 0 and 1.
func (p *Program) Test2(a, b []schema.Value) (Tri, error) {
	return p.test(a, b)
}

// Matches reports whether the predicate is TRUE on row.
func (p *Program) Matches(row []schema.Value) (bool, error) {
	t, err := p.test(row, nil)
	return t == True, err
}

// compiler builds the closures. With resolve, columns are read from the
// input rows; with lookup instead (EvalValue, evalBool), each evaluation
// asks lookup for them by name.
type compiler struct {
	resolve Resolver
	lookup  Lookup
}

// value compiles e as EvalValue evaluates it.
func (c *compiler) value(e Expr) valueFn {
	switch e := e.(type) {
	case Column:
		return c.column(e.Name)
	case Literal:
		v := literalValue(e)
		return func(_, _ []schema.Value) (schema.Value, error) { return v, nil }
	case Arith:
		return c.arith(e)
	case Neg:
		x := c.value(e.Value)
		return func(a, b []schema.Value) (schema.Value, error) {
			v, err := x(a, b)
			if err != nil {
				return schema.Value{}, err
			}
			return negate(v)
		}
	case Cast:
		x, to := c.value(e.Value), e.To
		return func(a, b []schema.Value) (schema.Value, error) {
			v, err := x(a, b)
			if err != nil {
				return schema.Value{}, err
			}
			return CastValue(v, to)
		}
	case Call:
		return c.call(e)
	case Compare, In, IsNull, Not, And, Or:
		t := c.test(e)
		return func(a, b []schema.Value) (schema.Value, error) {
			r, err := t(a, b)
			if err != nil {
				return schema.Value{}, err
			}
			return triValue(r), nil
		}
	}
	err := fmt.Errorf("%w: unknown expression %T", ErrEval, e)
	return func(_, _ []schema.Value) (schema.Value, error) { return schema.Value{}, err }
}

// arith compiles arithmetic as EvalValue computes it.
func (c *compiler) arith(e Arith) valueFn {
	op := e.Op
	if rv, ok := constant(e.Right); ok {
		// A column or value with a literal (id % 100, n + 1), the common
		// shape: the literal is taken once, and a column read in place.
		if in, i, ok := c.slot(e.Left); ok {
			return func(a, b []schema.Value) (schema.Value, error) {
				return arith(op, at(a, b, in, i), rv)
			}
		}
		l := c.value(e.Left)
		return func(a, b []schema.Value) (schema.Value, error) {
			lv, err := l(a, b)
			if err != nil {
				return schema.Value{}, err
			}
			return arith(op, lv, rv)
		}
	}
	l, r := c.value(e.Left), c.value(e.Right)
	return func(a, b []schema.Value) (schema.Value, error) {
		lv, err := l(a, b)
		if err != nil {
			return schema.Value{}, err
		}
		rv, err := r(a, b)
		if err != nil {
			return schema.Value{}, err
		}
		return arith(op, lv, rv)
	}
}

// constant reports whether e is a literal whose value does not depend on
// the other operand (not text, which is read as the other side's type),
// and gives that value.
func constant(e Expr) (schema.Value, bool) {
	lit, ok := e.(Literal)
	if !ok || lit.IsText {
		return schema.Value{}, false
	}
	return literalValue(lit), true
}

// slot reports whether e is a top-level column the rows have: input and
// index, for a node to read it in place (at) instead of calling a
// compiled column.
func (c *compiler) slot(e Expr) (input, idx int, ok bool) {
	col, isCol := e.(Column)
	if !isCol || c.resolve == nil {
		return 0, 0, false
	}
	ref, found := c.resolve(col.Name)
	if !found || len(ref.Path) != 1 {
		return 0, 0, false
	}
	return ref.Input, ref.Path[0], true
}

// at is the value of a slot: null past the end of a row, as for a
// compiled column.
func at(a, b []schema.Value, input, i int) schema.Value {
	row := a
	if input == 1 {
		row = b
	}
	if i < len(row) {
		return row[i]
	}
	return schema.Value{}
}

// column compiles a column reference.
func (c *compiler) column(name string) valueFn {
	if c.lookup != nil {
		lookup := c.lookup
		return func(_, _ []schema.Value) (schema.Value, error) {
			_, v, ok := lookup(name)
			if !ok {
				return schema.Value{}, fmt.Errorf("%w: no value for column %q", ErrEval, name)
			}
			return v, nil
		}
	}
	ref, ok := c.resolve(name)
	if !ok {
		err := fmt.Errorf("%w: no value for column %q", ErrEval, name)
		return func(_, _ []schema.Value) (schema.Value, error) { return schema.Value{}, err }
	}
	pick := func(a, b []schema.Value) []schema.Value { return a }
	if ref.Input == 1 {
		pick = func(a, b []schema.Value) []schema.Value { return b }
	}
	if len(ref.Path) == 1 {
		i := ref.Path[0]
		if ref.Input == 0 {
			return func(a, _ []schema.Value) (schema.Value, error) {
				if i < len(a) {
					return a[i], nil
				}
				return schema.Value{}, nil
			}
		}
		return func(_, b []schema.Value) (schema.Value, error) {
			if i < len(b) {
				return b[i], nil
			}
			return schema.Value{}, nil
		}
	}
	path := ref.Path
	return func(a, b []schema.Value) (schema.Value, error) {
		return valueAt(pick(a, b), path), nil
	}
}

// call compiles a function call: an argument that is NULL makes the
// result NULL unless the function takes nulls; if, coalesce and nvl
// evaluate only the arguments they need.
func (c *compiler) call(e Call) valueFn {
	f, err := lookupFunction(e.Name, len(e.Args))
	if err != nil {
		return func(_, _ []schema.Value) (schema.Value, error) { return schema.Value{}, err }
	}
	args := make([]valueFn, len(e.Args))
	for i, a := range e.Args {
		args[i] = c.value(a)
	}
	switch f.lazy {
	case lazyIf:
		cond := c.test(e.Args[0])
		return func(a, b []schema.Value) (schema.Value, error) {
			t, err := cond(a, b)
			if err != nil {
				return schema.Value{}, err
			}
			if t == True {
				return args[1](a, b)
			}
			return args[2](a, b)
		}
	case lazyCoalesce:
		return func(a, b []schema.Value) (schema.Value, error) {
			for _, x := range args {
				v, err := x(a, b)
				if err != nil || !v.IsNull() {
					return v, err
				}
			}
			return schema.Value{}, nil
		}
	}
	name := e.Name
	return func(a, b []schema.Value) (schema.Value, error) {
		vals := make([]schema.Value, len(args))
		for i, x := range args {
			v, err := x(a, b)
			if err != nil {
				return schema.Value{}, err
			}
			if v.IsNull() && !f.takesNull {
				return schema.Value{}, nil
			}
			vals[i] = v
		}
		v, err := f.eval(vals)
		if err != nil {
			return schema.Value{}, fmt.Errorf("%s: %w", name, err)
		}
		return v, nil
	}
}

// test compiles e as evalBool evaluates it.
func (c *compiler) test(e Expr) testFn {
	switch e := e.(type) {
	case And:
		terms := c.tests(e.Terms)
		return func(a, b []schema.Value) (Tri, error) {
			out := True
			for _, t := range terms {
				r, err := t(a, b)
				if err != nil {
					return Unknown, err
				}
				switch r {
				case False:
					return False, nil
				case Unknown:
					out = Unknown
				}
			}
			return out, nil
		}
	case Or:
		terms := c.tests(e.Terms)
		return func(a, b []schema.Value) (Tri, error) {
			out := False
			for _, t := range terms {
				r, err := t(a, b)
				if err != nil {
					return Unknown, err
				}
				switch r {
				case True:
					return True, nil
				case Unknown:
					out = Unknown
				}
			}
			return out, nil
		}
	case Not:
		x := c.test(e.Value)
		return func(a, b []schema.Value) (Tri, error) {
			r, err := x(a, b)
			return r.not(), err
		}
	case IsNull:
		x, negate := c.value(e.Value), e.Negate
		return func(a, b []schema.Value) (Tri, error) {
			v, err := x(a, b)
			if err != nil {
				return Unknown, err
			}
			if v.IsNull() != negate {
				return True, nil
			}
			return False, nil
		}
	case Compare:
		return c.compare(e.Op, e.Left, e.Right)
	case In:
		items := make([]testFn, len(e.List))
		for i, x := range e.List {
			items[i] = c.compare(Eq, e.Value, x)
		}
		negate := e.Negate
		return func(a, b []schema.Value) (Tri, error) {
			out := False
			for _, t := range items {
				r, err := t(a, b)
				if err != nil {
					return Unknown, err
				}
				switch r {
				case True:
					if negate {
						return False, nil
					}
					return True, nil
				case Unknown:
					out = Unknown
				}
			}
			if negate {
				return out.not(), nil
			}
			return out, nil
		}
	}
	x := c.value(e)
	return func(a, b []schema.Value) (Tri, error) {
		v, err := x(a, b)
		return valueTri(v), err
	}
}

func (c *compiler) tests(es []Expr) []testFn {
	out := make([]testFn, len(es))
	for i, e := range es {
		out[i] = c.test(e)
	}
	return out
}

// compare compiles a comparison as compareErr evaluates it. Both sides
// are evaluated first, in order; a text literal is then read again with
// the other side's type.
func (c *compiler) compare(op Op, le, re Expr) testFn {
	if rv, ok := constant(re); ok {
		// A comparison with a literal (id = 7): the literal is taken
		// once, and a column read in place.
		if in, i, ok := c.slot(le); ok {
			return func(a, b []schema.Value) (Tri, error) {
				return compareTri(op, at(a, b, in, i), rv), nil
			}
		}
		l := c.value(le)
		return func(a, b []schema.Value) (Tri, error) {
			lv, err := l(a, b)
			if err != nil {
				return Unknown, err
			}
			return compareTri(op, lv, rv), nil
		}
	}
	l, r := c.value(le), c.value(re)
	lit, ltext := le.(Literal)
	ltext = ltext && lit.IsText
	rit, rtext := re.(Literal)
	rtext = rtext && rit.IsText
	if !ltext && !rtext {
		return func(a, b []schema.Value) (Tri, error) {
			lv, err := l(a, b)
			if err != nil {
				return Unknown, err
			}
			rv, err := r(a, b)
			if err != nil {
				return Unknown, err
			}
			return compareTri(op, lv, rv), nil
		}
	}
	if rtext && !ltext {
		// Text compared with a string (s = 'x') reads as that string;
		// that reading is taken once, others per row.
		asString := sparkTextAs(rit, schema.String)
		return func(a, b []schema.Value) (Tri, error) {
			lv, err := l(a, b)
			if err != nil {
				return Unknown, err
			}
			if lv.Kind() == schema.KindString {
				return compareTri(op, lv, asString), nil
			}
			return compareTri(op, lv, sparkTextAs(rit, lv.Type())), nil
		}
	}
	return func(a, b []schema.Value) (Tri, error) {
		lv, err := l(a, b)
		if err != nil {
			return Unknown, err
		}
		rv, err := r(a, b)
		if err != nil {
			return Unknown, err
		}
		if ltext {
			lv = sparkTextAs(lit, rv.Type())
		}
		if rtext {
			rv = sparkTextAs(rit, lv.Type())
		}
		return compareTri(op, lv, rv), nil
	}
}
