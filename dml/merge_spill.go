package dml

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// A merge whose source outgrows MergeSpec.MemoryBudget joins it with the
// target as a grace hash join, on local temporary files:
//
//  1. The source is spilled: every row goes, with its sequence number
//     (srcID, its rank in the source) and its join key, to one of
//     spillFanout partition files, chosen by a hash of the key (rows with a
//     null key, which match nothing, to partition 0). A partition whose
//     rows would not fit the budget is split again, on a hash with another
//     salt, into as many partitions as it needs, up to spillMaxDepth
//     levels; the partitions not split are the leaves. The rows are
//     records of schema.AppendBinary values, the one binary value codec.
//     Each leaf holds its rows in srcID order.
//  2. Each attempt (plan1) routes the join keys of the candidate target
//     files' rows to the leaves by the same hashes: (file, position, key)
//     records, in file and position order. This reads only the key
//     columns.
//  3. Each leaf in turn is loaded (its bytes and a sorted array of (key
//     hash, offset), 16 bytes a row) and joined with its target records:
//     for every target row, every source row of the same key is written
//     to the leaf's match file as (file, position, srcID, row), still in
//     file and position order; the offset where each target file's
//     records start is kept.
//  4. The rewrite asks, for each target row, the leaf its key routes to
//     for the rows recorded at its (file, position): a sequential read of
//     the leaf's match file, which seeks back to the file's first record
//     when the rewrite reads a file again. The merge condition and the
//     clauses are then evaluated exactly as with the source in memory,
//     and candidates come in srcID order as the in-memory index gives
//     them: the multiple-match error, the clause chosen and the values
//     are the same.
//  5. The inserts read the leaves back, merged on srcID: the source's
//     order, so rows land in the same files with the same identity values
//     as a merge in memory. Which source rows matched is a bitset of the
//     srcIDs (one bit a source row).
//
// Memory is then the budget (one leaf at a time) plus a read buffer per
// leaf, whatever the source's size. The temporary files live in one
// directory, made under MergeSpec.SpillDir (os.TempDir by default, never
// inside the table root) and removed when Merge returns, on every path.

// DefaultMergeMemory is MergeSpec.MemoryBudget when it is 0: the bytes of
// source rows (and their hash index) a merge holds in memory before it
// spills the source to local temporary files.
const DefaultMergeMemory = 256 << 20

const (
	// spillFanout is the number of partitions the source is first split
	// into; a partition over the budget is split again, in up to
	// spillMaxFanout parts.
	spillFanout    = 16
	spillMaxFanout = 256
	// spillMaxDepth and spillMaxParts bound the splitting (and the files
	// open at once): a partition still over the budget at that depth
	// (many rows of one key), or when there are that many partitions, is
	// loaded whole.
	spillMaxDepth = 3
	spillMaxParts = 1024
	// spillIndexBytes is what a loaded leaf's index costs a row: an
	// entry, and at most one slot of its directory.
	spillIndexBytes = 20
	// spillBufBytes is the read and write buffer of a temporary file.
	spillBufBytes = 32 << 10
)

// errSpill is a temporary file that does not decode: a bug or a damaged
// local file, never table data.
var errSpill = errors.New("merge: a spill file is damaged")

// rowMemory estimates the memory a source row held in memory costs: the
// row's slice, its values, their strings, and its share of the index.
func rowMemory(row []schema.Value) int64 {
	n := int64(24+64) + int64(len(row))*int64(unsafe.Sizeof(schema.Value{}))
	for _, v := range row {
		switch v.Kind() {
		case schema.KindString, schema.KindBinary:
			n += int64(len(v.Raw()))
		case schema.KindStruct, schema.KindArray, schema.KindMap, schema.KindDecimal:
			n += int64(len(schema.AppendBinary(nil, v))) * 2
		}
	}
	return n
}

