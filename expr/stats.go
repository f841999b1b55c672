package expr

// Data skipping with per-file statistics.
//
// An add action may carry a JSON string of statistics about its data file
// (PROTOCOL.md, "Per-file Statistics"):
//
//	{"numRecords":3,"tightBounds":true,
//	 "minValues":{"a":1,"s":{"b":"x"}},"maxValues":{...},"nullCount":{...}}
//
// minValues, maxValues and nullCount mirror the table schema, nested structs
// included, and under column mapping (id or name mode) every key at every
// level is the field's physical name. This file decodes that JSON into a
// Stats, keyed by logical column name as Column uses it ("a", "s.b"), and
// decides with MightMatch whether a predicate can hold for any row of the
// file.
//
// # How MightMatch decides
//
// Each node of the predicate is evaluated to the set of outcomes that a row
// of the file could give it: a subset of {TRUE, FALSE, NULL}, computed from
// the column's bounds and null counts. NOT swaps TRUE and FALSE; AND and OR
// combine two sets with SQL's three-valued logic, as if their operands were
// independent (which over-approximates, never under-approximates). The file
// is skipped only when TRUE is not in the set of the whole predicate. This
// handles NOT, NOT IN, != and IS [NOT] NULL the same way as everything else,
// where negating a "skip" answer would be wrong.
//
// Every leaf over-approximates the outcomes the evaluator Eval would give a
// row, so MightMatch never skips a file in which Eval is TRUE for some row:
//
//   - A comparison of a column with a literal reads the literal exactly as
//     Eval does (text literals take the column's type; a number compared
//     with a string column makes Eval read the column as a number, whose
//     order the string bounds say nothing about, so nothing is skipped).
//   - Whatever is not understood gives all three outcomes: a column the
//     stats do not know, a column compared with a column, a type mismatch,
//     a NaN literal, a missing bound.
//
// # What the statistics promise, and how each rule is kept
//
//   - Bounds are kept only for non-null values: min <= v <= max for every
//     non-null valid value v. With tightBounds=false (deletion vectors) the
//     bounds are "wide" but still bounds, so they are used the same way.
//   - nullCount and numRecords: with deletion vectors numRecords counts the
//     physical rows, deleted ones included, and with wide bounds nullCount
//     tells only whether it is 0 (no valid row is null) or numRecords (every
//     valid row is null); any other value "should be treated as if absent".
//     Those two cases are the only ones nullability uses (see nulls), so the
//     rule holds for tight and wide bounds alike.
//   - Timestamps are written truncated to milliseconds (Spark), so the true
//     maximum may be up to 999µs above the written one: the max is widened
//     by 999µs. The truncated min is still a lower bound.
//   - Strings are written as a prefix (32 characters by default). A prefix
//     is still a lower bound, but a truncated max is not an upper bound:
//     Spark appends a tie-breaker character (U+FFFD in old versions, U+007F
//     or U+10FFFF now) that was chosen in UTF-16 order in old versions, and
//     other writers may not append one at all. So a string max M is read
//     only as "every value is <= M or starts with M", after dropping a
//     final tie-breaker: "all values < x" is proved only when x > M and x
//     does not start with M. A string that holds a lone surrogate or
//     invalid UTF-8 (a prefix cut inside a character) is cut there first.
//     Strings compare by UTF-8 bytes, as Spark does.
//   - Floats: a NaN bound (written "NaN") is unknown; a NaN literal skips
//     nothing; and != never skips a float column, since writers that follow
//     Parquet leave NaN out of min and max.
//   - Decimals compare exactly. Some writers store decimal bounds as JSON
//     numbers printed from a double; for a precision above 15 digits such a
//     number may be rounded either way, so it is widened by one unit in the
//     last place of the double and rounded outwards to the column's scale.
//   - A value that does not fit the column's type leaves that bound
//     unknown; it never makes ParseStats fail. Only JSON that is not JSON,
//     or a top level that is not an object, is an error (ErrInvalidStats).

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/godelta/delta/internal/statsjson"
	"github.com/godelta/delta/schema"
)

