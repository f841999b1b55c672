package catalogmanaged

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// Store is a table's store seen through the catalog that manages it; see
// the package doc. It is safe for concurrent use.
type Store struct {
	base   logstore.Store
	client Client

	mu sync.Mutex
	// latest is the newest ratified version this store knows of, -1 for
	// none; it only grows.
	latest int64
	// ratified holds the ratified commits the catalog has reported or this
	// store has had ratified, by version. Ratified commits are immutable.
	ratified map[int64]Commit
	// published is the newest version known to be published in
	// _delta_log, -1 for none.
	published int64
}

var _ deltalog.CatalogView = (*Store)(nil)

// New returns the view of the table in base that client, the table's
// catalog, manages. The Store does not own base: its Close leaves it open.
func New(base logstore.Store, client Client) *Store {
	return &Store{base: base, client: client, latest: -1, published: -1, ratified: map[int64]Commit{}}
}

// CatalogManaged reports true: the store shows the log as its catalog has
// it (deltalog.CatalogView).
func (s *Store) CatalogManaged() bool { return true }

// commitVersion returns the version of a published commit key,
// _delta_log/<v>.json.
func commitVersion(key string) (int64, bool) {
	if !strings.HasPrefix(key, deltalog.LogDir) || strings.Contains(key[len(deltalog.LogDir):], "/") {
		return 0, false
	}
	f, ok := deltalog.ParseName(key)
	if !ok || f.Kind != deltalog.Commit {
		return 0, false
	}
	return f.Version, true
}

// learn records what the catalog reported.
func (s *Store) learn(r Ratified) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest = max(s.latest, r.Latest)
	for _, c := range r.Commits {
		if c.Version <= r.Latest {
			s.ratified[c.Version] = c
		}
	}
}

// lookup returns the ratified commit of version, if this store knows one,
// and the newest ratified version it knows. A version past that one is
// asked of the catalog first: another writer may have committed it since
// this store last listed (the transaction reads the commit that won the
// version it lost).
func (s *Store) lookup(ctx context.Context, version int64) (Commit, bool, int64, error) {
	s.mu.Lock()
	c, ok := s.ratified[version]
	latest := s.latest
	s.mu.Unlock()
	if ok || version <= latest {
		return c, ok, latest, nil
	}
	r, err := s.client.Commits(ctx)
	if err != nil {
		return Commit{}, false, latest, fmt.Errorf("catalogmanaged: asking the catalog for the table's commits: %w", err)
	}
	s.learn(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok = s.ratified[version]
	return c, ok, s.latest, nil
}

// read returns the content of a ratified commit.
func (s *Store) read(ctx context.Context, c Commit) ([]byte, error) {
	if c.Key == "" {
		return bytes.Clone(c.Inline), nil
	}
	return s.base.Get(ctx, c.Key)
}

// notRatified is the error for a commit key past the catalog's latest
// ratified version: as far as the table goes, it does not exist.
func notRatified(op, key string, latest int64) error {
	return &logstore.OpError{Op: op, Key: key, Kind: logstore.ErrNotFound,
		Err: fmt.Errorf("the catalog's latest ratified version is %d", latest)}
}

// Get returns the object at key; a commit of a ratified version is the
// catalog's.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if v, ok := commitVersion(key); ok {
		c, ok, latest, err := s.lookup(ctx, v)
		switch {
		case err != nil:
			return nil, err
		case ok:
			return s.read(ctx, c)
		case v > latest:
			return nil, notRatified("get", key, latest)
		}
	}
	return s.base.Get(ctx, key)
}

// GetRange returns a range of the object at key, as Get.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if v, ok := commitVersion(key); ok {
		c, ok, latest, err := s.lookup(ctx, v)
		switch {
		case err != nil:
			return nil, err
		case ok && c.Key != "":
			return s.base.GetRange(ctx, c.Key, offset, length)
		case ok:
			if err := logstore.CheckRange(offset, length); err != nil {
				return nil, err
			}
			data := c.Inline
			if offset >= int64(len(data)) {
				return []byte{}, nil
			}
			return bytes.Clone(data[offset:min(int64(len(data)), offset+length)]), nil
		case v > latest:
			return nil, notRatified("get range", key, latest)
		}
	}
	return s.base.GetRange(ctx, key, offset, length)
}

