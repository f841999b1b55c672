// Package memory is a logstore.Store held in memory, for tests, examples and
// memory:// tables. Nothing is ever written to disk, so nothing survives the
// process.
//
// A Store is a map from key to object guarded by one sync.RWMutex. It keeps
// the logstore contract exactly, and passes logstore/storetest:
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
// The zero Store is not usable; call New. A Store is safe for concurrent use
// by multiple goroutines.
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
	mu      sync.RWMutex
	objects map[string]object
	now     func() time.Time
}

type object struct {
	data    []byte // owned by the Store, never changed once stored
	modTime time.Time
}

var _ logstore.Store = (*Store)(nil)

// New returns an empty Store whose clock is time.Now.
func New() *Store {
	return &Store{objects: map[string]object{}, now: time.Now}
}

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

// check validates key and ctx, in that order, for operation op.
func check(ctx context.Context, op, key string) error {
	if err := logstore.CheckKey(key); err != nil {
		return fmt.Errorf("logstore/memory: %s: %w", op, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("logstore/memory: %s %q: %w", op, key, err)
	}
	return nil
}

func notFound(op, key string) error {
	return fmt.Errorf("logstore/memory: %s %q: %w", op, key, logstore.ErrNotFound)
}

// Get implements logstore.Store.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := check(ctx, "get", key); err != nil {
		return nil, err
	}
	s.mu.RLock()
	o, ok := s.objects[key]
	s.mu.RUnlock()
	if !ok {
		return nil, notFound("get", key)
	}
	return slices.Clone(o.data), nil
}

// GetRange implements logstore.Store.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if err := check(ctx, "get range", key); err != nil {
		return nil, err
	}
	if err := logstore.CheckRange(offset, length); err != nil {
		return nil, fmt.Errorf("logstore/memory: get range %q: %w", key, err)
	}
	s.mu.RLock()
	o, ok := s.objects[key]
	s.mu.RUnlock()
	if !ok {
		return nil, notFound("get range", key)
	}
	size := int64(len(o.data))
	if offset >= size {
		return []byte{}, nil
	}
	end := offset + min(length, size-offset)
	return slices.Clone(o.data[offset:end]), nil
}

// Stat implements logstore.Store.
func (s *Store) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	if err := check(ctx, "stat", key); err != nil {
		return logstore.ObjectInfo{}, err
	}
	s.mu.RLock()
	o, ok := s.objects[key]
	s.mu.RUnlock()
	if !ok {
		return logstore.ObjectInfo{}, notFound("stat", key)
	}
	return logstore.ObjectInfo{Key: key, Size: int64(len(o.data)), ModTime: o.modTime}, nil
}

// List implements logstore.Store. The keys are gathered and sorted when
// iteration starts, under the read lock; see the package doc.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		if err := logstore.CheckDir(dir); err != nil {
			yield(logstore.ObjectInfo{}, fmt.Errorf("logstore/memory: list: %w", err))
			return
		}
		if err := ctx.Err(); err != nil {
			yield(logstore.ObjectInfo{}, fmt.Errorf("logstore/memory: list %q: %w", dir, err))
			return
		}
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
			if err := ctx.Err(); err != nil {
				yield(logstore.ObjectInfo{}, fmt.Errorf("logstore/memory: list %q: %w", dir, err))
				return
			}
			if !yield(info, nil) {
				return
			}
		}
	}
}

// PutIfAbsent implements logstore.Store.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := check(ctx, "put if absent", key); err != nil {
		return err
	}
	data = slices.Clone(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[key]; ok {
		return fmt.Errorf("logstore/memory: put if absent %q: %w", key, logstore.ErrAlreadyExists)
	}
	s.objects[key] = object{data: data, modTime: s.now()}
	return nil
}

// Put implements logstore.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if err := check(ctx, "put", key); err != nil {
		return err
	}
	data = slices.Clone(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[key] = object{data: data, modTime: s.now()}
	return nil
}

// Delete implements logstore.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := check(ctx, "delete", key); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.objects, key)
	s.mu.Unlock()
	return nil
}
