// Package expr is a small expression language over table columns: column
// references, literals, comparisons, IN, IS NULL, and AND/OR/NOT, with a
// parser for a SQL-like text form (Parse; String prints an Expr back in a
// form Parse reads) and evaluators for the three places a predicate meets
// data: a row (Eval), a file's partition values (ExcludesPartition) and a
// file's statistics (ParseStats, Stats.MightMatch). Value expressions
// (arithmetic, unary minus, function calls and CAST, in value.go and
// funcs.go) compute values with Spark SQL semantics through EvalValue, for
// CHECK constraints, invariants (Violates) and generated columns; they may
// appear inside predicates too. Compile turns an expression into a Program
// bound to a row layout (columns resolved to positions once, by FieldPath),
// which computes what EvalValue computes without a name lookup or an
// allocation per row: the form every rewrite of rows evaluates (DML, row
// checks, MERGE).
//
// # Invariants
//
// Evaluation is three-valued, as in SQL: a predicate is True, False or
// Unknown (a null operand, or a column the evaluator has no value for). A
// row is kept only where the predicate is True. Pruning keeps every file
// whose predicate is not certainly unsatisfiable there (False, or an Unknown
// that comes from a NULL partition value; missing or loose statistics never
// exclude), so a file that might match is never skipped. Values are compared
// as Order compares them.
//
// An Expr, and a Program, is immutable once built and safe for concurrent
// use; the package does no I/O. Columns are looked up by name through a
// Lookup the caller gives, or resolved by a Resolver for Compile, so the
// package knows nothing of snapshots or files.
//
// # Errors
//
// Errors are tested with errors.Is: ErrSyntax (Parse), ErrNotPredicate
// (CheckPredicate: a predicate that can never be TRUE by its form), ErrEval
// and ErrOverflow (EvalValue), ErrAssign (NewAssigner: a value that cannot
// be stored in a column's type), all matching deltaerr.ErrInvalidArgument;
// ErrUnknownFunction, matching deltaerr.ErrUnsupportedFeature; and
// ErrInvalidStats (stats JSON that cannot be decoded), matching
// deltaerr.ErrCorrupt.
//
// The examples parse a predicate, print it and evaluate it against rows,
// compute a value expression, and compile a predicate to test rows.
package expr

import (
	"fmt"
	"strings"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// Expr is a parsed predicate or operand.
type Expr interface {
	String() string
	isExpr()
}

// Column names a top-level column (nested names are joined with '.').
type Column struct{ Name string }

// Literal is a constant. Text literals keep their source text, so that a
// comparison with a date or timestamp column can read them as that type.
// Number literals from Parse keep theirs too, so that EvalValue types them
// as Spark does (1 is an INT, 1.5 a DECIMAL(2,1)); Value holds them as a
// long or a double.
type Literal struct {
	Value schema.Value
	// Text is the source text: of a quoted string literal, or of a number.
	Text   string
	IsText bool
}

// Op is a comparison operator.
type Op string

// Comparison operators.
const (
	Eq Op = "="
	Ne Op = "!="
	Lt Op = "<"
	Le Op = "<="
	Gt Op = ">"
	Ge Op = ">="
)

// Compare is Left Op Right.
type Compare struct {
	Op          Op
	Left, Right Expr
}

// In is Value IN (List...), or NOT IN when Negate.
type In struct {
	Value  Expr
	List   []Expr
	Negate bool
}

// IsNull is Value IS NULL, or IS NOT NULL when Negate.
type IsNull struct {
	Value  Expr
	Negate bool
}

// Not negates Value.
type Not struct{ Value Expr }

// And is true when every term is.
type And struct{ Terms []Expr }

// Or is true when any term is.
type Or struct{ Terms []Expr }

func (Column) isExpr()  {}
func (Literal) isExpr() {}
func (Compare) isExpr() {}
func (In) isExpr()      {}
func (IsNull) isExpr()  {}
func (Not) isExpr()     {}
func (And) isExpr()     {}
func (Or) isExpr()      {}

func (c Column) String() string { return "`" + strings.ReplaceAll(c.Name, "`", "``") + "`" }
func (l Literal) String() string {
	if l.IsText {
		return "'" + strings.ReplaceAll(l.Text, "'", "''") + "'"
	}
	if l.Value.IsNull() {
		return "NULL"
	}
	if l.Text != "" {
		return l.Text // a number as written, which reads back the same
	}
	return l.Value.String()
}
func (c Compare) String() string {
	return operandString(c.Left) + " " + string(c.Op) + " " + operandString(c.Right)
}
func (i In) String() string {
	parts := make([]string, len(i.List))
	for k, e := range i.List {
		parts[k] = operandString(e)
	}
	not := ""
	if i.Negate {
		not = "NOT "
	}
	return operandString(i.Value) + " " + not + "IN (" + strings.Join(parts, ", ") + ")"
}
func (n IsNull) String() string {
	if n.Negate {
		return operandString(n.Value) + " IS NOT NULL"
	}
	return operandString(n.Value) + " IS NULL"
}

// operandString prints an operand of a comparison, IN or IS NULL: a
// predicate there (a = (b IN (1))) is put in parentheses, so that the
// text parses back to the same tree.
func operandString(e Expr) string {
	switch e.(type) {
	case Compare, In, IsNull, Not, And, Or:
		return "(" + e.String() + ")"
	}
	return e.String()
}
func (n Not) String() string { return "NOT (" + n.Value.String() + ")" }
func (a And) String() string { return join(a.Terms, " AND ") }
func (o Or) String() string  { return join(o.Terms, " OR ") }

func join(terms []Expr, sep string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = "(" + t.String() + ")"
	}
	return strings.Join(parts, sep)
}

// Columns returns the names of the columns e refers to.
func Columns(e Expr) []string {
	var out []string
	var walk func(Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case Column:
			out = append(out, e.Name)
		case Compare:
			walk(e.Left)
			walk(e.Right)
		case In:
			walk(e.Value)
			for _, x := range e.List {
				walk(x)
			}
		case IsNull:
			walk(e.Value)
		case Not:
			walk(e.Value)
		case And:
			for _, x := range e.Terms {
				walk(x)
			}
		case Or:
			for _, x := range e.Terms {
				walk(x)
			}
		case Arith:
			walk(e.Left)
			walk(e.Right)
		case Neg:
			walk(e.Value)
		case Cast:
			walk(e.Value)
		case Call:
			for _, x := range e.Args {
				walk(x)
			}
		}
	}
	walk(e)
	return out
}

// ErrSyntax marks a predicate text the parser cannot read; it matches
// deltaerr.ErrInvalidArgument too.
var ErrSyntax = fmt.Errorf("expr: syntax error: %w", deltaerr.ErrInvalidArgument)
