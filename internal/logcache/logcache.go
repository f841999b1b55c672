// Package logcache keeps a local copy of the immutable files of Delta logs
// in a directory, so that opening a table again on an object store reads
// only what changed since: the new commits, not the checkpoint again.
//
// New wraps a logstore.Store. Reads of cacheable keys are served from the
// directory when it holds the right bytes, and otherwise read through and
// stored there; every other call passes through unchanged.
//
// # What is cached
//
// Only objects the Delta protocol never changes once written, under the
// log directory: commits (NNN.json), checkpoints and their parts, V2
// checkpoint sidecars (_delta_log/_sidecars/), compacted log files and
// version checksums (NNN.crc). Never _last_checkpoint, never a listing,
// never a data file, never a key outside _delta_log/.
//
// # When a cached copy is served (the staleness rule)
//
// A path can still hold a different object under the same key: the table
// was deleted and created again, or a log file was removed and written anew.
// So an entry is keyed by the store's URI and the key, and records the size
// and modification time the store reported for the object it holds. It is
// served only when both equal the size and time of the store's latest
// report of that key that passed through this wrapper: a listing or a Stat.
// A key with no such report (or a report without a time) is read through and
// not stored; a key that a later listing of its directory no longer shows,
// that Stat finds missing, or that this wrapper writes or deletes, loses
// its report. A snapshot load always lists the log before it reads it, so
// what it reads from the cache is what the listing it acts on describes.
//
// Times are compared exactly, except that when either has no fraction of a
// second (S3 gives seconds in HEAD and milliseconds in listings) they are
// compared to the second. A table re-created within the same second with a
// log file of the same size at the same key is the one case the rule cannot
// tell apart on such a backend.
//
// # Crashes and concurrent processes
//
// An entry is written to a temporary file in the cache directory and
// renamed into place, so a reader sees a whole entry or none. Each entry
// holds a header with the store URI and key, the size and time it was
// stored for, and a CRC-32C of the content; an entry whose length, header
// or checksum is wrong (torn by a crash, damaged on disk) is a miss: it is
// removed and the object read through. The cache never returns an error of
// its own to the caller; a cache directory that cannot be written just
// makes every read a read-through. Any number of processes may share one
// directory: two that fill one key write the same bytes and the last rename
// wins.
//
// # Ranged reads and the size cap
//
// GetRange is served from the cache like Get. On a miss for an object of at
// most a quarter of the cap, the whole object is read (in windows of
// logstore.WindowSize, into the temporary file, never whole in memory) and
// the range served from it: the first ranged read of a checkpoint costs its
// whole size once, every later open reads none of it. A larger object is
// read through, never cached.
//
// The directory is kept under its cap, least recently used first: a hit
// sets the entry file's modification time (at most once a minute per entry),
// and when the bytes this process stored may have passed the cap, it scans
// the directory and removes the oldest entries until the total is 90% of
// the cap. Temporary files older than an hour (left by a crash) are removed
// by the same scan.
package logcache

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// DefaultMaxBytes is the cap when none is given: 1 GiB.
const DefaultMaxBytes = 1 << 30

// subdir is the directory under the user's where entries live; its name
// carries the format version, so a new format starts empty beside the old.
const subdir = "godelta-logcache-v1"

