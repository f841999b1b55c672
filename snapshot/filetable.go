package snapshot

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/internal/invariants"
	"github.com/godelta/delta/location"
)

// fileTable holds the add actions of a checkpoint in a compact, columnar
// form, so that a snapshot of a million files costs a fraction of a
// million actions.Add structs (about 95 bytes a file with stats on five
// columns, against 240 before the columns and the records; see
// bench/RESULTS.md, issue 26):
//
//   - the fixed-size fields of each file (where its record is, its place:
//     the directory of its path with its partition values, and the shape
//     of its stats and its flags) in columns of fixed-size chunks (no
//     slice doubling, no pointer): 12 bytes a file; a place is interned
//     per table, its partition map one copy per map of the decoder (which
//     shares a map between files with equal values);
//   - a record per file in an arena of byte blocks: its size and
//     modification time as varints, its file name (the path after its
//     directory, which is interned per table) stored against a template
//     name (nameCoder), then its stats JSON split into a shape, the text
//     with every number and string value taken out, interned per table,
//     and those values (see encodeStats; short strings that repeat, such
//     as a constant column's bounds, are interned in a bounded dictionary
//     and stored as their index);
//   - row tracking's baseRowId and defaultRowCommitVersion, and the
//     clustering provider (interned), in the record when the add has them;
//   - an add with tags or a deletion vector kept whole, in full by row,
//     its strings copied.
//
// The invariant: nothing of the checkpoint decoder's memory is kept (every
// byte is copied into the table's own columns, arena and interned
// strings). It is what lets readBaseFiles read the checkpoint with
// checkpoint.ReadTransient, whose strings alias pages that the decoder
// reuses once a batch is applied: a string kept would change under the
// table. Statistics stay in their compact form until something
// asks for the add: Files builds an actions.Add per row as it yields it,
// its path and stats JSON carved from shared chunks (strArena), and only a
// predicate parses that JSON (package expr, one file at a time). A hash
// index from canonical path to row lets Update find the checkpoint files
// that new commits supersede without a pass over every row.
//
// A fileTable is written only while its checkpoint is read and is then
// shared, read-only, by every snapshot built on that checkpoint: its read
// methods use no scratch space of the table's.
type fileTable struct {
	chunks []*fileChunk
	n      int
	full   map[int]*actions.Add // rows with shape shapeFull
	// totalSize is the size of all files.
	totalSize int64

	// pvs maps a partition map of the decoder to the table's copy and the
	// last place of files with it, while the table is built.
	pvs map[unsafe.Pointer]pvEntry

	clusterings []string // clustering providers, by rowExtras.clustering

	places   []place             // by place id
	placeIDs map[placeKey]uint32 // while the table is built
	lastP    uint32              // id of the last place stored

	shapes    []string          // by shape id
	shapeIDs  map[string]uint32 // shape -> id
	lastShape uint32            // id of the last shape stored, shapeRaw before the first: tried first
	lastSegs  []shapeSeg        // lastShape, split for matchStats
	dict      strDict           // string values of stats
	names     nameCoder         // file names, against templates
	blocks    [][]byte          // arena of records
	scratch   []byte
	shapeBuf  []byte

	seed  maphash.Seed
	index []uint32 // open addressing, row+1 per slot, 0 empty
	// hashes holds the hash of each row's canonical path, by chunk, while
	// the table is built: add has the path at hand, and finish builds the
	// index from them without making every path again.
	hashes []*[rowChunk]uint64
}

// fileChunk holds the fixed-size fields of rowChunk files: 12 bytes a
// file, and no pointer for the collector to follow.
type fileChunk struct {
	// rec is where the row's record starts: its block, less firstBlock,
	// above recOffBits, and its offset in the block below. A row adds at
	// most one block to the arena (store), so the rows of a chunk span at
	// most rowChunk+1 blocks: the difference fits in 32-recOffBits bits.
	rec        [rowChunk]uint32
	place      [rowChunk]uint32 // place id: directory and partition values
	shape      [rowChunk]uint32 // statsRef.shape, with the flags dataChange and plainPath
	firstBlock uint32           // the arena block the chunk's first record is in
}

// recAt returns where row j's record starts, as store returned it.
func (c *fileChunk) recAt(j int) uint64 {
	r := c.rec[j]
	return uint64(c.firstBlock+r>>recOffBits)<<32 | uint64(r&(blockSize-1))
}

// place is a directory of the table's files and the partition values of
// the files in it: in a partitioned table the two go together (the
// directory names the values), so a file refers to both with one id. The
// values are the table's copy (fileTable.partitions); a directory with
// files of different values (which the protocol allows) has a place for
// each.
type place struct {
	dir string
	pv  map[string]string
}

// pvEntry is the table's copy of a partition map of the decoder, and the
// place of the last file added with it (^0 for none): the next file with
// the same values is most likely in the same directory, so one lookup by
// the map's identity finds both.
type pvEntry struct {
	pv    map[string]string
	place uint32
}

// placeKey identifies a place while the table is built: its directory and
// its partition map, by identity (partitions hands out one map per set of
// values).
type placeKey struct {
	dir string
	pv  unsafe.Pointer
}

// mapID returns the identity of map m.
func mapID(m map[string]string) unsafe.Pointer {
	if m == nil {
		return nil
	}
	return reflect.ValueOf(m).UnsafePointer()
}

// statsRef locates a row's encoded stats: its shape (shapeNone, shapeRaw,
// shapeFull, or an index into shapes) under the flags dataChange and
// plainPath, and its record.
type statsRef struct {
	shape uint32
	rec   uint64
}