// ErrInvalidStats marks a stats string that is not well-formed JSON, whose
// top level is not an object or that is nested too deeply; it matches
// deltaerr.ErrCorrupt too. It is the error of the stats codec
// (internal/statsjson), which Decode reads the JSON with.
var ErrInvalidStats = statsjson.ErrInvalid

// timestampSlack is how far a timestamp max written in milliseconds may lie
// below the true max, in microseconds.
const timestampSlack = 999

// StatsDecoder decodes the stats of the files of one table: it maps the
// physical names of the stats JSON to logical columns once, so decoding a
// file does no schema work. It never changes after NewStatsDecoder and is
// safe for concurrent use.
type StatsDecoder struct {
	root   *statsNode
	cols   []statsColumn
	byName map[string]int // logical name (dotted for nested) -> index in cols
	byFold map[string]int // lower-cased logical name -> index; -1 when ambiguous
}

// statsColumn is one leaf column the decoder keeps statistics for.
type statsColumn struct {
	name string
	typ  schema.DataType
}

// statsNode is a struct level of the schema, keyed by physical name; leaf
// is the index into cols for a leaf column and -1 for a struct.
type statsNode struct {
	children map[string]*statsNode
	leaf     int
}

// NewStatsDecoder returns a decoder for tables with schema logical under
// column mapping mode. With columns nil it keeps statistics for every leaf
// column (nested struct fields as dotted paths; arrays and maps are leaves);
// otherwise only for the named ones, which is what a scan wants: name the
// columns of its predicate (Columns gives them) and partition columns. Names
// that match no column are ignored: such a column is unknown to the Stats.
//
// Names are the logical paths Column uses. When a top-level field's own name
// contains a dot and equals a nested path, the field that comes first in
// schema order wins.
func NewStatsDecoder(logical *schema.StructType, mode schema.ColumnMappingMode, columns []string) *StatsDecoder {
	d := &StatsDecoder{root: &statsNode{leaf: -1}, byName: map[string]int{}, byFold: map[string]int{}}
	var want map[string]bool
	if columns != nil {
		want = make(map[string]bool, len(columns))
		for _, c := range columns {
			want[c] = true
			want[strings.ToLower(c)] = true
		}
	}
	if logical != nil {
		d.add(d.root, logical, "", mode, want)
	}
	return d
}

func (d *StatsDecoder) add(node *statsNode, st *schema.StructType, prefix string, mode schema.ColumnMappingMode, want map[string]bool) {
	for i := range st.Fields {
		f := &st.Fields[i]
		name := f.Name
		if prefix != "" {
			name = prefix + "." + f.Name
		}
		phys := f.PhysicalName(mode)
		if sub, ok := f.Type.(*schema.StructType); ok {
			child := &statsNode{leaf: -1}
			d.add(child, sub, name, mode, want)
			if len(child.children) > 0 {
				node.put(phys, child)
			}
			continue
		}
		fold := strings.ToLower(name)
		if want != nil && !want[name] && !want[fold] {
			continue
		}
		if _, dup := d.byName[name]; dup {
			continue
		}
		idx := len(d.cols)
		d.cols = append(d.cols, statsColumn{name: name, typ: f.Type})
		d.byName[name] = idx
		if _, seen := d.byFold[fold]; seen {
			d.byFold[fold] = -1
		} else {
			d.byFold[fold] = idx
		}
		node.put(phys, &statsNode{leaf: idx})
	}
}

func (n *statsNode) put(key string, child *statsNode) {
	if n.children == nil {
		n.children = map[string]*statsNode{}
	}
	if _, dup := n.children[key]; !dup {
		n.children[key] = child
	}
}

// lookup returns the index of the column named name: the exact logical
// name, else the one column whose name matches ignoring case.
func (d *StatsDecoder) lookup(name string) (int, bool) {
	if i, ok := d.byName[name]; ok {
		return i, true
	}
	if i, ok := d.byFold[strings.ToLower(name)]; ok && i >= 0 {
		return i, true
	}
	return 0, false
}

// Stats are one file's statistics, decoded for one table schema. A Stats
// is not changed after it is returned and is safe for concurrent use.
type Stats struct {
	dec           *StatsDecoder
	numRecords    int64
	hasNumRecords bool
	tight         bool
	cols          []colStats // parallel to dec.cols
}

