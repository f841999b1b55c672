package checkpoint

import (
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/godelta/delta/internal/statsjson"
	"github.com/godelta/delta/schema"
)

// This file builds the typed columns of add: stats_parsed from the JSON
// statistics string (PROTOCOL.md "Per-file Statistics") and
// partitionValues_parsed from the partition value strings ("Partition
// Value Serialization"), both keyed by physical column name.
//
// stats_parsed is typed by the table's physical schema:
//
//	numRecords: long
//	minValues, maxValues: struct of every column with min/max statistics
//	    (all primitive types but binary and boolean, nested structs as
//	    structs)
//	nullCount: struct of every column as long (nested structs as structs)
//	tightBounds: boolean, when the table supports deletion vectors
//
// A value the JSON holds in a form the type cannot take (a string for a
// number, a timestamp that does not parse) is written as null: the typed
// form is an accelerator, and the JSON string stays the reference unless
// delta.checkpoint.writeStatsAsJson is false.

// statsNode returns the stats_parsed node for the physical schema, or nil
// when the schema has no column.
func statsNode(physical *schema.StructType, tightBounds bool) *wnode {
	n := wstruct(colStatsParsed, wleaf(fNumRecords, wLong))
	if mm := minMaxNode(fMinValues, physical); mm != nil {
		n.kids = append(n.kids, mm, minMaxNode(fMaxValues, physical))
	}
	if nc := nullCountNode(physical); nc != nil {
		n.kids = append(n.kids, nc)
	}
	if tightBounds {
		n.kids = append(n.kids, wleaf(fTightBounds, wBool))
	}
	indexKids(n)
	return n
}

func minMaxNode(name string, st *schema.StructType) *wnode {
	n := wstruct(name)
	for i := range st.Fields {
		f := &st.Fields[i]
		if sub, ok := f.Type.(*schema.StructType); ok {
			if k := minMaxNode(f.Name, sub); k != nil {
				n.kids = append(n.kids, k)
			}
			continue
		}
		// Spark keeps bounds for numbers, dates, timestamps and strings
		// only (SkippingEligibleDataType): none for binaries and booleans,
		// in the JSON stats and in stats_parsed alike.
		if f.Type == schema.Binary || f.Type == schema.Boolean {
			continue
		}
		if k, ok := typedNode(f.Name, f.Type); ok {
			n.kids = append(n.kids, k)
		}
	}
	if len(n.kids) == 0 {
		return nil
	}
	return n
}

func nullCountNode(st *schema.StructType) *wnode {
	n := wstruct(fNullCount)
	for i := range st.Fields {
		f := &st.Fields[i]
		if sub, ok := f.Type.(*schema.StructType); ok {
			if k := nullCountNode(sub); k != nil {
				k.name = f.Name
				n.kids = append(n.kids, k)
			}
			continue
		}
		n.kids = append(n.kids, wleaf(f.Name, wLong))
	}
	if len(n.kids) == 0 {
		return nil
	}
	return n
}

// partitionsNode returns the partitionValues_parsed node: one field per
// partition column, by physical name, of the column's type. Columns whose
// type has no typed form are left out; nil when none is left.
func partitionsNode(cols []partitionCol) *wnode {
	n := wstruct(colPartitionsParsed)
	for _, c := range cols {
		if c.node != nil {
			n.kids = append(n.kids, c.node)
		}
	}
	if len(n.kids) == 0 {
		return nil
	}
	return n
}

// partitionCol is a partition column: its physical name, Delta type and
// node in partitionValues_parsed (nil when it has none).
type partitionCol struct {
	physical string
	typ      schema.DataType
	node     *wnode
}

// partitionsValue returns the partitionValues_parsed value of a file with
// partition values pv; a value that does not parse is null.
func partitionsValue(n *wnode, cols []partitionCol, pv map[string]string) []any {
	out := make([]any, 0, len(n.kids))
	for _, c := range cols {
		if c.node == nil {
			continue
		}
		s, ok := pv[c.physical]
		if !ok || s == "" {
			out = append(out, nil)
			continue
		}
		v, err := schema.ParsePartitionValue(c.typ, s)
		if err != nil {
			out = append(out, nil)
			continue
		}
		out = append(out, goValue(c.node, v))
	}
	return out
}

// goValue converts a schema.Value to the Go value put takes for leaf n.
func goValue(n *wnode, v schema.Value) any {
	switch v.Kind() {
	case schema.KindNull:
		return nil
	case schema.KindBoolean:
		return v.Bool()
	case schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindDate:
		return int32(v.Int64())
	case schema.KindLong, schema.KindTimestamp, schema.KindTimestampNTZ:
		return v.Int64()
	case schema.KindFloat:
		return float32(v.Float64())
	case schema.KindDouble:
		return v.Float64()
	case schema.KindString, schema.KindBinary:
		return v.Bytes()
	case schema.KindDecimal:
		u, _, scale := v.Decimal()
		if scale != n.scale {
			return nil
		}
		return u
	}
	return nil
}

