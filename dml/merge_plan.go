package dml

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
)

// side is the side of a merge a column belongs to.
type side uint8

const (
	target side = 1 << iota
	source
)

// Resolved column names carry their side in a prefix no parsed name can
// start with, so that one Lookup serves a pair of rows.
const (
	targetPrefix = "\x00t."
	sourcePrefix = "\x00s."
)

// resolver qualifies the names of a merge's expressions.
type resolver struct {
	tsch, ssch   *schema.StructType
	talias, salt string
}

func hasColumn(sch *schema.StructType, name string) bool {
	_, _, ok := expr.FieldPath(sch, name)
	return ok
}

// cutAlias returns name without "alias." when it starts so (in any case).
func cutAlias(name, alias string) (string, bool) {
	if len(name) > len(alias) && name[len(alias)] == '.' && strings.EqualFold(name[:len(alias)], alias) {
		return name[len(alias)+1:], true
	}
	return "", false
}

// resolve turns the names of e into resolved ones, allowing the sides in
// allowed; what names a clause for errors.
func (r *resolver) resolve(e expr.Expr, allowed side, what string) (expr.Expr, error) {
	if e == nil {
		return nil, nil
	}
	return expr.MapColumns(e, func(c expr.Column) (expr.Expr, error) {
		name, sd, err := r.column(c.Name, allowed)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrMergeColumn, what, err)
		}
		if sd&allowed == 0 {
			return nil, fmt.Errorf("%w: %s may not use %s column %q", ErrMergeColumn, what, sideName(sd), c.Name)
		}
		if sd == target {
			return expr.Column{Name: targetPrefix + name}, nil
		}
		return expr.Column{Name: sourcePrefix + name}, nil
	})
}

func sideName(s side) string {
	if s == target {
		return "target"
	}
	return "source"
}

// column resolves one name: qualified by an alias, or unqualified and in
// exactly one of the sides the expression sees (a NOT MATCHED clause sees
// the source only, a NOT MATCHED BY SOURCE clause the target only, as
// Spark resolves them).
func (r *resolver) column(name string, sees side) (string, side, error) {
	if rest, ok := cutAlias(name, r.talias); ok && hasColumn(r.tsch, rest) {
		return rest, target, nil
	}
	if rest, ok := cutAlias(name, r.salt); ok && hasColumn(r.ssch, rest) {
		return rest, source, nil
	}
	inT, inS := sees&target != 0 && hasColumn(r.tsch, name), sees&source != 0 && hasColumn(r.ssch, name)
	switch {
	case inT && inS:
		return "", 0, fmt.Errorf("%q is ambiguous: both the target and the source have it (qualify it as %s.%s or %s.%s)", name, r.talias, name, r.salt, name)
	case inT:
		return name, target, nil
	case inS:
		return name, source, nil
	}
	return "", 0, fmt.Errorf("%q is in neither the target (%s) nor the source (%s)", name, r.talias, r.salt)
}

// targetColumn resolves the column an assignment sets: a top-level target
// column, optionally qualified.
func (r *resolver) targetColumn(name string) (int, error) {
	if rest, ok := cutAlias(name, r.talias); ok {
		if i := r.tsch.Index(rest); i >= 0 {
			return i, nil
		}
	}
	if i := r.tsch.Index(name); i >= 0 {
		return i, nil
	}
	return -1, fmt.Errorf("%w: cannot assign %q: not a top-level column of the target", ErrMergeColumn, name)
}

// plannedClause is a clause with resolved expressions: for each target
// column, the expression that gives its value (nil: keep the target's, or
// null for an insert; generated columns are nil unless assigned).
type plannedClause struct {
	cond   expr.Expr
	action Action
	values []expr.Expr
	text   string // the condition as given, for operationParameters

	// condProg and valueProgs are cond and values compiled (see
	// plan.compile); valueProgs[i] is nil where values[i] is.
	condProg   *expr.Program
	valueProgs []*expr.Program
	// stores convert values[i] to the type of target column i (nil
	// where values[i] is).
	stores []expr.Assigner
}