const (
	shapeNone  = 1<<29 - 1 // no stats
	shapeRaw   = 1<<29 - 2 // the record holds the stats as they are, after their length
	shapeFull  = 1<<29 - 3 // the whole add is in fileTable.full
	dataChange = 1 << 31   // the add's dataChange
	plainPath  = 1 << 30   // the path is its own canonical form
	hasExtras  = 1 << 29   // the record holds rowExtras
	shapeMask  = 1<<29 - 1

	rowChunk = 4096
	// blockSize is the size of the arena's blocks, a power of two: an
	// offset in one takes recOffBits bits, and 32-recOffBits bits are
	// left for rowChunk+1 blocks.
	blockSize  = 1 << recOffBits
	recOffBits = 19
	// maxShapes bounds the interned shapes: past it, stats are kept raw.
	maxShapes = 1 << 16
	// hole marks a value taken out of a shape, kept in the values as its
	// length and text (or its index in the string dictionary); numHole a
	// run of digits kept as its value. Valid JSON never holds these raw
	// control bytes, so stats that do are kept raw.
	hole    = 0
	numHole = 1
	// maxNumDigits is the longest digit run that fits a uint64 surely.
	maxNumDigits = 19
)

// strDict interns short string values of stats that repeat, up to a
// bounded number: a value found in it is stored as its index.
type strDict struct {
	strs []string
	ids  map[string]uint32
}

const (
	maxDictStrings = 1 << 15 // entries
	maxDictLen     = 64      // bytes of a value interned
)

// appendValue appends a hole's value v to vals: its index in the
// dictionary, tagged with a set low bit, or its length, tagged with a
// clear one, and its bytes. v may be a part of the decoder's pages: what
// the dictionary keeps is a copy.
func (d *strDict) appendValue(vals []byte, v string) []byte {
	if id, ok := d.intern(v); ok {
		return binary.AppendUvarint(vals, uint64(id)<<1|1)
	}
	vals = binary.AppendUvarint(vals, uint64(len(v))<<1)
	return append(vals, v...)
}

// intern returns the index of v in the dictionary, adding it if there is
// room; ok is false when v is not in it.
func (d *strDict) intern(v string) (id uint32, ok bool) {
	if len(v) > maxDictLen || len(v) < 2 {
		return 0, false
	}
	if id, ok := d.ids[v]; ok {
		return id, true
	}
	if len(d.strs) >= maxDictStrings {
		return 0, false
	}
	if d.ids == nil {
		d.ids = map[string]uint32{}
	}
	c := strings.Clone(v)
	id = uint32(len(d.strs))
	d.ids[c] = id
	d.strs = append(d.strs, c)
	return id, true
}

// appendSegValue is appendValue for the value v of the hole after seg,
// which remembers the last value there (a column whose bound is the same
// in file after file is then stored without a lookup) and stops using the
// dictionary for a hole whose values seldom repeat (a unique name, say), so
// that they neither fill it nor cost a lookup each.
func (d *strDict) appendSegValue(vals []byte, v string, seg *shapeSeg) []byte {
	switch {
	case seg.hasLast && seg.last == v:
		return binary.AppendUvarint(vals, uint64(seg.lastID)<<1|1)
	case seg.noDict:
	default:
		seg.tries++
		id, found := d.ids[v]
		if found {
			seg.hits++
		} else if seg.tries > dictTrial && seg.hits*8 < seg.tries {
			// The last value is seldom the next one either: neither
			// appendSegValue nor matchStats compares it any more.
			seg.noDict, seg.hasLast = true, false
			break
		} else {
			id, found = d.intern(v)
		}
		if found {
			seg.last, seg.lastID, seg.hasLast = d.strs[id], id, true
			return binary.AppendUvarint(vals, uint64(id)<<1|1)
		}
	}
	vals = binary.AppendUvarint(vals, uint64(len(v))<<1)
	return append(vals, v...)
}

// dictTrial is how many values of a hole are looked up in the dictionary
// before it is given up for that hole if fewer than one in eight was
// found there.
const dictTrial = 256

func newFileTable() *fileTable {
	return &fileTable{shapeIDs: map[string]uint32{}, placeIDs: map[placeKey]uint32{}, lastShape: shapeRaw, lastP: ^uint32(0), seed: maphash.MakeSeed()}
}

func (t *fileTable) len() int { return t.n }

// at returns the chunk of row i and its index there.
func (t *fileTable) at(i int) (*fileChunk, int) { return t.chunks[i/rowChunk], i % rowChunk }

// add appends a copy of a.
func (t *fileTable) add(a *actions.Add) {
	p := prepareAdd(t.seed, a)
	t.addPrepared(a, &p)
}

// addPrep is what the table makes of an add with nothing of its own but
// its seed (prepareAdd), so that it can be done on another goroutine than
// add: eachCheckpointFile has the checkpoint's decoding goroutine do it,
// while the table takes the batch before.
type addPrep struct {
	hash  uint64 // of the path of the add's key, with the table's seed
	name  int    // where the file name starts in the path, after its last slash
	plain bool   // the path is its own canonical form
}

// prepareAdd returns the addPrep of a for a table with seed.
func prepareAdd(seed maphash.Seed, a *actions.Add) addPrep {
	if len(a.Tags) > 0 || a.DeletionVector != nil { // a full row
		return addPrep{hash: maphash.String(seed, keyOf(a.Path, a.DeletionVector).path)}
	}
	dir, _ := splitPath(a.Path)
	p := addPrep{name: len(dir)}
	canon := location.Canonical(a.Path)
	p.plain = canon == a.Path
	p.hash = maphash.String(seed, canon)
	return p
}

