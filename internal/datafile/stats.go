package datafile

// Delta per-file statistics (PROTOCOL.md, "Per-file Statistics"), gathered
// by the Writer while it shreds values, in the form Spark writes them.
//
// # Which columns
//
// Statistics columns are the leaf fields of the physical schema in schema
// order, structs flattened; an array, a map, a variant or a void field is
// one column, nested fields inside it are not. The first
// StatsOptions.NumIndexedCols of them are indexed
// (delta.dataSkippingNumIndexedCols), or those StatsOptions.StatsColumns
// names (delta.dataSkippingStatsColumns).
//
// # What is written, and why each bound is valid
//
//   - numRecords: the rows written. tightBounds: true (a new file has no
//     deleted rows).
//   - nullCount for every indexed column: the rows in which the field is
//     null, including those where an enclosing struct is null. For a void
//     column, every row.
//   - minValues and maxValues for indexed columns of a type with an order:
//     the integers, float, double, decimal, string, date, timestamp and
//     timestamp_ntz. Booleans, binaries, arrays, maps and variants get none,
//     nor does a column whose values are all null. Every bound satisfies
//     min <= v <= max for every non-null v, as readers take it:
//   - Decimals are JSON numbers with every digit of the scale, exactly.
//   - Dates are "2024-01-31"; timestamps are "2024-01-31T08:09:10.123Z"
//     (timestamp_ntz without the Z), truncated down to milliseconds, min
//     and max alike, as Spark writes them: the true max is at most 999µs
//     above the written one, which readers widen by 999µs. A date or
//     timestamp outside years 0001 to 9999 gets no bound (its text form
//     would not read back).
//   - Strings keep at most StringPrefixLength characters (Unicode code
//     points). A min is cut to that prefix, still <= the min. A max longer
//     than the prefix becomes the prefix plus a tie-breaker character
//     above the character cut off: U+007F when that character is ASCII
//     below U+007F, else U+10FFFF; a cut-off U+10FFFF cannot be beaten, so
//     the prefix takes it in and moves on (up to twice the prefix length;
//     past that the max is left out). Strings order by UTF-8 bytes, which
//     is code point order, so prefix+tie-breaker is above every value.
//     Strings that are not valid UTF-8 cannot be written as JSON exactly:
//     a min is cut before its first invalid byte (a shorter prefix, still
//     a lower bound) and such a max is left out.
//   - Float and double follow Spark's order, in which NaN is above every
//     number: min is the least non-NaN value, max is NaN ("NaN" in the
//     JSON) when a NaN was written, so a reader that finds it does not
//     skip the file for "x > 1e300", which a NaN row satisfies in that
//     order. A column of only NaNs has min and max NaN. Infinities are
//     written "Infinity" and "-Infinity".

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/godelta/delta/internal/statsjson"
	"github.com/godelta/delta/schema"
)

// Defaults of StatsOptions, those of the Delta table properties.
const (
	DefaultNumIndexedCols     = 32
	DefaultStringPrefixLength = 32
)

// StatsOptions choose the columns that get statistics and how strings are
// cut. The zero value is Delta's default: the first 32 leaf columns,
// strings cut to 32 characters.
type StatsOptions struct {
	// NumIndexedCols is delta.dataSkippingNumIndexedCols: the first N leaf
	// columns get statistics; 0 means DefaultNumIndexedCols, a negative
	// number every column. (For the property's 0, no columns, set
	// StatsColumns to an empty non-nil slice.)
	NumIndexedCols int
	// StatsColumns is delta.dataSkippingStatsColumns: when not nil it
	// replaces NumIndexedCols, and exactly the named columns get
	// statistics. Names are physical, dotted for nested fields; a struct's
	// name stands for all its leaves; a part may be quoted in backticks
	// when it holds a dot (`a.b`.c). Names match ignoring case; names that
	// match no column are ignored.
	StatsColumns []string
	// StringPrefixLength is delta.dataSkippingStringPrefixLength: strings
	// bounds keep at most this many characters; 0 means
	// DefaultStringPrefixLength.
	StringPrefixLength int
	// TightBounds writes "tightBounds": true (a new file's bounds are
	// tight). Spark writes the field on tables that support deletion
	// vectors, the only ones whose bounds can become wide, and there in
	// stats_parsed too; elsewhere it leaves it out of both.
	TightBounds bool
	// Exclude are top-level physical field names that get no statistics
	// and do not count against NumIndexedCols: columns of the file that are
	// not table columns (the hidden columns of row tracking), of which
	// Spark keeps no statistics either.
	Exclude []string
}