// plan is a merge checked and resolved against its two schemas.
type plan struct {
	on                          expr.Expr
	matched, notMatched, bySrc  []plannedClause
	keys                        []joinKey // equality terms, for the hash join
	targetOnly                  expr.Expr // conjuncts of on over the target alone, in table names
	multiMatchOK                bool      // only one unconditional matched DELETE, or none
	tsch, ssch                  *schema.StructType
	generated                   []bool // per target column
	partitionCol                []bool
	onText                      string
	matchedTxt, notMatchedTxt   []clauseText
	bySrcTxt                    []clauseText
	needsAllFiles               bool // a NOT MATCHED BY SOURCE clause without a condition
	bySourceConds               expr.Expr
	maxPartitionValuesInPruning int
	onProg                      *expr.Program // on compiled: over a target row (input 0) and a source row (input 1)
}

// clauseText is a clause as operationParameters record it.
type clauseText struct {
	Predicate  string `json:"predicate,omitempty"`
	ActionType string `json:"actionType"`
}

// joinKey is one equality term t.col = s.expr of the condition.
type joinKey struct {
	tcol  int           // target column index
	tname string        // target column name
	sval  expr.Expr     // source-side value (resolved)
	prog  *expr.Program // sval compiled, over a source row (input 1)
}

// newPlan checks spec against the target schema tsch (with its partition
// columns and generated columns) and the source schema ssch.
func newPlan(spec MergeSpec, tsch, ssch *schema.StructType, partitions []string) (*plan, error) {
	if spec.On == nil {
		return nil, fmt.Errorf("%w: no join condition", ErrMergeClause)
	}
	if len(spec.Matched)+len(spec.NotMatched)+len(spec.NotMatchedBySource) == 0 {
		return nil, fmt.Errorf("%w: no WHEN clause", ErrMergeClause)
	}
	r := &resolver{tsch: tsch, ssch: ssch, talias: spec.TargetAlias, salt: spec.SourceAlias}
	if r.talias == "" {
		r.talias = "t"
	}
	if r.salt == "" {
		r.salt = "s"
	}
	if strings.EqualFold(r.talias, r.salt) {
		return nil, fmt.Errorf("%w: the target and the source have the same alias %q", ErrMergeClause, r.talias)
	}
	p := &plan{tsch: tsch, ssch: ssch, onText: spec.On.String(), maxPartitionValuesInPruning: 1000}
	p.generated = make([]bool, len(tsch.Fields))
	p.partitionCol = make([]bool, len(tsch.Fields))
	for i := range tsch.Fields {
		_, p.generated[i] = tsch.Fields[i].Metadata.Get(schema.MetadataGenerationExpression)
		p.partitionCol[i] = slices.ContainsFunc(partitions, func(c string) bool { return strings.EqualFold(c, tsch.Fields[i].Name) })
	}
	var err error
	if p.on, err = r.resolve(spec.On, target|source, "the merge condition"); err != nil {
		return nil, err
	}
	p.splitOn()
	lists := []struct {
		in      []Clause
		out     *[]plannedClause
		txt     *[]clauseText
		kind    string
		actions []Action
		sides   side
	}{
		{spec.Matched, &p.matched, &p.matchedTxt, "WHEN MATCHED", []Action{ActionUpdate, ActionDelete}, target | source},
		{spec.NotMatched, &p.notMatched, &p.notMatchedTxt, "WHEN NOT MATCHED", []Action{ActionInsert}, source},
		{spec.NotMatchedBySource, &p.bySrc, &p.bySrcTxt, "WHEN NOT MATCHED BY SOURCE", []Action{ActionUpdate, ActionDelete}, target},
	}
	for _, l := range lists {
		*l.txt = []clauseText{}
		for k, c := range l.in {
			what := fmt.Sprintf("%s clause %d", l.kind, k+1)
			if !slices.Contains(l.actions, c.Action) {
				return nil, fmt.Errorf("%w: %s: action %s is not allowed", ErrMergeClause, what, c.Action)
			}
			if k < len(l.in)-1 && c.Condition == nil {
				return nil, fmt.Errorf("%w: %s has no condition but is not the last %s clause, so the ones after it never apply", ErrMergeClause, what, l.kind)
			}
			pc, err := p.planClause(r, c, l.sides, what)
			if err != nil {
				return nil, err
			}
			*l.out = append(*l.out, pc)
			*l.txt = append(*l.txt, clauseText{Predicate: pc.text, ActionType: c.Action.String()})
		}
	}
	p.multiMatchOK = len(p.matched) == 0 || (len(p.matched) == 1 && p.matched[0].action == ActionDelete && p.matched[0].cond == nil)
	var conds []expr.Expr
	for _, c := range p.bySrc {
		if c.cond == nil {
			p.needsAllFiles = true
			break
		}
		tc, err := toTarget(c.cond)
		if err != nil {
			return nil, err
		}
		conds = append(conds, tc)
	}
	if len(p.bySrc) > 0 && !p.needsAllFiles {
		p.bySourceConds = or(conds)
	}
	p.compile()
	return p, nil
}