// addPrepared appends a copy of a, of which p is prepareAdd's addPrep
// with the table's seed.
func (t *fileTable) addPrepared(a *actions.Add, p *addPrep) {
	if t.n%rowChunk == 0 {
		c := new(fileChunk)
		if len(t.blocks) > 0 {
			c.firstBlock = uint32(len(t.blocks) - 1)
		}
		t.chunks = append(t.chunks, c)
		t.hashes = append(t.hashes, new([rowChunk]uint64))
	}
	c, j := t.at(t.n)
	t.hashes[len(t.hashes)-1][j] = p.hash
	t.n++
	t.totalSize += a.Size
	if len(a.Tags) > 0 || a.DeletionVector != nil {
		if t.full == nil {
			t.full = map[int]*actions.Add{}
		}
		t.full[t.n-1] = t.cloneAdd(a)
		c.shape[j] = shapeFull
		return
	}
	dir, name := a.Path[:p.name], a.Path[p.name:]
	c.place[j] = t.placeOf(dir, a.PartitionValues)
	ex := t.extrasOf(a)
	ref := t.putRecord(a.Size, a.ModificationTime, ex, name, a.Stats)
	if ex.has != 0 {
		ref.shape |= hasExtras
	}
	if a.DataChange {
		ref.shape |= dataChange
	}
	if p.plain {
		ref.shape |= plainPath
	}
	block, off := uint32(ref.rec>>32), uint32(ref.rec)
	if invariants.Enabled {
		invariants.Assertf(block-c.firstBlock < 1<<(32-recOffBits) && off < blockSize, "snapshot: record at block %d offset %d in a chunk from block %d", block, off, c.firstBlock)
	}
	c.shape[j], c.rec[j] = ref.shape, (block-c.firstBlock)<<recOffBits|off
}

// nameCoder stores file names against templates: names seen before,
// kept whole. Files written by one job share all of their names but a
// part number (Spark's and delta-rs's part-<n>-<job id>-c000.<codec>.parquet,
// say), so a name is stored as a template's id, the lengths of the prefix
// and the suffix it shares with it, and the bytes between. A template is
// found by the name with its first run of digits left out; a name with
// none found becomes one, up to maxTemplates, past which names that share
// little with one are stored whole.
type nameCoder struct {
	tmpls []string
	byKey map[[2]string]uint32 // the template's text around its first digit run -> id
	last  uint32               // id of the last template used, when tmpls is not empty
}

const (
	maxTemplates = 1 << 16
	// minShared is the fewest bytes a name must share with a template to
	// be stored against it.
	minShared = 8
)

// nameKey is name without its first run of digits.
func nameKey(name string) [2]string {
	i := strings.IndexAny(name, "0123456789")
	if i < 0 {
		return [2]string{name, ""}
	}
	return [2]string{name[:i], name[digitsEnd(name, i):]}
}

// appendName appends the encoding of name to rec: 0 and the name's length
// and bytes, or a template's id plus one, the prefix and suffix lengths it
// shares with the template, and the length and bytes of the rest.
func (c *nameCoder) appendName(rec []byte, name string) []byte {
	id, p, q, ok := c.template(name)
	if !ok {
		rec = binary.AppendUvarint(rec, 0)
		rec = binary.AppendUvarint(rec, uint64(len(name)))
		return append(rec, name...)
	}
	rec = binary.AppendUvarint(rec, uint64(id)+1)
	rec = binary.AppendUvarint(rec, uint64(p))
	rec = binary.AppendUvarint(rec, uint64(q))
	mid := name[p : len(name)-q]
	rec = binary.AppendUvarint(rec, uint64(len(mid)))
	return append(rec, mid...)
}

// template returns the template to store name against, making name one
// when none fits and there is room, and the lengths p and q of the prefix
// and the suffix name shares with it (see shared).
func (c *nameCoder) template(name string) (id uint32, p, q int, ok bool) {
	if len(name) < 2*minShared {
		return 0, 0, 0, false
	}
	if len(c.tmpls) > 0 {
		if p, q := shared(name, c.tmpls[c.last]); p+q >= minShared {
			return c.last, p, q, true
		}
	}
	k := nameKey(name)
	if id, ok := c.byKey[k]; ok {
		if p, q := shared(name, c.tmpls[id]); p+q >= minShared {
			c.last = id
			return id, p, q, true
		}
	}
	if len(c.tmpls) >= maxTemplates {
		return 0, 0, 0, false
	}
	if c.byKey == nil {
		c.byKey = map[[2]string]uint32{}
	}
	t := strings.Clone(name)
	id = uint32(len(c.tmpls))
	c.tmpls = append(c.tmpls, t)
	c.byKey[nameKey(t)] = id
	c.last = id
	return id, len(name), 0, true
}

// shared returns the lengths p and q of the longest prefix and then the
// longest suffix a and b share, without overlap: q counts only bytes past
// a[:p] and b[:p].
//
// Names of one job differ in a run of digits only, so after the prefix
// the suffix is first tried from the end of a's digit run there: one
// comparison of the whole rest (memequal) instead of a byte at a time;
// the byte loop then extends it, so the result is the same either way.
func shared(a, b string) (p, q int) {
	for p+8 <= len(a) && p+8 <= len(b) {
		if x := load64(a, p) ^ load64(b, p); x != 0 {
			p += bits.TrailingZeros64(x) / 8 // the first byte that differs
			break
		}
		p += 8
	}
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	limit := min(len(a), len(b)) - p
	if g := len(a) - digitsEnd(a, p); g > 0 && g <= limit && a[len(a)-g:] == b[len(b)-g:] {
		q = g
	}
	for q < limit && a[len(a)-1-q] == b[len(b)-1-q] {
		q++
	}
	return p, q
}

