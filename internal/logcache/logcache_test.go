package logcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/logstore/storetest"
	"github.com/godelta/delta/testutil/countstore"
)

var ctx = context.Background()

// env is one backing store, and the caches ("processes") over it that
// share one directory.
type env struct {
	t   *testing.T
	mem logstore.Store
	dir string
	max int64
}

func newEnv(t *testing.T, max int64) *env {
	return &env{t: t, mem: memory.New(), dir: t.TempDir(), max: max}
}

// open returns a new cache over the backing store, as a new process would
// make, and the counter of what it reads from the backing store.
func (e *env) open() (*Store, *countstore.Store) {
	e.t.Helper()
	cs := countstore.New(nopClose{e.mem}, nil)
	s, err := New(cs, e.dir, e.max)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	return s, cs
}

type nopClose struct{ logstore.Store }

func (nopClose) Close() error { return nil }

func (e *env) put(key, data string) {
	e.t.Helper()
	if err := e.mem.Put(ctx, key, []byte(data)); err != nil {
		e.t.Fatal(err)
	}
}

// list lists the log through s, as a snapshot load does first.
func list(t *testing.T, s logstore.Store) {
	t.Helper()
	for _, dir := range []string{deltalog.LogDir, deltalog.SidecarDir} {
		for _, err := range s.List(ctx, dir, "") {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

func get(t *testing.T, s logstore.Store, key string) string {
	t.Helper()
	b, err := s.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get(%s): %v", key, err)
	}
	return string(b)
}

// entries returns the entry files of the cache directory, and the
// temporary files.
func (e *env) entries() (entries, tmps []string) {
	filepath.WalkDir(filepath.Join(e.dir, subdir), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if strings.HasPrefix(d.Name(), tmpPrefix) {
				tmps = append(tmps, p)
			} else {
				entries = append(entries, p)
			}
		}
		return nil
	})
	return entries, tmps
}

const c0 = "_delta_log/00000000000000000000.json"
const c1 = "_delta_log/00000000000000000001.json"