const (
	magic      = "GDLCv1\n\x00"
	headerSize = len(magic) + 8 + 8 + 4 + 4 // magic, size, time, crc, id length
	tmpPrefix  = ".tmp-"
	touchEvery = time.Minute
	tmpMaxAge  = time.Hour
	maxHandles = 64 // verified entry files kept open for ranged reads
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Store is a logstore.Store that serves the immutable log files of the store
// it wraps from a local cache directory. It is safe for concurrent use.
type Store struct {
	inner    logstore.Store
	dir      string // <user dir>/godelta-logcache-v1
	max      int64
	maxEntry int64
	root     string // inner.URI(), part of every entry's identity

	mu      sync.Mutex
	seen    map[string]report // the latest report of each cacheable key
	gen     uint64            // listings made, to find keys a listing no longer shows
	fills   map[string]*fill  // fills in flight, one per key
	handles map[string]*handle
	order   []string // handles' keys, oldest use first
	total   int64    // bytes in the directory at the last scan plus those stored since; -1 before a scan
}

// report is what the store last said of a key.
type report struct {
	size int64
	mod  time.Time
	gen  uint64 // the listing that reported it; 0 for Stat
}

// handle is an open, verified entry file.
type handle struct {
	f    *os.File
	off  int64 // of the content in f
	size int64
	rep  report
	refs int
	dead bool // evicted from handles: close when refs reach 0
}

type fill struct {
	done chan struct{}
}

var _ logstore.Store = (*Store)(nil)

// New returns a Store over inner that caches in dir, creating it if
// needed, with at most maxBytes in it (DefaultMaxBytes when maxBytes <= 0).
// The Store owns inner: its Close closes inner.
func New(inner logstore.Store, dir string, maxBytes int64) (*Store, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	d := filepath.Join(dir, subdir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, err
	}
	return &Store{
		inner: inner, dir: d, max: maxBytes, maxEntry: maxBytes / 4, root: inner.URI(),
		seen: map[string]report{}, fills: map[string]*fill{}, handles: map[string]*handle{}, total: -1,
	}, nil
}

// Unwrap returns the wrapped store, for logstore.DriverOf.
func (s *Store) Unwrap() logstore.Store { return s.inner }

// Cacheable reports whether key names an immutable log file, the only kind
// the cache stores.
func Cacheable(key string) bool {
	rest, ok := strings.CutPrefix(key, deltalog.LogDir)
	if !ok {
		return false
	}
	if name, ok := strings.CutPrefix(rest, "_sidecars/"); ok {
		return name != "" && !strings.Contains(name, "/") && name[0] != '.' &&
			(strings.HasSuffix(name, ".parquet") || strings.HasSuffix(name, ".json"))
	}
	if strings.Contains(rest, "/") {
		return false
	}
	_, ok = deltalog.ParseName(key)
	return ok
}

// sameTime is the time comparison of the package doc.
func sameTime(a, b time.Time) bool {
	if a.Equal(b) {
		return true
	}
	if a.Nanosecond() == 0 || b.Nanosecond() == 0 {
		return a.Unix() == b.Unix()
	}
	return false
}

func (s *Store) note(key string, info logstore.ObjectInfo, gen uint64) {
	s.mu.Lock()
	s.seen[key] = report{size: info.Size, mod: info.ModTime, gen: gen}
	s.mu.Unlock()
}

func (s *Store) forget(key string) {
	s.mu.Lock()
	delete(s.seen, key)
	s.mu.Unlock()
}

func (s *Store) lookup(key string) (report, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.seen[key]
	return r, ok && !r.mod.IsZero()
}

// List implements logstore.Store: it passes the listing on and takes the
// size and time of every cacheable key in it as that key's report. Keys
// of dir after startAfter that the listing passed over (all of them, if it
// ran to its end) lose their report.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		s.mu.Lock()
		s.gen++
		gen := s.gen
		s.mu.Unlock()
		last, complete := "", true
		for info, err := range s.inner.List(ctx, dir, startAfter) {
			if err != nil {
				complete = false
				yield(info, err)
				break
			}
			if Cacheable(info.Key) {
				s.note(info.Key, info, gen)
			}
			last = info.Key
			if !yield(info, nil) {
				complete = false
				break
			}
		}
		s.mu.Lock()
		for k, r := range s.seen {
			if r.gen != gen && k > startAfter && (complete || k <= last) &&
				strings.HasPrefix(k, dir) && !strings.Contains(k[len(dir):], "/") {
				delete(s.seen, k)
			}
		}
		s.mu.Unlock()
	}
}

// Stat implements logstore.Store; its answer becomes the key's report.
func (s *Store) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	info, err := s.inner.Stat(ctx, key)
	if Cacheable(key) {
		switch {
		case err == nil:
			s.note(key, info, 0)
		case errors.Is(err, logstore.ErrNotFound):
			s.forget(key)
		}
	}
	return info, err
}

// Get implements logstore.Store.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if b, ok, err := s.cached(ctx, key, 0, -1); ok {
		return b, err
	}
	return s.inner.Get(ctx, key)
}

