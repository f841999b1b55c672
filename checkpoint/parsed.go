package checkpoint

import (
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/internal/parquetio"
	"github.com/godelta/delta/internal/statsjson"
)

// This file turns add.stats_parsed and add.partitionValues_parsed, the
// typed forms of a file's statistics and partition values that some writers
// put in checkpoints, back into the string forms of the actions: the JSON
// statistics string (PROTOCOL.md, "Per-file Statistics") and the partition
// value strings ("Partition Value Serialization"). Both are keyed by
// physical column name under column mapping, and kept so.
//
// Their columns are read only for rows whose string form is null, and only
// from the first such row of a row group on.

// valueKind is how a leaf of a parsed struct is rendered.
type valueKind uint8

const (
	vSkip      valueKind = iota // not rendered: binary, or a type Delta has no stats for
	vBool                       // BOOLEAN
	vInt                        // INT32 or INT64, signed
	vUint                       // INT32 or INT64 annotated unsigned
	vFloat                      // FLOAT or DOUBLE
	vText                       // BYTE_ARRAY holding text
	vBinary                     // BYTE_ARRAY holding bytes (partition values only)
	vDate                       // INT32 DATE: days since the epoch
	vTimestamp                  // INT64 TIMESTAMP of some unit, or INT96
	vDecimal                    // DECIMAL of any physical type
)

// valueKindOf says how the values of leaf column c are rendered.
func valueKindOf(c *parquet.Column) (k valueKind, scale int32, unit int64, utc bool) {
	lt := logicalOf(c)
	var lv any
	if lt != nil {
		lv = lt.Value
	}
	switch phys := kindOf(c); phys {
	case parquet.Boolean:
		return vBool, 0, 0, false
	case parquet.Float, parquet.Double:
		return vFloat, 0, 0, false
	case parquet.Int96:
		return vTimestamp, 0, 0, true
	case parquet.Int32, parquet.Int64:
		switch v := lv.(type) {
		case *format.DateType:
			if phys == parquet.Int32 {
				return vDate, 0, 0, false
			}
		case *format.TimestampType:
			if phys == parquet.Int64 {
				unit := int64(1e6)
				switch v.Unit.Value.(type) {
				case *format.MilliSeconds:
					unit = 1e3
				case *format.NanoSeconds:
					unit = 1e9
				}
				return vTimestamp, 0, unit, v.IsAdjustedToUTC
			}
		case *format.DecimalType:
			return vDecimal, v.Scale, 0, false
		case *format.IntType:
			if !v.IsSigned {
				return vUint, 0, 0, false
			}
		case nil:
		default:
			return vSkip, 0, 0, false // TIME and the like: not a Delta type
		}
		return vInt, 0, 0, false
	case parquet.ByteArray, parquet.FixedLenByteArray:
		if v, ok := lv.(*format.DecimalType); ok {
			return vDecimal, v.Scale, 0, false
		}
		if phys == parquet.ByteArray {
			if isText(c) {
				return vText, 0, 0, false
			}
			return vBinary, 0, 0, false
		}
	}
	return vSkip, 0, 0, false
}

// jsonNode is a field of stats_parsed: a struct (with kids) or a leaf.
type jsonNode struct {
	key    string // the field name as a JSON string followed by ':'
	def    byte   // definition level at which the field is not null
	leaf   *leaf
	kind   valueKind
	scale  int32
	unit   int64
	utc    bool
	kids   []*jsonNode
	leaves []*leaf // every bound leaf at or under the node
}

// parsedStats is a bound add.stats_parsed (or remove.stats_parsed).
type parsedStats struct {
	g    *group
	root *jsonNode
	buf  []byte
}

// bindParsedStats binds stats_parsed column c (nil if absent) into its own
// group, to be opened only when needed.
func bindParsedStats(src *source, c *parquet.Column) *parsedStats {
	if c == nil || c.Leaf() || c.MaxRepetitionLevel() != 0 {
		return nil
	}
	g := &group{name: pathOf(c), def: structDef(c), src: src}
	root := bindJSON(binder{g}, c)
	if root == nil {
		return nil
	}
	return &parsedStats{g: g, root: root}
}

// bindJSON binds the struct or leaf c and what is under it, leaving out
// what the JSON statistics cannot hold. It returns nil if nothing is left.
func bindJSON(b binder, c *parquet.Column) *jsonNode {
	n := &jsonNode{key: string(statsjson.AppendString(nil, c.Name())) + ":", def: byte(c.MaxDefinitionLevel())}
	if c.Repeated() {
		return nil
	}
	if c.Leaf() {
		n.kind, n.scale, n.unit, n.utc = valueKindOf(c)
		if n.kind == vSkip || n.kind == vBinary {
			return nil
		}
		n.leaf = b.bindLeaf(c)
		n.leaf.raw.Text = n.kind == vText
		n.leaves = []*leaf{n.leaf}
		return n
	}
	if lt := logicalOf(c); lt != nil && lt.Value != nil {
		return nil // a LIST, MAP or VARIANT: no statistics of those in JSON
	}
	for _, cc := range c.Columns() {
		if k := bindJSON(b, cc); k != nil {
			n.kids = append(n.kids, k)
			n.leaves = append(n.leaves, k.leaves...)
		}
	}
	if len(n.kids) == 0 {
		return nil
	}
	return n
}

