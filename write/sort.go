package write

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"slices"

	"github.com/godelta/delta/schema"
)

// DefaultSortMemory is RewriteOptions.SortMemory when it is 0: the rows a
// sorted rewrite stages in memory before it spills a sorted run to disk.
const DefaultSortMemory = 256 << 20

// SortKey gives the sort key of a row of a sorted rewrite, appended to dst:
// keys compare as bytes (bytes.Compare), rows with equal keys stay in the
// order they were read. It must not modify row nor keep it.
type SortKey func(dst []byte, row []schema.Value) ([]byte, error)

// sortedRow is a row staged by a rowSorter: its key, its rank in read
// order (ties), and its values.
type sortedRow struct {
	key []byte
	seq uint64
	row []schema.Value
}

func lessRow(a, b *sortedRow) int {
	return cmp.Or(bytes.Compare(a.key, b.key), cmp.Compare(a.seq, b.seq))
}

// rowSorter is an external sort of rows by key: rows are staged in memory
// up to a budget, then sorted and written as a run to a temporary file;
// the rows come out of the merge of the runs and what is left in memory.
// The order is by (key, read order) whichever the budget, so a sort that
// spills gives the rows in exactly the order one in memory does.
type rowSorter struct {
	budget int64
	dir    string
	mem    []sortedRow
	bytes  int64
	seq    uint64
	runs   []string // temporary files, each a sorted run
	buf    []byte
	// vslab and kslab are the free tails of the blocks staged rows and
	// keys are copied into: one allocation per block, not per row.
	vslab []schema.Value
	kslab []byte
	// Spills counts the runs written, for tests and metrics.
	spills int
}

// Sizes of the blocks staged rows are copied into.
const (
	slabValues = 8192
	slabBytes  = 64 << 10
)

func newRowSorter(budget int64, dir string) *rowSorter {
	if budget <= 0 {
		budget = DefaultSortMemory
	}
	return &rowSorter{budget: budget, dir: dir}
}

// add stages a copy of row under key.
func (s *rowSorter) add(key []byte, row []schema.Value) error {
	if len(s.vslab) < len(row) {
		s.vslab = make([]schema.Value, max(len(row), slabValues))
	}
	vals := s.vslab[:len(row):len(row)]
	s.vslab = s.vslab[len(row):]
	copy(vals, row)
	if len(s.kslab) < len(key) {
		s.kslab = make([]byte, max(len(key), slabBytes))
	}
	k := s.kslab[:len(key):len(key)]
	s.kslab = s.kslab[len(key):]
	copy(k, key)
	r := sortedRow{key: k, seq: s.seq, row: vals}
	s.seq++
	s.mem = append(s.mem, r)
	s.bytes += int64(len(key)) + 64
	for _, v := range row {
		s.bytes += valueSize(v)
	}
	if s.bytes >= s.budget {
		return s.spill()
	}
	return nil
}

// valueSize estimates the memory a value holds.
func valueSize(v schema.Value) int64 {
	n := int64(40)
	switch v.Kind() {
	case schema.KindString, schema.KindBinary:
		n += int64(len(v.Bytes()))
	case schema.KindStruct:
		for _, f := range v.Fields() {
			n += valueSize(f)
		}
	case schema.KindArray:
		for _, e := range v.Elements() {
			n += valueSize(e)
		}
	case schema.KindMap:
		for i := range v.MapLen() {
			k, x := v.MapEntry(i)
			n += valueSize(k) + valueSize(x)
		}
	case schema.KindDecimal:
		n += 16
	}
	return n
}