// GetRange implements logstore.Store.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if offset >= 0 && length >= 0 {
		if b, ok, err := s.cached(ctx, key, offset, length); ok {
			return b, err
		}
	}
	return s.inner.GetRange(ctx, key, offset, length)
}

// cached returns length bytes at offset of key (all of it for length -1)
// from the cache, filling it on a miss when key may be cached. It reports
// false when the caller should read from the inner store instead; an error
// is the inner store's, from a fill.
func (s *Store) cached(ctx context.Context, key string, offset, length int64) ([]byte, bool, error) {
	if !Cacheable(key) || ctx.Err() != nil {
		return nil, false, nil
	}
	rep, ok := s.lookup(key)
	if !ok || rep.size > s.maxEntry {
		return nil, false, nil
	}
	h := s.acquire(key, rep)
	if h == nil {
		var err error
		if h, err = s.fill(ctx, key, rep); h == nil {
			return nil, err != nil, err
		}
	}
	b, err := h.read(offset, length)
	s.release(h)
	if err != nil {
		s.drop(key, h)
		return nil, false, nil
	}
	return b, true, nil
}

func (h *handle) read(offset, length int64) ([]byte, error) {
	if offset >= h.size {
		return []byte{}, nil
	}
	if length < 0 || length > h.size-offset {
		length = h.size - offset
	}
	b := make([]byte, length)
	if _, err := h.f.ReadAt(b, h.off+offset); err != nil {
		return nil, err
	}
	return b, nil
}

// path returns the entry file of key.
func (s *Store) path(key string) string {
	sum := sha256.Sum256([]byte(s.id(key)))
	name := hex.EncodeToString(sum[:])
	return filepath.Join(s.dir, name[:2], name)
}

func (s *Store) id(key string) string { return s.root + "\n" + key }

// acquire returns an open handle on a valid entry of key for rep, or nil.
func (s *Store) acquire(key string, rep report) *handle {
	s.mu.Lock()
	if h, ok := s.handles[key]; ok {
		if h.rep.size == rep.size && sameTime(h.rep.mod, rep.mod) {
			h.refs++
			s.touchOrder(key)
			s.mu.Unlock()
			return h
		}
		s.evictHandle(key)
	}
	s.mu.Unlock()

	h, err := s.openEntry(key, rep)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.handles[key]; ok {
		// Another goroutine opened it meanwhile; keep theirs.
		h.f.Close()
		if old.rep.size == rep.size && sameTime(old.rep.mod, rep.mod) {
			old.refs++
			s.touchOrder(key)
			return old
		}
		s.evictHandle(key)
		return nil
	}
	s.addHandle(key, h)
	h.refs++
	return h
}

func (s *Store) release(h *handle) {
	s.mu.Lock()
	h.refs--
	if h.dead && h.refs == 0 {
		h.f.Close()
	}
	s.mu.Unlock()
}

// drop forgets a handle that failed to read, and removes its entry.
func (s *Store) drop(key string, h *handle) {
	s.mu.Lock()
	if s.handles[key] == h {
		s.evictHandle(key)
	}
	s.mu.Unlock()
	os.Remove(s.path(key))
}

func (s *Store) addHandle(key string, h *handle) {
	s.handles[key] = h
	s.order = append(s.order, key)
	for len(s.order) > maxHandles {
		s.evictHandle(s.order[0])
	}
}

func (s *Store) touchOrder(key string) {
	if i := slices.Index(s.order, key); i >= 0 {
		s.order = append(slices.Delete(s.order, i, i+1), key)
	}
}

// evictHandle removes key's handle; s.mu is held.
func (s *Store) evictHandle(key string) {
	h, ok := s.handles[key]
	if !ok {
		return
	}
	delete(s.handles, key)
	if i := slices.Index(s.order, key); i >= 0 {
		s.order = slices.Delete(s.order, i, i+1)
	}
	h.dead = true
	if h.refs == 0 {
		h.f.Close()
	}
}

// errMiss is openEntry's error for an entry that is absent or must not be
// served; a damaged or stale entry is also removed.
var errMiss = errors.New("logcache: miss")