// compile compiles the resolved expressions the merge evaluates per row,
// over a target row (input 0) and a source row (input 1): the condition,
// the join keys' source values, and each clause's condition and values.
func (p *plan) compile() {
	refs := func(name string) (expr.Ref, bool) {
		if rest, ok := strings.CutPrefix(name, targetPrefix); ok {
			path, _, ok := expr.FieldPath(p.tsch, rest)
			return expr.Ref{Input: 0, Path: path}, ok
		}
		if rest, ok := strings.CutPrefix(name, sourcePrefix); ok {
			path, _, ok := expr.FieldPath(p.ssch, rest)
			return expr.Ref{Input: 1, Path: path}, ok
		}
		return expr.Ref{}, false
	}
	p.onProg = expr.Compile(p.on, refs)
	for i := range p.keys {
		p.keys[i].prog = expr.Compile(p.keys[i].sval, refs)
	}
	for _, cs := range [][]plannedClause{p.matched, p.notMatched, p.bySrc} {
		for i := range cs {
			c := &cs[i]
			if c.cond != nil {
				c.condProg = expr.Compile(c.cond, refs)
			}
			if c.values != nil {
				c.valueProgs = make([]*expr.Program, len(c.values))
				for j, e := range c.values {
					if e != nil {
						c.valueProgs[j] = expr.Compile(e, refs)
					}
				}
			}
		}
	}
}