// spillPart is a partition of the spilled source. A split one has kids;
// a leaf has rows.
type spillPart struct {
	depth int
	kids  []*spillPart
	// The source rows: file, rows and bytes, and the writer while they
	// are spilled.
	src   string
	rows  int64
	bytes int64
	f     *os.File
	w     *bufio.Writer

	// Per attempt: the target keys routed here, then the matches and
	// where each target file's start in them.
	tgt     string
	tf      *os.File
	tw      *bufio.Writer
	match   string
	offsets map[int32]int64
	// The reader of the matches, at file mfile of pass mgen, with the
	// record read ahead.
	mf    *os.File
	mr    *bufio.Reader
	mgen  int64
	mfile int32
	head  matchRec
	ok    bool // head holds a record
}

// matchRec is one record of a match file.
type matchRec struct {
	file  int32
	pos   int64
	srcID int64
	row   []byte
}

// spiller is the state of a merge whose source is spilled.
type spiller struct {
	dir    string
	budget int64
	root   *spillPart
	leaves []*spillPart
	rows   int64 // source rows
	parts  int   // partitions made
	buf    []byte
	rowBuf []byte
	// Per attempt: the candidate files' indexes and the pass counter.
	fileIdx  map[string]int32
	gen      int64
	lastFile int32
	lastPos  int64
}

// spillDir makes the directory of a merge's temporary files under dir
// (os.TempDir when empty), refusing one inside the table root.
func spillDir(dir string, snap *snapshot.Snapshot) (string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("merge: spill directory: %w", err)
	}
	if u, err := url.Parse(snap.Location().URI()); err == nil && u.Scheme == "file" {
		if rel, err := filepath.Rel(filepath.Clean(u.Path), abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%w: merge: the spill directory %s is inside the table root", deltaerr.ErrInvalidArgument, dir)
		}
	}
	d, err := os.MkdirTemp(abs, "delta-merge-*")
	if err != nil {
		return "", fmt.Errorf("merge: spill directory: %w", err)
	}
	return d, nil
}

func newSpiller(dir string, budget int64) (*spiller, error) {
	s := &spiller{dir: dir, budget: budget}
	s.root = &spillPart{}
	if err := s.split(s.root, spillFanout); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// close removes every temporary file.
func (s *spiller) close() {
	for _, p := range s.all() {
		for _, f := range []*os.File{p.f, p.tf, p.mf} {
			if f != nil {
				_ = f.Close()
			}
		}
	}
	_ = os.RemoveAll(s.dir)
}

// all returns every partition, split or not.
func (s *spiller) all() []*spillPart {
	var out []*spillPart
	var walk func(p *spillPart)
	walk = func(p *spillPart) {
		if p == nil {
			return // a split that failed half way
		}
		out = append(out, p)
		for _, k := range p.kids {
			walk(k)
		}
	}
	walk(s.root)
	return out
}

// split gives p n kids, their source files open for writing.
func (s *spiller) split(p *spillPart, n int) error {
	p.kids = make([]*spillPart, n)
	s.parts += n
	for i := range p.kids {
		k := &spillPart{depth: p.depth + 1}
		f, err := os.CreateTemp(s.dir, "src-*")
		if err != nil {
			return fmt.Errorf("merge: spill: %w", err)
		}
		k.src, k.f, k.w = f.Name(), f, bufio.NewWriterSize(f, spillBufBytes)
		p.kids[i] = k
	}
	return nil
}

// route returns the leaf of a key (nil: none), and the kid of p a key
// goes to.
func (s *spiller) route(key []byte) *spillPart {
	p := s.root
	for p.kids != nil {
		p = p.kids[kidOf(key, p.depth, len(p.kids))]
	}
	return p
}

// kidOf is the kid, of n, of a key at depth d: a hash salted by d, so
// that a split spreads the keys its parent gathered.
func kidOf(key []byte, d, n int) int {
	return int(fnv1a(fnv1a(fnvOffset, []byte{byte(d)}), key) % uint64(n))
}

// keyHash is the hash of the in-leaf index.
func keyHash(key []byte) uint64 { return fnv1a(fnvOffset, key) }

// fnv1a is 64-bit FNV-1a (as hash/fnv's, without its allocation a call).
func fnv1a(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

const fnvOffset = 14695981039346656037

// add spills a source row with its key (nil: a null key): a record of
// its srcID, its key and its values, in the partition the key routes to.
func (s *spiller) add(row []schema.Value, key []byte) error {
	rowBuf := s.rowBuf[:0]
	for _, v := range row {
		rowBuf = schema.AppendBinary(rowBuf, v)
	}
	s.rowBuf = rowBuf
	b := binary.AppendUvarint(s.buf[:0], uint64(s.rows))
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(rowBuf)))
	b = append(b, rowBuf...)
	s.buf = b
	p := s.root.kids[0]
	if key != nil {
		p = s.route(key)
	}
	if _, err := p.w.Write(b); err != nil {
		return fmt.Errorf("merge: spill: %w", err)
	}
	p.rows++
	p.bytes += int64(len(b))
	s.rows++
	return nil
}