// openEntry opens and verifies the entry of key for rep: the header names
// key under this store's URI, records rep's size and time, and the content
// has that size and the recorded checksum.
func (s *Store) openEntry(key string, rep report) (*handle, error) {
	p := s.path(key)
	f, err := os.Open(p)
	if err != nil {
		return nil, errMiss
	}
	h, err := s.verify(f, key, rep)
	if err != nil {
		f.Close()
		os.Remove(p) // torn, damaged or stale: never served
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && time.Since(fi.ModTime()) > touchEvery {
		now := time.Now()
		_ = os.Chtimes(p, now, now) // the LRU's access time
	}
	return h, nil
}

func (s *Store) verify(f *os.File, key string, rep report) (*handle, error) {
	fi, err := f.Stat()
	if err != nil || fi.Size() < int64(headerSize) {
		return nil, errMiss
	}
	var hdr [headerSize]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil || string(hdr[:len(magic)]) != magic {
		return nil, errMiss
	}
	b := hdr[len(magic):]
	size := int64(binary.BigEndian.Uint64(b[0:8]))
	mod := time.Unix(0, int64(binary.BigEndian.Uint64(b[8:16])))
	sum := binary.BigEndian.Uint32(b[16:20])
	idLen := int64(binary.BigEndian.Uint32(b[20:24]))
	id := s.id(key)
	if idLen != int64(len(id)) || fi.Size() != int64(headerSize)+idLen+size {
		return nil, errMiss
	}
	if size != rep.size || !sameTime(mod, rep.mod) {
		return nil, errMiss
	}
	got := make([]byte, idLen)
	if _, err := f.ReadAt(got, int64(headerSize)); err != nil || string(got) != id {
		return nil, errMiss
	}
	off := int64(headerSize) + idLen
	c := crc32.New(castagnoli)
	if n, err := io.Copy(c, io.NewSectionReader(f, off, size)); err != nil || n != size || c.Sum32() != sum {
		return nil, errMiss
	}
	return &handle{f: f, off: off, size: size, rep: rep}, nil
}

// innerError is an error of the inner store met during a fill: the
// caller's error, as a read through would have given it.
type innerError struct{ err error }

func (e innerError) Error() string { return e.err.Error() }

// fill reads key through into its entry, one fill at a time per key in
// this process, and returns a handle on it. It returns nil and a nil error
// when the caller should read through instead (the cache directory cannot
// be written, the object is not the one rep describes), and nil and the
// inner store's error when reading the object failed.
func (s *Store) fill(ctx context.Context, key string, rep report) (*handle, error) {
	for {
		s.mu.Lock()
		f, busy := s.fills[key]
		if !busy {
			break
		}
		s.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, nil
		}
		if h := s.acquire(key, rep); h != nil {
			return h, nil
		}
	}
	f := &fill{done: make(chan struct{})}
	s.fills[key] = f
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.fills, key)
		s.mu.Unlock()
		close(f.done)
	}()
	h, n, err := s.write(ctx, key, rep)
	if err != nil {
		var ie innerError
		if errors.As(err, &ie) {
			return nil, ie.err
		}
		return nil, nil
	}
	s.mu.Lock()
	s.evictHandle(key)
	s.addHandle(key, h)
	h.refs++
	s.mu.Unlock()
	s.stored(n)
	return h, nil
}