func TestCacheable(t *testing.T) {
	for key, want := range map[string]bool{
		c0:                                    true,
		"_delta_log/00000000000000000003.crc": true,
		"_delta_log/00000000000000000010.checkpoint.parquet":                                   true,
		"_delta_log/00000000000000000010.checkpoint.0000000001.0000000002.parquet":             true,
		"_delta_log/00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json": true,
		"_delta_log/00000000000000000004.00000000000000000006.compacted.json":                  true,
		"_delta_log/_sidecars/3a0d65cd-4056-49b8-937b-95f9e3ee90e5.parquet":                    true,
		"_delta_log/_last_checkpoint":                                                          false,
		"_delta_log/_last_vacuum_info":                                                         false,
		"_delta_log/.00000000000000000000.json.tmp":                                            false,
		"_delta_log/00000000000000000000.json.tmp":                                             false,
		"_delta_log/_sidecars/.x.parquet.tmp":                                                  false,
		"_delta_log/_staged_commits/00000000000000000001.json":                                 false,
		"part-00000.parquet":                                                                   false,
		"x/_delta_log/00000000000000000000.json":                                               false,
		"00000000000000000000.json":                                                            false,
	} {
		if got := Cacheable(key); got != want {
			t.Errorf("Cacheable(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestCache(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"hit after a listing", func(t *testing.T, e *env) {
			e.put(c0, "commit zero")
			s, cs := e.open()
			list(t, s)
			if got := get(t, s, c0); got != "commit zero" {
				t.Fatalf("cold read %q", got)
			}
			s2, cs2 := e.open() // a new process
			list(t, s2)
			cs.Reset()
			if got := get(t, s2, c0); got != "commit zero" {
				t.Fatalf("warm read %q", got)
			}
			if got := get(t, s, c0); got != "commit zero" {
				t.Fatalf("warm read, first process, %q", got)
			}
			if c := cs2.Counts(); c.Gets+c.Ranges != 0 {
				t.Errorf("warm read reached the store: %+v", c)
			}
			if c := cs.Counts(); c.Gets+c.Ranges != 0 {
				t.Errorf("warm read reached the store: %+v", c)
			}
		}},
		{"no report, no cache", func(t *testing.T, e *env) {
			e.put(c0, "commit zero")
			s, cs := e.open()
			for range 2 {
				if got := get(t, s, c0); got != "commit zero" {
					t.Fatalf("read %q", got)
				}
			}
			if c := cs.Counts(); c.Gets != 2 {
				t.Errorf("reads without a listing: %+v, want 2 gets through", c)
			}
			if ents, _ := e.entries(); len(ents) != 0 {
				t.Errorf("stored without a listing: %v", ents)
			}
		}},
		{"never caches what is not a log file", func(t *testing.T, e *env) {
			keys := []string{deltalog.LastCheckpointKey, "part-0.parquet", "_delta_log/_staged_commits/00000000000000000001.json"}
			for _, k := range keys {
				e.put(k, "data")
			}
			s, cs := e.open()
			for range 2 {
				for _, err := range s.List(ctx, "", "") {
					if err != nil {
						t.Fatal(err)
					}
				}
				list(t, s)
				for _, k := range keys {
					get(t, s, k)
				}
			}
			if c := cs.Counts(); c.Gets != 6 {
				t.Errorf("%+v, want 6 gets through", c)
			}
			if ents, _ := e.entries(); len(ents) != 0 {
				t.Errorf("stored: %v", ents)
			}
		}},
		{"stale: table re-created, other size", func(t *testing.T, e *env) {
			e.put(c0, "old table's commit")
			s, _ := e.open()
			list(t, s)
			get(t, s, c0)
			if err := e.mem.Delete(ctx, c0); err != nil {
				t.Fatal(err)
			}
			e.put(c0, "new commit")
			s2, _ := e.open()
			list(t, s2)
			if got := get(t, s2, c0); got != "new commit" {
				t.Errorf("new process read %q", got)
			}
			list(t, s)
			if got := get(t, s, c0); got != "new commit" {
				t.Errorf("old process, after listing again, read %q", got)
			}
		}},
		{"stale: table re-created, same size, later time", func(t *testing.T, e *env) {
			clock := time.Date(2026, 1, 1, 0, 0, 0, 123e6, time.UTC)
			drv, _ := logstore.DriverOf[*memory.Store](e.mem)
			drv.SetClock(func() time.Time { return clock })
			e.put(c0, "AAAA")
			s, _ := e.open()
			list(t, s)
			get(t, s, c0)
			clock = clock.Add(time.Millisecond)
			e.put(c0, "BBBB")
			list(t, s)
			if got := get(t, s, c0); got != "BBBB" {
				t.Errorf("read %q", got)
			}
		}},
		{"a key the listing no longer shows is read through", func(t *testing.T, e *env) {
			e.put(c0, "zero")
			e.put(c1, "one")
			s, cs := e.open()
			list(t, s)
			get(t, s, c0)
			if err := e.mem.Delete(ctx, c0); err != nil {
				t.Fatal(err)
			}
			list(t, s)
			cs.Reset()
			if _, err := s.Get(ctx, c0); !errors.Is(err, logstore.ErrNotFound) {
				t.Errorf("Get of a deleted commit: %v, want ErrNotFound", err)
			}
		}},
		{"a write through the cache forgets the key", func(t *testing.T, e *env) {
			e.put(c0, "zero")
			s, _ := e.open()
			list(t, s)
			get(t, s, c0)
			if err := s.Put(ctx, c0, []byte("rewritten")); err != nil {
				t.Fatal(err)
			}
			if got := get(t, s, c0); got != "rewritten" {
				t.Errorf("read %q", got)
			}
		}},
		{"a fill that finds another size is not stored", func(t *testing.T, e *env) {
			e.put(c0, "zero")
			s, _ := e.open()
			list(t, s)
			e.put(c0, "zero, longer now") // replaced after the listing
			if got := get(t, s, c0); got != "zero, longer now" {
				t.Errorf("read %q", got)
			}
			if ents, _ := e.entries(); len(ents) != 0 {
				t.Errorf("stored: %v", ents)
			}
		}},
		{"missing object: the store's error, one request", func(t *testing.T, e *env) {
			e.put(c0, "zero")
			s, cs := e.open()
			list(t, s)
			if err := e.mem.Delete(ctx, c0); err != nil {
				t.Fatal(err)
			}
			_, err := s.GetRange(ctx, c0, 0, 100)
			if !errors.Is(err, logstore.ErrNotFound) {
				t.Errorf("GetRange: %v, want ErrNotFound", err)
			}
			if c := cs.Counts(); c.Ranges != 1 {
				t.Errorf("%+v, want 1 range request", c)
			}
		}},
		{"torn entry (crash mid-write) is a miss and removed", func(t *testing.T, e *env) {
			e.put(c0, "commit zero, whole")
			s, _ := e.open()
			list(t, s)
			get(t, s, c0)
			p := s.path(c0)
			fi, _ := os.Stat(p)
			if err := os.Truncate(p, fi.Size()-5); err != nil {
				t.Fatal(err)
			}
			s2, cs2 := e.open()
			list(t, s2)
			if got := get(t, s2, c0); got != "commit zero, whole" {
				t.Errorf("read %q", got)
			}
			if c := cs2.Counts(); c.Ranges != 1 {
				t.Errorf("%+v, want the torn entry read through", c)
			}
			// Filled again, whole.
			s3, cs3 := e.open()
			list(t, s3)
			get(t, s3, c0)
			if c := cs3.Counts(); c.Gets+c.Ranges != 0 {
				t.Errorf("%+v, want a hit", c)
			}
		}},
		{"corrupt entry is a miss", func(t *testing.T, e *env) {
			e.put(c0, "commit zero")
			s, _ := e.open()
			list(t, s)
			get(t, s, c0)
			p := s.path(c0)
			b, _ := os.ReadFile(p)
			b[len(b)-1] ^= 0xff
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			s2, _ := e.open()
			list(t, s2)
			if got := get(t, s2, c0); got != "commit zero" {
				t.Errorf("read %q", got)
			}
		}},
		{"garbage entry file is a miss", func(t *testing.T, e *env) {
			e.put(c0, "commit zero")
			s, _ := e.open()
			list(t, s)
			p := s.path(c0)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte("GDLCv1\n\x00 and not much else"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := get(t, s, c0); got != "commit zero" {
				t.Errorf("read %q", got)
			}
		}},
		{"temporary file left by a crash is ignored, then removed", func(t *testing.T, e *env) {
			e.put(c0, "commit zero")
			s, _ := e.open()
			p := s.path(c0)
			os.MkdirAll(filepath.Dir(p), 0o755)
			tmp := filepath.Join(filepath.Dir(p), tmpPrefix+"crashed")
			if err := os.WriteFile(tmp, []byte("GDLCv1\n\x00half"), 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-2 * tmpMaxAge)
			os.Chtimes(tmp, old, old)
			list(t, s)
			if got := get(t, s, c0); got != "commit zero" {
				t.Errorf("read %q", got)
			}
			if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("old temporary file still there: %v", err)
			}
		}},
		{"ranged reads", func(t *testing.T, e *env) {
			data := strings.Repeat("0123456789", 100)
			cp := "_delta_log/00000000000000000010.checkpoint.parquet"
			e.put(cp, data)
			s, cs := e.open()
			if _, err := s.Stat(ctx, cp); err != nil { // as the checkpoint reader does
				t.Fatal(err)
			}
			for _, r := range []struct{ off, n int64 }{{990, 100}, {0, 10}, {5, 0}, {1000, 5}, {2000, 1}, {0, 1000}, {123, 456}} {
				b, err := s.GetRange(ctx, cp, r.off, r.n)
				want, werr := e.mem.GetRange(ctx, cp, r.off, r.n)
				if err != nil || werr != nil || !bytes.Equal(b, want) {
					t.Errorf("GetRange(%d, %d) = %q, %v; want %q, %v", r.off, r.n, b, err, want, werr)
				}
			}
			if c := cs.Counts(); c.Ranges != 1 || c.Bytes != 1000 {
				t.Errorf("%+v, want the whole object read once", c)
			}
			if _, err := s.GetRange(ctx, cp, -1, 5); !errors.Is(err, logstore.ErrInvalidRange) {
				t.Errorf("negative offset: %v", err)
			}
		}},
		{"object over a quarter of the cap is read through", func(t *testing.T, e *env) {
			e.max = 1000
			e.put(c0, strings.Repeat("x", 251))
			e.put(c1, strings.Repeat("x", 250))
			s, cs := e.open()
			list(t, s)
			for range 2 {
				get(t, s, c0)
				get(t, s, c1)
			}
			if c := cs.Counts(); c.Gets != 2 || c.Ranges != 1 {
				t.Errorf("%+v, want the large object read through twice, the other filled once", c)
			}
		}},
		{"eviction keeps the cap, least recently used first", func(t *testing.T, e *env) {
			e.max = 8 << 10
			var keys []string
			for v := range 40 {
				k := deltalog.CommitKey(int64(v))
				keys = append(keys, k)
				e.put(k, strings.Repeat(fmt.Sprint(v%10), 500))
			}
			s, cs := e.open()
			list(t, s)
			for _, k := range keys {
				get(t, s, k)
			}
			ents, _ := e.entries()
			var total int64
			for _, p := range ents {
				fi, _ := os.Stat(p)
				total += fi.Size()
			}
			if total > e.max {
				t.Errorf("%d bytes in the cache, cap %d", total, e.max)
			}
			if len(ents) == 0 || len(ents) == len(keys) {
				t.Errorf("%d entries of %d", len(ents), len(keys))
			}
			// The newest are the ones kept.
			s2, cs2 := e.open()
			list(t, s2)
			get(t, s2, keys[len(keys)-1])
			if c := cs2.Counts(); c.Gets+c.Ranges != 0 {
				t.Errorf("newest entry evicted: %+v", c)
			}
			cs2.Reset()
			get(t, s2, keys[0])
			if c := cs2.Counts(); c.Ranges != 1 {
				t.Errorf("oldest entry kept: %+v", c)
			}
			_ = cs
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newEnv(t, 0)) })
	}
}