// colStats are the statistics of one column.
//
// Invariant: min and max, when not null, have the column's type; every
// non-null valid value v of the column satisfies min <= v, and v <= max,
// or, when maxPrefix, v <= max or v starts with max. minExact and maxExact
// say that a bound was written as a value of the column, not loosened by
// truncation or widening, so exact bounds min == max == x prove that every
// non-null value is x.
type colStats struct {
	min, max           schema.Value
	maxPrefix          bool
	minExact, maxExact bool
	nullCount          int64
	hasNullCount       bool
	// partition marks a value from WithPartitionValues: every row holds min
	// (null when min is null).
	partition bool
}

// ParseStats decodes the stats JSON of an add action for a table with
// schema logical under column mapping mode; see the file comment for the
// rules. An empty raw gives stats in which nothing is known. Malformed JSON
// gives an error matching ErrInvalidStats and deltaerr.ErrCorrupt; a value
// that does not fit its column's type only leaves that statistic unknown.
//
// For many files of one table, NewStatsDecoder once and Decode per file is
// cheaper.
func ParseStats(raw string, logical *schema.StructType, mode schema.ColumnMappingMode) (*Stats, error) {
	return NewStatsDecoder(logical, mode, nil).Decode(raw)
}

// NumRecords returns the number of records in the data file (with a
// deletion vector, deleted rows included), and false when the stats do not
// say.
func (s *Stats) NumRecords() (int64, bool) { return s.numRecords, s.hasNumRecords }

// TightBounds reports the stats' tightBounds flag: true when absent.
func (s *Stats) TightBounds() bool { return s.tight }

// NullCount returns the nullCount statistic of a column, as written.
func (s *Stats) NullCount(column string) (int64, bool) {
	if c, ok := s.column(column); ok && c.hasNullCount {
		return c.nullCount, true
	}
	return 0, false
}

// Min returns the lower bound MightMatch uses for the non-null values of a
// column, and false when there is none.
func (s *Stats) Min(column string) (schema.Value, bool) {
	if c, ok := s.column(column); ok && !c.min.IsNull() {
		return c.min, true
	}
	return schema.Value{}, false
}

// Max returns the upper bound MightMatch uses for the non-null values of a
// column, and false when there is none: for timestamps the written max
// widened by 999µs; for strings the written max without a final tie-breaker
// character, which bounds values only up to extension (see the file
// comment).
func (s *Stats) Max(column string) (schema.Value, bool) {
	if c, ok := s.column(column); ok && !c.max.IsNull() {
		return c.max, true
	}
	return schema.Value{}, false
}

func (s *Stats) column(name string) (*colStats, bool) {
	if s == nil || s.dec == nil {
		return nil, false
	}
	i, ok := s.dec.lookup(name)
	if !ok {
		return nil, false
	}
	return &s.cols[i], true
}

// WithPartitionValues returns stats in which the given partition columns
// (logical name -> value of the column's type, null allowed) hold exactly
// that value in every row, so that one MightMatch covers partition pruning
// and stats skipping. Columns the decoder does not keep are ignored. s is
// not changed.
func (s *Stats) WithPartitionValues(vals map[string]schema.Value) *Stats {
	if s == nil {
		return nil
	}
	out := *s
	out.cols = append([]colStats(nil), s.cols...)
	for name, v := range vals {
		if i, ok := s.dec.lookup(name); ok {
			out.cols[i] = colStats{min: v, max: v, minExact: true, maxExact: true, partition: true}
		}
	}
	return &out
}

// nulls reports whether some valid row of the file may hold null in the
// column, and whether some may hold a non-null value. Only nullCount == 0
// and nullCount == numRecords are read, the two values that carry
// information with wide bounds as well as tight ones; any other count says
// both are possible, which is what it means with tight bounds anyway.
func (s *Stats) nulls(c *colStats) (mayNull, mayNonNull bool) {
	switch {
	case c.partition:
		return c.min.IsNull(), !c.min.IsNull()
	case !c.hasNullCount || c.nullCount < 0:
		return true, true
	case c.nullCount == 0:
		return false, true
	case s.hasNumRecords && c.nullCount == s.numRecords:
		return true, false
	}
	return true, true
}

// outcomes is a set of the truth values rows of a file may give a
// predicate.
type outcomes uint8