// Stat describes the object at key, as Get.
func (s *Store) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	if v, ok := commitVersion(key); ok {
		c, ok, latest, err := s.lookup(ctx, v)
		switch {
		case err != nil:
			return logstore.ObjectInfo{}, err
		case ok:
			return s.commitInfo(ctx, c)
		case v > latest:
			return logstore.ObjectInfo{}, notRatified("stat", key, latest)
		}
	}
	return s.base.Stat(ctx, key)
}

// commitInfo is the listing entry of a ratified commit, under its
// published key.
func (s *Store) commitInfo(ctx context.Context, c Commit) (logstore.ObjectInfo, error) {
	info := logstore.ObjectInfo{Key: deltalog.CommitKey(c.Version), Size: c.Size, ModTime: time.UnixMilli(c.Timestamp)}
	switch {
	case c.Key == "":
		info.Size = int64(len(c.Inline))
	case c.Size == 0 || c.Timestamp == 0:
		st, err := s.base.Stat(ctx, c.Key)
		if err != nil {
			return logstore.ObjectInfo{}, err
		}
		info.Size = st.Size
		if c.Timestamp == 0 {
			info.ModTime = st.ModTime
		}
	}
	return info, nil
}

// List yields the objects under dir. The listing of _delta_log/ is the
// catalog's view of the log (see the package doc): it asks the catalog
// first.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	if dir != deltalog.LogDir {
		return s.base.List(ctx, dir, startAfter)
	}
	return func(yield func(logstore.ObjectInfo, error) bool) {
		r, err := s.client.Commits(ctx)
		if err != nil {
			yield(logstore.ObjectInfo{}, fmt.Errorf("catalogmanaged: asking the catalog for the table's commits: %w", err))
			return
		}
		s.learn(r)
		// The ratified commits, as entries of the listing, in key order.
		var own []logstore.ObjectInfo
		for _, c := range r.Commits {
			if c.Version > r.Latest || deltalog.CommitKey(c.Version) <= startAfter {
				continue
			}
			info, err := s.commitInfo(ctx, c)
			if err != nil {
				yield(logstore.ObjectInfo{}, fmt.Errorf("catalogmanaged: ratified commit of version %d: %w", c.Version, err))
				return
			}
			own = append(own, info)
		}
		slices.SortFunc(own, func(a, b logstore.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
		ratified := map[int64]bool{}
		for _, c := range r.Commits {
			ratified[c.Version] = true
		}
		published := int64(-1)
		for obj, err := range s.base.List(ctx, dir, startAfter) {
			if err != nil {
				yield(obj, err)
				return
			}
			if f, ok := deltalog.ParseName(obj.Key); ok {
				end := f.Version
				if f.Kind == deltalog.Compacted {
					end = f.EndVersion
				}
				if end > r.Latest || f.Kind == deltalog.Commit && ratified[f.Version] {
					if f.Kind == deltalog.Commit && f.Version <= r.Latest {
						published = max(published, f.Version)
					}
					continue
				}
				if f.Kind == deltalog.Commit {
					published = max(published, f.Version)
				}
			}
			for len(own) > 0 && own[0].Key < obj.Key {
				if !yield(own[0], nil) {
					return
				}
				own = own[1:]
			}
			if !yield(obj, nil) {
				return
			}
		}
		for _, info := range own {
			if !yield(info, nil) {
				return
			}
		}
		s.mu.Lock()
		s.published = max(s.published, published)
		s.mu.Unlock()
	}
}

// PutIfAbsent creates the object at key. A commit, <v>.json, is staged,
// ratified by the catalog and published (see the package doc); another
// commit ratified as v is logstore.ErrAlreadyExists.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	v, ok := commitVersion(key)
	if !ok {
		return s.base.PutIfAbsent(ctx, key, data)
	}
	staged := deltalog.StagedCommitKey(v, uuid.NewString())
	if err := s.base.PutIfAbsent(ctx, staged, data); err != nil {
		if errors.Is(err, logstore.ErrAlreadyExists) {
			// A random UUID taken: nothing of ours is there.
			return fmt.Errorf("catalogmanaged: staged commit %s exists: %w", staged, logstore.ErrNotWritten)
		}
		return err
	}
	c := Commit{Version: v, Key: staged, Size: int64(len(data)), Timestamp: time.Now().UnixMilli()}
	if err := s.client.Commit(ctx, c); err != nil {
		switch {
		case errors.Is(err, ErrConflict):
			return &logstore.OpError{Op: "put if absent", Key: key, Kind: logstore.ErrAlreadyExists, Err: err}
		case logstore.IsCertainFailure(err):
			return err
		}
		return &logstore.OpError{Op: "put if absent", Key: key, Kind: logstore.ErrOutcomeUnknown, Err: err}
	}
	s.mu.Lock()
	s.ratified[v] = c
	s.latest = max(s.latest, v)
	s.mu.Unlock()
	s.publish(ctx, v)
	return nil
}