// appendTo appends the name encoded at the start of b to buf, and returns
// the rest of b.
func (c *nameCoder) appendTo(buf, b []byte) ([]byte, []byte) {
	ref, w := binary.Uvarint(b)
	b = b[w:]
	if ref == 0 {
		n, w := binary.Uvarint(b)
		b = b[w:]
		return append(buf, b[:n]...), b[n:]
	}
	tmpl := c.tmpls[ref-1]
	p, w := binary.Uvarint(b)
	b = b[w:]
	q, w := binary.Uvarint(b)
	b = b[w:]
	n, w := binary.Uvarint(b)
	b = b[w:]
	buf = append(buf, tmpl[:p]...)
	buf = append(buf, b[:n]...)
	return append(buf, tmpl[len(tmpl)-int(q):]...), b[n:]
}

// skipName returns b past the name encoded at its start.
func (c *nameCoder) skipName(b []byte) ([]byte, []byte) {
	ref, w := binary.Uvarint(b)
	b = b[w:]
	if ref != 0 {
		for range 2 {
			_, w = binary.Uvarint(b)
			b = b[w:]
		}
	}
	n, w := binary.Uvarint(b)
	return nil, b[w+int(n):]
}

// cloneAdd returns a copy of a that shares no memory with it: the
// decoder's strings may be parts of its pages, which the table must not
// keep.
func (t *fileTable) cloneAdd(a *actions.Add) *actions.Add {
	c := *a
	c.Path, c.Stats, c.ClusteringProvider = strings.Clone(a.Path), strings.Clone(a.Stats), strings.Clone(a.ClusteringProvider)
	c.PartitionValues = t.partitions(a.PartitionValues)
	if a.Tags != nil {
		c.Tags = make(map[string]string, len(a.Tags))
		for k, v := range a.Tags {
			c.Tags[strings.Clone(k)] = strings.Clone(v)
		}
	}
	if a.DeletionVector != nil {
		dv := *a.DeletionVector
		dv.StorageType, dv.PathOrInlineDv = strings.Clone(dv.StorageType), strings.Clone(dv.PathOrInlineDv)
		c.DeletionVector = &dv
	}
	return &c
}

// rowExtras are the fields of an add a file of a table with row tracking
// or clustering has, kept in its record when present.
type rowExtras struct {
	has                     uint8 // extraBaseRowID | extraRowCommitVersion | extraClustering
	baseRowID, rowCommitVer int64
	clustering              uint32 // index into fileTable.clusterings
}

const (
	extraBaseRowID = 1 << iota
	extraRowCommitVersion
	extraClustering
)

// extrasOf returns the row-tracking and clustering fields of a.
func (t *fileTable) extrasOf(a *actions.Add) rowExtras {
	var ex rowExtras
	if a.BaseRowID != nil {
		ex.has |= extraBaseRowID
		ex.baseRowID = *a.BaseRowID
	}
	if a.DefaultRowCommitVersion != nil {
		ex.has |= extraRowCommitVersion
		ex.rowCommitVer = *a.DefaultRowCommitVersion
	}
	if a.ClusteringProvider != "" {
		ex.has |= extraClustering
		i := slices.Index(t.clusterings, a.ClusteringProvider)
		if i < 0 {
			i = len(t.clusterings)
			t.clusterings = append(t.clusterings, strings.Clone(a.ClusteringProvider))
		}
		ex.clustering = uint32(i)
	}
	return ex
}

// partitions returns the table's copy of partition values m: one per map
// of the decoder, which shares a map between files with equal values; the
// decoder's strings may be parts of its pages, which the table must not
// keep.
func (t *fileTable) partitions(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	return t.pvEntry(m).pv
}

// pvEntry returns the entry of the decoder's partition map m, not nil,
// making the table's copy on first sight.
func (t *fileTable) pvEntry(m map[string]string) pvEntry {
	p := mapID(m)
	if e, ok := t.pvs[p]; ok {
		return e
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[strings.Clone(k)] = strings.Clone(v)
	}
	if t.pvs == nil {
		t.pvs = map[unsafe.Pointer]pvEntry{}
	}
	e := pvEntry{pv: c, place: ^uint32(0)}
	t.pvs[p] = e
	return e
}

// placeOf returns the id of the place of a file in directory dir with the
// decoder's partition map m.
func (t *fileTable) placeOf(dir string, m map[string]string) uint32 {
	if m == nil {
		return t.placeID(dir, nil)
	}
	e := t.pvEntry(m)
	if e.place != ^uint32(0) && t.places[e.place].dir == dir {
		return e.place
	}
	e.place = t.placeID(dir, e.pv)
	t.pvs[mapID(m)] = e
	return e.place
}

// splitPath splits a path after its last slash. It looks for it from the
// start with IndexByte, which scans a word at a time, where LastIndexByte
// goes a byte at a time from the end: a path has few slashes, and its
// name, after the last, is most of it.
func splitPath(p string) (dir, name string) {
	i := 0
	for {
		k := strings.IndexByte(p[i:], '/')
		if k < 0 {
			return p[:i], p[i:]
		}
		i += k + 1
	}
}