const (
	mayTrue outcomes = 1 << iota
	mayFalse
	mayNull
	anyOutcome = mayTrue | mayFalse | mayNull
)

func triOutcome(t Tri) outcomes {
	switch t {
	case True:
		return mayTrue
	case False:
		return mayFalse
	}
	return mayNull
}

// not swaps TRUE and FALSE.
func (o outcomes) not() outcomes {
	return o&mayNull | (o&mayTrue)<<1 | (o&mayFalse)>>1
}

// and2 is the set of x AND y for x in a, y in b.
func and2(a, b outcomes) outcomes {
	var out outcomes
	if a&b&mayTrue != 0 {
		out |= mayTrue
	}
	if (a|b)&mayFalse != 0 {
		out |= mayFalse
	}
	if a&mayNull != 0 && b&(mayTrue|mayNull) != 0 || b&mayNull != 0 && a&(mayTrue|mayNull) != 0 {
		out |= mayNull
	}
	return out
}

// or2 is the set of x OR y for x in a, y in b.
func or2(a, b outcomes) outcomes {
	var out outcomes
	if (a|b)&mayTrue != 0 {
		out |= mayTrue
	}
	if a&b&mayFalse != 0 {
		out |= mayFalse
	}
	if a&mayNull != 0 && b&(mayFalse|mayNull) != 0 || b&mayNull != 0 && a&(mayFalse|mayNull) != 0 {
		out |= mayNull
	}
	return out
}

// MightMatch reports false only when it is certain that no row of the file
// satisfies e (Eval would not be True for any row); any doubt (missing
// stats, an unknown column, a type mismatch, NaN, truncated bounds) gives
// true. A nil Stats knows nothing. A file with numRecords 0 has no rows and
// never matches.
func (s *Stats) MightMatch(e Expr) bool {
	if s == nil || s.dec == nil {
		return true
	}
	if s.hasNumRecords && s.numRecords == 0 {
		return false
	}
	return s.eval(e)&mayTrue != 0
}

// noColumns is the lookup for predicates without columns.
func noColumns(string) (schema.DataType, schema.Value, bool) { return nil, schema.Value{}, false }

func (s *Stats) eval(e Expr) outcomes {
	switch e := e.(type) {
	case And:
		out := mayTrue
		for _, t := range e.Terms {
			out = and2(out, s.eval(t))
		}
		return out
	case Or:
		out := mayFalse
		for _, t := range e.Terms {
			out = or2(out, s.eval(t))
		}
		return out
	case Not:
		return s.eval(e.Value).not()
	case Literal:
		return triOutcome(Eval(e, noColumns))
	case Column:
		return s.boolColumn(e.Name)
	case IsNull:
		return s.isNull(e)
	case Compare:
		return s.compare(e)
	case In:
		return s.in(e)
	}
	return anyOutcome
}

// boolColumn is a column used as a predicate: Eval is True or False by its
// boolean value, and Unknown for null and for other types.
func (s *Stats) boolColumn(name string) outcomes {
	i, ok := s.dec.lookup(name)
	if !ok {
		return anyOutcome
	}
	c := &s.cols[i]
	if s.dec.cols[i].typ != schema.Boolean {
		return mayNull
	}
	mayNullRow, mayValue := s.nulls(c)
	var out outcomes
	if mayNullRow {
		out |= mayNull
	}
	if mayValue {
		if c.max.IsNull() || c.max.Kind() != schema.KindBoolean || c.max.Bool() {
			out |= mayTrue
		}
		if c.min.IsNull() || c.min.Kind() != schema.KindBoolean || !c.min.Bool() {
			out |= mayFalse
		}
	}
	return out
}

func (s *Stats) isNull(e IsNull) outcomes {
	col, ok := e.Value.(Column)
	if !ok {
		if _, lit := e.Value.(Literal); lit {
			return triOutcome(Eval(e, noColumns))
		}
		return anyOutcome
	}
	i, ok := s.dec.lookup(col.Name)
	if !ok {
		return anyOutcome
	}
	mayNullRow, mayValue := s.nulls(&s.cols[i])
	var out outcomes
	if mayNullRow {
		out |= mayTrue
	}
	if mayValue {
		out |= mayFalse
	}
	if e.Negate {
		out = out.not()
	}
	return out
}

