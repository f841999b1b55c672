package write

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"
	"os"
	"slices"
	"unsafe"

	"github.com/godelta/delta/schema"
)

// DefaultSortMemory is RewriteOptions.SortMemory when it is 0: the bytes
// of staged rows a sorted rewrite holds in memory before it spills them to
// disk.
const DefaultSortMemory = 256 << 20

// SortKey orders the rows of a sorted rewrite (RewriteOptions.SortKey).
// Rewrite calls Observe with every row it stages, in read order (to sample
// them, say); once every file is read, Prepare once; then the Key of what
// Prepare returns once with every row. Rows hold their values in table
// schema order, partition columns included; none of the methods may
// modify a row or keep it.
type SortKey interface {
	Observe(row []schema.Value) error
	Prepare() (RowKey, error)
}

// RowKey gives the sort keys of the rows of a sorted rewrite.
type RowKey struct {
	// Words is the number of 64-bit words of a key, at least 1.
	Words int
	// Columns are the indexes in the row of the columns Key reads; the
	// other values of the rows it is given are null. Nil means all.
	Columns []int
	// Key writes the key of row into dst, Words long. Keys compare word
	// by word, as unsigned integers; rows of equal keys keep their read
	// order.
	Key func(dst []uint64, row []schema.Value) error
}

// colSorter is the external sort of a sorted rewrite. Rows are staged
// column by column in chunks (colChunk: integers, floats, dates and
// timestamps as 64-bit words, strings and binaries in one byte block per
// chunk, other values boxed), so that the memory counted against the
// budget is the memory held. The keys are computed once every row has
// been seen (SortKey.Prepare: a curve's ranges come from a sample of all
// the rows): the rows in memory are then sorted by (key, read order),
// as packed integers when the key and the row's index fit in one word.
//
// Past the budget the chunks are spilled as they are, unsorted, to a
// temporary file. At the end, if anything was spilled, the rows in memory
// are sorted and written as a sorted run, then each unsorted run is read
// back (it fits the budget), sorted and written as a sorted run, and the
// rows come out of the merge of the sorted runs. The order is by (key,
// read order) whichever the budget, so a sort that spills gives the rows
// in exactly the order one in memory does.
type colSorter struct {
	budget int64
	dir    string
	key    SortKey
	kw     int // columns of a staged row the key reads: the table row

	chunks []*colChunk
	rows   int   // rows in chunks
	bytes  int64 // memory the chunks hold, and the keys they will need

	unsorted []string  // spilled chunks, in read order
	sorted   []runFile // sorted runs
	temps    []string  // every temporary file, for close
	buf      []byte
	// spills counts the sorted runs merged (0: sorted in memory), for
	// tests and metrics.
	spills int
}

// runFile is a sorted run and its rank in read order (ties).
type runFile struct {
	name string
	rank int
}

// chunkRows is the number of rows of a chunk (a power of 2); blockRows
// that of a block of a sorted run.
const (
	chunkRows = 1 << 13
	blockRows = 1 << 12
)

// keyBytesPerRow is what the budget counts per row for its key and its
// place in the sort.
const keyBytesPerRow = 16

func newColSorter(budget int64, dir string, key SortKey, keyWidth int) *colSorter {
	if budget <= 0 {
		budget = DefaultSortMemory
	}
	return &colSorter{budget: budget, dir: dir, key: key, kw: keyWidth}
}

// add stages a copy of row, whose first kw values are the table row.
func (s *colSorter) add(row []schema.Value) error {
	if err := s.key.Observe(row[:s.kw]); err != nil {
		return err
	}
	var c *colChunk
	if n := len(s.chunks); n > 0 && s.chunks[n-1].n < chunkRows {
		c = s.chunks[n-1]
	} else {
		c = &colChunk{cols: make([]column, len(row))}
		s.chunks = append(s.chunks, c)
	}
	s.bytes += c.add(row) + keyBytesPerRow
	s.rows++
	if s.bytes >= s.budget {
		return s.spill()
	}
	return nil
}