// finish closes the source files and splits the partitions over the
// budget, then lists the leaves.
func (s *spiller) finish() error {
	var walk func(p *spillPart) error
	walk = func(p *spillPart) error {
		if p.kids != nil {
			for _, k := range p.kids {
				if err := walk(k); err != nil {
					return err
				}
			}
			return nil
		}
		if err := p.closeSrc(); err != nil {
			return err
		}
		need := p.bytes + spillIndexBytes*p.rows
		n := int(min(spillMaxFanout, p.rows, max(2, 2*need/s.budget+1), int64(spillMaxParts-s.parts)))
		if need <= s.budget || p.depth >= spillMaxDepth || n < 2 {
			s.leaves = append(s.leaves, p)
			return nil
		}
		if err := s.split(p, n); err != nil {
			return err
		}
		if err := s.resplit(p); err != nil {
			return err
		}
		return walk(p)
	}
	return walk(s.root)
}

func (p *spillPart) closeSrc() error {
	if p.f == nil {
		return nil
	}
	err := p.w.Flush()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	p.f, p.w = nil, nil
	if err != nil {
		return fmt.Errorf("merge: spill: %w", err)
	}
	return nil
}

// resplit moves p's rows to its new kids, in order, and removes p's
// file.
func (s *spiller) resplit(p *spillPart) error {
	err := readSource(p.src, func(r srcRec, raw []byte) error {
		k := p.kids[0]
		if r.key != nil {
			k = p.kids[kidOf(r.key, p.depth, len(p.kids))]
		}
		if _, err := k.w.Write(raw); err != nil {
			return fmt.Errorf("merge: spill: %w", err)
		}
		k.rows++
		k.bytes += int64(len(raw))
		return nil
	})
	_ = os.Remove(p.src)
	p.src, p.rows, p.bytes = "", 0, 0
	return err
}

// srcRec is a record of a source partition; key is nil for a null key.
type srcRec struct {
	srcID int64
	key   []byte
	row   []byte
}

// parseSrc parses the source record at the start of b and returns it and
// its length.
func parseSrc(b []byte) (srcRec, int, error) {
	var r srcRec
	id, n := binary.Uvarint(b)
	if n <= 0 {
		return r, 0, errSpill
	}
	i := n
	kl, n := binary.Uvarint(b[i:])
	if n <= 0 || kl > uint64(len(b)-i-n) {
		return r, 0, errSpill
	}
	i += n
	if kl > 0 {
		r.key = b[i : i+int(kl)]
	}
	i += int(kl)
	rl, n := binary.Uvarint(b[i:])
	if n <= 0 || rl > uint64(len(b)-i-n) {
		return r, 0, errSpill
	}
	i += n
	r.srcID, r.row = int64(id), b[i:i+int(rl)]
	return r, i + int(rl), nil
}

// srcReader reads a source partition file record by record.
type srcReader struct {
	f   *os.File
	r   *bufio.Reader
	buf []byte
}

func openSource(name string) (*srcReader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("merge: spill: %w", err)
	}
	return &srcReader{f: f, r: bufio.NewReaderSize(f, spillBufBytes)}, nil
}

