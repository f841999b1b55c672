// Package memory is a logstore.Store held in memory, for tests, examples and
// memory:// tables. Nothing is ever written to disk, so nothing survives the
// process.
//
// New returns the portable logstore.Store (a *logstore.Portable) over a new,
// empty driver, a *Store: a map from key to object guarded by one
// sync.RWMutex. The portable layer checks keys, contexts and Close; the
// driver keeps the rest of the logstore contract exactly, and passes
// logstore/storetest:
//
//   - Every write takes the lock for writing, so PutIfAbsent is a check and
//     an insert in one critical section: of concurrent callers, exactly one
//     wins. Readers see an object whole or not at all.
//   - Each object owns its bytes. Put and PutIfAbsent copy data, and Get and
//     GetRange return fresh copies, so callers may reuse or change their
//     slices freely.
//   - There are no directories, only keys. A directory is the set of keys
//     with its prefix, so an object and a directory may share a name here,
//     though the contract asks callers not to rely on it.
//   - List takes a sorted snapshot of the matching keys when iteration
//     starts and yields it without the lock held, so the loop body may call
//     the Store. Writes made during the loop do not show in it.
//   - ModTime is the time of the write, read from a clock that tests can
//     replace with SetClock.
//
// # Names
//
// Importing the package registers the URI schemes memory:// and mem:// with
// logstore.Open. Open("memory://NAME") returns a store over the one driver
// of that NAME in this process, made on first use, so every Open of a NAME
// sees the same objects; each Open returns a handle of its own, and closing
// it leaves the objects, and other handles, as they are. A named store lives
// as long as the process. Named(NAME) is the same without a URI. New makes
// an unnamed store, whose URI is "memory://".
//
// The zero Store is not usable; call New or NewDriver. A Store is safe for
// concurrent use by multiple goroutines. The example opens one name twice.
package memory

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/godelta/delta/logstore"
)

// Store is an in-memory logstore.Store. See the package doc.
type Store struct {
	name    string // "" when unnamed
	mu      sync.RWMutex
	objects map[string]object
	now     func() time.Time
}

type object struct {
	data    []byte // owned by the Store, never changed once stored
	modTime time.Time
}

var _ logstore.Driver = (*Store)(nil)

// New returns a new, empty, unnamed store whose clock is time.Now.
func New() *logstore.Portable { return logstore.NewPortable(NewDriver()) }

// NewDriver returns a new, empty, unnamed driver whose clock is time.Now,
// for tests that want SetClock; wrap it with logstore.NewPortable to use it
// as a Store.
func NewDriver() *Store {
	return &Store{objects: map[string]object{}, now: time.Now}
}

var (
	namedMu sync.Mutex
	named   = map[string]*Store{}
)

func init() {
	logstore.Register("memory", Open)
	logstore.Register("mem", Open)
}

// Open returns a handle on the named store of uri, memory://NAME or
// mem://NAME (a trailing '/' is dropped); see the package doc.
func Open(_ context.Context, uri string) (logstore.Store, error) {
	scheme, name, ok := strings.Cut(uri, "://")
	if !ok || (!strings.EqualFold(scheme, "memory") && !strings.EqualFold(scheme, "mem")) {
		return nil, fmt.Errorf("logstore/memory: %q is not memory://NAME: %w", logstore.RedactURI(uri), logstore.ErrInvalidKey)
	}
	return Named(strings.TrimSuffix(name, "/")), nil
}

// Named returns a new handle on the store called name in this process,
// made empty on first use.
func Named(name string) *logstore.Portable {
	namedMu.Lock()
	defer namedMu.Unlock()
	d, ok := named[name]
	if !ok {
		d = NewDriver()
		d.name = name
		named[name] = d
	}
	return logstore.NewPortable(d)
}

// URI implements logstore.Driver: memory://NAME, or memory:// when unnamed.
func (s *Store) URI() string { return "memory://" + s.name }

// Close implements logstore.Driver. It does nothing: the objects stay for
// other handles on a named store.
func (s *Store) Close() error { return nil }

// ErrorKind implements logstore.Driver. The driver's errors already wrap
// their kinds.
func (s *Store) ErrorKind(err error) error { return logstore.KindOf(err) }

// SetClock makes now the source of ModTime for later writes; nil restores
// time.Now. It is meant for tests and may be called at any time.
func (s *Store) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	s.mu.Lock()
	s.now = now
	s.mu.Unlock()
}

func notFound() error { return logstore.ErrNotFound }

// Get implements logstore.Driver.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	s.mu.RLock()
	o, ok := s.objects[key]
	s.mu.RUnlock()
	if !ok {
		return nil, notFound()
	}
	return slices.Clone(o.data), nil
}

// GetRange implements logstore.Driver.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	s.mu.RLock()
	o, ok := s.objects[key]
	s.mu.RUnlock()
	if !ok {
		return nil, notFound()
	}
	size := int64(len(o.data))
	if offset >= size {
		return []byte{}, nil
	}
	end := offset + min(length, size-offset)
	return slices.Clone(o.data[offset:end]), nil
}

// Stat implements logstore.Driver.
func (s *Store) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	s.mu.RLock()
	o, ok := s.objects[key]
	s.mu.RUnlock()
	if !ok {
		return logstore.ObjectInfo{}, notFound()
	}
	return logstore.ObjectInfo{Key: key, Size: int64(len(o.data)), ModTime: o.modTime}, nil
}

// List implements logstore.Driver. The keys are gathered and sorted when
// iteration starts, under the read lock; see the package doc.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		var infos []logstore.ObjectInfo
		s.mu.RLock()
		for key, o := range s.objects {
			name, ok := strings.CutPrefix(key, dir)
			if !ok || key <= startAfter || strings.Contains(name, "/") {
				continue
			}
			infos = append(infos, logstore.ObjectInfo{Key: key, Size: int64(len(o.data)), ModTime: o.modTime})
		}
		s.mu.RUnlock()
		slices.SortFunc(infos, func(a, b logstore.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
		for _, info := range infos {
			if !yield(info, nil) {
				return
			}
		}
	}
}

// PutIfAbsent implements logstore.Driver.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	data = slices.Clone(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[key]; ok {
		return logstore.ErrAlreadyExists
	}
	s.objects[key] = object{data: data, modTime: s.now()}
	return nil
}

// Put implements logstore.Driver.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	data = slices.Clone(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[key] = object{data: data, modTime: s.now()}
	return nil
}

// Delete implements logstore.Driver.
func (s *Store) Delete(ctx context.Context, key string) error {
	s.mu.Lock()
	delete(s.objects, key)
	s.mu.Unlock()
	return nil
}