// Stats are the statistics of one written file; Stats.JSON encodes them
// (the one stats codec, internal/statsjson).
type Stats = statsjson.Stats

// ColumnStats are the statistics of one indexed column.
type ColumnStats = statsjson.Column

// ---- collection ----

// accKind is what an accumulator gathers besides its null count.
type accKind uint8

const (
	accNulls accKind = iota // boolean, binary, array, map, variant
	accVoid                 // void: every row null
	accInt                  // integers, date, timestamps: int64 order
	accFloat
	accString
	accDecimal
)

// colAcc gathers the statistics of one indexed column.
//
// Invariant: when has is set, min <= v <= max for every non-null value v
// added (non-NaN for floats; nan records a NaN); nulls counts the nulls
// added, directly or through a null enclosing struct.
type colAcc struct {
	path  []string
	typ   schema.DataType
	kind  accKind
	nulls int64
	has   bool

	minI, maxI int64
	minF, maxF float64
	nan        bool
	minS, maxS string
	minD, maxD *big.Int
	scale      int // decimals: the column's scale
}

func (a *colAcc) addInt(x int64) {
	widen(&a.minI, &a.maxI, !a.has, x, x)
	a.has = true
}

func (a *colAcc) addFloat(f float64) {
	if f != f { // NaN
		a.nan = true
		return
	}
	widen(&a.minF, &a.maxF, !a.has, f, f)
	a.has = true
}

// addString keeps s itself: Values are immutable, so holding the string
// holds no buffer of the caller's that could change.
func (a *colAcc) addString(s string) {
	widen(&a.minS, &a.maxS, !a.has, s, s)
	a.has = true
}

// widen makes *lo..*hi take in x..y (x <= y, no NaN); when empty, it
// becomes x..y. On a tie a bound keeps the value it holds (the zero it
// has, of -0.0 and +0.0).
func widen[T cmp.Ordered](lo, hi *T, empty bool, x, y T) {
	if empty {
		*lo, *hi = x, y
		return
	}
	if x < *lo {
		*lo = x
	}
	if y > *hi {
		*hi = y
	}
}

func (a *colAcc) addDecimal(v schema.Value) {
	u, _, scale := v.Decimal()
	if scale < a.scale {
		u.Mul(u, pow10[a.scale-scale])
	}
	if !a.has {
		a.minD, a.maxD, a.has = u, new(big.Int).Set(u), true
		return
	}
	if u.Cmp(a.minD) < 0 {
		a.minD.Set(u)
	}
	if u.Cmp(a.maxD) > 0 {
		a.maxD.Set(u)
	}
}

// add adds a non-null value whose kind the shredder has checked.
func (a *colAcc) add(v schema.Value) {
	switch a.kind {
	case accInt:
		a.addInt(v.Int64())
	case accFloat:
		a.addFloat(v.Float64())
	case accString:
		a.addString(v.String())
	case accDecimal:
		a.addDecimal(v)
	}
}

// collector holds the accumulators of a file's indexed columns.
type collector struct {
	numRecords   int64
	cols         []*colAcc
	prefixLength int
	tightBounds  bool
}