// read returns the JSON statistics of row, "" if stats_parsed is null.
func (p *parsedStats) read(row int) string {
	p.g.seek(row)
	defer func() { p.g.row++ }()
	r := p.root
	if r.leaves[0].Def() < r.def {
		r.skip()
		return ""
	}
	p.buf = r.appendObject(p.buf[:0])
	return string(p.buf)
}

// skip moves every leaf under n past the current row.
func (n *jsonNode) skip() {
	for _, l := range n.leaves {
		l.Need()
		l.Next()
	}
}

// appendObject appends struct n, present in the current row, as a JSON
// object. Null fields, and structs left empty, are left out, as writers of
// the JSON statistics do.
func (n *jsonNode) appendObject(buf []byte) []byte {
	buf = append(buf, '{')
	empty := len(buf)
	for _, k := range n.kids {
		mark := len(buf)
		if len(buf) > empty {
			buf = append(buf, ',')
		}
		buf = append(buf, k.key...)
		ok := false
		if k.leaf != nil {
			buf, ok = k.appendValue(buf)
		} else if k.leaves[0].Def() >= k.def {
			buf = k.appendObject(buf)
			ok = buf[len(buf)-2] != '{' // not an empty object
		} else {
			k.skip()
		}
		if !ok {
			buf = buf[:mark]
		}
	}
	return append(buf, '}')
}

// appendValue appends the value of leaf n in the current row and moves
// past it. ok is false for a null, or a value JSON cannot hold (NaN, ±Inf).
func (n *jsonNode) appendValue(buf []byte) ([]byte, bool) {
	l := n.leaf
	if !l.Has() {
		l.Next()
		return buf, false
	}
	vs, j := l.src()
	defer l.Next()
	switch n.kind {
	case vBool:
		return strconv.AppendBool(buf, vs.Bits[j>>3]>>(j&7)&1 != 0), true
	case vInt:
		return strconv.AppendInt(buf, intAt(l, vs, j), 10), true
	case vUint:
		return strconv.AppendUint(buf, uintAt(l, vs, j), 10), true
	case vFloat:
		f, bits := floatAt(l, vs, j)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return buf, false
		}
		return strconv.AppendFloat(buf, f, 'g', -1, bits), true
	case vText:
		return statsjson.AppendString(buf, stringAt(vs, j)), true
	case vDate:
		buf = append(buf, '"')
		buf = appendDate(buf, int64(vs.I32[j]))
		return append(buf, '"'), true
	case vTimestamp:
		return statsjson.AppendTimestamp(buf, n.timeAt(l, vs, j), n.utc), true
	case vDecimal:
		return appendDecimal(buf, l, vs, j, n.scale)
	}
	return buf, false
}

// stringAt returns byte array value j as a string.
func stringAt(vs *parquetio.Values, j int) string {
	if vs.Strs != nil {
		return vs.Strs[j]
	}
	if vs.Text != "" || vs.Bytes == nil {
		return vs.TextAt(j)
	}
	return string(vs.Bytes[vs.Offs[j]:vs.Offs[j+1]])
}

func intAt(l *leaf, vs *parquetio.Values, j int) int64 {
	if l.Kind == parquet.Int32 {
		return int64(vs.I32[j])
	}
	return vs.I64[j]
}

func uintAt(l *leaf, vs *parquetio.Values, j int) uint64 {
	if l.Kind == parquet.Int32 {
		return uint64(uint32(vs.I32[j]))
	}
	return uint64(vs.I64[j])
}

func floatAt(l *leaf, vs *parquetio.Values, j int) (float64, int) {
	if l.Kind == parquet.Float {
		return float64(vs.F32[j]), 32
	}
	return vs.F64[j], 64
}

// timeAt returns timestamp value j, in UTC.
func (n *jsonNode) timeAt(l *leaf, vs *parquetio.Values, j int) time.Time {
	if l.Kind == parquet.Int96 {
		// Nanoseconds of the day, then the Julian day number.
		v := vs.I96[j]
		nanos := int64(uint64(v[1])<<32 | uint64(v[0]))
		days := int64(v[2]) - 2440588 // Julian day of 1970-01-01
		return time.Unix(days*86400, nanos).UTC()
	}
	x := vs.I64[j]
	sec, frac := x/n.unit, x%n.unit
	if frac < 0 {
		sec--
		frac += n.unit
	}
	return time.Unix(sec, frac*(1e9/n.unit)).UTC()
}

func appendDate(buf []byte, days int64) []byte {
	return time.Unix(days*86400, 0).UTC().AppendFormat(buf, time.DateOnly)
}