// placeID returns the id of the place of directory dir and partition
// values pv (the table's copy), interning it.
func (t *fileTable) placeID(dir string, pv map[string]string) uint32 {
	k := placeKey{dir: dir, pv: mapID(pv)}
	if t.lastP != ^uint32(0) {
		if p := &t.places[t.lastP]; p.dir == dir && mapID(p.pv) == k.pv {
			return t.lastP
		}
	}
	id, ok := t.placeIDs[k]
	if !ok {
		id = uint32(len(t.places))
		k.dir = strings.Clone(dir)
		t.places = append(t.places, place{dir: k.dir, pv: pv})
		t.placeIDs[k] = id
	}
	t.lastP = id
	return id
}

// putStats stores s in the arena, in a record of its own with no name.
func (t *fileTable) putStats(s string) statsRef { return t.putRecord(0, 0, rowExtras{}, "", s) }

// putRecord stores a record in the arena: size, modification time, the
// extras when ex has any, name, then stats s.
//
// The record is encoded in place at the end of the arena's last block when
// that surely has room for it (recordBound), and else in scratch space and
// copied by store; either way it lands where store would put it.
func (t *fileTable) putRecord(size, modTime int64, ex rowExtras, name, s string) statsRef {
	rec := t.scratch[:0]
	k, room := len(t.blocks)-1, 0
	if k >= 0 {
		if b := t.blocks[k]; cap(b) == blockSize && blockSize-len(b) >= recordBound(name, s) {
			room = blockSize - len(b)
			rec = b[len(b):len(b):blockSize]
		}
	}
	rec = binary.AppendVarint(rec, size)
	rec = binary.AppendVarint(rec, modTime)
	if ex.has != 0 {
		rec = append(rec, ex.has)
		if ex.has&extraBaseRowID != 0 {
			rec = binary.AppendVarint(rec, ex.baseRowID)
		}
		if ex.has&extraRowCommitVersion != 0 {
			rec = binary.AppendVarint(rec, ex.rowCommitVer)
		}
		if ex.has&extraClustering != 0 {
			rec = binary.AppendUvarint(rec, uint64(ex.clustering))
		}
	}
	rec = t.names.appendName(rec, name)
	var id uint32
	id, rec = t.encodeStats(s, rec)
	if room > 0 {
		if cap(rec) == room { // in place: append did not move it
			off := len(t.blocks[k])
			t.blocks[k] = t.blocks[k][:off+len(rec)]
			return statsRef{shape: id, rec: uint64(k)<<32 | uint64(off)}
		}
	} else {
		t.scratch = rec[:0]
	}
	return statsRef{shape: id, rec: t.store(rec)}
}

// recordBound is more than the length of the record of a file with name
// and stats s: a number is stored in no more bytes than its digits, a
// string value in at most its length and ten, and the fixed fields take
// at most 50 bytes.
func recordBound(name, s string) int { return 64 + 2*len(name) + 2*len(s) }

// encodeStats appends the values of s to vals, and returns its shape id.
func (t *fileTable) encodeStats(s string, vals []byte) (uint32, []byte) {
	if s == "" {
		return shapeNone, vals
	}
	// Files of one table nearly always share a shape: try the last one
	// first, and split and look up a shape only when s does not fit it.
	start := len(vals)
	if t.lastShape != shapeRaw {
		if out, ok := matchStats(t.lastSegs, s, vals, &t.dict); ok {
			return t.lastShape, out
		}
	}
	shape, out, ok := encodeStats(s, vals[:start], t.shapeBuf[:0], &t.dict)
	t.shapeBuf = shape[:0]
	id := uint32(shapeRaw)
	if ok {
		if x, found := t.shapeIDs[string(shape)]; found {
			id = x
		} else if len(t.shapes) < maxShapes {
			id = uint32(len(t.shapes))
			str := string(shape)
			t.shapes = append(t.shapes, str)
			t.shapeIDs[str] = id
		}
	}
	if id == shapeRaw {
		out = binary.AppendUvarint(out[:start], uint64(len(s)))
		return shapeRaw, append(out, s...)
	}
	if id != t.lastShape {
		t.lastShape, t.lastSegs = id, splitShape(t.shapes[id], t.lastSegs[:0])
	}
	return id, out
}

// store copies rec into the arena and returns its position.
func (t *fileTable) store(rec []byte) uint64 {
	if len(rec) > blockSize {
		t.blocks = append(t.blocks, append([]byte(nil), rec...))
		return uint64(len(t.blocks)-1) << 32
	}
	if len(t.blocks) == 0 || len(t.blocks[len(t.blocks)-1])+len(rec) > blockSize {
		t.blocks = append(t.blocks, make([]byte, 0, blockSize))
	}
	k := len(t.blocks) - 1
	off := len(t.blocks[k])
	t.blocks[k] = append(t.blocks[k], rec...)
	return uint64(k)<<32 | uint64(off)
}

// record returns a row's record, of a row whose shape (with its flags) is
// shape: its size, modification time and extras, and the rest, where its
// name starts.
func (t *fileTable) record(shape uint32, rec uint64) (size, modTime int64, ex rowExtras, rest []byte) {
	b := t.blocks[rec>>32][uint32(rec):]
	size, w := binary.Varint(b)
	b = b[w:]
	modTime, w = binary.Varint(b)
	b = b[w:]
	if shape&hasExtras != 0 {
		ex.has, b = b[0], b[1:]
		if ex.has&extraBaseRowID != 0 {
			ex.baseRowID, w = binary.Varint(b)
			b = b[w:]
		}
		if ex.has&extraRowCommitVersion != 0 {
			ex.rowCommitVer, w = binary.Varint(b)
			b = b[w:]
		}
		if ex.has&extraClustering != 0 {
			var id uint64
			id, w = binary.Uvarint(b)
			ex.clustering = uint32(id)
			b = b[w:]
		}
	}
	return size, modTime, ex, b
}