// planClause resolves one clause.
func (p *plan) planClause(r *resolver, c Clause, sides side, what string) (plannedClause, error) {
	pc := plannedClause{action: c.Action}
	var err error
	if c.Condition != nil {
		pc.text = c.Condition.String()
		if pc.cond, err = r.resolve(c.Condition, sides, what+" condition"); err != nil {
			return pc, err
		}
	}
	if c.Action == ActionDelete {
		if len(c.Set) > 0 || c.All {
			return pc, fmt.Errorf("%w: %s: a DELETE sets no column", ErrMergeClause, what)
		}
		return pc, nil
	}
	if c.All && len(c.Set) > 0 {
		return pc, fmt.Errorf("%w: %s: both SET * and assignments", ErrMergeClause, what)
	}
	if !c.All && len(c.Set) == 0 {
		return pc, fmt.Errorf("%w: %s: %s sets no column", ErrMergeClause, what, c.Action)
	}
	if c.All && sides&source == 0 {
		return pc, fmt.Errorf("%w: %s: SET * needs the source", ErrMergeClause, what)
	}
	pc.values = make([]expr.Expr, len(p.tsch.Fields))
	if c.All {
		for i, f := range p.tsch.Fields {
			if p.ssch.Index(f.Name) < 0 {
				if p.generated[i] || f.IsIdentity() {
					// computed by the writer; an identity column keeps
					// its value in an update, gets one in an insert
					continue
				}
				return pc, fmt.Errorf("%w: %s: the source has no column %q for %s *", ErrMergeColumn, what, f.Name, c.Action)
			}
			if err := identityAssigned(&p.tsch.Fields[i], c.Action, what); err != nil {
				return pc, err
			}
			pc.values[i] = expr.Column{Name: sourcePrefix + p.ssch.Fields[p.ssch.Index(f.Name)].Name}
		}
		return pc, p.planStores(&pc, what)
	}
	for _, a := range c.Set {
		i, err := r.targetColumn(a.Column)
		if err != nil {
			return pc, fmt.Errorf("%s: %w", what, err)
		}
		if err := identityAssigned(&p.tsch.Fields[i], c.Action, what); err != nil {
			return pc, err
		}
		if pc.values[i] != nil {
			return pc, fmt.Errorf("%w: %s: column %q is assigned twice", ErrMergeClause, what, p.tsch.Fields[i].Name)
		}
		if a.Value == nil {
			return pc, fmt.Errorf("%w: %s: no value for %q", ErrMergeClause, what, a.Column)
		}
		if pc.values[i], err = r.resolve(a.Value, sides, fmt.Sprintf("%s value of %s", what, a.Column)); err != nil {
			return pc, err
		}
	}
	return pc, p.planStores(&pc, what)
}

// planStores makes the assigners of a clause's values: each value stored
// into its target column by store assignment (see assigner), structs
// field by field by name. Types that cannot be stored across (a struct
// field on one side only) are ErrMergeColumn and expr.ErrAssign.
func (p *plan) planStores(pc *plannedClause, what string) error {
	pc.stores = make([]expr.Assigner, len(pc.values))
	for i, e := range pc.values {
		if e == nil {
			continue
		}
		var err error
		if pc.stores[i], err = assigner(e, &p.tsch.Fields[i], p.typeOf); err != nil {
			return deltaerr.Mark(fmt.Errorf("merge: %s: %w", what, err), ErrMergeColumn)
		}
	}
	return nil
}

// typeOf is the type of a resolved column name.
func (p *plan) typeOf(name string) (schema.DataType, bool) {
	sch := p.tsch
	rest, ok := strings.CutPrefix(name, targetPrefix)
	if !ok {
		if rest, ok = strings.CutPrefix(name, sourcePrefix); !ok {
			return nil, false
		}
		sch = p.ssch
	}
	_, t, ok := expr.FieldPath(sch, rest)
	return t, ok
}

// splitOn finds the equality terms of the condition (hash keys) and its
// conjuncts over target columns alone (for skipping).
func (p *plan) splitOn() {
	var terms []expr.Expr
	var flat func(e expr.Expr)
	flat = func(e expr.Expr) {
		if a, ok := e.(expr.And); ok {
			for _, t := range a.Terms {
				flat(t)
			}
			return
		}
		terms = append(terms, e)
	}
	flat(p.on)
	var tonly []expr.Expr
	for _, t := range terms {
		s := sides(t)
		if s == target {
			if tc, err := toTarget(t); err == nil {
				tonly = append(tonly, tc)
			}
			continue
		}
		c, ok := t.(expr.Compare)
		if !ok || c.Op != expr.Eq {
			continue
		}
		l, r := c.Left, c.Right
		if sides(l) != target {
			l, r = r, l
		}
		col, ok := l.(expr.Column)
		if !ok || sides(r) != source || !strings.HasPrefix(col.Name, targetPrefix) {
			continue
		}
		name := strings.TrimPrefix(col.Name, targetPrefix)
		i := p.tsch.Index(name)
		if i < 0 {
			continue // a nested field: no hash key, the condition still decides
		}
		p.keys = append(p.keys, joinKey{tcol: i, tname: p.tsch.Fields[i].Name, sval: r})
	}
	if len(tonly) > 0 {
		p.targetOnly = and(tonly)
	}
}