// appendDecimal appends decimal value j with its scale, as digits with a
// decimal point. ok is false for a value that cannot be read.
func appendDecimal(buf []byte, l *leaf, vs *parquetio.Values, j int, scale int32) ([]byte, bool) {
	if scale < 0 || scale > 76 {
		return buf, false
	}
	var digits []byte
	var tmp [24]byte
	switch l.Kind {
	case parquet.Int32:
		digits = strconv.AppendInt(tmp[:0], int64(vs.I32[j]), 10)
	case parquet.Int64:
		digits = strconv.AppendInt(tmp[:0], vs.I64[j], 10)
	case parquet.ByteArray, parquet.FixedLenByteArray:
		var b []byte
		if l.Kind == parquet.ByteArray {
			b = vs.Bytes[vs.Offs[j]:vs.Offs[j+1]]
		} else {
			b = vs.Bytes[j*vs.Size : (j+1)*vs.Size]
		}
		if len(b) == 0 {
			return buf, false
		}
		if len(b) <= 8 {
			var x int64
			for _, c := range b {
				x = x<<8 | int64(c)
			}
			x <<= 64 - 8*uint(len(b)) // sign-extend from the top byte
			x >>= 64 - 8*uint(len(b))
			digits = strconv.AppendInt(tmp[:0], x, 10)
		} else {
			u := new(big.Int).SetBytes(b)
			if b[0]&0x80 != 0 {
				u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
			}
			digits = u.Append(nil, 10)
		}
	default:
		return buf, false
	}
	if digits[0] == '-' {
		buf = append(buf, '-')
		digits = digits[1:]
	}
	s := int(scale)
	if s == 0 {
		return append(buf, digits...), true
	}
	if len(digits) <= s {
		buf = append(buf, '0', '.')
		for range s - len(digits) {
			buf = append(buf, '0')
		}
		return append(buf, digits...), true
	}
	buf = append(buf, digits[:len(digits)-s]...)
	buf = append(buf, '.')
	return append(buf, digits[len(digits)-s:]...), true
}

// parsedPartitions is a bound add.partitionValues_parsed.
type parsedPartitions struct {
	g      *group
	fields []partitionField
	buf    []byte
}

type partitionField struct {
	name  string
	leaf  *leaf
	kind  valueKind
	scale int32
	unit  int64
	utc   bool
}

// bindParsedPartitions binds partitionValues_parsed column c (nil if
// absent) into its own group, to be opened only when needed.
func bindParsedPartitions(src *source, c *parquet.Column) *parsedPartitions {
	if c == nil || c.Leaf() || c.MaxRepetitionLevel() != 0 {
		return nil
	}
	p := &parsedPartitions{g: &group{name: pathOf(c), def: structDef(c), src: src}}
	b := binder{p.g}
	for _, cc := range c.Columns() {
		if !cc.Leaf() || cc.Repeated() {
			continue // partition columns are primitive
		}
		f := partitionField{name: cc.Name()}
		f.kind, f.scale, f.unit, f.utc = valueKindOf(cc)
		if f.kind == vSkip {
			continue
		}
		f.leaf = b.bindLeaf(cc)
		f.leaf.raw.Text = f.kind == vText
		p.fields = append(p.fields, f)
	}
	if len(p.fields) == 0 {
		return nil
	}
	return p
}

// read returns the partition values of row, nil if partitionValues_parsed
// is null. A null value is "".
func (p *parsedPartitions) read(row int) map[string]string {
	p.g.seek(row)
	defer func() { p.g.row++ }()
	if p.fields[0].leaf.Def() < p.g.def {
		for _, f := range p.fields {
			f.leaf.Need()
			f.leaf.Next()
		}
		return nil
	}
	out := make(map[string]string, len(p.fields))
	for _, f := range p.fields {
		out[f.name] = p.value(&f)
	}
	return out
}

// value returns the serialized partition value of field f in the current
// row and moves past it.
func (p *parsedPartitions) value(f *partitionField) string {
	l := f.leaf
	if !l.Has() {
		l.Next()
		return ""
	}
	vs, j := l.src()
	defer l.Next()
	b := p.buf[:0]
	switch f.kind {
	case vText, vBinary:
		return stringAt(vs, j)
	case vBool:
		return strconv.FormatBool(vs.Bits[j>>3]>>(j&7)&1 != 0)
	case vInt:
		return strconv.FormatInt(intAt(l, vs, j), 10)
	case vUint:
		return strconv.FormatUint(uintAt(l, vs, j), 10)
	case vFloat:
		x, bits := floatAt(l, vs, j)
		return strconv.FormatFloat(x, 'g', -1, bits)
	case vDate:
		b = appendDate(b, int64(vs.I32[j]))
	case vTimestamp:
		n := jsonNode{unit: f.unit}
		t := n.timeAt(l, vs, j)
		if f.utc {
			b = t.AppendFormat(b, "2006-01-02T15:04:05.000000Z")
		} else {
			b = t.AppendFormat(b, time.DateTime)
			if t.Nanosecond() != 0 {
				b = t.AppendFormat(b, ".000000")
			}
		}
	case vDecimal:
		b, _ = appendDecimal(b, l, vs, j, f.scale)
	}
	p.buf = b
	return string(b)
}
