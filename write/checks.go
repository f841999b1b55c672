package write

import (
	"fmt"
	"sort"
	"strings"

	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// rowCheck is one predicate every row must satisfy.
type rowCheck struct {
	kind, name, text string
	e                *expr.Program
}

// generated is a generated column: its index in the schema and the
// expression, cast to the column's type.
type generated struct {
	idx  int
	name string
	text string
	e    *expr.Program
}

// checks are the constraints of a table, compiled once per call.
type checks struct {
	sch       *schema.StructType
	generated []generated
	preds     []rowCheck
	// nullChecked are the top-level fields where a null can break the
	// schema: not nullable, or nested with a part that is not; notNull
	// those of them that are primitive and not nullable, checked without
	// walking a type.
	nullChecked, notNull []int
}

// compileChecks reads the constraints of a table: generated columns and
// invariants from the schema's metadata, CHECK constraints from the
// properties (in name order), and the required predicate, if any.
func compileChecks(sch *schema.StructType, constraints []tableconfig.Constraint, require expr.Expr) (*checks, error) {
	c := &checks{sch: sch}
	rows := expr.RowResolver(sch)
	for i := range sch.Fields {
		f := &sch.Fields[i]
		switch {
		case !f.Nullable && isPrimitive(f.Type):
			c.notNull = append(c.notNull, i)
		case mayBreakNull(f.Type, f.Nullable):
			c.nullChecked = append(c.nullChecked, i)
		}
		if raw, ok := f.Metadata.Get(MetaGenerationExpression); ok {
			e, err := parseGeneration(raw)
			if err != nil {
				return nil, fmt.Errorf("write: generated column %s: %w", f.Name, err)
			}
			c.generated = append(c.generated, generated{idx: i, name: f.Name, text: e.String(), e: expr.Compile(expr.Cast{Value: e, To: f.Type}, rows)})
		}
	}
	var inv func(st *schema.StructType, prefix string) error
	inv = func(st *schema.StructType, prefix string) error {
		for i := range st.Fields {
			f := &st.Fields[i]
			if raw, ok := f.Metadata.Get(MetaInvariants); ok {
				e, err := parseInvariant(raw)
				if err != nil {
					return fmt.Errorf("write: invariant of column %s: %w", prefix+f.Name, err)
				}
				c.preds = append(c.preds, rowCheck{kind: KindInvariant, name: prefix + f.Name, text: e.String(), e: expr.Compile(e, rows)})
			}
			if sub, ok := f.Type.(*schema.StructType); ok {
				if err := inv(sub, prefix+f.Name+"."); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := inv(sch, ""); err != nil {
		return nil, err
	}
	for _, k := range constraints { // sorted by name
		e, err := expr.Parse(k.Expression)
		if err != nil {
			return nil, fmt.Errorf("write: CHECK constraint %s: %w", k.Name, err)
		}
		c.preds = append(c.preds, rowCheck{kind: KindCheck, name: k.Name, text: k.Expression, e: expr.Compile(e, rows)})
	}
	if require != nil {
		c.preds = append(c.preds, rowCheck{kind: KindPredicate, name: "replaceWhere", text: require.String(), e: expr.Compile(require, rows)})
	}
	return c, nil
}

// apply fills the generated columns of vals and checks every constraint;
// row is the row's number for errors.
func (c *checks) apply(vals []schema.Value, row int64) error {
	for _, g := range c.generated {
		v, err := g.e.Value(vals)
		if err != nil {
			return &ConstraintError{Kind: KindGenerated, Name: g.name, Expression: g.text, Row: row, Values: showRow(c.sch, vals), Err: err}
		}
		given := vals[g.idx]
		if given.IsNull() {
			vals[g.idx] = v
			continue
		}
		if !sameValue(given, v) {
			return &ConstraintError{Kind: KindGenerated, Name: g.name, Expression: g.text, Row: row,
				Values: fmt.Sprintf("%s (given %s, computed %s)", showRow(c.sch, vals), given, v)}
		}
	}
	for _, i := range c.notNull {
		if vals[i].IsNull() {
			return &ConstraintError{Kind: KindNotNull, Name: c.sch.Fields[i].Name, Row: row, Values: showRow(c.sch, vals)}
		}
	}
	for _, i := range c.nullChecked {
		f := &c.sch.Fields[i]
		if path, bad := nullViolation(vals[i], f.Type, f.Nullable, f.Name); bad {
			return &ConstraintError{Kind: KindNotNull, Name: path, Row: row, Values: showRow(c.sch, vals)}
		}
	}
	for _, p := range c.preds {
		v, err := p.e.Value(vals)
		if err != nil {
			return &ConstraintError{Kind: p.kind, Name: p.name, Expression: p.text, Row: row, Values: showRow(c.sch, vals), Err: err}
		}
		if violates(v) {
			return &ConstraintError{Kind: p.kind, Name: p.name, Expression: p.text, Row: row, Values: showRow(c.sch, vals)}
		}
	}
	return nil
}

// violates reports whether a predicate's value breaks a constraint: only
// TRUE passes. NULL breaks a CHECK constraint and an invariant as false
// does, as Delta's invariant checker (CheckDeltaInvariant) refuses a row
// whose result is null or false, and a replaceWhere predicate, which a row
// must satisfy to be written into the range it replaces.
func violates(v schema.Value) bool {
	return v.IsNull() || v.Kind() != schema.KindBoolean || !v.Bool()
}

// sameValue reports whether two values of one column are equal: numbers,
// strings, dates and timestamps by expr.Order, nested values by their
// display form.
func sameValue(a, b schema.Value) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() == b.IsNull()
	}
	if c, ok := expr.Order(a, b); ok {
		return c == 0
	}
	return a.Kind() == b.Kind() && a.String() == b.String()
}

// isPrimitive reports whether t is not a struct, an array or a map.
func isPrimitive(t schema.DataType) bool {
	switch t.(type) {
	case *schema.StructType, *schema.ArrayType, *schema.MapType:
		return false
	}
	return true
}

// mayBreakNull reports whether a value of type t can hold a null the
// schema forbids (see nullViolation): when it is not nullable itself or
// a nested part is not.
func mayBreakNull(t schema.DataType, nullable bool) bool {
	if !nullable {
		return true
	}
	switch t := t.(type) {
	case *schema.StructType:
		for i := range t.Fields {
			if mayBreakNull(t.Fields[i].Type, t.Fields[i].Nullable) {
				return true
			}
		}
	case *schema.ArrayType:
		return mayBreakNull(t.ElementType, t.ContainsNull)
	case *schema.MapType:
		return true // a map key is never null
	}
	return false
}

// nullViolation finds a null where the schema allows none: in a
// non-nullable field at any depth, an array element without containsNull,
// a map key, or a map value without valueContainsNull. It returns the
// path of the first one.
func nullViolation(v schema.Value, t schema.DataType, nullable bool, path string) (string, bool) {
	if v.IsNull() {
		return path, !nullable
	}
	switch t := t.(type) {
	case *schema.StructType:
		fs := v.Fields()
		for i := range t.Fields {
			if i >= len(fs) {
				break // a shape error, reported by the data file writer
			}
			f := &t.Fields[i]
			if p, bad := nullViolation(fs[i], f.Type, f.Nullable, path+"."+f.Name); bad {
				return p, true
			}
		}
	case *schema.ArrayType:
		for _, e := range v.Elements() {
			if p, bad := nullViolation(e, t.ElementType, t.ContainsNull, path+".element"); bad {
				return p, true
			}
		}
	case *schema.MapType:
		for i := range v.MapLen() {
			k, val := v.MapEntry(i)
			if p, bad := nullViolation(k, t.KeyType, false, path+".key"); bad {
				return p, true
			}
			if p, bad := nullViolation(val, t.ValueType, t.ValueContainsNull, path+".value"); bad {
				return p, true
			}
		}
	}
	return "", false
}

// showRow formats a row for an error message, cut to a readable length.
func showRow(sch *schema.StructType, vals []schema.Value) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range vals {
		if i >= len(sch.Fields) {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(sch.Fields[i].Name)
		b.WriteString(": ")
		s := v.String()
		if len(s) > 64 {
			s = s[:61] + "..."
		}
		b.WriteString(s)
		if b.Len() > 512 {
			b.WriteString(", ...")
			break
		}
	}
	b.WriteByte('}')
	return b.String()
}

// CheckConstraints refuses, with ErrInvalidSpec, the CHECK constraints
// among props that no row could be checked against, as Spark refuses
// them at CREATE TABLE and ALTER TABLE ... ADD CONSTRAINT: an empty name,
// two names that differ only in case (Spark's names are case-insensitive),
// an expression that does not parse, names a column sch does not have, or
// is not a condition (a non-boolean column or value; see
// expr.CheckPredicate).
func CheckConstraints(sch *schema.StructType, props map[string]string) error {
	seen := map[string]string{}
	var names []string
	for k := range props {
		if strings.HasPrefix(k, tableconfig.KeyConstraintPrefix) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		name := strings.TrimPrefix(k, tableconfig.KeyConstraintPrefix)
		if strings.TrimSpace(name) == "" {
			return specErr("property %s: a CHECK constraint needs a name", k)
		}
		if prev, dup := seen[strings.ToLower(name)]; dup {
			return specErr("CHECK constraints %s and %s: constraint names are case-insensitive, so they are the same constraint", prev, name)
		}
		seen[strings.ToLower(name)] = name
		e, err := expr.Parse(props[k])
		if err != nil {
			return specErr("CHECK constraint %s: %v", name, err)
		}
		types := map[string]schema.DataType{}
		for _, c := range expr.Columns(e) {
			_, t, ok := expr.FieldPath(sch, c)
			if !ok {
				return specErr("CHECK constraint %s (%s): column %q is not in the table", name, props[k], c)
			}
			types[c] = t
		}
		if err := expr.CheckPredicate(e, func(c string) (schema.DataType, bool) { t, ok := types[c]; return t, ok }); err != nil {
			return specErr("CHECK constraint %s (%s): %v", name, props[k], err)
		}
	}
	return nil
}

// GeneratedColumns returns the schema indexes of the top-level generated
// columns of sch (those with delta.generationExpression). The row writer
// computes a generated column given as null, so an operation that changes
// a row's other columns passes null for these to have them computed again.
func GeneratedColumns(sch *schema.StructType) []int {
	var out []int
	for i := range sch.Fields {
		if _, ok := sch.Fields[i].Metadata.Get(MetaGenerationExpression); ok {
			out = append(out, i)
		}
	}
	return out
}