// flip returns the operator op' with a op b == b op' a.
func flip(op Op) Op {
	switch op {
	case Lt:
		return Gt
	case Le:
		return Ge
	case Gt:
		return Lt
	case Ge:
		return Le
	}
	return op
}

func (s *Stats) compare(e Compare) outcomes {
	lc, lcol := e.Left.(Column)
	rc, rcol := e.Right.(Column)
	_, llit := e.Left.(Literal)
	_, rlit := e.Right.(Literal)
	op, name, other := e.Op, lc.Name, e.Right
	switch {
	case llit && rlit:
		return triOutcome(Eval(e, noColumns))
	case lcol && rcol:
		// Column against column: the bounds of two columns say nothing
		// about one row, but a column that is null in every row makes the
		// comparison null in every row.
		for _, n := range []string{lc.Name, rc.Name} {
			if i, ok := s.dec.lookup(n); ok {
				if _, mayValue := s.nulls(&s.cols[i]); !mayValue {
					return mayNull
				}
			}
		}
		return anyOutcome
	case rcol && llit:
		op, name, other = flip(e.Op), rc.Name, e.Left
	case !(lcol && rlit):
		return anyOutcome
	}
	i, ok := s.dec.lookup(name)
	if !ok {
		return anyOutcome
	}
	c, typ := &s.cols[i], s.dec.cols[i].typ
	_, x, _ := operand(other, typ, noColumns)
	if x.IsNull() {
		return mayNull
	}
	mayNullRow, mayValue := s.nulls(c)
	var out outcomes
	if mayNullRow {
		out |= mayNull
	}
	if mayValue {
		out |= c.compareValues(typ, op, x)
	}
	return out
}

// in evaluates Value [NOT] IN (List). For a non-null row Eval gives True
// when some element equals it, else Unknown when some comparison is
// Unknown, else False; NOT IN negates that.
func (s *Stats) in(e In) outcomes {
	col, ok := e.Value.(Column)
	if !ok {
		if _, lit := e.Value.(Literal); lit {
			allLit := true
			for _, x := range e.List {
				if _, ok := x.(Literal); !ok {
					allLit = false
				}
			}
			if allLit {
				return triOutcome(Eval(e, noColumns))
			}
		}
		return anyOutcome
	}
	if len(e.List) == 0 {
		// Eval gives False for every row, null or not.
		if e.Negate {
			return mayTrue
		}
		return mayFalse
	}
	i, ok := s.dec.lookup(col.Name)
	if !ok {
		return anyOutcome
	}
	c, typ := &s.cols[i], s.dec.cols[i].typ
	mayNullRow, mayValue := s.nulls(c)
	var out outcomes
	if mayNullRow {
		out |= mayNull // every comparison with null is Unknown
	}
	if mayValue {
		elemTrue, elemNull, allFalse := false, false, true
		for _, el := range e.List {
			o := anyOutcome
			if lit, ok := el.(Literal); ok {
				_, x, _ := operand(lit, typ, noColumns)
				if x.IsNull() {
					o = mayNull
				} else {
					o = c.compareValues(typ, Eq, x)
				}
			}
			elemTrue = elemTrue || o&mayTrue != 0
			elemNull = elemNull || o&mayNull != 0
			allFalse = allFalse && o&mayFalse != 0
		}
		if elemTrue {
			out |= mayTrue
		}
		if elemNull {
			out |= mayNull
		}
		if allFalse {
			out |= mayFalse
		}
	}
	if e.Negate {
		out = out.not()
	}
	return out
}