// next reads a record and its raw bytes, valid until the next call; at
// the end it returns io.EOF.
func (sr *srcReader) next() (srcRec, []byte, error) {
	b := sr.buf[:0]
	readUvarint := func() (uint64, error) {
		x, err := binary.ReadUvarint(sr.r)
		if err == nil {
			b = binary.AppendUvarint(b, x)
		}
		return x, err
	}
	if _, err := readUvarint(); err != nil {
		if err == io.EOF {
			return srcRec{}, nil, io.EOF
		}
		return srcRec{}, nil, errSpill
	}
	kl, err := readUvarint()
	if err != nil || kl > 1<<30 {
		return srcRec{}, nil, errSpill
	}
	b, err = readN(sr.r, b, int(kl))
	if err != nil {
		return srcRec{}, nil, err
	}
	rl, err := readUvarint()
	if err != nil || rl > 1<<31 {
		return srcRec{}, nil, errSpill
	}
	if b, err = readN(sr.r, b, int(rl)); err != nil {
		return srcRec{}, nil, err
	}
	sr.buf = b
	r, _, err := parseSrc(b)
	return r, b, err
}

func readN(r io.Reader, b []byte, n int) ([]byte, error) {
	start := len(b)
	b = slices.Grow(b, n)[:start+n]
	if _, err := io.ReadFull(r, b[start:]); err != nil {
		return b, errSpill
	}
	return b, nil
}

func (sr *srcReader) close() { _ = sr.f.Close() }

// readSource calls fn with each record of a source file, in order.
func readSource(name string, fn func(r srcRec, raw []byte) error) error {
	sr, err := openSource(name)
	if err != nil {
		return err
	}
	defer sr.close()
	for {
		r, raw, err := sr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(r, raw); err != nil {
			return err
		}
	}
}

// decodeRow decodes a row record into dst, a value per source column.
func decodeRow(b []byte, dst []schema.Value) error {
	for j := range dst {
		v, n, err := schema.DecodeBinary(b)
		if err != nil {
			return errSpill
		}
		dst[j], b = v, b[n:]
	}
	if len(b) != 0 {
		return errSpill
	}
	return nil
}

