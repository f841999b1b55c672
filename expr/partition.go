package expr

import "github.com/godelta/delta/schema"

// ExcludesPartition reports whether no row of a file can satisfy e, given
// lookup, which knows the file's partition values (the same for every row
// of the file) and nothing else. Eval alone only excludes a file where e
// is False; but on partition values Unknown can also be certain: k = 'A'
// on a file whose k is NULL is Unknown for every row, and a row is
// returned only where the predicate is TRUE. So each top-level AND term
// excludes the file when it is False, or when it is Unknown although every
// column it names was known (the Unknown then comes from a NULL, not from
// a column the lookup lacks).
func ExcludesPartition(e Expr, lookup Lookup) bool {
	// The common answers first, with one evaluation and no allocation:
	// False excludes, True keeps. Only Unknown needs the terms apart.
	switch Eval(e, lookup) {
	case False:
		return true
	case True:
		return false
	}
	for _, term := range conjuncts(e, nil) {
		missing := false
		tracked := func(c string) (schema.DataType, schema.Value, bool) {
			t, v, ok := lookup(c)
			if !ok {
				missing = true
			}
			return t, v, ok
		}
		switch Eval(term, tracked) {
		case False:
			return true
		case Unknown:
			if !missing {
				return true
			}
		}
	}
	return false
}

// conjuncts appends the terms of e's top-level AND (nested ANDs
// flattened) to out; a predicate that is not an AND is its only term.
func conjuncts(e Expr, out []Expr) []Expr {
	if a, ok := e.(And); ok {
		for _, t := range a.Terms {
			out = conjuncts(t, out)
		}
		return out
	}
	return append(out, e)
}