// compareValues returns the outcomes v op x may have for the non-null
// values v of a column of type typ, x being a non-null literal value as
// operand resolved it.
func (c *colStats) compareValues(typ schema.DataType, op Op, x schema.Value) outcomes {
	ck := typeKind(typ)
	switch {
	case ck == schema.KindString && isNumeric(x.Kind()):
		// Eval reads each string as a number: string order says nothing.
		return anyOutcome
	case x.Kind() == schema.KindString && isNumeric(ck):
		x = coerce(x, schema.LongValue(0))
	}
	if (x.Kind() == schema.KindFloat || x.Kind() == schema.KindDouble) && math.IsNaN(x.Float64()) {
		return anyOutcome
	}
	if c.min.IsNull() && c.max.IsNull() {
		return anyOutcome
	}
	// Comparability: Eval gives Unknown where Order fails; treat it as
	// doubt.
	probe := c.min
	if probe.IsNull() {
		probe = c.max
	}
	if _, ok := order(probe, x); !ok {
		return anyOutcome
	}
	var sat, viol bool
	switch op {
	case Eq:
		sat, viol = c.mayEq(x), c.mayNe(x, ck)
	case Ne:
		sat, viol = c.mayNe(x, ck), c.mayEq(x)
	case Lt:
		sat, viol = c.mayLt(x), c.mayGe(x)
	case Le:
		sat, viol = c.mayLe(x), c.mayGt(x)
	case Gt:
		sat, viol = c.mayGt(x), c.mayLe(x)
	case Ge:
		sat, viol = c.mayGe(x), c.mayLt(x)
	default:
		return anyOutcome
	}
	var out outcomes
	if sat {
		out |= mayTrue
	}
	if viol {
		out |= mayFalse
	}
	return out
}

// The may* methods report whether some non-null value v of the column may
// satisfy v op x. Each is false only when the bounds prove otherwise.

func (c *colStats) mayLt(x schema.Value) bool {
	n, ok := order(c.min, x)
	return c.min.IsNull() || !ok || n < 0
}

func (c *colStats) mayLe(x schema.Value) bool {
	n, ok := order(c.min, x)
	return c.min.IsNull() || !ok || n <= 0
}

func (c *colStats) mayGt(x schema.Value) bool {
	if c.max.IsNull() {
		return true
	}
	if c.maxPrefix {
		return !beyondPrefix(c.max, x)
	}
	n, ok := order(c.max, x)
	return !ok || n > 0
}

func (c *colStats) mayGe(x schema.Value) bool {
	if c.max.IsNull() {
		return true
	}
	if c.maxPrefix {
		return !beyondPrefix(c.max, x)
	}
	n, ok := order(c.max, x)
	return !ok || n >= 0
}

func (c *colStats) mayEq(x schema.Value) bool { return c.mayLe(x) && c.mayGe(x) }

// mayNe is false only when every non-null value is x: exact bounds that
// both equal x. Float columns never qualify, as their bounds may leave out
// NaN.
func (c *colStats) mayNe(x schema.Value, ck schema.Kind) bool {
	if !c.minExact || !c.maxExact || c.min.IsNull() || c.max.IsNull() || ck == schema.KindFloat || ck == schema.KindDouble {
		return true
	}
	lo, ok1 := order(c.min, x)
	hi, ok2 := order(c.max, x)
	return !ok1 || !ok2 || lo != 0 || hi != 0
}

// beyondPrefix reports whether x is above every string that is <= max or
// starts with max: x > max and x does not start with max.
func beyondPrefix(max, x schema.Value) bool {
	if max.Kind() != schema.KindString || x.Kind() != schema.KindString {
		return false
	}
	m, s := max.String(), x.String()
	return s > m && !strings.HasPrefix(s, m)
}

// order is Order without copying strings.
func order(a, b schema.Value) (int, bool) {
	if a.Kind() == schema.KindString && b.Kind() == schema.KindString {
		return strings.Compare(a.String(), b.String()), true
	}
	return Order(a, b)
}

// typeKind returns the kind of the values of a column of type t, or
// KindNull for types without a comparable kind.
func typeKind(t schema.DataType) schema.Kind {
	switch t := t.(type) {
	case schema.DecimalType:
		return schema.KindDecimal
	case schema.PrimitiveType:
		switch t {
		case schema.Boolean:
			return schema.KindBoolean
		case schema.Byte:
			return schema.KindByte
		case schema.Short:
			return schema.KindShort
		case schema.Integer:
			return schema.KindInteger
		case schema.Long:
			return schema.KindLong
		case schema.Float:
			return schema.KindFloat
		case schema.Double:
			return schema.KindDouble
		case schema.String:
			return schema.KindString
		case schema.Binary:
			return schema.KindBinary
		case schema.Date:
			return schema.KindDate
		case schema.Timestamp:
			return schema.KindTimestamp
		case schema.TimestampNTZ:
			return schema.KindTimestampNTZ
		}
	}
	return schema.KindNull
}