// parsedStatsValue returns the stats_parsed value for the JSON statistics
// stats, read with the stats codec (internal/statsjson), or nil when there
// are none or they are not a JSON object. Keys the node does not have are
// skipped; a value of the wrong JSON type is null. When a key repeats, the
// last one wins.
func parsedStatsValue(n *wnode, stats string) any {
	if strings.TrimSpace(stats) == "" {
		return nil
	}
	out := make([]any, len(n.kids))
	p := statsjson.NewScanner(stats)
	if err := p.Fields(func(key string) error {
		return structMember(n, out, key, &p, 1)
	}); err != nil {
		return nil
	}
	return out
}

// structMember reads the member key of a JSON object, at nesting depth
// depth, into out, the value of struct node n.
func structMember(n *wnode, out []any, key string, p *statsjson.Scanner, depth int) error {
	i, ok := n.index[key]
	if !ok {
		return p.Skip(depth)
	}
	k := n.kids[i]
	out[i] = nil
	if k.kind == wStruct {
		if !p.AtObject() {
			return p.Skip(depth)
		}
		sub := make([]any, len(k.kids))
		if err := p.Object(depth+1, func(key string) error { return structMember(k, sub, key, p, depth+1) }); err != nil {
			return err
		}
		out[i] = sub
		return nil
	}
	jk, text, cut, err := p.Scalar(depth)
	if err != nil {
		return err
	}
	out[i] = jsonLeaf(k, jk, text, cut)
	return nil
}

// indexKids fills the index of every struct node under n.
func indexKids(n *wnode) {
	if n.kind != wStruct {
		return
	}
	n.index = make(map[string]int, len(n.kids))
	for i, k := range n.kids {
		if _, dup := n.index[k.name]; !dup {
			n.index[k.name] = i
		}
		indexKids(k)
	}
}

// jsonLeaf converts a JSON statistics scalar (its kind, its text and, for
// strings, the offset of the first invalid UTF-8 byte or -1; see
// statsjson.Scanner.Scalar) to the Go value of leaf n, or nil when it does
// not fit.
func jsonLeaf(n *wnode, k statsjson.Kind, text string, cut int) any {
	switch n.kind {
	case wBool:
		if k != statsjson.Bool {
			return nil
		}
		return text == "true"
	case wString:
		if k != statsjson.String {
			return nil
		}
		if cut >= 0 {
			return validUTF8(text)
		}
		return text
	case wByte, wShort, wInt:
		if k != statsjson.Number {
			return nil
		}
		i, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			return nil
		}
		return int32(i)
	case wLong:
		if k != statsjson.Number {
			return nil
		}
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil
		}
		return i
	case wFloat, wDouble:
		f, ok := jsonFloat(k, text)
		if !ok {
			return nil
		}
		if n.kind == wFloat {
			return float32(f)
		}
		return f
	case wDate:
		if k != statsjson.String {
			return nil
		}
		t, err := time.Parse("2006-01-02", text)
		if err != nil {
			return nil
		}
		return int32(t.Unix() / 86400)
	case wTimestamp, wTimestampNTZ:
		if k != statsjson.String {
			return nil
		}
		us, ok := parseStatsTimestamp(text, n.kind == wTimestamp)
		if !ok {
			return nil
		}
		return us
	case wDecimal:
		if k != statsjson.Number {
			return nil
		}
		return unscaled(text, n.scale)
	}
	return nil
}

// validUTF8 replaces each invalid UTF-8 byte of s with U+FFFD, as
// encoding/json does when it decodes a string.
func validUTF8(s string) string {
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// jsonFloat reads a float statistic: a JSON number, or the strings Spark
// writes for the non-finite values.
func jsonFloat(k statsjson.Kind, text string) (float64, bool) {
	switch k {
	case statsjson.Number:
		f, err := strconv.ParseFloat(text, 64)
		return f, err == nil
	case statsjson.String:
		switch text {
		case "NaN":
			return math.NaN(), true
		case "Infinity":
			return math.Inf(1), true
		case "-Infinity":
			return math.Inf(-1), true
		}
	}
	return 0, false
}

// statsTimestampLayouts are the forms of timestamp statistics: ISO 8601
// with a zone (Spark writes its session zone's offset, delta-rs Z), and
// without one for timestamp_ntz.
var statsTimestampLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"}

// parseStatsTimestamp parses a timestamp statistic to microseconds since
// the epoch. A value without a zone is taken as UTC.
func parseStatsTimestamp(s string, zoned bool) (int64, bool) {
	for _, layout := range statsTimestampLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if !zoned && layout == time.RFC3339Nano && !strings.HasSuffix(s, "Z") {
				continue // an offset on a timestamp_ntz: not a value we know
			}
			return t.UnixMicro(), true
		}
	}
	return 0, false
}

// unscaled returns the unscaled value of the decimal number s at scale, or
// nil when s has more fraction digits than the scale allows.
func unscaled(s string, scale int) any {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	if !r.IsInt() {
		return nil
	}
	return new(big.Int).Set(r.Num())
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