// newCollector picks the indexed columns of physical and hangs their
// accumulators on the write nodes: each on its own node, and on the under
// list of the node and of every enclosing struct.
func newCollector(physical *schema.StructType, top []*wnode, opts StatsOptions) (*collector, error) {
	c := &collector{prefixLength: opts.StringPrefixLength, tightBounds: opts.TightBounds}
	if c.prefixLength <= 0 {
		c.prefixLength = DefaultStringPrefixLength
	}
	limit := opts.NumIndexedCols
	switch {
	case limit == 0:
		limit = DefaultNumIndexedCols
	case limit < 0:
		limit = math.MaxInt
	}
	var names [][]string
	if opts.StatsColumns != nil {
		for _, s := range opts.StatsColumns {
			if p := splitColumnName(s); len(p) > 0 {
				names = append(names, p)
			}
		}
	}
	seen := 0
	var walk func(st *schema.StructType, nodes []*wnode, path []string, ancestors []*wnode)
	walk = func(st *schema.StructType, nodes []*wnode, path []string, ancestors []*wnode) {
		for i := range st.Fields {
			f := &st.Fields[i]
			n := nodes[i]
			if path == nil && slices.Contains(opts.Exclude, f.Name) {
				continue
			}
			p := child(path, f.Name)
			if sub, ok := f.Type.(*schema.StructType); ok && n != nil {
				walk(sub, n.children, p, append(ancestors, n))
				continue
			}
			var indexed bool
			if opts.StatsColumns != nil {
				indexed = matchesAny(names, p)
			} else {
				indexed = seen < limit
			}
			seen++
			if !indexed {
				continue
			}
			a := &colAcc{path: p, typ: f.Type, kind: accKindOf(f.Type)}
			if dt, ok := f.Type.(schema.DecimalType); ok {
				a.scale = dt.Scale
			}
			c.cols = append(c.cols, a)
			if n == nil {
				a.kind = accVoid
				continue
			}
			n.stat = a
			n.under = append(n.under, a)
			for _, anc := range ancestors {
				anc.under = append(anc.under, a)
			}
		}
	}
	walk(physical, top, nil, nil)
	return c, nil
}

// accKindOf returns what an indexed column of type t gathers.
func accKindOf(t schema.DataType) accKind {
	switch t := t.(type) {
	case schema.DecimalType:
		return accDecimal
	case schema.PrimitiveType:
		switch t {
		case schema.Byte, schema.Short, schema.Integer, schema.Long, schema.Date, schema.Timestamp, schema.TimestampNTZ:
			return accInt
		case schema.Float, schema.Double:
			return accFloat
		case schema.String:
			return accString
		case schema.Void:
			return accVoid
		}
	}
	return accNulls
}

// splitColumnName splits a dotted column name, honouring backtick quotes
// (a doubled backtick inside quotes is one backtick).
func splitColumnName(s string) []string {
	var parts []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '`' && quoted && i+1 < len(s) && s[i+1] == '`':
			cur.WriteByte('`')
			i++
		case ch == '`':
			quoted = !quoted
		case ch == '.' && !quoted:
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(ch)
		}
	}
	parts = append(parts, strings.TrimSpace(cur.String()))
	return parts
}

// matchesAny reports whether one of names is path or a prefix of it (a
// struct standing for its leaves), ignoring case.
func matchesAny(names [][]string, path []string) bool {
next:
	for _, n := range names {
		if len(n) > len(path) {
			continue
		}
		for i := range n {
			if !strings.EqualFold(n[i], path[i]) {
				continue next
			}
		}
		return true
	}
	return false
}

// The range of dates and timestamps whose bounds are written: years 0001
// to 9999, which the text form reads back.
const (
	minStatDay    = -719162 // 0001-01-01
	maxStatDay    = 2932896 // 9999-12-31
	minStatMicros = -62135596800000000
	maxStatMicros = 253402300799999999
)