// write reads the object at key from the inner store into a temporary file
// and renames it into place, unless the object is not rep.size bytes long.
// It returns a handle on the file and the bytes it holds. No fsync: an
// entry a crash leaves short or with lost blocks fails verification.
func (s *Store) write(ctx context.Context, key string, rep report) (*handle, int64, error) {
	p := s.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, 0, err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(p), tmpPrefix+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, 0, err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	id := s.id(key)
	off := int64(headerSize + len(id))
	if _, err := f.WriteAt([]byte(id), int64(headerSize)); err != nil {
		return nil, 0, err
	}
	c := crc32.New(castagnoli)
	var n int64
	for {
		// Ask for one byte more than is left, to see the end.
		want := min(int64(logstore.WindowSize), rep.size-n+1)
		b, err := s.inner.GetRange(ctx, key, n, want)
		if err != nil {
			return nil, 0, innerError{err}
		}
		if n+int64(len(b)) > rep.size {
			s.forget(key) // not the object the report describes
			return nil, 0, errMiss
		}
		if _, err := f.WriteAt(b, off+n); err != nil {
			return nil, 0, err
		}
		c.Write(b)
		n += int64(len(b))
		if int64(len(b)) < want {
			break
		}
	}
	if n != rep.size {
		s.forget(key)
		return nil, 0, errMiss
	}
	var hdr [headerSize]byte
	copy(hdr[:], magic)
	b := hdr[len(magic):]
	binary.BigEndian.PutUint64(b[0:8], uint64(rep.size))
	binary.BigEndian.PutUint64(b[8:16], uint64(rep.mod.UnixNano()))
	binary.BigEndian.PutUint32(b[16:20], c.Sum32())
	binary.BigEndian.PutUint32(b[20:24], uint32(len(id)))
	if _, err := f.WriteAt(hdr[:], 0); err != nil {
		return nil, 0, err
	}
	if err := os.Rename(tmp, p); err != nil {
		return nil, 0, err
	}
	ok = true
	return &handle{f: f, off: off, size: n, rep: rep}, off + n, nil
}

// stored counts n new bytes in the directory and evicts when the count may
// have passed the cap.
func (s *Store) stored(n int64) {
	s.mu.Lock()
	scan := s.total < 0
	if !scan {
		s.total += n
		scan = s.total > s.max
	}
	s.mu.Unlock()
	if scan {
		total := s.evict()
		s.mu.Lock()
		s.total = total
		s.mu.Unlock()
	}
}

type entry struct {
	path string
	size int64
	mod  time.Time
}

// evict scans the directory, removes temporary files left by crashes, and
// when the entries pass the cap removes the least recently used until they
// are 90% of it. It returns the bytes left.
func (s *Store) evict() int64 {
	var entries []entry
	var total int64
	subs, _ := os.ReadDir(s.dir)
	for _, sub := range subs {
		if !sub.IsDir() {
			continue
		}
		d := filepath.Join(s.dir, sub.Name())
		names, _ := os.ReadDir(d)
		for _, de := range names {
			fi, err := de.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			p := filepath.Join(d, de.Name())
			if strings.HasPrefix(de.Name(), tmpPrefix) && time.Since(fi.ModTime()) > tmpMaxAge {
				os.Remove(p)
				continue
			}
			total += fi.Size()
			if !strings.HasPrefix(de.Name(), tmpPrefix) {
				entries = append(entries, entry{p, fi.Size(), fi.ModTime()})
			}
		}
	}
	if total <= s.max {
		return total
	}
	slices.SortFunc(entries, func(a, b entry) int { return a.mod.Compare(b.mod) })
	target := s.max / 10 * 9
	for _, e := range entries {
		if total <= target {
			break
		}
		if err := os.Remove(e.path); err == nil || errors.Is(err, os.ErrNotExist) {
			total -= e.size
		}
	}
	return total
}

// PutIfAbsent implements logstore.Store; key loses its report.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	defer s.forget(key)
	return s.inner.PutIfAbsent(ctx, key, data)
}

// Put implements logstore.Store; key loses its report.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	defer s.forget(key)
	return s.inner.Put(ctx, key, data)
}

// Delete implements logstore.Store; key loses its report.
func (s *Store) Delete(ctx context.Context, key string) error {
	defer s.forget(key)
	return s.inner.Delete(ctx, key)
}

// NewWriter implements logstore.Store; key loses its report.
func (s *Store) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	s.forget(key)
	w, err := s.inner.NewWriter(ctx, key)
	if err != nil {
		return nil, err
	}
	return &writer{Writer: w, s: s, key: key}, nil
}

type writer struct {
	logstore.Writer
	s   *Store
	key string
}

func (w *writer) Close() error {
	defer w.s.forget(w.key)
	return w.Writer.Close()
}

// URI implements logstore.Store: the inner store's.
func (s *Store) URI() string { return s.inner.URI() }

// Close implements logstore.Store: it closes the open entry files and the
// inner store.
func (s *Store) Close() error {
	s.mu.Lock()
	for k := range s.handles {
		s.evictHandle(k)
	}
	s.mu.Unlock()
	return s.inner.Close()
}
