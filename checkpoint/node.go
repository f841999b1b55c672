package checkpoint

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

type nodeKind uint8

const (
	leafKind nodeKind = iota
	structKind
	listKind
	mapKind
)

// leafConv says how to turn a leaf's physical values into Go values.
type leafConv uint8

const (
	convPlain     leafConv = iota // by physical kind; byte arrays as strings
	convDate                      // INT32 days since the epoch
	convTimestamp                 // INT64 with unit, or INT96
	convDecimal                   // any physical kind, with scale
)

// node is one field of the file schema, with the levels and leaf range the
// decoder needs.
type node struct {
	name     string
	kind     nodeKind
	optional bool
	repeated bool
	def, rep int // max definition and repetition level at this node
	first    int // index of the first leaf column under this node
	// numLeaves is the number of leaf columns under this node.
	numLeaves int
	children  []*node

	// Leaf conversion.
	phys  parquet.Kind
	conv  leafConv
	unit  int64 // timestamp: units per second
	utc   bool  // timestamp: adjusted to UTC
	scale int32 // decimal scale
}

func buildNode(c *parquet.Column, parent *node, counter *int) *node {
	n := &node{name: c.Name(), optional: c.Optional(), repeated: c.Repeated(), first: *counter}
	if parent != nil {
		n.def, n.rep = parent.def, parent.rep
		if n.optional || n.repeated {
			n.def++
		}
		if n.repeated {
			n.rep++
		}
	}
	if c.Leaf() {
		n.kind = leafKind
		n.numLeaves = 1
		*counter++
		t := c.Type()
		n.phys = t.Kind()
		if lt := t.LogicalType(); lt != nil {
			switch v := lt.Value.(type) {
			case *format.DateType:
				n.conv = convDate
			case *format.TimestampType:
				n.conv, n.utc = convTimestamp, v.IsAdjustedToUTC
				switch v.Unit.Value.(type) {
				case *format.MilliSeconds:
					n.unit = 1e3
				case *format.NanoSeconds:
					n.unit = 1e9
				default:
					n.unit = 1e6
				}
			case *format.DecimalType:
				n.conv, n.scale = convDecimal, v.Scale
			}
		}
		if n.phys == parquet.Int96 {
			n.conv, n.utc = convTimestamp, true
		}
		if n.conv == convDate && n.phys != parquet.Int32 {
			n.conv = convPlain
		}
		if n.conv == convTimestamp && n.phys != parquet.Int64 && n.phys != parquet.Int96 {
			n.conv = convPlain
		}
		return n
	}
	n.kind = structKind
	if lt := c.Type().LogicalType(); lt != nil {
		switch lt.Value.(type) {
		case *format.MapType:
			n.kind = mapKind
		case *format.ListType:
			n.kind = listKind
		}
	}
	for _, cc := range c.Columns() {
		n.children = append(n.children, buildNode(cc, n, counter))
	}
	n.numLeaves = *counter - n.first
	// A MAP or LIST annotation is only honoured on the shape the format
	// defines; anything else is read as a plain struct.
	switch n.kind {
	case mapKind:
		if len(n.children) != 1 || !n.children[0].repeated || n.children[0].kind == leafKind || len(n.children[0].children) != 2 {
			n.kind = structKind
		}
	case listKind:
		if len(n.children) != 1 || !n.children[0].repeated {
			n.kind = structKind
		}
	}
	return n
}

