package dml

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/write"
)

// Assignment is one "column = value" of an UPDATE's SET clause: Column a
// top-level column of the table (matched exactly, then ignoring case),
// Value an expression over the row's values before the update.
type Assignment struct {
	Column string
	Value  expr.Expr
}

func (a Assignment) String() string { return quoteColumn(a.Column) + " = " + a.Value.String() }

// ParseAssignments parses a SET clause: "c = expr[, d = expr ...]", the
// expressions in the predicate language (arithmetic, CAST, functions).
// Commas inside parentheses or quotes do not split; a column name may be
// in backticks. An empty clause, a part without "=", or an expression
// that does not parse is ErrInvalid (or expr.ErrSyntax).
func ParseAssignments(text string) ([]Assignment, error) {
	parts := splitTop(text, ',')
	var out []Assignment
	for _, part := range parts {
		i := assignIndex(part)
		if i < 0 {
			return nil, fmt.Errorf("%w: %q is not column = expression", ErrInvalid, strings.TrimSpace(part))
		}
		col := strings.TrimSpace(part[:i])
		if len(col) >= 2 && col[0] == '`' && col[len(col)-1] == '`' {
			col = strings.ReplaceAll(col[1:len(col)-1], "``", "`")
		}
		if col == "" {
			return nil, fmt.Errorf("%w: %q names no column", ErrInvalid, strings.TrimSpace(part))
		}
		v, err := expr.Parse(part[i+1:])
		if err != nil {
			return nil, fmt.Errorf("dml: value of %s: %w", col, err)
		}
		out = append(out, Assignment{Column: col, Value: v})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no assignment in %q", ErrInvalid, text)
	}
	return out, nil
}

// eachTop calls fn with the index and parenthesis depth of every byte of
// s outside quotes and backticks, until fn returns false.
func eachTop(s string, fn func(i, depth int) bool) {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			continue
		case c == '\'' || c == '"' || c == '`':
			quote = c
			continue
		case c == '(':
			depth++
		case c == ')':
			depth--
		}
		if !fn(i, depth) {
			return
		}
	}
}

// splitTop splits s at sep outside parentheses, quotes and backticks.
func splitTop(s string, sep byte) []string {
	var out []string
	start := 0
	eachTop(s, func(i, depth int) bool {
		if s[i] == sep && depth == 0 {
			out = append(out, s[start:i])
			start = i + 1
		}
		return true
	})
	if strings.TrimSpace(s[start:]) != "" || len(out) > 0 {
		out = append(out, s[start:])
	}
	return out
}

// assignIndex returns the index of the first "=" of part that is an
// assignment: outside parentheses, quotes and backticks, not part of <=,
// >=, !=, == or <=>. -1 if none.
func assignIndex(part string) int {
	at := -1
	eachTop(part, func(i, depth int) bool {
		if part[i] != '=' || depth != 0 ||
			(i > 0 && strings.IndexByte("<>!=", part[i-1]) >= 0) ||
			(i+1 < len(part) && (part[i+1] == '=' || part[i+1] == '>')) {
			return true
		}
		at = i
		return false
	})
	return at
}

func quoteColumn(c string) string {
	if c == "" || strings.ContainsAny(c, " .`,=()") {
		return "`" + strings.ReplaceAll(c, "`", "``") + "`"
	}
	return c
}

// assignment is an Assignment resolved against the schema.
type assignment struct {
	idx   int
	field *schema.StructField
	value expr.Expr
	store expr.Assigner // converts the value to the column's type
}

// resolve checks the assignments against sch: each names a top-level
// column, at most once, and its value names only columns of the table.
func resolve(sch *schema.StructType, set []Assignment) ([]assignment, error) {
	if len(set) == 0 {
		return nil, fmt.Errorf("%w: UPDATE without an assignment", ErrInvalid)
	}
	seen := map[int]bool{}
	out := make([]assignment, 0, len(set))
	for _, a := range set {
		if a.Value == nil {
			return nil, fmt.Errorf("%w: no value for column %s", ErrInvalid, a.Column)
		}
		idx := sch.Index(a.Column)
		if idx < 0 {
			if strings.Contains(a.Column, ".") {
				return nil, fmt.Errorf("%w: column %q: only top-level columns can be assigned", ErrInvalid, a.Column)
			}
			return nil, fmt.Errorf("%w: column %q is not in the table", ErrInvalid, a.Column)
		}
		if seen[idx] {
			return nil, fmt.Errorf("%w: column %s assigned twice", ErrInvalid, sch.Fields[idx].Name)
		}
		seen[idx] = true
		if sch.Fields[idx].IsIdentity() {
			// Spark: DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED.
			return nil, fmt.Errorf("%w: identity column %s cannot be updated", ErrInvalid, sch.Fields[idx].Name)
		}
		if err := checkColumns(sch, a.Value, "value of "+a.Column); err != nil {
			return nil, err
		}
		f := &sch.Fields[idx]
		store, err := assigner(a.Value, f, func(name string) (schema.DataType, bool) {
			_, t, ok := expr.FieldPath(sch, name)
			return t, ok
		})
		if err != nil {
			return nil, fmt.Errorf("%w: SET %s = %s: %w", ErrInvalid, f.Name, a.Value, err)
		}
		out = append(out, assignment{idx: idx, field: f, value: a.Value, store: store})
	}
	return out, nil
}