// stats returns the stats string of a row; buf is scratch space, returned
// for reuse.
func (t *fileTable) stats(ref statsRef, buf []byte) (string, []byte) {
	var a strArena
	return t.statsIn(ref, buf, &a)
}

// statsIn is stats, the string carved from a.
func (t *fileTable) statsIn(ref statsRef, buf []byte, a *strArena) (string, []byte) {
	shape := ref.shape & shapeMask
	if shape == shapeNone {
		return "", buf
	}
	_, _, _, vals := t.record(ref.shape, ref.rec)
	_, vals = t.names.skipName(vals)
	if shape == shapeRaw {
		n, w := binary.Uvarint(vals)
		return a.str(vals[w : w+int(n)]), buf
	}
	buf = decodeStats(t.shapes[shape], vals, buf, &t.dict)
	return a.str(buf), buf
}

// strArena hands out strings carved from shared chunks of memory, so that
// building the actions of many files costs an allocation per chunk rather
// than two per file. The bytes of a string handed out are never written
// again; a string kept keeps its chunk (strChunk bytes) alive.
type strArena struct{ chunk []byte }

const strChunk = 16 << 10

// str returns b as a string.
func (a *strArena) str(b []byte) string {
	switch {
	case len(b) == 0:
		return ""
	case len(b) > strChunk/8:
		return string(b)
	case len(b) > cap(a.chunk)-len(a.chunk):
		a.chunk = make([]byte, 0, strChunk)
	}
	off := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	return unsafe.String(&a.chunk[off], len(b))
}

// appendPath appends the path of row i, which is not a full row, to buf.
func (t *fileTable) appendPath(c *fileChunk, j int, buf []byte) []byte {
	_, _, _, b := t.record(c.shape[j], c.recAt(j))
	buf = append(buf, t.places[c.place[j]].dir...)
	buf, _ = t.names.appendTo(buf, b)
	return buf
}

// build fills dst with the add of row i; buf is scratch space, returned
// for reuse.
func (t *fileTable) build(i int, dst *actions.Add, buf []byte) []byte {
	var a strArenas
	return t.buildIn(i, dst, buf, &a)
}

// strArenas are the arenas of the paths and of the stats of the adds
// built: apart, so that a caller who keeps the paths alone does not keep
// the stats alive; and a slab of the row-tracking fields.
type strArenas struct {
	paths, stats strArena
	ints         []int64
}

// int64p returns a pointer to a copy of v.
func (a *strArenas) int64p(v int64) *int64 {
	if len(a.ints) == 0 {
		a.ints = make([]int64, 256)
	}
	p := &a.ints[0]
	a.ints = a.ints[1:]
	*p = v
	return p
}

// buildIn is build, the add's strings carved from a.
func (t *fileTable) buildIn(i int, dst *actions.Add, buf []byte, a *strArenas) []byte {
	c, j := t.at(i)
	if c.shape[j] == shapeFull {
		*dst = *t.full[i]
		return buf
	}
	rec := c.recAt(j)
	pl := &t.places[c.place[j]]
	size, modTime, ex, b := t.record(c.shape[j], rec)
	buf, _ = t.names.appendTo(append(buf[:0], pl.dir...), b)
	*dst = actions.Add{
		Path:             a.paths.str(buf),
		PartitionValues:  pl.pv,
		Size:             size,
		ModificationTime: modTime,
		DataChange:       c.shape[j]&dataChange != 0,
	}
	if ex.has&extraBaseRowID != 0 {
		dst.BaseRowID = a.int64p(ex.baseRowID)
	}
	if ex.has&extraRowCommitVersion != 0 {
		dst.DefaultRowCommitVersion = a.int64p(ex.rowCommitVer)
	}
	if ex.has&extraClustering != 0 {
		dst.ClusteringProvider = t.clusterings[ex.clustering]
	}
	dst.Stats, buf = t.statsIn(statsRef{shape: c.shape[j], rec: rec}, buf, &a.stats)
	return buf
}

// partitionValues returns the partition values of row i.
func (t *fileTable) partitionValues(i int) map[string]string {
	c, j := t.at(i)
	if c.shape[j] == shapeFull {
		return t.full[i].PartitionValues
	}
	return t.places[c.place[j]].pv
}

// key returns the file key of row i.
func (t *fileTable) key(i int) fileKey {
	c, j := t.at(i)
	if c.shape[j] == shapeFull {
		a := t.full[i]
		return keyOf(a.Path, a.DeletionVector)
	}
	return fileKey{path: CanonicalPath(string(t.appendPath(c, j, nil)))}
}

// hasKey reports whether row i has key k; buf is scratch space, returned
// for reuse.
func (t *fileTable) hasKey(i int, k fileKey, buf []byte) (bool, []byte) {
	c, j := t.at(i)
	if c.shape[j] == shapeFull {
		a := t.full[i]
		return keyOf(a.Path, a.DeletionVector) == k, buf
	}
	if k.dv != "" {
		return false, buf
	}
	buf = t.appendPath(c, j, buf[:0])
	if c.shape[j]&plainPath != 0 {
		return string(buf) == k.path, buf
	}
	return CanonicalPath(string(buf)) == k.path, buf
}