func (n *node) child(name string) *node {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// subCols returns the part of cols (relative to n) that belongs to child c.
func (n *node) subCols(c *node, cols [][]parquet.Value) [][]parquet.Value {
	return cols[c.first-n.first : c.first-n.first+c.numLeaves]
}

// decodeValue decodes the value of n (not repeated, or one element of a
// repeated n whose presence the caller checked) from the values of its
// leaves in one row. It returns nil for null.
//
// Structs decode as map[string]any (null fields absent), lists as []any,
// maps as map[string]any keyed by the key's string form, and leaves as bool,
// int64, float64, string, dateValue, timestampValue or decimalValue.
func (n *node) decodeValue(cols [][]parquet.Value) any {
	if len(cols) == 0 || len(cols[0]) == 0 {
		fail("column %s has no value for a row", n.name)
	}
	if !n.repeated && n.optional && cols[0][0].DefinitionLevel() < n.def {
		return nil
	}
	switch n.kind {
	case leafKind:
		return n.leafValue(cols[0][0])
	case structKind:
		return n.decodeStruct(cols)
	case listKind:
		r := n.children[0]
		var elem *node
		if r.kind == structKind && len(r.children) == 1 && r.name != "array" && r.name != n.name+"_tuple" {
			elem = r.children[0] // three-level list: repeated group of one element
		}
		out := []any{}
		r.eachElement(cols, func(ec [][]parquet.Value) {
			if elem != nil {
				out = append(out, elem.decodeValue(ec))
			} else {
				out = append(out, r.decodeValue(ec))
			}
		})
		return out
	case mapKind:
		r := n.children[0]
		k, v := r.children[0], r.children[1]
		out := map[string]any{}
		r.eachElement(cols, func(ec [][]parquet.Value) {
			key := k.decodeValue(r.subCols(k, ec))
			if key == nil {
				return
			}
			out[keyString(key)] = v.decodeValue(r.subCols(v, ec))
		})
		return out
	}
	return nil
}

// decodeStruct decodes a struct node; children whose columns were not
// loaded are left out.
func (n *node) decodeStruct(cols [][]parquet.Value) any {
	m := make(map[string]any, len(n.children))
	for _, c := range n.children {
		sc := n.subCols(c, cols)
		if len(sc) == 0 || sc[0] == nil {
			continue // not loaded
		}
		var v any
		if c.repeated {
			out := []any{}
			c.eachElement(sc, func(ec [][]parquet.Value) { out = append(out, c.decodeValue(ec)) })
			v = out
		} else {
			v = c.decodeValue(sc)
		}
		if v != nil {
			m[c.name] = v
		}
	}
	return m
}

// eachElement splits the values of repeated node r within one instance of
// its parent into elements and calls f with each element's values.
func (r *node) eachElement(cols [][]parquet.Value, f func([][]parquet.Value)) {
	if len(cols) == 0 || len(cols[0]) == 0 {
		fail("column %s has no value for a row", r.name)
	}
	if cols[0][0].DefinitionLevel() < r.def {
		return // empty or null
	}
	pos := make([]int, len(cols))
	ec := make([][]parquet.Value, len(cols))
	for {
		done := 0
		for j, c := range cols {
			start := pos[j]
			if start >= len(c) {
				done++
				continue
			}
			end := start + 1
			for end < len(c) && c[end].RepetitionLevel() > r.rep {
				end++
			}
			ec[j] = c[start:end]
			pos[j] = end
		}
		if done == len(cols) {
			return
		}
		if done != 0 {
			fail("columns under %s disagree on the number of elements", r.name)
		}
		f(ec)
	}
}

func keyString(k any) string {
	switch v := k.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	}
	return partitionString(k)
}

type (
	dateValue      int32 // days since 1970-01-01
	timestampValue struct {
		t   time.Time
		utc bool
	}
	decimalValue string // the decimal, as digits with a point
)

func (n *node) leafValue(v parquet.Value) any {
	if v.IsNull() {
		return nil
	}
	switch n.conv {
	case convDate:
		return dateValue(v.Int32())
	case convTimestamp:
		if v.Kind() == parquet.Int96 {
			i := v.Int96()
			nanos := int64(uint64(i[1])<<32 | uint64(i[0]))
			days := int64(i[2]) - 2440588
			return timestampValue{time.Unix(days*86400, nanos).UTC(), true}
		}
		x := v.Int64()
		sec, frac := x/n.unit, x%n.unit
		if frac < 0 {
			sec--
			frac += n.unit
		}
		return timestampValue{time.Unix(sec, frac*(1e9/n.unit)).UTC(), n.utc}
	case convDecimal:
		var u *big.Int
		switch v.Kind() {
		case parquet.Int32:
			u = big.NewInt(int64(v.Int32()))
		case parquet.Int64:
			u = big.NewInt(v.Int64())
		case parquet.ByteArray, parquet.FixedLenByteArray:
			u = signedBigEndian(v.ByteArray())
		default:
			return nil
		}
		return decimalValue(formatDecimal(u, n.scale))
	}
	switch v.Kind() {
	case parquet.Boolean:
		return v.Boolean()
	case parquet.Int32:
		return int64(v.Int32())
	case parquet.Int64:
		return v.Int64()
	case parquet.Float:
		return float64(v.Float())
	case parquet.Double:
		return v.Double()
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray())
	}
	return nil
}

func signedBigEndian(b []byte) *big.Int {
	u := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	return u
}

func formatDecimal(u *big.Int, scale int32) string {
	s := u.String()
	if scale <= 0 {
		if scale < 0 && u.Sign() != 0 {
			s += strings.Repeat("0", int(-scale))
		}
		return s
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for len(s) <= int(scale) {
		s = "0" + s
	}
	s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	if neg {
		s = "-" + s
	}
	return s
}

// partitionString serializes a partition value as the protocol's
// partitionValues map holds it; null is "".
func partitionString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case dateValue:
		return time.Unix(int64(x)*86400, 0).UTC().Format(time.DateOnly)
	case timestampValue:
		return x.t.Format("2006-01-02 15:04:05.999999")
	case decimalValue:
		return string(x)
	}
	return ""
}

// jsonStatsValue converts a decoded stats_parsed value to its form in the
// JSON stats string. ok is false for values JSON cannot hold (NaN, ±Inf).
func jsonStatsValue(v any) (out any, ok bool) {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			if je, ok := jsonStatsValue(e); ok {
				m[k] = je
			}
		}
		return m, true
	case []any:
		l := make([]any, 0, len(x))
		for _, e := range x {
			if je, ok := jsonStatsValue(e); ok {
				l = append(l, je)
			}
		}
		return l, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return x, true
	case dateValue:
		return partitionString(x), true
	case timestampValue:
		if x.utc {
			return x.t.Format("2006-01-02T15:04:05.000Z"), true
		}
		return x.t.Format("2006-01-02T15:04:05.000"), true
	case decimalValue:
		return jsonNumber(x), true
	}
	return v, true
}