// Two caches ("processes") on one directory, reading, filling and
// evicting at once, with a cap small enough that eviction runs all the
// time: every read returns the object's bytes.
func TestConcurrentCaches(t *testing.T) {
	e := newEnv(t, 16<<10)
	want := map[string]string{}
	for v := range 60 {
		k := deltalog.CommitKey(int64(v))
		want[k] = strings.Repeat(fmt.Sprintf("%03d", v), 100+v*10)
		e.put(k, want[k])
	}
	var wg sync.WaitGroup
	for p := range 2 {
		s, _ := e.open()
		list(t, s)
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 300 {
					k := deltalog.CommitKey(int64((i*7 + g*13 + p*29) % 60))
					off := int64(i % 50)
					b, err := s.GetRange(ctx, k, off, 200)
					w := want[k][min(int(off), len(want[k])):min(int(off)+200, len(want[k]))]
					if err != nil || string(b) != w {
						t.Errorf("GetRange(%s, %d): %q, %v; want %q", k, off, b, err, w)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
}

func TestSameTime(t *testing.T) {
	ms := time.Date(2026, 1, 1, 0, 0, 7, 250e6, time.UTC)
	sec := ms.Truncate(time.Second)
	for _, tc := range []struct {
		a, b time.Time
		want bool
	}{
		{ms, ms, true},
		{ms, sec, true}, // S3: HEAD in seconds, listing in milliseconds
		{sec, ms, true},
		{ms, ms.Add(time.Millisecond), false},
		{sec, sec.Add(time.Second), false},
		{ms, sec.Add(time.Second), false},
	} {
		if got := sameTime(tc.a, tc.b); got != tc.want {
			t.Errorf("sameTime(%v, %v) = %v", tc.a, tc.b, got)
		}
	}
}

// The wrapper keeps the whole Store contract.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store {
		s, err := New(memory.New(), t.TempDir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
	storetest.RunWriter(t, func(t *testing.T) logstore.Store {
		s, err := New(memory.New(), t.TempDir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, storetest.WriterOptions{})
}