// spill sorts the staged rows and writes them as a run.
func (s *rowSorter) spill() error {
	if len(s.mem) == 0 {
		return nil
	}
	slices.SortFunc(s.mem, func(a, b sortedRow) int { return lessRow(&a, &b) })
	f, err := os.CreateTemp(s.dir, "delta-sort-*.run")
	if err != nil {
		return fmt.Errorf("write: sort spill: %w", err)
	}
	s.runs = append(s.runs, f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	for i := range s.mem {
		r := &s.mem[i]
		s.buf = encodeRow(s.buf[:0], r)
		if _, err := bw.Write(s.buf); err != nil {
			f.Close()
			return fmt.Errorf("write: sort spill: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write: sort spill: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write: sort spill: %w", err)
	}
	clear(s.mem)
	s.mem = s.mem[:0]
	s.vslab, s.kslab = nil, nil // the blocks go with the rows spilled
	s.bytes = 0
	s.spills++
	return nil
}

// drain calls fn with every row staged, in order, then removes the runs.
// The row passed to fn is valid only during the call.
func (s *rowSorter) drain(fn func(row []schema.Value) error) error {
	defer s.close()
	slices.SortFunc(s.mem, func(a, b sortedRow) int { return lessRow(&a, &b) })
	if len(s.runs) == 0 {
		for i := range s.mem {
			if err := fn(s.mem[i].row); err != nil {
				return err
			}
			s.mem[i] = sortedRow{}
		}
		return nil
	}
	h := &mergeHeap{}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, name := range s.runs {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("write: sort merge: %w", err)
		}
		files = append(files, f)
		src := &runSource{r: bufio.NewReaderSize(f, 256<<10)}
		if err := h.push(src); err != nil {
			return err
		}
	}
	if err := h.push(&runSource{mem: s.mem}); err != nil {
		return err
	}
	for h.Len() > 0 {
		src := (*h)[0]
		if err := fn(src.cur.row); err != nil {
			return err
		}
		ok, err := src.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

// close removes the runs and drops the staged rows.
func (s *rowSorter) close() {
	for _, name := range s.runs {
		_ = os.Remove(name)
	}
	s.runs = nil
	s.mem = nil
	s.bytes = 0
}

// runSource is one sorted input of the merge: a run file, or the rows
// left in memory.
type runSource struct {
	r   *bufio.Reader
	mem []sortedRow
	cur sortedRow
}

func (src *runSource) next() (bool, error) {
	if src.r == nil {
		if len(src.mem) == 0 {
			return false, nil
		}
		src.cur = src.mem[0]
		src.mem[0] = sortedRow{}
		src.mem = src.mem[1:]
		return true, nil
	}
	r, err := decodeRow(src.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("write: sort merge: %w", err)
	}
	src.cur = r
	return true, nil
}

type mergeHeap []*runSource

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return lessRow(&h[i].cur, &h[j].cur) < 0 }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(*runSource)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (h *mergeHeap) push(src *runSource) error {
	ok, err := src.next()
	if err != nil || !ok {
		return err
	}
	heap.Push(h, src)
	return nil
}

// The run format, private to one sort and never kept: per row, the key's
// length (uvarint) and bytes, the sequence number (uvarint), the number of
// values (uvarint), and each value as encodeValue writes it.

func encodeRow(b []byte, r *sortedRow) []byte {
	b = binary.AppendUvarint(b, uint64(len(r.key)))
	b = append(b, r.key...)
	b = binary.AppendUvarint(b, r.seq)
	b = binary.AppendUvarint(b, uint64(len(r.row)))
	for _, v := range r.row {
		b = encodeValue(b, v)
	}
	return b
}

// errRun is a run file that does not decode: a bug or a damaged temporary
// file, never table data.
var errRun = errors.New("write: sort run is damaged")

func decodeRow(r *bufio.Reader) (sortedRow, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		if err == io.EOF {
			return sortedRow{}, io.EOF
		}
		return sortedRow{}, err
	}
	var out sortedRow
	out.key = make([]byte, n)
	if _, err := io.ReadFull(r, out.key); err != nil {
		return out, errRun
	}
	if out.seq, err = binary.ReadUvarint(r); err != nil {
		return out, errRun
	}
	cols, err := binary.ReadUvarint(r)
	if err != nil {
		return out, errRun
	}
	out.row = make([]schema.Value, cols)
	for i := range out.row {
		if out.row[i], err = decodeValue(r); err != nil {
			return out, err
		}
	}
	return out, nil
}

func encodeValue(b []byte, v schema.Value) []byte {
	k := v.Kind()
	b = append(b, byte(k))
	switch k {
	case schema.KindNull:
	case schema.KindBoolean:
		if v.Bool() {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	case schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindLong,
		schema.KindDate, schema.KindTimestamp, schema.KindTimestampNTZ:
		b = binary.AppendVarint(b, v.Int64())
	case schema.KindFloat, schema.KindDouble:
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float64()))
	case schema.KindString, schema.KindBinary:
		s := v.Bytes()
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	case schema.KindDecimal:
		u, p, sc := v.Decimal()
		b = binary.AppendUvarint(b, uint64(p))
		b = binary.AppendVarint(b, int64(sc))
		if u.Sign() < 0 {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		m := u.Bytes()
		b = binary.AppendUvarint(b, uint64(len(m)))
		b = append(b, m...)
	case schema.KindStruct:
		fs := v.Fields()
		b = binary.AppendUvarint(b, uint64(len(fs)))
		for _, f := range fs {
			b = encodeValue(b, f)
		}
	case schema.KindArray:
		es := v.Elements()
		b = binary.AppendUvarint(b, uint64(len(es)))
		for _, e := range es {
			b = encodeValue(b, e)
		}
	case schema.KindMap:
		b = binary.AppendUvarint(b, uint64(v.MapLen()))
		for i := range v.MapLen() {
			key, val := v.MapEntry(i)
			b = encodeValue(b, key)
			b = encodeValue(b, val)
		}
	}
	return b
}

func decodeValue(r *bufio.Reader) (schema.Value, error) {
	kb, err := r.ReadByte()
	if err != nil {
		return schema.Value{}, errRun
	}
	uv := func() uint64 {
		if err != nil {
			return 0
		}
		var n uint64
		n, err = binary.ReadUvarint(r)
		return n
	}
	sv := func() int64 {
		if err != nil {
			return 0
		}
		var n int64
		n, err = binary.ReadVarint(r)
		return n
	}
	bs := func() []byte {
		n := uv()
		if err != nil {
			return nil
		}
		p := make([]byte, n)
		_, err = io.ReadFull(r, p)
		return p
	}
	list := func(n uint64) []schema.Value {
		out := make([]schema.Value, 0, min(n, 1024))
		for range n {
			if err != nil {
				return nil
			}
			var x schema.Value
			x, err = decodeValue(r)
			out = append(out, x)
		}
		return out
	}
	var v schema.Value
	switch k := schema.Kind(kb); k {
	case schema.KindNull:
	case schema.KindBoolean:
		var c byte
		c, err = r.ReadByte()
		v = schema.BooleanValue(c == 1)
	case schema.KindByte:
		v = schema.ByteValue(int8(sv()))
	case schema.KindShort:
		v = schema.ShortValue(int16(sv()))
	case schema.KindInteger:
		v = schema.IntegerValue(int32(sv()))
	case schema.KindLong:
		v = schema.LongValue(sv())
	case schema.KindDate:
		v = schema.DateValue(int32(sv()))
	case schema.KindTimestamp:
		v = schema.TimestampValue(sv())
	case schema.KindTimestampNTZ:
		v = schema.TimestampNTZValue(sv())
	case schema.KindFloat, schema.KindDouble:
		var p [8]byte
		_, err = io.ReadFull(r, p[:])
		f := math.Float64frombits(binary.LittleEndian.Uint64(p[:]))
		if k == schema.KindFloat {
			v = schema.FloatValue(float32(f))
		} else {
			v = schema.DoubleValue(f)
		}
	case schema.KindString:
		v = schema.StringValue(string(bs()))
	case schema.KindBinary:
		v = schema.BinaryValue(bs())
	case schema.KindDecimal:
		p := uv()
		sc := sv()
		var neg byte
		if err == nil {
			neg, err = r.ReadByte()
		}
		m := bs()
		if err != nil {
			break
		}
		u := new(big.Int).SetBytes(m)
		if neg == 1 {
			u.Neg(u)
		}
		v, err = schema.DecimalValue(u, int(p), int(sc))
	case schema.KindStruct:
		v = schema.StructValue(list(uv()))
	case schema.KindArray:
		v = schema.ArrayValue(list(uv()))
	case schema.KindMap:
		v = schema.MapValue(list(2 * uv()))
	default:
		return v, errRun
	}
	if err != nil {
		return schema.Value{}, errRun
	}
	return v, nil
}