// partitionTarget routes the join keys of the rows of files to the
// leaves, for one attempt, and joins each leaf: steps 2 and 3.
func (m *merger) partitionTarget(ctx context.Context, files []*actions.Add) error {
	s := m.spill
	s.resetAttempt()
	s.fileIdx = make(map[string]int32, len(files))
	for i, f := range files {
		s.fileIdx[f.Path] = int32(i)
	}
	if len(files) == 0 {
		return nil
	}
	for _, p := range s.leaves {
		if p.rows == 0 {
			continue
		}
		f, err := os.CreateTemp(s.dir, "tgt-*")
		if err != nil {
			return fmt.Errorf("merge: spill: %w", err)
		}
		p.tgt, p.tf, p.tw = f.Name(), f, bufio.NewWriterSize(f, spillBufBytes)
	}
	// The key columns, each once (t.id = s.a AND t.id = s.b reads id
	// once), and where each key's is among them.
	var cols []string
	slot := make([]int, len(m.keys))
	for k, key := range m.keys {
		if slot[k] = slices.Index(cols, key.tname); slot[k] < 0 {
			slot[k] = len(cols)
			cols = append(cols, key.tname)
		}
	}
	fr, err := scan.NewFileReader(m.snap, scan.Options{Columns: cols})
	if err != nil {
		return err
	}
	defer fr.Close()
	var kb keyBuilder
	var rec []byte
	for i, a := range files {
		err := fr.ReadFile(ctx, a, func(b *scan.FileBatch) error {
		rows:
			for r := range b.Len {
				kb.buf = kb.buf[:0]
				for k, key := range m.keys {
					if !kb.add(b.Columns[slot[k]][r], &m.tsch.Fields[key.tcol]) {
						continue rows
					}
				}
				p := s.route(kb.buf)
				if p.tw == nil {
					continue // no source row there
				}
				rec = binary.AppendUvarint(rec[:0], uint64(i))
				rec = binary.AppendUvarint(rec, uint64(b.Positions[r]))
				rec = binary.AppendUvarint(rec, uint64(len(kb.buf)))
				rec = append(rec, kb.buf...)
				if _, err := p.tw.Write(rec); err != nil {
					return fmt.Errorf("merge: spill: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, p := range s.leaves {
		if p.tw == nil {
			continue
		}
		err := p.tw.Flush()
		if cerr := p.tf.Close(); err == nil {
			err = cerr
		}
		p.tf, p.tw = nil, nil
		if err != nil {
			return fmt.Errorf("merge: spill: %w", err)
		}
		if err := s.join(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// resetAttempt drops the files of the last attempt.
func (s *spiller) resetAttempt() {
	for _, p := range s.leaves {
		for _, f := range []*os.File{p.tf, p.mf} {
			if f != nil {
				_ = f.Close()
			}
		}
		for _, name := range []string{p.tgt, p.match} {
			if name != "" {
				_ = os.Remove(name)
			}
		}
		p.tgt, p.tf, p.tw, p.match, p.offsets, p.mf, p.mr, p.ok = "", nil, nil, "", nil, nil, nil, false
		p.mgen = 0
	}
	s.gen, s.lastFile, s.lastPos = 0, -1, -1
}

// join loads leaf p and writes its matches (step 3).
func (s *spiller) join(ctx context.Context, p *spillPart) error {
	data, err := os.ReadFile(p.src)
	if err != nil {
		return fmt.Errorf("merge: spill: %w", err)
	}
	type entry struct {
		hash uint64
		off  int64
	}
	idx := make([]entry, 0, p.rows)
	for off := 0; off < len(data); {
		r, n, err := parseSrc(data[off:])
		if err != nil {
			return err
		}
		if r.key != nil {
			idx = append(idx, entry{keyHash(r.key), int64(off)})
		}
		off += n
	}
	// Sorted by (hash, offset): rows of one key in srcID order.
	slices.SortFunc(idx, func(a, b entry) int {
		if a.hash != b.hash {
			if a.hash < b.hash {
				return -1
			}
			return 1
		}
		return int(a.off - b.off)
	})
	// A directory of the entries by the top bits of their hashes, about
	// one entry a slot: a lookup reads a slot and the entries after it.
	bits := 1
	for 1<<bits < len(idx) {
		bits++
	}
	dir := make([]int32, 1<<bits+1)
	for i, e := range idx {
		dir[e.hash>>(64-bits)+1] = int32(i + 1)
	}
	for i := 1; i < len(dir); i++ {
		dir[i] = max(dir[i], dir[i-1])
	}
	tgt, err := os.Open(p.tgt)
	if err != nil {
		return fmt.Errorf("merge: spill: %w", err)
	}
	defer tgt.Close()
	tr := bufio.NewReaderSize(tgt, spillBufBytes)
	mf, err := os.CreateTemp(s.dir, "match-*")
	if err != nil {
		return fmt.Errorf("merge: spill: %w", err)
	}
	p.match = mf.Name()
	mw := bufio.NewWriterSize(mf, spillBufBytes)
	p.offsets = map[int32]int64{}
	var written int64
	var key, rec []byte
	n := 0
	for {
		file, err := binary.ReadUvarint(tr)
		if err == io.EOF {
			break
		}
		if err != nil {
			mf.Close()
			return errSpill
		}
		pos, err1 := binary.ReadUvarint(tr)
		kl, err2 := binary.ReadUvarint(tr)
		if err1 != nil || err2 != nil || kl > 1<<30 {
			mf.Close()
			return errSpill
		}
		if key, err = readN(tr, key[:0], int(kl)); err != nil {
			mf.Close()
			return err
		}
		if n++; n%(1<<16) == 0 {
			if err := ctx.Err(); err != nil {
				mf.Close()
				return err
			}
		}
		h := keyHash(key)
		i, end := int(dir[h>>(64-bits)]), int(dir[h>>(64-bits)+1])
		for i < end && idx[i].hash < h {
			i++
		}
		for ; i < end && idx[i].hash == h; i++ {
			r, _, err := parseSrc(data[idx[i].off:])
			if err != nil {
				mf.Close()
				return err
			}
			if !bytes.Equal(r.key, key) {
				continue
			}
			if _, ok := p.offsets[int32(file)]; !ok {
				p.offsets[int32(file)] = written
			}
			rec = binary.AppendUvarint(rec[:0], file)
			rec = binary.AppendUvarint(rec, pos)
			rec = binary.AppendUvarint(rec, uint64(r.srcID))
			rec = binary.AppendUvarint(rec, uint64(len(r.row)))
			rec = append(rec, r.row...)
			if _, err := mw.Write(rec); err != nil {
				mf.Close()
				return fmt.Errorf("merge: spill: %w", err)
			}
			written += int64(len(rec))
		}
	}
	err = mw.Flush()
	if cerr := mf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("merge: spill: %w", err)
	}
	_ = os.Remove(p.tgt)
	p.tgt = ""
	return nil
}

// candidates calls fn with the source rows (srcID and row record) the
// join keys pair with the target row trow at (add, pos), in srcID order
// (step 4). The record is valid during the call.
func (m *merger) spillCandidates(add *actions.Add, pos int64, trow []schema.Value, fn func(srcID int64, row []byte) error) error {
	s := m.spill
	fi, ok := s.fileIdx[add.Path]
	if !ok {
		return nil // not a candidate file: nothing was routed
	}
	if fi != s.lastFile || pos <= s.lastPos {
		s.gen++ // a new pass
	}
	s.lastFile, s.lastPos = fi, pos
	var kb keyBuilder
	for _, key := range m.keys {
		if !kb.add(trow[key.tcol], &m.tsch.Fields[key.tcol]) {
			return nil
		}
	}
	p := s.route(kb.buf)
	if p.match == "" {
		return nil
	}
	if p.mgen != s.gen || p.mfile != fi {
		if err := p.seek(fi); err != nil {
			return err
		}
		p.mgen = s.gen
	}
	for p.ok && p.head.pos < pos {
		if err := p.advance(); err != nil {
			return err
		}
	}
	for p.ok && p.head.pos == pos {
		if err := fn(p.head.srcID, p.head.row); err != nil {
			return err
		}
		if err := p.advance(); err != nil {
			return err
		}
	}
	return nil
}

// seek positions the match reader at the first record of target file fi.
func (p *spillPart) seek(fi int32) error {
	p.mfile, p.ok = fi, false
	off, ok := p.offsets[fi]
	if !ok {
		return nil
	}
	if p.mf == nil {
		f, err := os.Open(p.match)
		if err != nil {
			return fmt.Errorf("merge: spill: %w", err)
		}
		p.mf, p.mr = f, bufio.NewReaderSize(f, spillBufBytes)
	}
	if _, err := p.mf.Seek(off, io.SeekStart); err != nil {
		return fmt.Errorf("merge: spill: %w", err)
	}
	p.mr.Reset(p.mf)
	return p.advance()
}

// advance reads the next record of the current file into head.
func (p *spillPart) advance() error {
	file, err := binary.ReadUvarint(p.mr)
	if err == io.EOF {
		p.ok = false
		return nil
	}
	if err != nil {
		return errSpill
	}
	pos, err1 := binary.ReadUvarint(p.mr)
	id, err2 := binary.ReadUvarint(p.mr)
	rl, err3 := binary.ReadUvarint(p.mr)
	if err1 != nil || err2 != nil || err3 != nil || rl > 1<<31 {
		return errSpill
	}
	// A fresh slice each time would cost an allocation a row: the
	// caller decodes the row before the next advance.
	if p.head.row, err = readN(p.mr, p.head.row[:0], int(rl)); err != nil {
		return err
	}
	if int32(file) != p.mfile {
		p.ok = false
		return nil
	}
	p.head.file, p.head.pos, p.head.srcID, p.ok = int32(file), int64(pos), int64(id), true
	return nil
}

// spillMatch is match for a spilled source: the source rows the target
// row matches, decoded into rows (reused), with their srcIDs in ids.
func (m *merger) spillMatch(add *actions.Add, pos int64, trow []schema.Value) (ids []int64, rows [][]schema.Value, err error) {
	ids = m.spillIDs[:0]
	n := 0
	err = m.spillCandidates(add, pos, trow, func(id int64, rec []byte) error {
		if n == len(m.spillRows) {
			m.spillRows = append(m.spillRows, make([]schema.Value, len(m.ssch.Fields)))
		}
		srow := m.spillRows[n]
		// The strings of srow point into its record: a copy, as rec is
		// the reader's buffer.
		if err := decodeRow(slices.Clone(rec), srow); err != nil {
			return err
		}
		t, err := m.onProg.Test2(trow, srow)
		if err != nil {
			return fmt.Errorf("merge: the merge condition %s: %w", m.onText, err)
		}
		if t != expr.True {
			return nil
		}
		ids = append(ids, id)
		n++
		return nil
	})
	m.spillIDs = ids
	return ids, m.spillRows[:n], err
}

// spillInserts yields the source rows no target row matched, in source
// order, as table rows of the first NOT MATCHED clause that holds
// (step 5).
func (m *merger) spillInserts() iter2 {
	return func(yield func(schema.Batch, error) bool) {
		s := m.spill
		h := &srcHeap{}
		defer func() {
			for _, r := range h.rs {
				r.sr.close()
			}
		}()
		for _, p := range s.leaves {
			if p.rows == 0 {
				continue
			}
			sr, err := openSource(p.src)
			if err != nil {
				yield(schema.Batch{}, err)
				return
			}
			r := &srcHead{sr: sr}
			if err := r.next(); err != nil {
				sr.close()
				yield(schema.Batch{}, err)
				return
			}
			if r.ok {
				h.rs = append(h.rs, r)
			} else {
				sr.close()
			}
		}
		heap.Init(h)
		n := len(m.tsch.Fields)
		srow := make([]schema.Value, len(m.ssch.Fields))
		newBatch := func() schema.Batch {
			b := schema.Batch{Columns: make([][]schema.Value, n)}
			for j := range b.Columns {
				b.Columns[j] = make([]schema.Value, 0, insertBatchRows)
			}
			return b
		}
		b := newBatch()
		for h.Len() > 0 {
			r := h.rs[0]
			if !m.matchedBit(r.rec.srcID) {
				// The row's strings point into the reader's buffer:
				// values keeps what it needs (the written row is
				// built from fresh values, see below).
				if err := decodeRow(slices.Clone(r.rec.row), srow); err != nil {
					yield(schema.Batch{}, err)
					return
				}
				for _, c := range m.notMatched {
					ok, err := c.holds(nil, srow)
					if err != nil {
						yield(schema.Batch{}, err)
						return
					}
					if !ok {
						continue
					}
					vals, err := m.values(c, nil, srow)
					if err != nil {
						yield(schema.Batch{}, err)
						return
					}
					for j, v := range vals {
						b.Columns[j] = append(b.Columns[j], v)
					}
					b.Len++
					break
				}
			}
			if err := r.next(); err != nil {
				yield(schema.Batch{}, err)
				return
			}
			if r.ok {
				heap.Fix(h, 0)
			} else {
				heap.Pop(h)
				r.sr.close()
			}
			if b.Len == insertBatchRows {
				if !yield(b, nil) {
					return
				}
				b = newBatch()
			}
		}
		if b.Len > 0 {
			yield(b, nil)
		}
	}
}

type iter2 = func(yield func(schema.Batch, error) bool)

// srcHead is a source leaf being merged, with its next record.
type srcHead struct {
	sr  *srcReader
	rec srcRec
	ok  bool
}

func (r *srcHead) next() error {
	rec, _, err := r.sr.next()
	if err == io.EOF {
		r.ok = false
		return nil
	}
	r.rec, r.ok = rec, err == nil
	return err
}

// srcHeap orders the leaves by their next srcID.
type srcHeap struct{ rs []*srcHead }

func (h *srcHeap) Len() int           { return len(h.rs) }
func (h *srcHeap) Less(i, j int) bool { return h.rs[i].rec.srcID < h.rs[j].rec.srcID }
func (h *srcHeap) Swap(i, j int)      { h.rs[i], h.rs[j] = h.rs[j], h.rs[i] }
func (h *srcHeap) Push(x any)         { h.rs = append(h.rs, x.(*srcHead)) }
func (h *srcHeap) Pop() any {
	r := h.rs[len(h.rs)-1]
	h.rs = h.rs[:len(h.rs)-1]
	return r
}

// matchedBit and setMatched read and set the bitset of the source rows
// some target row matched.
func (m *merger) matchedBit(id int64) bool { return m.srcBits[id>>6]&(1<<(id&63)) != 0 }

func (m *merger) setMatched(id int64) { m.srcBits[id>>6] |= 1 << (id & 63) }