// spill writes the chunks, unsorted, to a temporary file.
func (s *colSorter) spill() error {
	if s.rows == 0 {
		return nil
	}
	name, err := s.writeRun(func(w *bufio.Writer) error {
		for _, c := range s.chunks {
			s.buf = binary.AppendUvarint(s.buf[:0], uint64(c.n))
			s.buf = c.encode(s.buf)
			if _, err := w.Write(s.buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.unsorted = append(s.unsorted, name)
	s.dropChunks()
	return nil
}

func (s *colSorter) dropChunks() {
	clear(s.chunks)
	s.chunks = s.chunks[:0]
	s.rows, s.bytes = 0, 0
}

// writeRun writes a temporary file with fill.
func (s *colSorter) writeRun(fill func(*bufio.Writer) error) (string, error) {
	f, err := os.CreateTemp(s.dir, "delta-sort-*.run")
	if err != nil {
		return "", fmt.Errorf("write: sort spill: %w", err)
	}
	s.temps = append(s.temps, f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write: sort spill: %w", err)
	}
	return f.Name(), nil
}

// order returns the keys of the rows in memory (rk.Words a row) and their
// indexes (chunk*chunkRows + row, the rank in read order) sorted by (key,
// index).
func (s *colSorter) order(rk RowKey) ([]uint64, []uint32, error) {
	w := rk.Words
	keys := make([]uint64, s.rows*w)
	row := make([]schema.Value, s.kw)
	cols := rk.Columns
	if cols == nil {
		cols = make([]int, s.kw)
		for i := range cols {
			cols[i] = i
		}
	}
	var or uint64
	i := 0
	for _, c := range s.chunks {
		for r := range c.n {
			for _, j := range cols {
				row[j] = c.cols[j].value(r)
			}
			k := keys[i*w : i*w+w]
			if err := rk.Key(k, row); err != nil {
				return nil, nil, err
			}
			or |= k[w-1]
			i++
		}
	}
	n := s.rows
	if n > math.MaxUint32 {
		return nil, nil, fmt.Errorf("write: sort: %d rows in memory", n)
	}
	// Every chunk but the last is full: a row's index is its rank in
	// read order.
	perm := make([]uint32, n)
	// One word, and room under the key's last bit for the row's index:
	// sort the keys with the indexes in their low bits, as integers.
	if ib := bits.Len(uint(max(n-1, 0))); w == 1 && ib <= bits.TrailingZeros64(or) {
		for i := range keys {
			keys[i] |= uint64(i)
		}
		slices.Sort(keys)
		mask := uint64(1)<<uint(ib) - 1
		for i, k := range keys {
			perm[i] = uint32(k & mask)
			keys[i] = k &^ mask
		}
		return keys, perm, nil
	}
	for i := range perm {
		perm[i] = uint32(i)
	}
	slices.SortFunc(perm, func(a, b uint32) int {
		if c := slices.Compare(keys[int(a)*w:int(a)*w+w], keys[int(b)*w:int(b)*w+w]); c != 0 {
			return c
		}
		return int(a) - int(b)
	})
	sorted := make([]uint64, len(keys))
	for i, p := range perm {
		copy(sorted[i*w:i*w+w], keys[int(p)*w:int(p)*w+w])
	}
	return sorted, perm, nil
}

// drain calls fn with every row staged, in order, then removes the runs.
// The row passed to fn is valid only during the call; the strings in it
// stay valid.
func (s *colSorter) drain(fn func(row []schema.Value) error) error {
	defer s.close()
	rk, err := s.key.Prepare()
	if err != nil {
		return err
	}
	if rk.Words < 1 || rk.Key == nil {
		return fmt.Errorf("write: sort key of %d words", rk.Words)
	}
	if len(s.unsorted) == 0 {
		_, perm, err := s.order(rk)
		if err != nil {
			return err
		}
		width := 0
		if len(s.chunks) > 0 {
			width = len(s.chunks[0].cols)
		}
		row := make([]schema.Value, width)
		for _, p := range perm {
			c := s.chunks[p/chunkRows]
			r := int(p % chunkRows)
			for j := range row {
				row[j] = c.cols[j].value(r)
			}
			if err := fn(row); err != nil {
				return err
			}
		}
		return nil
	}
	// The rows in memory come after those spilled.
	if err := s.sortRun(rk, len(s.unsorted)); err != nil {
		return err
	}
	for i, name := range s.unsorted {
		if err := s.load(name); err != nil {
			return err
		}
		_ = os.Remove(name)
		if err := s.sortRun(rk, i); err != nil {
			return err
		}
	}
	return s.merge(rk.Words, fn)
}

// load reads an unsorted run back into memory.
func (s *colSorter) load(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("write: sort merge: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		n, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errRun
		}
		c, err := decodeChunk(r, int(n))
		if err != nil {
			return err
		}
		s.chunks = append(s.chunks, c)
		s.rows += c.n
	}
}

// sortRun sorts the rows in memory, writes them as a sorted run of rank
// rank, and drops them. A sorted run is a sequence of blocks: the number
// of rows (uvarint), their keys (Words 64-bit words each, little-endian),
// and their values as a chunk.
func (s *colSorter) sortRun(rk RowKey, rank int) error {
	if s.rows == 0 {
		return nil
	}
	keys, perm, err := s.order(rk)
	if err != nil {
		return err
	}
	w := rk.Words
	width := len(s.chunks[0].cols)
	row := make([]schema.Value, width)
	name, err := s.writeRun(func(bw *bufio.Writer) error {
		for lo := 0; lo < len(perm); lo += blockRows {
			hi := min(lo+blockRows, len(perm))
			blk := &colChunk{cols: make([]column, width)}
			for _, p := range perm[lo:hi] {
				c := s.chunks[p/chunkRows]
				r := int(p % chunkRows)
				for j := range row {
					row[j] = c.cols[j].value(r)
				}
				blk.add(row)
			}
			s.buf = binary.AppendUvarint(s.buf[:0], uint64(hi-lo))
			for _, k := range keys[lo*w : hi*w] {
				s.buf = binary.LittleEndian.AppendUint64(s.buf, k)
			}
			s.buf = blk.encode(s.buf)
			if _, err := bw.Write(s.buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.sorted = append(s.sorted, runFile{name: name, rank: rank})
	s.spills++
	s.dropChunks()
	return nil
}

// merge calls fn with the rows of the sorted runs, in (key, rank) order.
func (s *colSorter) merge(w int, fn func(row []schema.Value) error) error {
	var srcs []*runSource
	defer func() {
		for _, src := range srcs {
			src.f.Close()
		}
	}()
	for _, rf := range s.sorted {
		f, err := os.Open(rf.name)
		if err != nil {
			return fmt.Errorf("write: sort merge: %w", err)
		}
		src := &runSource{f: f, r: bufio.NewReaderSize(f, 256<<10), rank: rf.rank, w: w}
		srcs = append(srcs, src)
	}
	h := make([]*runSource, 0, len(srcs))
	for _, src := range srcs {
		ok, err := src.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, src)
		}
	}
	less := func(a, b *runSource) bool {
		ka, kb := a.key(), b.key()
		for i := range ka {
			if ka[i] != kb[i] {
				return ka[i] < kb[i]
			}
		}
		return a.rank < b.rank
	}
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			m := l
			if r := l + 1; r < len(h) && less(h[r], h[l]) {
				m = r
			}
			if !less(h[m], h[i]) {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	var row []schema.Value
	for len(h) > 0 {
		src := h[0]
		if row == nil {
			row = make([]schema.Value, len(src.blk.cols))
		}
		for j := range row {
			row[j] = src.blk.cols[j].value(src.pos)
		}
		if err := fn(row); err != nil {
			return err
		}
		ok, err := src.next()
		if err != nil {
			return err
		}
		if !ok {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return nil
}

// close removes the runs and drops the staged rows.
func (s *colSorter) close() {
	for _, name := range s.temps {
		_ = os.Remove(name)
	}
	s.temps, s.unsorted, s.sorted = nil, nil, nil
	s.dropChunks()
}

// runSource is one sorted run being merged: its current block and the
// position of the current row in it.
type runSource struct {
	f    *os.File
	r    *bufio.Reader
	rank int
	w    int
	keys []uint64
	blk  *colChunk
	pos  int
}

func (src *runSource) key() []uint64 { return src.keys[src.pos*src.w : src.pos*src.w+src.w] }

// next moves to the next row, reading the next block when the current one
// is done; false at the end of the run.
func (src *runSource) next() (bool, error) {
	if src.blk != nil && src.pos+1 < src.blk.n {
		src.pos++
		return true, nil
	}
	n, err := binary.ReadUvarint(src.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil || n == 0 || n > blockRows {
		return false, errRun
	}
	p := make([]byte, int(n)*src.w*8)
	if _, err := io.ReadFull(src.r, p); err != nil {
		return false, errRun
	}
	src.keys = make([]uint64, int(n)*src.w)
	for i := range src.keys {
		src.keys[i] = binary.LittleEndian.Uint64(p[8*i:])
	}
	// A new block each time: the strings of the rows given out point into
	// the last one's bytes.
	if src.blk, err = decodeChunk(src.r, int(n)); err != nil {
		return false, err
	}
	src.pos = 0
	return true, nil
}

// colChunk holds up to chunkRows staged rows, column by column.
type colChunk struct {
	n    int
	cols []column
}

// add appends row and returns the bytes of memory it took.
func (c *colChunk) add(row []schema.Value) int64 {
	var n int64
	for j, v := range row {
		n += c.cols[j].add(c.n, v)
	}
	c.n++
	return n
}

// How a column of a chunk holds its values.
const (
	modeNull  uint8 = iota // every value so far is null
	modeNum                // nums: integers, dates, timestamps, booleans, float bits
	modeStr                // strings or binaries: ends into data
	modeBoxed              // boxed: other kinds, or a column of several kinds
)

// column is one column of a chunk: non-null values all of kind kind in
// the typed modes, nulls flagged in the bitmap nulls.
type column struct {
	mode  uint8
	kind  schema.Kind
	nulls []uint64
	nums  []int64
	ends  []uint32
	data  []byte
	boxed []schema.Value
}

func numKind(k schema.Kind) bool {
	switch k {
	case schema.KindBoolean, schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindLong,
		schema.KindFloat, schema.KindDouble, schema.KindDate, schema.KindTimestamp, schema.KindTimestampNTZ:
		return true
	}
	return false
}

// add appends v as the value of row i (the column holds i values) and
// returns the bytes of memory it took: what the column's slices grew by,
// and what a boxed value points to.
func (c *column) add(i int, v schema.Value) int64 {
	before := c.size()
	extra := c.put(i, v)
	return c.size() - before + extra
}

// size is the memory the column's slices hold.
func (c *column) size() int64 {
	return int64(8*cap(c.nulls) + 8*cap(c.nums) + 4*cap(c.ends) + cap(c.data) + 40*cap(c.boxed))
}

// put appends v as the value of row i, and returns the memory a boxed
// value points to.
func (c *column) put(i int, v schema.Value) int64 {
	k := v.Kind()
	var extra int64
	if c.mode == modeNull && k != schema.KindNull {
		extra += c.start(i, k)
	} else if c.mode != modeBoxed && k != schema.KindNull && k != c.kind {
		extra += c.box(i)
	}
	switch c.mode {
	case modeBoxed:
		c.boxed = append(c.boxed, v)
		return extra + valueSize(v) - 40
	case modeNull:
		return extra
	}
	if k == schema.KindNull {
		c.setNull(i)
	}
	if c.mode == modeNum {
		c.nums = append(c.nums, numOf(v))
		return extra
	}
	s := v.Raw()
	if uint64(len(c.data))+uint64(len(s)) > math.MaxUint32 {
		// A chunk's strings beyond 4 GiB: box the column.
		extra += c.box(i)
		c.boxed = append(c.boxed, v)
		return extra + valueSize(v) - 40
	}
	c.data = append(c.data, s...)
	c.ends = append(c.ends, uint32(len(c.data)))
	return extra
}

// start gives a column of nulls (i of them) the mode of kind k.
func (c *column) start(i int, k schema.Kind) int64 {
	c.kind = k
	switch {
	case numKind(k):
		c.mode = modeNum
		c.nums = make([]int64, i, i+1)
	case k == schema.KindString || k == schema.KindBinary:
		c.mode = modeStr
		c.ends = make([]uint32, i, i+1)
	default:
		c.mode = modeBoxed
		c.boxed = make([]schema.Value, i, i+1)
		return 0
	}
	for r := range i {
		c.setNull(r)
	}
	return 0
}

// box turns the i values of a typed column into boxed ones, and returns
// the memory they point to.
func (c *column) box(i int) int64 {
	boxed := make([]schema.Value, i, i+1)
	var n int64
	for r := range i {
		boxed[r] = c.value(r)
		n += valueSize(boxed[r]) - 40
	}
	c.mode, c.boxed, c.nulls, c.nums, c.ends, c.data = modeBoxed, boxed, nil, nil, nil, nil
	return n
}

func (c *column) setNull(i int) {
	if c.nulls == nil {
		c.nulls = make([]uint64, chunkRows/64)
	}
	c.nulls[i>>6] |= 1 << uint(i&63)
}

func (c *column) null(r int) bool {
	return c.nulls != nil && c.nulls[r>>6]>>uint(r&63)&1 != 0
}

// numOf is the word a modeNum column holds for v.
func numOf(v schema.Value) int64 {
	switch v.Kind() {
	case schema.KindFloat, schema.KindDouble:
		return int64(math.Float64bits(v.Float64()))
	case schema.KindBoolean:
		if v.Bool() {
			return 1
		}
		return 0
	}
	return v.Int64()
}

// value returns the value of row r. A string's text points into the
// chunk's bytes, which are never modified.
func (c *column) value(r int) schema.Value {
	switch c.mode {
	case modeNull:
		return schema.Value{}
	case modeBoxed:
		return c.boxed[r]
	}
	if c.null(r) {
		return schema.Value{}
	}
	if c.mode == modeNum {
		x := c.nums[r]
		switch c.kind {
		case schema.KindBoolean:
			return schema.BooleanValue(x != 0)
		case schema.KindByte:
			return schema.ByteValue(int8(x))
		case schema.KindShort:
			return schema.ShortValue(int16(x))
		case schema.KindInteger:
			return schema.IntegerValue(int32(x))
		case schema.KindLong:
			return schema.LongValue(x)
		case schema.KindFloat:
			return schema.FloatValue(float32(math.Float64frombits(uint64(x))))
		case schema.KindDouble:
			return schema.DoubleValue(math.Float64frombits(uint64(x)))
		case schema.KindDate:
			return schema.DateValue(int32(x))
		case schema.KindTimestamp:
			return schema.TimestampValue(x)
		}
		return schema.TimestampNTZValue(x)
	}
	lo := uint32(0)
	if r > 0 {
		lo = c.ends[r-1]
	}
	var s string
	if hi := c.ends[r]; hi > lo {
		s = unsafe.String(&c.data[lo], hi-lo)
	}
	if c.kind == schema.KindBinary {
		return schema.BinaryValueString(s)
	}
	return schema.StringValue(s)
}

// The chunk format, private to one sort and never kept: the number of
// columns (uvarint), then each column: its mode and kind (a byte each);
// for the typed modes, a byte 1 if it has nulls, then the null bitmap
// (n/64+1 words); then the n words of a modeNum column, or the n ends and
// the bytes (length uvarint, then the bytes) of a modeStr one, or the n
// values of a modeBoxed one (encodeValue). Words are little-endian. The
// number of rows n is the caller's.

func (c *colChunk) encode(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(c.cols)))
	for i := range c.cols {
		col := &c.cols[i]
		b = append(b, col.mode, byte(col.kind))
		switch col.mode {
		case modeNull:
			continue
		case modeBoxed:
			for _, v := range col.boxed[:c.n] {
				b = encodeValue(b, v)
			}
			continue
		}
		if col.nulls == nil {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			for _, w := range col.nulls[:c.n/64+1] {
				b = binary.LittleEndian.AppendUint64(b, w)
			}
		}
		if col.mode == modeNum {
			for _, x := range col.nums[:c.n] {
				b = binary.LittleEndian.AppendUint64(b, uint64(x))
			}
			continue
		}
		for _, e := range col.ends[:c.n] {
			b = binary.LittleEndian.AppendUint32(b, e)
		}
		b = binary.AppendUvarint(b, uint64(len(col.data)))
		b = append(b, col.data...)
	}
	return b
}

// decodeChunk reads a chunk of n rows.
func decodeChunk(r *bufio.Reader, n int) (*colChunk, error) {
	if n <= 0 || n > chunkRows {
		return nil, errRun
	}
	ncols, err := binary.ReadUvarint(r)
	if err != nil || ncols > 1<<16 {
		return nil, errRun
	}
	c := &colChunk{n: n, cols: make([]column, ncols)}
	var p []byte
	read := func(size int) ([]byte, error) {
		if cap(p) < size {
			p = make([]byte, size)
		}
		p = p[:size]
		_, err := io.ReadFull(r, p)
		return p, err
	}
	for i := range c.cols {
		col := &c.cols[i]
		hdr, err := read(2)
		if err != nil {
			return nil, errRun
		}
		col.mode, col.kind = hdr[0], schema.Kind(hdr[1])
		switch col.mode {
		case modeNull:
			continue
		case modeBoxed:
			col.boxed = make([]schema.Value, n)
			for k := range col.boxed {
				if col.boxed[k], err = decodeValue(r); err != nil {
					return nil, err
				}
			}
			continue
		case modeNum, modeStr:
		default:
			return nil, errRun
		}
		has, err := r.ReadByte()
		if err != nil {
			return nil, errRun
		}
		if has == 1 {
			q, err := read(8 * (n/64 + 1))
			if err != nil {
				return nil, errRun
			}
			col.nulls = make([]uint64, chunkRows/64)
			for k := range n/64 + 1 {
				col.nulls[k] = binary.LittleEndian.Uint64(q[8*k:])
			}
		}
		if col.mode == modeNum {
			q, err := read(8 * n)
			if err != nil {
				return nil, errRun
			}
			col.nums = make([]int64, n)
			for k := range col.nums {
				col.nums[k] = int64(binary.LittleEndian.Uint64(q[8*k:]))
			}
			continue
		}
		q, err := read(4 * n)
		if err != nil {
			return nil, errRun
		}
		col.ends = make([]uint32, n)
		for k := range col.ends {
			col.ends[k] = binary.LittleEndian.Uint32(q[4*k:])
		}
		size, err := binary.ReadUvarint(r)
		if err != nil || size > math.MaxUint32 || (n > 0 && uint64(col.ends[n-1]) != size) {
			return nil, errRun
		}
		// Fresh bytes: strings given out point into them.
		col.data = make([]byte, size)
		if _, err := io.ReadFull(r, col.data); err != nil {
			return nil, errRun
		}
		for k := 1; k < n; k++ {
			if col.ends[k] < col.ends[k-1] {
				return nil, errRun
			}
		}
	}
	return c, nil
}

// valueSize estimates the memory a boxed value holds.
func valueSize(v schema.Value) int64 {
	n := int64(40)
	switch v.Kind() {
	case schema.KindString, schema.KindBinary:
		n += int64(len(v.Raw()))
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

// errRun is a run file that does not decode: a bug or a damaged temporary
// file, never table data.
var errRun = errors.New("write: sort run is damaged")

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