// finish builds the path index once every row is in.
func (t *fileTable) finish() {
	t.scratch, t.shapeBuf, t.lastSegs = nil, nil, nil
	t.placeIDs = nil
	t.dict.ids = nil // the strings stay, by index
	t.names.byKey = nil
	t.pvs = nil
	if t.n == 0 {
		return
	}
	size := 1
	for size < 2*t.n {
		size <<= 1
	}
	t.index = make([]uint32, size)
	mask := uint64(size - 1)
	for i := 0; i < t.n; i++ {
		h := t.hashes[i/rowChunk][i%rowChunk] & mask
		for t.index[h] != 0 {
			h = (h + 1) & mask
		}
		t.index[h] = uint32(i + 1)
	}
	t.hashes = nil
}

// lookupAll calls fn with every row whose file has key k.
func (t *fileTable) lookupAll(k fileKey, fn func(row int)) {
	if len(t.index) == 0 {
		return
	}
	mask := uint64(len(t.index) - 1)
	var arr [256]byte
	buf := arr[:0]
	for h := maphash.String(t.seed, k.path) & mask; t.index[h] != 0; h = (h + 1) & mask {
		i := int(t.index[h] - 1)
		var ok bool
		if ok, buf = t.hasKey(i, k, buf); ok {
			fn(i)
		}
	}
}

// size returns the size of the file of row i.
func (t *fileTable) size(i int) int64 {
	c, j := t.at(i)
	if c.shape[j] == shapeFull {
		return t.full[i].Size
	}
	size, _, _, _ := t.record(c.shape[j], c.recAt(j))
	return size
}

// encodeStats splits stats JSON into its shape and values: every run of
// digits, and every string that follows a colon (a value, not a key),
// is replaced in the shape by one hole byte and appended to vals: a digit
// run without a leading zero as its value (a uvarint), anything else as
// d.appendValue stores it. The shape is appended to shape.
// decodeStats(shape, vals, d) gives s back exactly. ok is false when s
// holds a hole byte already.
func encodeStats(s string, vals, shape []byte, d *strDict) (shapeOut, valsOut []byte, ok bool) {
	if strings.IndexByte(s, hole) >= 0 || strings.IndexByte(s, numHole) >= 0 {
		return shape, vals, false
	}
	lit := 0 // start of the pending literal text
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			j := digitsEnd(s, i)
			shape = append(shape, s[lit:i]...)
			if x, ok := canonicalNumber(s[i:j]); ok {
				shape = append(shape, numHole)
				vals = binary.AppendUvarint(vals, x)
			} else {
				shape = append(shape, hole)
				vals = d.appendValue(vals, s[i:j])
			}
			i, lit = j, j
		case c == '"' && i > 0 && s[i-1] == ':':
			j := stringEnd(s, i+1)
			if j >= len(s) {
				i = len(s) // unterminated: the rest stays literal
				continue
			}
			shape = append(shape, s[lit:i+1]...)
			shape = append(shape, hole)
			vals = d.appendValue(vals, s[i+1:j])
			i, lit = j, j
		default:
			i++
		}
	}
	shape = append(shape, s[lit:]...)
	return shape, vals, true
}

// shapeSeg is a piece of a shape: literal text, then the hole that
// follows it (none after the last piece).
type shapeSeg struct {
	lit    string
	hole   byte // hole, numHole, or noHole
	quoted bool // the next piece's text starts with a quote: the hole was a string's content
	// head is lit's first bytes, up to 8, as a little-endian word, and
	// headMask the bits of it that they fill; mid is its bytes 8 to 16,
	// when it has 16, and tail its last 8 bytes, when it has 8: hasLit
	// compares a literal of up to 24 bytes with one to three loads.
	head, headMask, mid, tail uint64

	// What appendSegValue learnt of the hole's values.
	last        string // the last value, from the dictionary
	lastID      uint32
	hasLast     bool
	noDict      bool // the values seldom repeat: not looked up
	tries, hits uint32
}

const noHole = 0xff

// splitShape appends the pieces of shape to segs.
func splitShape(shape string, segs []shapeSeg) []shapeSeg {
	for {
		h := strings.IndexAny(shape, "\x00\x01")
		if h < 0 {
			return append(segs, newShapeSeg(shape, noHole, false))
		}
		rest := shape[h+1:]
		segs = append(segs, newShapeSeg(shape[:h], shape[h], strings.HasPrefix(rest, `"`)))
		shape = rest
	}
}

// newShapeSeg returns the piece of literal text lit and the hole after it.
func newShapeSeg(lit string, h byte, quoted bool) shapeSeg {
	seg := shapeSeg{lit: lit, hole: h, quoted: quoted}
	for k := 0; k < len(lit) && k < 8; k++ {
		seg.head |= uint64(lit[k]) << (8 * k)
		seg.headMask |= 0xff << (8 * k)
	}
	if len(lit) >= 8 {
		seg.tail = load64(lit, len(lit)-8)
	}
	if len(lit) >= 16 {
		seg.mid = load64(lit, 8)
	}
	return seg
}

