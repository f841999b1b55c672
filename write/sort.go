package write

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime"
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
// modify a row or keep it. A key that reads only some columns can say so
// (ColumnObserver), and is then observed on a goroutine of its own.
type SortKey interface {
	Observe(row []schema.Value) error
	Prepare() (RowKey, error)
}

// RowKey gives the sort keys of the rows of a sorted rewrite.
type RowKey struct {
	// Words is the number of 64-bit words of a key, at least 1.
	Words int
	// Columns are the indexes in the row of the columns Key reads; the
	// other values of the rows it is given may be null. Nil means all.
	Columns []int
	// Key writes the key of row into dst, Words long. Keys compare word
	// by word, as unsigned integers; rows of equal keys keep their read
	// order.
	Key func(dst []uint64, row []schema.Value) error
}

// colSorter is the external sort of a sorted rewrite. Rows are staged as
// compact records in chunks (recChunk: each record after its length, its
// values as schema.AppendBinary writes them: varints for integers, dates
// and timestamps, 8 bytes for floats, length and bytes for strings), each
// chunk in a page of pageBytes, so that the memory counted against the
// budget is the memory held. The keys are computed once every row has
// been seen (SortKey.Prepare: a curve's ranges come from a sample of all
// the rows).
//
// The rows in memory are then sorted by key buckets (sortedRows). The keys
// of every stride-th row give a histogram of the keys' top prefixBits
// bits, which is cut into buckets of about bucketBytes of records. One
// sequential pass computes every row's key and moves the row, after its
// key, into its bucket's pages, giving each page it empties back for the
// buckets to fill (pages are small, so a page is filled again while it is
// still in cache). Then each bucket, small enough to stay in the core's
// cache, is sorted by (key, read order) — a radix sort of the bits where
// its keys differ when the key and the row's index in the bucket fit in
// one word, a comparison sort otherwise — and its rows are given out, the
// buckets in key order. A gather of all the records in key order instead
// missed the cache (and the TLB) on every row: 1.7 s of 5.3 for 3M rows.
//
// Past the budget the chunks are spilled as they are, unsorted, to a
// temporary file. At the end, if anything was spilled, the rows in memory
// are sorted and written as a sorted run, then each unsorted run is read
// back (it fits the budget), sorted and written as a sorted run, and the
// rows come out of the merge of the sorted runs. The order is by (key,
// read order) whichever the budget and the buckets, so a sort that spills
// gives the rows in exactly the order one in memory does.
//
// Pages whose rows were never given out (spilled, written to a sorted run,
// or emptied into buckets) are reused; a page whose strings were given to
// the caller is never written again (drain's contract), and is left to the
// collector once its bucket is written.
type colSorter struct {
	budget int64
	dir    string
	key    SortKey
	kw     int // columns of a staged row the key reads: the table row

	chunks []*recChunk
	width  int   // values of a staged row
	rows   int   // rows in chunks
	bytes  int64 // memory the chunks hold, and the keys they will need

	free    []*recChunk // empty pages to reuse, none given out
	scratch []byte      // the record being staged

	// bucketBytes is what the records of a bucket aim at
	// (defaultBucketBytes; tests set less).
	bucketBytes int
	// parallelRows is the fewest rows in memory for which the sort
	// takes a second goroutine (keyAhead, drainPiped), on more than one
	// core (defaultParallelRows; tests set less).
	parallelRows int

	// obs, when not nil, observes the rows staged on a goroutine of
	// its own (observer); otherwise add calls Observe itself.
	obs *observer

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

// chunkRows bounds the rows of a chunk (a power of 2); blockRows is that
// of a block of a sorted run. A chunk's records are in a page of
// pageBytes, or, for a record longer than a page, in a buffer of its own.
// Pages are small so that, as the buckets are filled, a page emptied is
// filled again while it is still in cache.
const (
	chunkShift = 13
	chunkRows  = 1 << chunkShift
	blockRows  = 1 << 12
	pageBytes  = 4 << 10
)

// The buckets of the in-memory sort: the keys' top prefixBits bits are
// counted, and cut into buckets of about defaultBucketBytes of records,
// which, with their keys, stay in a core's cache (the machines measured
// have 1 to 4 MiB of L2 a core).
const (
	prefixBits         = 16
	defaultBucketBytes = 1 << 20
)

// keyBytesPerRow is what the budget counts per row for its key and its
// place in the sort.
const keyBytesPerRow = 16

func newColSorter(budget int64, dir string, key SortKey, keyWidth int) *colSorter {
	if budget <= 0 {
		budget = DefaultSortMemory
	}
	return &colSorter{budget: budget, dir: dir, key: key, kw: keyWidth, bucketBytes: defaultBucketBytes, parallelRows: defaultParallelRows}
}

// newChunk returns an empty chunk for records of size bytes and more: on
// a page, given back if there is one, or in a buffer of its own for more
// than a page.
func (s *colSorter) newChunk(size int) *recChunk {
	if size = recSize(size); size > pageBytes {
		return &recChunk{data: make([]byte, 0, size)}
	}
	if n := len(s.free); n > 0 {
		c := s.free[n-1]
		s.free[n-1] = nil
		s.free = s.free[:n-1]
		return c
	}
	return &recChunk{data: make([]byte, 0, pageBytes)}
}

// recycle gives c's page back for newChunk. Only for a chunk none of
// whose strings were given out; a buffer grown past a page is left to
// the collector.
func (s *colSorter) recycle(c *recChunk) {
	if cap(c.data) != pageBytes {
		return
	}
	c.n, c.data = 0, c.data[:0]
	s.free = append(s.free, c)
}

// add stages a copy of row, whose first kw values are the table row.
func (s *colSorter) add(row []schema.Value) error {
	if s.rows == 0 && len(s.unsorted) == 0 && s.obs == nil {
		s.obs = newObserver(s.key, s.kw)
	}
	if s.obs == nil {
		if err := s.key.Observe(row[:s.kw]); err != nil {
			return err
		}
	}
	s.width = len(row)
	s.scratch = appendRow(s.scratch[:0], row)
	size := len(s.scratch)
	if size > chunkBytes {
		return fmt.Errorf("write: sort: a row of %d bytes", size)
	}
	var c *recChunk
	if n := len(s.chunks); n > 0 && s.chunks[n-1].fits(size) {
		c = s.chunks[n-1]
	} else {
		c = s.newChunk(size)
		s.chunks = append(s.chunks, c)
		s.bytes += int64(cap(c.data))
	}
	c.appendRec(s.scratch)
	s.bytes += keyBytesPerRow
	s.rows++
	if s.obs != nil {
		if err := s.obs.staged(s.chunks); err != nil {
			return err
		}
	}
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
	if s.obs != nil {
		if err := s.obs.sync(s.chunks); err != nil {
			return err
		}
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
	for _, c := range s.chunks {
		s.recycle(c)
	}
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

// bucket is a bucket of the in-memory sort: its rows in read order, each
// as its key (8 bytes a word, little-endian) then its record, in chunks.
type bucket struct {
	n      int
	chunks []*recChunk
}

// sampleRows is about how many rows, evenly spaced in read order, the
// buckets are cut from.
const sampleRows = 1 << 16

// sortedRows calls emit with the key and the record of every row in
// memory, in (key, read order) order, and drops the rows: see colSorter
// for how. givesOut says whether emit gives the record's strings out:
// if not, the pages of each bucket are reused once it is done.
func (s *colSorter) sortedRows(rk RowKey, givesOut bool, emit func(key []uint64, rec []byte) error) error {
	defer s.dropChunks()
	w, n := rk.Words, s.rows
	if n == 0 {
		return nil
	}
	if n > math.MaxUint32 {
		return fmt.Errorf("write: sort: %d rows in memory", n)
	}
	// The key reads the values up to its last column: the others stay
	// null.
	prefix := s.kw
	if rk.Columns != nil {
		prefix = 0
		for _, j := range rk.Columns {
			if j < 0 || j >= s.kw {
				return fmt.Errorf("write: sort key column %d of %d", j, s.kw)
			}
			prefix = max(prefix, j+1)
		}
	}
	// newKeyOf returns a function that writes the key of a record into
	// key, with scratch of its own (for keyAhead's goroutine).
	newKeyOf := func(key []uint64) func(rec []byte) error {
		row := make([]schema.Value, s.kw)
		return func(rec []byte) error {
			if _, err := decodeRecord(rec, row[:prefix]); err != nil {
				return err
			}
			return rk.Key(key, row)
		}
	}
	key := make([]uint64, w)
	keyOf := newKeyOf(key)
	// The buckets: runs of key prefixes of about bucketBytes of records,
	// as estimated from the keys of every stride-th row. The estimate
	// only sizes the buckets; every row goes where its prefix says.
	stride := max(n/sampleRows, 1)
	sizes := make([]int64, 1<<prefixBits)
	next := 0 // the index in the chunk of the next row sampled
	for _, c := range s.chunks {
		off := 0
		var rec []byte
		for r := 0; next < c.n; r++ {
			rec, off = c.next(off)
			if r < next {
				continue
			}
			if err := keyOf(rec); err != nil {
				return err
			}
			sizes[key[0]>>(64-prefixBits)] += int64(stride * (4*w + len(rec)))
			next += stride
		}
		next -= c.n
	}
	bucketOf := make([]uint32, 1<<prefixBits)
	var bks []bucket
	acc := int64(0)
	for p, size := range sizes {
		if len(bks) == 0 || size > 0 && acc >= int64(s.bucketBytes) {
			bks = append(bks, bucket{})
			acc = 0
		}
		bucketOf[p] = uint32(len(bks) - 1)
		acc += size
	}
	sizes = nil
	// Every row's key, and the row with its key into its bucket, in read
	// order; each chunk emptied gives its page back for the buckets.
	//
	// A key goes before its record as a uvarint of each word's bits
	// reversed: a curve's key is its top bits, the rest zero, and takes
	// 3 bytes, not 8, when it has 20.
	//
	// On more than one core, and for enough rows to pay for it, the keys
	// are computed a few chunks ahead on a goroutine of their own
	// (keyAhead), while this one moves the rows.
	var or uint64
	var kb []byte
	var keyBuf []uint64
	nextKeys := func(c *recChunk) ([]uint64, error) {
		var err error
		keyBuf, err = appendKeys(keyBuf[:0], c, key, keyOf)
		return keyBuf, err
	}
	if n >= s.parallelRows && runtime.GOMAXPROCS(0) > 1 {
		ahead := newKeyAhead(s.chunks, w, newKeyOf)
		defer ahead.stop()
		nextKeys = ahead.next
	}
	for ci, c := range s.chunks {
		ks, err := nextKeys(c)
		if err != nil {
			return err
		}
		off := 0
		var rec []byte
		for r := range c.n {
			rec, off = c.next(off)
			key := ks[r*w : r*w+w]
			or |= key[w-1]
			b := &bks[bucketOf[key[0]>>(64-prefixBits)]]
			kb = kb[:0]
			for _, k := range key {
				kb = binary.AppendUvarint(kb, bits.Reverse64(k))
			}
			m := len(b.chunks)
			if size := len(kb) + len(rec); m == 0 || !b.chunks[m-1].fits(size) {
				b.chunks = append(b.chunks, s.newChunk(size))
				m++
			}
			b.chunks[m-1].appendRec2(kb, rec)
			b.n++
		}
		s.chunks[ci] = nil
		s.recycle(c)
	}
	if givesOut {
		s.free = nil // no page is filled again
	}
	// Then bucket by bucket, in key order.
	maxN := 0
	for _, b := range bks {
		maxN = max(maxN, b.n)
	}
	ib := bits.Len(uint(maxN - 1))
	packed := w == 1 && ib <= bits.TrailingZeros64(or)
	mask := uint64(1)<<uint(ib) - 1
	// A bucket's keys, and its records.
	ks := make([]uint64, 0, maxN*w)
	recs := make([][]byte, maxN)
	var perm []uint32
	var tmp []uint64
	for bi := range bks {
		b := &bks[bi]
		ks = ks[:0]
		j := 0
		for _, c := range b.chunks {
			off := 0
			var e []byte
			for range c.n {
				e, off = c.next(off)
				for range w {
					x, k := binary.Uvarint(e)
					ks = append(ks, bits.Reverse64(x))
					e = e[k:]
				}
				recs[j] = e
				j++
			}
		}
		rec := func(j int) []byte { return recs[j] }
		if packed {
			// One word, and room under the key's last bit for the
			// row's index in its bucket: sort as integers.
			for j := range ks {
				ks[j] |= uint64(j)
			}
			tmp = radixSort(ks, tmp[:0], ib)
			for _, x := range ks {
				key[0] = x &^ mask
				if err := emit(key, rec(int(x&mask))); err != nil {
					return err
				}
			}
		} else {
			perm = perm[:0]
			for j := range b.n {
				perm = append(perm, uint32(j))
			}
			slices.SortFunc(perm, func(a, c uint32) int {
				if d := slices.Compare(ks[int(a)*w:int(a)*w+w], ks[int(c)*w:int(c)*w+w]); d != 0 {
					return d
				}
				return int(a) - int(c)
			})
			for _, j := range perm {
				if err := emit(ks[int(j)*w:int(j)*w+w], rec(int(j))); err != nil {
					return err
				}
			}
		}
		// The bucket is done: its pages are reused, or, when its
		// strings were given out, left to the collector once nothing
		// holds them.
		for ck, c := range b.chunks {
			if !givesOut {
				s.recycle(c)
			}
			b.chunks[ck] = nil
		}
		b.chunks = nil
		clear(recs[:b.n])
	}
	return nil
}

// defaultParallelRows is the fewest rows in memory for which the sort
// takes a second goroutine. keyAhead's goroutine sends the keys of
// keyAheadGroup chunks at a time, and may be keyAheadGroups groups ahead
// of the rows moved.
const (
	defaultParallelRows = 1 << 16
	keyAheadGroup       = 32
	keyAheadGroups      = 4
)

// keyAhead computes the keys of the rows of chunks, chunk by chunk in
// order, on a goroutine of its own, with the key function newKeyOf makes
// (scratch of its own): sortedRows's pass that moves the rows into their
// buckets takes them with next, so that the keys of the next chunks are
// computed on the other core while it moves those of this one. The
// goroutine reads only chunks next has not yet returned, which the
// caller neither changes nor gives back before it has their keys. An
// error or a panic of the key ends the keys: next returns the error, or
// raises the panic on the caller's goroutine. stop ends the goroutine and
// waits for it.
type keyAhead struct {
	out     chan keyedChunk
	free    chan []uint64
	stopped chan struct{}
	done    chan struct{}
	w       int
	last    []uint64 // the keys of the group being taken, given back after
	rest    []uint64 // the keys of the group not yet taken
}

// appendKeys appends to ks the keys of the rows of c, each written into
// key by keyOf.
func appendKeys(ks []uint64, c *recChunk, key []uint64, keyOf func(rec []byte) error) ([]uint64, error) {
	off := 0
	var rec []byte
	for range c.n {
		rec, off = c.next(off)
		if err := keyOf(rec); err != nil {
			return ks, err
		}
		ks = append(ks, key...)
	}
	return ks, nil
}

// keyedChunk is the keys of the rows of a group of chunks
// (keyAheadGroup, fewer at the end), or why there are none.
type keyedChunk struct {
	keys     []uint64
	err      error
	panicked any
}

func newKeyAhead(chunks []*recChunk, w int, newKeyOf func(key []uint64) func(rec []byte) error) *keyAhead {
	a := &keyAhead{
		out:     make(chan keyedChunk, keyAheadGroups),
		free:    make(chan []uint64, keyAheadGroups+1),
		stopped: make(chan struct{}),
		done:    make(chan struct{}),
		w:       w,
	}
	chunks = slices.Clone(chunks) // the caller clears its own as it goes
	go a.run(chunks, w, newKeyOf)
	return a
}

func (a *keyAhead) run(chunks []*recChunk, w int, newKeyOf func(key []uint64) func(rec []byte) error) {
	defer close(a.done)
	send := func(k keyedChunk) bool {
		select {
		case a.out <- k:
			return true
		case <-a.stopped:
			return false
		}
	}
	defer func() {
		if r := recover(); r != nil {
			send(keyedChunk{panicked: r})
		}
	}()
	key := make([]uint64, w)
	keyOf := newKeyOf(key)
	for len(chunks) > 0 {
		group := chunks[:min(len(chunks), keyAheadGroup)]
		chunks = chunks[len(group):]
		var ks []uint64
		select {
		case ks = <-a.free:
			ks = ks[:0]
		default:
		}
		for _, c := range group {
			var err error
			if ks, err = appendKeys(ks, c, key, keyOf); err != nil {
				send(keyedChunk{err: err})
				return
			}
		}
		if !send(keyedChunk{keys: ks}) {
			return
		}
	}
}

// next returns the keys of the rows of c, the next chunk, valid until
// the next call.
func (a *keyAhead) next(c *recChunk) ([]uint64, error) {
	if n := c.n * a.w; len(a.rest) >= n {
		ks := a.rest[:n:n]
		a.rest = a.rest[n:]
		return ks, nil
	}
	if len(a.rest) != 0 {
		return nil, errors.New("write: sort: the keys of a group of chunks do not end with a chunk")
	}
	if a.last != nil {
		select {
		case a.free <- a.last:
		default:
		}
		a.last = nil
	}
	var k keyedChunk
	select {
	case k = <-a.out:
	case <-a.done:
		// Ended: what it sent last is still queued, or it exited
		// without a word (runtime.Goexit in the key).
		select {
		case k = <-a.out:
		default:
			return nil, errors.New("write: sort: the sort key's goroutine exited")
		}
	}
	switch {
	case k.panicked != nil:
		panic(k.panicked)
	case k.err != nil:
		return nil, k.err
	}
	a.last, a.rest = k.keys, k.keys
	return a.next(c)
}

func (a *keyAhead) stop() {
	select {
	case <-a.stopped:
	default:
		close(a.stopped)
	}
	<-a.done
}

// radixDigit is the most bits a pass of radixSort sorts by; radixPasses
// the most passes it makes before it leaves the sort to slices.Sort.
const (
	radixDigit  = 11
	radixPasses = 3
)

// radixSort sorts ks, whose elements are distinct and whose low low
// bits are their indexes in ks, by a stable least-significant-digit radix
// sort of the bits above those in which the elements differ (in a bucket,
// keys share their top bits and, on a curve, their lowest ones are zero;
// the indexes, being in order, need no pass).
// tmp is scratch memory, returned for the next call.
func radixSort(ks, tmp []uint64, low int) []uint64 {
	if len(ks) < 2 {
		return tmp
	}
	var diff uint64
	for _, k := range ks {
		diff |= k ^ ks[0]
	}
	diff &^= uint64(1)<<uint(low) - 1
	if diff == 0 {
		return tmp
	}
	low = bits.TrailingZeros64(diff)
	width := bits.Len64(diff) - low
	passes := (width + radixDigit - 1) / radixDigit
	if passes > radixPasses {
		slices.Sort(ks)
		return tmp
	}
	digit := (width + passes - 1) / passes
	tmp = slices.Grow(tmp[:0], len(ks))[:len(ks)]
	count := make([]int, 1<<digit)
	mask := uint64(1)<<uint(digit) - 1
	src, dst := ks, tmp
	for p := range passes {
		shift := uint(low + p*digit)
		clear(count)
		for _, k := range src {
			count[(k>>shift)&mask]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, k := range src {
			d := (k >> shift) & mask
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	if passes%2 == 1 {
		copy(ks, src)
	}
	return tmp
}

// drain calls fn with every row staged, in order, then removes the runs.
// The row passed to fn is valid only during the call; the strings in it
// stay valid.
func (s *colSorter) drain(fn func(row []schema.Value) error) error {
	defer s.close()
	if s.obs != nil {
		err := s.obs.sync(s.chunks)
		s.obs.stop()
		if err != nil {
			return err
		}
	}
	rk, err := s.key.Prepare()
	if err != nil {
		return err
	}
	if rk.Words < 1 || rk.Key == nil {
		return fmt.Errorf("write: sort key of %d words", rk.Words)
	}
	if len(s.unsorted) == 0 {
		if s.rows >= s.parallelRows && runtime.GOMAXPROCS(0) > 1 {
			return s.drainPiped(rk, fn)
		}
		row := make([]schema.Value, s.width)
		return s.sortedRows(rk, true, func(_ []uint64, rec []byte) error {
			if err := decodeRow(rec, row); err != nil {
				return err
			}
			return fn(row)
		})
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
	s.free = nil // the merge takes no page
	return s.merge(rk.Words, fn)
}

// pipedBatches batches of pipedRows decoded rows go between the two
// goroutines of drainPiped.
const (
	pipedRows    = 4096
	pipedBatches = 3
)

// errPipeStopped stops drainPiped's sorting goroutine once the caller's
// has stopped.
var errPipeStopped = errors.New("write: sort: the writer stopped")

// drainPiped is drain's in-memory path on two goroutines: one of its own
// keys, sorts and decodes the rows into batches, and the caller's calls
// fn with them, so that the writer (fn) encodes and compresses one batch
// while the next is sorted. fn sees the rows in the same order, on the
// caller's goroutine, as drain's one-goroutine path gives them.
//
// Both sides stop at the first failure of either: an error of fn stops
// the sort at its next batch, and an error or a panic of the sort ends
// the batches (the panic is raised again on the caller's goroutine, the
// exit of its goroutine is an error). Of
// the pipedBatches batches, the sorting side fills one while the others
// wait for fn or for it, so the channels never block a send.
func (s *colSorter) drainPiped(rk RowKey, fn func(row []schema.Value) error) (err error) {
	w := s.width
	full := make(chan []schema.Value, pipedBatches) // batches of rows for fn, in order
	free := make(chan []schema.Value, pipedBatches) // batches fn is done with
	stop := make(chan struct{})                     // closed when fn's side stops early
	for range pipedBatches {
		free <- make([]schema.Value, 0, pipedRows*w)
	}
	var sortErr error
	var panicked any
	go func() {
		normal := false
		defer func() {
			if !normal {
				if panicked = recover(); panicked == nil {
					sortErr = errors.New("write: sort: the sort key's goroutine exited")
				}
			}
			close(full)
		}()
		var b []schema.Value
		sortErr = s.sortedRows(rk, true, func(_ []uint64, rec []byte) error {
			if b == nil {
				select {
				case b = <-free:
					b = b[:0]
				case <-stop:
					return errPipeStopped
				}
			}
			n := len(b)
			b = b[:n+w]
			if err := decodeRow(rec, b[n:]); err != nil {
				return err
			}
			if len(b) == pipedRows*w {
				full <- b
				b = nil
			}
			return nil
		})
		if sortErr == nil && len(b) > 0 {
			full <- b
		}
		normal = true
	}()
	stopped := false
	halt := func() {
		if !stopped {
			stopped = true
			close(stop)
		}
	}
	// However this ends (fn's error, panic or goroutine's exit too), the
	// sort is stopped and waited for: it must not wait for a batch
	// forever, nor touch the chunks once drain has dropped them. full is
	// closed when it has ended.
	defer func() {
		halt()
		for range full {
		}
	}()
	for b := range full {
		for i := 0; err == nil && i < len(b); i += w {
			if err = fn(b[i : i+w : i+w]); err != nil {
				halt()
			}
		}
		free <- b
	}
	if panicked != nil {
		panic(panicked)
	}
	if err != nil {
		return err
	}
	return sortErr // never errPipeStopped: fn's side stops only on an error
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
		// Into a page given back, when it fits one: the buckets of the
		// run sorted before gave theirs back.
		c, err := decodeChunk(r, int(n), s.newChunk(0))
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
	blk := &recChunk{}
	var keys []uint64
	name, err := s.writeRun(func(bw *bufio.Writer) error {
		flush := func() error {
			s.buf = binary.AppendUvarint(s.buf[:0], uint64(blk.n))
			for _, k := range keys {
				s.buf = binary.LittleEndian.AppendUint64(s.buf, k)
			}
			s.buf = blk.encode(s.buf)
			blk.n, blk.data, keys = 0, blk.data[:0], keys[:0]
			_, err := bw.Write(s.buf)
			return err
		}
		err := s.sortedRows(rk, false, func(key []uint64, rec []byte) error {
			blk.appendRec(rec)
			keys = append(keys, key...)
			if blk.n == blockRows {
				return flush()
			}
			return nil
		})
		if err == nil && blk.n > 0 {
			err = flush()
		}
		return err
	})
	if err != nil {
		return err
	}
	s.sorted = append(s.sorted, runFile{name: name, rank: rank})
	s.spills++
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
	row := make([]schema.Value, s.width)
	for len(h) > 0 {
		src := h[0]
		if err := decodeRow(src.rec, row); err != nil {
			return err
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
	if s.obs != nil {
		s.obs.stop()
	}
	for _, name := range s.temps {
		_ = os.Remove(name)
	}
	s.temps, s.unsorted, s.sorted, s.free = nil, nil, nil, nil
	s.dropChunks()
}

// runSource is one sorted run being merged: its current block, the
// position of the current row in it, its record and where the next one
// starts.
type runSource struct {
	f    *os.File
	r    *bufio.Reader
	rank int
	w    int
	keys []uint64
	blk  *recChunk
	pos  int
	rec  []byte
	off  int
}

func (src *runSource) key() []uint64 { return src.keys[src.pos*src.w : src.pos*src.w+src.w] }

// next moves to the next row, reading the next block when the current one
// is done; false at the end of the run.
func (src *runSource) next() (bool, error) {
	if src.blk != nil && src.pos+1 < src.blk.n {
		src.pos++
		src.rec, src.off = src.blk.next(src.off)
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
	if src.blk, err = decodeChunk(src.r, int(n), &recChunk{}); err != nil {
		return false, err
	}
	src.pos = 0
	src.rec, src.off = src.blk.next(0)
	return true, nil
}

// recChunk holds up to chunkRows staged rows, each as a record after
// its length (uvarint): the row's values one after the other as
// schema.AppendBinary writes them (a kind byte, then varints for
// integers, dates and timestamps, 8 bytes for doubles, length and bytes
// for strings). A row's values are together, so that a row moved or
// gathered costs a cache miss or two, not one a column. The records are
// found by walking the chunk (next), which every pass over it does.
type recChunk struct {
	n    int
	data []byte // the records, each after its length
}

// chunkBytes bounds a record (a row staged).
const chunkBytes = 1 << 30

// appendRow appends the record of row to b: the bytes
// schema.AppendBinary gives, the common kinds inline (as decodeRecord
// reads them) and the others through it.
func appendRow(b []byte, row []schema.Value) []byte {
	for i := range row {
		v := &row[i]
		switch k := v.Kind(); k {
		case schema.KindNull:
			b = append(b, byte(k))
		case schema.KindLong, schema.KindInteger, schema.KindTimestamp, schema.KindDate, schema.KindTimestampNTZ:
			b = binary.AppendVarint(append(b, byte(k)), v.Int64())
		case schema.KindDouble:
			b = binary.LittleEndian.AppendUint64(append(b, byte(k)), math.Float64bits(v.Float64()))
		case schema.KindString:
			raw := v.Raw()
			b = append(binary.AppendUvarint(append(b, byte(k)), uint64(len(raw))), raw...)
		default:
			b = schema.AppendBinary(b, *v)
		}
	}
	return b
}

// recSize is the bytes a record of size bytes takes in a chunk.
func recSize(size int) int {
	if size < 0x80 {
		return 1 + size
	}
	return len(binary.AppendUvarint(nil, uint64(size))) + size
}

// fits reports whether the chunk takes a record of size bytes without
// growing its buffer.
func (c *recChunk) fits(size int) bool {
	return c.n < chunkRows && len(c.data)+recSize(size) <= cap(c.data)
}

// next returns the record at off, and where the next one starts. The
// records were written by appendRec, or checked by decodeChunk.
func (c *recChunk) next(off int) ([]byte, int) {
	l, k := int(c.data[off]), 1
	if l >= 0x80 {
		x, n := binary.Uvarint(c.data[off:])
		l, k = int(x), n
	}
	off += k
	return c.data[off : off+l : off+l], off + l
}

// decodeRow decodes the record rec, a whole row, into dst. Strings point
// into the chunk's bytes, which are never modified.
func decodeRow(rec []byte, dst []schema.Value) error {
	n, err := decodeRecord(rec, dst)
	if err == nil && n != len(rec) {
		err = errRun
	}
	return err
}

// decodeRecord decodes the first len(dst) values of the record b into
// dst, and returns the bytes they took: the common kinds inline, the
// others through schema.DecodeBinary.
func decodeRecord(b []byte, dst []schema.Value) (int, error) {
	i := 0
	for j := range dst {
		if i >= len(b) {
			return 0, errRun
		}
		switch k := schema.Kind(b[i]); k {
		case schema.KindNull:
			dst[j] = schema.Value{}
			i++
		case schema.KindLong, schema.KindInteger, schema.KindTimestamp, schema.KindDate, schema.KindTimestampNTZ:
			x, n := binary.Varint(b[i+1:])
			if n <= 0 {
				return 0, errRun
			}
			switch k {
			case schema.KindLong:
				dst[j] = schema.LongValue(x)
			case schema.KindInteger:
				dst[j] = schema.IntegerValue(int32(x))
			case schema.KindTimestamp:
				dst[j] = schema.TimestampValue(x)
			case schema.KindDate:
				dst[j] = schema.DateValue(int32(x))
			default:
				dst[j] = schema.TimestampNTZValue(x)
			}
			i += 1 + n
		case schema.KindDouble:
			if len(b)-i < 9 {
				return 0, errRun
			}
			dst[j] = schema.DoubleValue(math.Float64frombits(binary.LittleEndian.Uint64(b[i+1:])))
			i += 9
		case schema.KindString:
			l, n := binary.Uvarint(b[i+1:])
			if n <= 0 || l > uint64(len(b)-i-1-n) {
				return 0, errRun
			}
			i += 1 + n
			if l == 0 {
				dst[j] = schema.StringValue("")
			} else {
				dst[j] = schema.StringValue(unsafe.String(&b[i], int(l)))
			}
			i += int(l)
		default:
			v, n, err := schema.DecodeBinary(b[i:])
			if err != nil {
				return 0, errRun
			}
			dst[j] = v
			i += n
		}
	}
	return i, nil
}

// appendRec appends a record.
func (c *recChunk) appendRec(rec []byte) {
	if len(rec) < 0x80 {
		c.data = append(c.data, byte(len(rec)))
	} else {
		c.data = binary.AppendUvarint(c.data, uint64(len(rec)))
	}
	c.data = append(c.data, rec...)
	c.n++
}

// appendRec2 appends a record made of a and b.
func (c *recChunk) appendRec2(a, b []byte) {
	if l := len(a) + len(b); l < 0x80 {
		c.data = append(c.data, byte(l))
	} else {
		c.data = binary.AppendUvarint(c.data, uint64(l))
	}
	c.data = append(append(c.data, a...), b...)
	c.n++
}

// The chunk format, private to one sort and never kept: the length of
// the records (uvarint) and the records. The number of rows n is the
// caller's.

func (c *recChunk) encode(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(c.data)))
	return append(b, c.data...)
}

// decodeChunk reads a chunk of n rows into c, in c's buffer when it is
// large enough, else in a new one, and checks that its n records fill it.
// Strings of rows given out point into the buffer: a chunk whose rows are
// given out must be read into fresh memory.
func decodeChunk(r *bufio.Reader, n int, c *recChunk) (*recChunk, error) {
	if n <= 0 || n > chunkRows {
		return nil, errRun
	}
	size, err := binary.ReadUvarint(r)
	if err != nil || size > math.MaxUint32 {
		return nil, errRun
	}
	c.n = n
	if size <= uint64(cap(c.data)) {
		c.data = c.data[:size]
	} else {
		c.data = make([]byte, size)
	}
	if _, err := io.ReadFull(r, c.data); err != nil {
		return nil, errRun
	}
	off := 0
	for range n {
		l, k := binary.Uvarint(c.data[off:])
		if k <= 0 || l > uint64(len(c.data)-off-k) {
			return nil, errRun
		}
		off += k + int(l)
	}
	if off != len(c.data) {
		return nil, errRun
	}
	return c, nil
}

// errRun is a run file that does not decode: a bug or a damaged temporary
// file, never table data.
var errRun = errors.New("write: sort run is damaged")