// publish copies the ratified commits up to version that are not yet
// published to their <v>.json, in version order, and tells the catalog. A
// failure is logged, not returned: the commits stand, ratified, and are
// read from the catalog until a later commit publishes them.
func (s *Store) publish(ctx context.Context, version int64) {
	s.mu.Lock()
	var todo []Commit
	for _, v := range slices.Sorted(maps.Keys(s.ratified)) {
		if v > s.published && v <= version {
			todo = append(todo, s.ratified[v])
		}
	}
	s.mu.Unlock()
	for _, c := range todo {
		data, err := s.read(ctx, c)
		if err == nil {
			err = s.base.PutIfAbsent(ctx, deltalog.CommitKey(c.Version), data)
			if errors.Is(err, logstore.ErrAlreadyExists) {
				err = nil // published by another writer meanwhile
			}
		}
		if err != nil {
			slog.WarnContext(ctx, "catalogmanaged: publishing a ratified commit failed; readers get it from the catalog", "version", c.Version, "err", err)
			return
		}
		s.mu.Lock()
		s.published = max(s.published, c.Version)
		s.mu.Unlock()
	}
	if len(todo) > 0 {
		if err := s.client.Published(ctx, todo[len(todo)-1].Version); err != nil {
			slog.WarnContext(ctx, "catalogmanaged: telling the catalog of published commits failed", "version", todo[len(todo)-1].Version, "err", err)
		}
	}
}

// logKey reports whether key is a commit or staged commit, which only the
// catalog's commit protocol writes and which log cleanup, the catalog's to
// permit, would delete.
func logKey(key string) bool {
	_, commit := commitVersion(key)
	return commit || strings.HasPrefix(key, deltalog.StagedDir)
}

// Put replaces the object at key; commits are refused (they are only
// ever created, through the catalog).
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if logKey(key) {
		return &logstore.OpError{Op: "put", Key: key, Kind: logstore.ErrNotWritten, Err: &deltaerr.CatalogManagedError{Op: "replacing a commit"}}
	}
	return s.base.Put(ctx, key, data)
}

// Delete removes the object at key; commits are refused (log cleanup of a
// catalog-managed table is the catalog's to permit).
func (s *Store) Delete(ctx context.Context, key string) error {
	if logKey(key) {
		return &logstore.OpError{Op: "delete", Key: key, Kind: logstore.ErrNotWritten, Err: &deltaerr.CatalogManagedError{Op: "log cleanup"}}
	}
	return s.base.Delete(ctx, key)
}

// NewWriter streams a new object to key; commits are refused (they are
// put whole, through PutIfAbsent).
func (s *Store) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	if logKey(key) {
		return nil, &logstore.OpError{Op: "new writer", Key: key, Kind: logstore.ErrNotWritten, Err: &deltaerr.CatalogManagedError{Op: "streaming a commit"}}
	}
	return s.base.NewWriter(ctx, key)
}

// Unwrap returns the store the view wraps (for the lookups that walk a
// chain of wrappers, as location.Trust's).
func (s *Store) Unwrap() logstore.Store { return s.base }

// URI returns the URI of the wrapped store.
func (s *Store) URI() string { return s.base.URI() }

// Close does nothing: the Store does not own the store it wraps.
func (s *Store) Close() error { return nil }