// hasLit reports whether s holds seg.lit at i (i <= len(s)). It compares
// a word at a time, with loads the compiler merges: a literal of a shape
// is mostly a key and its punctuation, so short that a call of memequal
// for it costs more than the comparison. matchStats has the cases of a
// literal of up to 24 bytes inline.
func hasLit(s string, i int, seg *shapeSeg) bool {
	lit := seg.lit
	n := len(lit)
	switch {
	case len(s)-i < n:
		return false
	case n >= 8:
		// The first and the last word, then those between; the last
		// overlaps the one before it unless n is a multiple of 8.
		if load64(s, i) != seg.head || load64(s, i+n-8) != seg.tail {
			return false
		}
		if n > 16 && load64(s, i+8) != seg.mid {
			return false
		}
		for k := 16; k < n-8; k += 8 {
			if load64(s, i+k) != load64(lit, k) {
				return false
			}
		}
		return true
	case len(s)-i >= 8:
		return (load64(s, i)^seg.head)&seg.headMask == 0
	}
	return s[i:i+n] == lit
}

// load64 returns the 8 bytes of s at i as a little-endian word.
func load64(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// matchStats appends to vals the values of s split along segs, the pieces
// of a shape encodeStats made of other stats, and reports whether s fits
// it: each piece's text appears in s where the holes before it leave it,
// a numHole stands for a digit run that formats back the same
// (canonicalNumber), and a hole for a string's content (when the next
// piece starts with a quote) or a digit run. decodeStats(shape, vals) then
// gives s back exactly, since decoding only concatenates; the split need
// not be the one encodeStats would make. When ok is false, vals holds
// garbage.
func matchStats(segs []shapeSeg, s string, vals []byte, d *strDict) (out []byte, ok bool) {
	i := 0
	for k := range segs {
		seg := &segs[k]
		// hasLit, its common cases inline.
		if n := len(seg.lit); n >= 8 && n <= 24 {
			if len(s)-i < n || load64(s, i) != seg.head || load64(s, i+n-8) != seg.tail || n > 16 && load64(s, i+8) != seg.mid {
				return vals, false
			}
		} else if n < 8 && len(s)-i >= 8 {
			if (load64(s, i)^seg.head)&seg.headMask != 0 {
				return vals, false
			}
		} else if !hasLit(s, i, seg) {
			return vals, false
		}
		i += len(seg.lit)
		var j int
		switch {
		case seg.hole == noHole:
			continue
		case seg.hole == numHole:
			var x uint64
			j, x, ok = scanNumber(s, i)
			if !ok {
				return vals, false
			}
			vals = binary.AppendUvarint(vals, x)
			i = j
			continue
		case seg.quoted:
			// The value of the last file, when it is there and a quote
			// follows, ends there: stringEnd scans its bytes as it did
			// then, and stopped at that quote. It is stored as
			// appendSegValue would store it.
			if n := len(seg.last); seg.hasLast && len(s)-i > n && s[i+n] == '"' && s[i:i+n] == seg.last {
				vals = binary.AppendUvarint(vals, uint64(seg.lastID)<<1|1)
				i += n
				continue
			}
			if j = stringEnd(s, i); j >= len(s) {
				return vals, false
			}
		default:
			if j = digitsEnd(s, i); j == i {
				return vals, false
			}
		}
		vals = d.appendSegValue(vals, s[i:j], seg)
		i = j
	}
	return vals, i == len(s)
}

// digitsEnd returns the end of the run of digits at s[i:].
func digitsEnd(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// scanNumber returns the end j of the run of digits at s[i:] and, as
// canonicalNumber(s[i:j]) does, its value and whether it formats back the
// same, in one pass.

func scanNumber(s string, i int) (j int, x uint64, ok bool) {
	j = i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		x = x*10 + uint64(s[j]-'0')
		j++
	}
	n := j - i
	return j, x, n > 0 && n <= maxNumDigits && (s[i] != '0' || n == 1)
}

// shortString is how many bytes of a string stringEnd scans for its end
// before it calls IndexByte.
const shortString = 16

// stringEnd returns the index of the quote that ends the JSON string
// whose content starts at s[i], or len(s) or more when it is not ended.
func stringEnd(s string, i int) int {
	// A short string is quicker to scan a byte at a time than with two
	// calls of IndexByte.
	for k := i; k < len(s) && k < i+shortString; k++ {
		if s[k] == '"' {
			return k
		}
		if s[k] == '\\' {
			break
		}
	}
	if i < len(s) {
		// Most strings hold no escape: find the quote at once.
		if k := strings.IndexByte(s[i:], '"'); k >= 0 && strings.IndexByte(s[i:i+k], '\\') < 0 {
			return i + k
		}
	}
	for i < len(s) && s[i] != '"' {
		if s[i] == '\\' {
			i++
		}
		i++
	}
	return i
}

// canonicalNumber returns the value of digits when formatting it gives
// digits back: one to maxNumDigits digits, no leading zero.
func canonicalNumber(digits string) (uint64, bool) {
	if len(digits) == 0 || len(digits) > maxNumDigits || digits[0] == '0' && len(digits) > 1 {
		return 0, false
	}
	var x uint64
	for _, d := range []byte(digits) {
		x = x*10 + uint64(d-'0')
	}
	return x, true
}

// decodeStats reverses encodeStats into buf, and returns it. vals may go
// on past the values of shape.
func decodeStats(shape string, vals []byte, buf []byte, d *strDict) []byte {
	out := buf[:0]
	for i := 0; i < len(shape); i++ {
		h := shape[i]
		if h != hole && h != numHole {
			out = append(out, h)
			continue
		}
		n, w := binary.Uvarint(vals)
		vals = vals[w:]
		switch {
		case h == numHole:
			out = strconv.AppendUint(out, n, 10)
		case n&1 != 0:
			out = append(out, d.strs[n>>1]...)
		default:
			out = append(out, vals[:n>>1]...)
			vals = vals[n>>1:]
		}
	}
	return out
}