// sides reports which sides e's columns come from (0 for none).
func sides(e expr.Expr) side {
	var s side
	for _, c := range expr.Columns(e) {
		switch {
		case strings.HasPrefix(c, targetPrefix):
			s |= target
		case strings.HasPrefix(c, sourcePrefix):
			s |= source
		}
	}
	return s
}

// toTarget turns a resolved expression over the target alone into one over
// the table's own column names.
func toTarget(e expr.Expr) (expr.Expr, error) {
	return expr.MapColumns(e, func(c expr.Column) (expr.Expr, error) {
		name, ok := strings.CutPrefix(c.Name, targetPrefix)
		if !ok {
			return nil, fmt.Errorf("%w: %q is not a target column", ErrMergeColumn, c.Name)
		}
		return expr.Column{Name: name}, nil
	})
}

func and(es []expr.Expr) expr.Expr {
	if len(es) == 1 {
		return es[0]
	}
	return expr.And{Terms: es}
}

func or(es []expr.Expr) expr.Expr {
	if len(es) == 1 {
		return es[0]
	}
	return expr.Or{Terms: es}
}

// literal is v as an expression literal.
func literal(v schema.Value) expr.Literal {
	if v.Kind() == schema.KindString {
		return expr.Literal{Value: v, Text: v.String(), IsText: true}
	}
	return expr.Literal{Value: v}
}

// keyBuilder encodes join key values so that values equal in SQL encode
// the same: every value is first cast to its target column's type.
type keyBuilder struct {
	buf []byte
}

// add appends v, of a key on the target column f, and reports false
// when the value is null or cannot be a key (a null key never matches).
func (k *keyBuilder) add(v schema.Value, f *schema.StructField) bool {
	if v.IsNull() {
		return false
	}
	v, err := castTo(v, f)
	if err != nil || v.IsNull() {
		return false
	}
	switch v.Kind() {
	case schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindLong, schema.KindDate, schema.KindTimestamp, schema.KindTimestampNTZ:
		// Fixed width: the key's type is the column's, so the bytes
		// delimit themselves.
		k.buf = binary.BigEndian.AppendUint64(k.buf, uint64(v.Int64()))
	case schema.KindFloat, schema.KindDouble:
		f := v.Float64()
		if f == 0 {
			f = 0 // -0 = 0
		}
		if math.IsNaN(f) {
			k.buf = append(k.buf, "NaN"...)
		} else {
			k.buf = strconv.AppendFloat(k.buf, f, 'g', -1, 64)
		}
	case schema.KindString, schema.KindBinary:
		s := v.String()
		if v.Kind() == schema.KindBinary {
			s = string(v.Bytes())
		}
		k.buf = strconv.AppendInt(k.buf, int64(len(s)), 10)
		k.buf = append(k.buf, ':')
		k.buf = append(k.buf, s...)
	default:
		s := v.String()
		k.buf = strconv.AppendInt(k.buf, int64(len(s)), 10)
		k.buf = append(k.buf, ':')
		k.buf = append(k.buf, s...)
	}
	k.buf = append(k.buf, 0)
	return true
}

// identityAssigned refuses what Spark refuses of an identity column in a
// clause (IdentityColumn.blockIdentityColumnUpdate and
// blockExplicitIdentityColumnInsert): an update of any identity column,
// and an insert of a value into a GENERATED ALWAYS one. An insert that
// leaves the column out has it generated.
func identityAssigned(f *schema.StructField, a Action, what string) error {
	def, ok, err := f.Identity()
	switch {
	case err != nil || !ok:
		return err
	case a == ActionUpdate:
		return fmt.Errorf("%w: %s: identity column %q cannot be updated", ErrMergeClause, what, f.Name)
	case a == ActionInsert && !def.AllowExplicitInsert:
		return fmt.Errorf("%w: %s: identity column %q is GENERATED ALWAYS: its values cannot be inserted", ErrMergeClause, what, f.Name)
	}
	return nil
}