// assigner returns the conversion of the values of e into column f, by
// store assignment (expr.NewAssigner): the type of e's values is taken
// from the expression (expr.TypeOf, columns typed by typeOf), so that a
// struct is stored field by field by name. It fails, with expr.ErrAssign,
// when the types cannot be stored across: see the package doc.
func assigner(e expr.Expr, f *schema.StructField, typeOf func(string) (schema.DataType, bool)) (expr.Assigner, error) {
	from, ok := expr.TypeOf(e, typeOf)
	if !ok {
		from = nil
	}
	return expr.NewAssigner(from, f.Type, f.Name)
}

// store converts v, a value computed for column f, with the column's
// assigner; a value that does not convert is ErrInvalid (the assigner's
// error names the column, the value and the type).
func store(v schema.Value, conv expr.Assigner, f *schema.StructField) (schema.Value, error) {
	out, err := conv(v)
	if err != nil {
		return schema.Value{}, deltaerr.Mark(err, ErrInvalid)
	}
	return out, nil
}

// Update sets the columns of set in the rows of the table snap shows that
// pred matches (TRUE; nil updates every row) and commits, as SQL UPDATE t
// SET set WHERE pred: operation UPDATE, operationParameters
// {"predicate": "[...]"}, Spark's UPDATE metrics. Every value is computed
// from the row before the update, with SQL null semantics
// (expr.EvalValue), and converted to its column's type as the package
// doc's "Assigning values" says (nested struct fields matched by name); a
// value that cannot be is ErrInvalid naming the column and the value. Generated columns not
// assigned are computed again from the new row; NOT NULL, CHECK
// constraints and invariants are checked on every row written
// (*write.ConstraintError). Candidate files come from partition and
// statistics skipping, and are rewritten with the table's strategy (see
// the package doc); change data carries update_preimage and
// update_postimage rows when the table has the change data feed on.
//
// Nothing matched: nothing is committed (Result.Committed false).
func Update(ctx context.Context, snap *snapshot.Snapshot, set []Assignment, pred expr.Expr, opts Options) (Result, error) {
	sch := snap.Schema()
	if _, err := resolve(sch, set); err != nil {
		return Result{}, err
	}
	if err := checkPredicate(sch, pred); err != nil {
		return Result{}, err
	}
	start := time.Now()
	op := updateOp(pred)
	op.Plan = func(ctx context.Context, snap *snapshot.Snapshot, s Strategy) (*Plan, error) {
		j, err := planUpdate(ctx, snap, set, pred, opts, op, s, start)
		if err != nil {
			return nil, err
		}
		return j.whole(ctx)
	}
	return Run(ctx, snap, op, opts)
}

// UpdateRows returns the write.RowFunc of an UPDATE: rows pred matches
// (all with nil pred) are updated with set, computed on the row before
// the update and cast to the columns' types, generated columns left null
// for the row writer to compute; other rows are kept. set must name
// columns of sch (see Update); MERGE's UPDATE clauses use it too.
func UpdateRows(sch *schema.StructType, set []Assignment, pred expr.Expr) write.RowFunc {
	as, err := resolve(sch, set)
	gen := write.GeneratedColumns(sch)
	assigned := map[int]bool{}
	// Compiled once: a row is evaluated without a name lookup or an
	// allocation.
	rows := expr.RowResolver(sch)
	values := make([]*expr.Program, len(as))
	for i, a := range as {
		assigned[a.idx] = true
		values[i] = expr.Compile(a.value, rows)
	}
	var where *expr.Program
	if pred != nil {
		where = expr.Compile(pred, rows)
	}
	var out []schema.Value
	return func(add *actions.Add, pos int64, row []schema.Value) (write.Verdict, []schema.Value, error) {
		if err != nil {
			return write.Keep, nil, err
		}
		if where != nil {
			t, err := where.Test(row)
			if err != nil {
				return write.Keep, nil, fmt.Errorf("dml: WHERE %s: %w", pred, err)
			}
			if t != expr.True {
				return write.Keep, nil, nil
			}
		}
		out = append(out[:0], row...)
		for i, a := range as {
			v, err := values[i].Value(row)
			if err != nil {
				return write.Keep, nil, fmt.Errorf("dml: SET %s = %s: %w", a.field.Name, a.value, err)
			}
			if out[a.idx], err = store(v, a.store, a.field); err != nil {
				return write.Keep, nil, fmt.Errorf("%w (SET %s = %s)", err, a.field.Name, a.value)
			}
		}
		for _, g := range gen {
			if !assigned[g] {
				out[g] = schema.Value{}
			}
		}
		return write.Update, out, nil
	}
}

// castTo casts v, a primitive value (a join key), to the type of column
// f, as Spark's store assignment does: a value already of that type is
// kept, others go through CAST; a non-null value that CAST makes null (a
// string that is not a number) or cannot cast is ErrInvalid. Assigned
// values, nested ones included, go through their column's assigner
// (store) instead.
func castTo(v schema.Value, f *schema.StructField) (schema.Value, error) {
	if v.IsNull() || expr.SameType(v.Type(), f.Type) {
		return v, nil
	}
	out, err := expr.CastValue(v, f.Type)
	if err != nil {
		return schema.Value{}, deltaerr.Mark(fmt.Errorf("value %s cannot be stored in column %s of type %s: %w", v, f.Name, expr.TypeName(f.Type), err), ErrInvalid)
	}
	if out.IsNull() {
		return schema.Value{}, fmt.Errorf("%w: value %s cannot be cast to %s for column %s", ErrInvalid, v, expr.TypeName(f.Type), f.Name)
	}
	return out, nil
}