// ---- decoding ----

// Decode decodes the stats JSON of one add action; see ParseStats.
func (d *StatsDecoder) Decode(raw string) (*Stats, error) {
	s := &Stats{dec: d, tight: true, cols: make([]colStats, len(d.cols))}
	p := statsjson.NewScanner(raw)
	err := p.Fields(func(key string) error {
		switch key {
		case statsjson.KeyNumRecords:
			k, text, _, err := p.Scalar(1)
			if n, ok := statsjson.Count(k, text); ok {
				s.numRecords, s.hasNumRecords = n, true
			}
			return err
		case statsjson.KeyTightBounds:
			k, text, _, err := p.Scalar(1)
			// Anything but true reads as wide bounds, the weaker promise.
			s.tight = k == statsjson.Bool && text == "true"
			return err
		case statsjson.KeyMinValues:
			return d.decodeLevel(&p, d.root, s, statMin, 2)
		case statsjson.KeyMaxValues:
			return d.decodeLevel(&p, d.root, s, statMax, 2)
		case statsjson.KeyNullCount:
			return d.decodeLevel(&p, d.root, s, statNullCount, 2)
		}
		return p.Skip(1)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

type statKind uint8

const (
	statMin statKind = iota
	statMax
	statNullCount
)

// decodeLevel reads the value at one struct level of minValues, maxValues
// or nullCount. Keys the schema does not have, and values whose shape does
// not match it, are skipped (left unknown).
func (d *StatsDecoder) decodeLevel(p *statsjson.Scanner, node *statsNode, s *Stats, which statKind, depth int) error {
	if !p.AtObject() {
		return p.Skip(depth)
	}
	return p.Object(depth, func(key string) error {
		child := node.children[key]
		switch {
		case child == nil:
			return p.Skip(depth)
		case child.leaf < 0:
			return d.decodeLevel(p, child, s, which, depth+1)
		}
		k, text, cut, err := p.Scalar(depth)
		if err != nil || k == statsjson.Null || k == statsjson.Object || k == statsjson.Array {
			return err
		}
		c := &s.cols[child.leaf]
		typ := d.cols[child.leaf].typ
		switch which {
		case statNullCount:
			if n, ok := statsjson.Count(k, text); ok {
				c.nullCount, c.hasNullCount = n, true
			}
		case statMin:
			c.min, _, c.minExact = statValue(typ, k, text, cut, false)
		case statMax:
			c.max, c.maxPrefix, c.maxExact = statValue(typ, k, text, cut, true)
		}
		return nil
	})
}

// statValue converts a JSON scalar of minValues (upper false) or maxValues
// (upper true) to a bound for a column of type typ. It returns a null Value
// when the scalar does not fit the type; prefix is set for a string max
// that bounds values only up to extension; exact when the bound is a value
// of the column, not loosened.
func statValue(typ schema.DataType, k statsjson.Kind, text string, cut int, upper bool) (schema.Value, bool, bool) {
	if dt, ok := typ.(schema.DecimalType); ok {
		return decimalBound(dt, k, text, upper)
	}
	p, _ := typ.(schema.PrimitiveType)
	switch p {
	case schema.Byte, schema.Short, schema.Integer, schema.Long:
		if k != statsjson.Number && k != statsjson.String {
			return schema.Value{}, false, false
		}
		if v, err := schema.ParsePartitionValue(p, text); err == nil {
			return v, false, true
		}
		// An integer printed as a float ("5.0", "1e3") is exact while a
		// double holds every integer of its size.
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return schema.Value{}, false, false
		}
		if v, err := schema.ParsePartitionValue(p, strconv.FormatInt(int64(f), 10)); err == nil {
			return v, false, true
		}
	case schema.Float, schema.Double:
		if k != statsjson.Number && k != statsjson.String {
			return schema.Value{}, false, false
		}
		bits := 64
		if p == schema.Float {
			bits = 32
		}
		f, err := strconv.ParseFloat(text, bits)
		if err != nil && !isRangeErr(err) || math.IsNaN(f) {
			return schema.Value{}, false, false
		}
		if p == schema.Float {
			return schema.FloatValue(float32(f)), false, false
		}
		return schema.DoubleValue(f), false, false
	case schema.Boolean:
		if k == statsjson.Bool || k == statsjson.String {
			if v, err := schema.ParsePartitionValue(p, text); err == nil {
				return v, false, true
			}
		}
	case schema.String:
		if k != statsjson.String {
			return schema.Value{}, false, false
		}
		s := text
		if cut >= 0 {
			s = s[:cut]
		}
		if upper {
			if cut < 0 {
				s = dropTieBreaker(s)
			}
			return schema.StringValue(strings.Clone(s)), true, false
		}
		return schema.StringValue(strings.Clone(s)), false, false
	case schema.Date:
		if k == statsjson.String {
			if v, err := schema.ParsePartitionValue(p, text); err == nil {
				return v, false, true
			}
		}
	case schema.Timestamp, schema.TimestampNTZ:
		if k != statsjson.String {
			return schema.Value{}, false, false
		}
		v, ok := parseStatTimestamp(p, text)
		if !ok {
			return schema.Value{}, false, false
		}
		if upper {
			micros := v.Int64()
			if micros > math.MaxInt64-timestampSlack {
				return schema.Value{}, false, false
			}
			if p == schema.Timestamp {
				return schema.TimestampValue(micros + timestampSlack), false, false
			}
			return schema.TimestampNTZValue(micros + timestampSlack), false, false
		}
		return v, false, false
	}
	return schema.Value{}, false, false
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// dropTieBreaker removes one final character that a writer may have
// appended to a truncated max: U+007F, U+FFFD or U+10FFFF. Dropping it is
// always safe, as the max is read as a prefix bound.
func dropTieBreaker(s string) string {
	r, size := utf8.DecodeLastRuneInString(s)
	if size > 0 && (r == 0x7F || r == 0xFFFD && size == 3 || r == utf8.MaxRune) {
		return s[:len(s)-size]
	}
	return s
}

// parseStatTimestamp reads a timestamp stat: what ParsePartitionValue
// reads, with fraction digits beyond microseconds cut off (which keeps a
// min a lower bound, and a max a bound once widened), and for
// timestamp_ntz a final Z accepted.
func parseStatTimestamp(t schema.PrimitiveType, s string) (schema.Value, bool) {
	if len(s) > 20 && s[19] == '.' {
		j := 20
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j-20 > 6 {
			s = s[:26] + s[j:]
		}
	}
	if t == schema.TimestampNTZ && strings.HasSuffix(s, "Z") {
		s = s[:len(s)-1]
	}
	v, err := schema.ParsePartitionValue(t, s)
	return v, err == nil && !v.IsNull()
}

// decimalBound converts a decimal stat. A string is read exactly. A JSON
// number is exact for precisions up to 15 (a double holds such a decimal
// and its shortest form reads back the same); above that the writer may
// have gone through a double, so the number is widened by one unit in the
// last place of the double and rounded outwards to the scale.
func decimalBound(t schema.DecimalType, k statsjson.Kind, text string, upper bool) (schema.Value, bool, bool) {
	if k != statsjson.Number && k != statsjson.String {
		return schema.Value{}, false, false
	}
	if k == statsjson.String || t.Precision <= 15 {
		if v, err := schema.ParsePartitionValue(t, text); err == nil {
			return v, false, true
		}
		if k == statsjson.String {
			return schema.Value{}, false, false
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return schema.Value{}, false, false
	}
	if upper {
		f = math.Nextafter(f, math.Inf(1))
	} else {
		f = math.Nextafter(f, math.Inf(-1))
	}
	r := new(big.Rat).SetFloat64(f)
	if r == nil {
		return schema.Value{}, false, false
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil)))
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	// QuoRem truncates toward zero; round outwards.
	if m.Sign() != 0 {
		if upper && r.Sign() > 0 {
			q.Add(q, big.NewInt(1))
		} else if !upper && r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		}
	}
	v, err := schema.DecimalValue(q, t.Precision, t.Scale)
	if err != nil {
		return schema.Value{}, false, false
	}
	return v, false, false
}
