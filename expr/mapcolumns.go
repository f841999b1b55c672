package expr

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