// result returns the statistics gathered.
func (c *collector) result() Stats {
	s := Stats{NumRecords: c.numRecords, TightBounds: c.tightBounds, Columns: make([]ColumnStats, 0, len(c.cols))}
	for _, a := range c.cols {
		cs := ColumnStats{Path: a.path, Type: a.typ, NullCount: a.nulls}
		if a.kind == accVoid {
			cs.NullCount = c.numRecords
		}
		cs.Min, cs.Max = a.bounds(c.prefixLength)
		s.Columns = append(s.Columns, cs)
	}
	return s
}

// bounds returns the min and max to write; see the file comment.
func (a *colAcc) bounds(prefix int) (lo, hi schema.Value) {
	switch a.kind {
	case accInt:
		if !a.has {
			return
		}
		return intValue(a.typ, a.minI), intValue(a.typ, a.maxI)
	case accFloat:
		if !a.has && !a.nan {
			return
		}
		mk := schema.DoubleValue
		if a.typ == schema.Float {
			mk = func(f float64) schema.Value { return schema.FloatValue(float32(f)) }
		}
		nan := math.NaN()
		switch {
		case !a.has:
			return mk(nan), mk(nan)
		case a.nan:
			return mk(a.minF), mk(nan)
		}
		return mk(a.minF), mk(a.maxF)
	case accString:
		if !a.has {
			return
		}
		lo = schema.StringValue(truncateMin(a.minS, prefix))
		if s, ok := truncateMax(a.maxS, prefix); ok {
			hi = schema.StringValue(s)
		}
		return lo, hi
	case accDecimal:
		if !a.has {
			return
		}
		dt := a.typ.(schema.DecimalType)
		lo, _ = schema.DecimalValue(a.minD, dt.Precision, dt.Scale)
		hi, _ = schema.DecimalValue(a.maxD, dt.Precision, dt.Scale)
		return lo, hi
	}
	return
}

// intValue returns x as a value of t, an integer, date or timestamp type;
// timestamps truncated down to milliseconds. A date or timestamp out of
// the written range gives null.
func intValue(t schema.DataType, x int64) schema.Value {
	switch t {
	case schema.Byte:
		return schema.ByteValue(int8(x))
	case schema.Short:
		return schema.ShortValue(int16(x))
	case schema.Integer:
		return schema.IntegerValue(int32(x))
	case schema.Long:
		return schema.LongValue(x)
	case schema.Date:
		if x < minStatDay || x > maxStatDay {
			return schema.Value{}
		}
		return schema.DateValue(int32(x))
	case schema.Timestamp, schema.TimestampNTZ:
		if x < minStatMicros || x > maxStatMicros {
			return schema.Value{}
		}
		ms := floorDiv(x, 1000) * 1000
		if t == schema.Timestamp {
			return schema.TimestampValue(ms)
		}
		return schema.TimestampNTZValue(ms)
	}
	return schema.Value{}
}

// truncateMin returns the first n characters of s, cut before its first
// byte that is not UTF-8: a prefix, so a lower bound of s.
func truncateMin(s string, n int) string {
	i := 0
	for count := 0; i < len(s) && count < n; count++ {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	return s[:i]
}

// Tie-breakers appended to a cut max: above every character they replace.
const (
	asciiTieBreaker = "\u007f"
	maxTieBreaker   = "\U0010ffff"
)

// truncateMax returns an upper bound of s of about n characters: s when it
// is no longer, else a prefix of s plus a tie-breaker above the character
// cut off. It reports false when no such bound is written: s is not UTF-8
// before the cut, or the prefix would run past 2n characters.
func truncateMax(s string, n int) (string, bool) {
	i := 0
	for count := 0; i < len(s); count++ {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return "", false
		}
		if count >= n && r != utf8.MaxRune {
			if r < 0x7f {
				return s[:i] + asciiTieBreaker, true
			}
			return s[:i] + maxTieBreaker, true
		}
		if count >= 2*n {
			return "", false
		}
		i += size
	}
	return s, true
}
