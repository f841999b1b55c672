package delta

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
)

// peakStore records the largest object part one Get or GetRange returned:
// what a reader holds of a file at once.
type peakStore struct {
	logstore.Store
	mu   sync.Mutex
	peak int
	key  string
	// beforePut, when set, is called before each PutIfAbsent.
	beforePut func(key string)
}

func (s *peakStore) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if s.beforePut != nil {
		s.beforePut(key)
	}
	return s.Store.PutIfAbsent(ctx, key, data)
}

func (s *peakStore) note(key string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(b) > s.peak {
		s.peak, s.key = len(b), key
	}
}

func (s *peakStore) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.Store.Get(ctx, key)
	s.note(key, b)
	return b, err
}

func (s *peakStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b, err := s.Store.GetRange(ctx, key, off, n)
	s.note(key, b)
	return b, err
}

func (s *peakStore) Unwrap() logstore.Store { return s.Store }

// hugeSize is the size the test gives a log file with truncate(2): sparse,
// so it costs no disk, but a reader that reads it whole holds all of it.
const hugeSize = 512 << 20

// maxHeld is the most of one file a reader may hold at once: the 8 MiB
// window in which commits are streamed.
const maxHeld = logstore.WindowSize

// TestHugeLogFiles checks issue 19 item 13: a huge (sparse) commit file or
// _last_checkpoint is a corrupt-file error naming the file, read in bounded
// pieces, never whole. Before streaming, every command read such a file
// whole (40 GB: out of memory).
func TestHugeLogFiles(t *testing.T) {
	ctx := t.Context()
	// Commits 0 (create), 1 and 2 (appends); a checkpoint at 2, so that
	// commit 1 is read only by history and the change data feed.
	newTable := func(t *testing.T) (string, *peakStore, *Table) {
		dir := t.TempDir()
		tbl, err := Create(ctx, dir, TableSpec{Schema: idSchema})
		if err != nil {
			t.Fatal(err)
		}
		for _, ids := range [][]int64{{1, 2}, {3}} {
			if _, err := tbl.AppendRows(ctx, longRows(ids...), WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := tbl.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
		tbl.Close()
		base, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		ps := &peakStore{Store: base}
		tbl, err = OpenStore(ctx, dir, ps)
		if err != nil {
			t.Fatal(err)
		}
		return dir, ps, tbl
	}
	grow := func(t *testing.T, dir, key string) {
		if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(key)), hugeSize); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		key     string                                                    // the file made huge
		prepare func(t *testing.T, dir string, ps *peakStore, tbl *Table) // before run; nil: grow key
		run     func(tbl *Table) error                                    // what must fail
		ok      func(t *testing.T, tbl *Table)                            // what must still work, if anything
		// readsNone: run needs nothing past the first line of the file,
		// so it succeeds, and must not read the rest.
		readsNone bool
	}{{
		name: "latest commit",
		key:  deltalog.CommitKey(3),
		prepare: func(t *testing.T, dir string, _ *peakStore, tbl *Table) {
			// A commit after the checkpoint, which loading replays.
			if _, err := tbl.AppendRows(ctx, longRows(4), WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			grow(t, dir, deltalog.CommitKey(3))
		},
		run: func(tbl *Table) error {
			_, err := tbl.Snapshot(ctx)
			return err
		},
	}, {
		name: "commit read by history",
		key:  deltalog.CommitKey(1),
		// History reads only the commitInfo, the first line.
		readsNone: true,
		run: func(tbl *Table) error {
			_, err := tbl.History(ctx, 0)
			return err
		},
		ok: func(t *testing.T, tbl *Table) {
			if _, err := tbl.Snapshot(ctx); err != nil {
				t.Errorf("Snapshot, which starts at the checkpoint: %v", err)
			}
		},
	}, {
		name: "commit read by the change data feed",
		key:  deltalog.CommitKey(1),
		run: func(tbl *Table) error {
			ch, err := tbl.Changes(ctx, ChangeOptions{Start: 1})
			if err != nil {
				return err
			}
			for _, err := range ch.Rows(ctx) {
				if err != nil {
					return err
				}
			}
			return nil
		},
	}, {
		name: "next commit, met by append",
		key:  deltalog.CommitKey(3),
		prepare: func(t *testing.T, dir string, ps *peakStore, _ *Table) {
			// The file appears after the append loaded its snapshot, just
			// before it commits: the commit meets it as the winner of the
			// race for version 3, and reads it back.
			ps.beforePut = func(key string) {
				if key == deltalog.CommitKey(3) {
					if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(key)), nil, 0o666); err != nil {
						t.Error(err)
					}
					grow(t, dir, key)
				}
			}
		},
		run: func(tbl *Table) error {
			_, err := tbl.AppendRows(ctx, longRows(4), WriteOptions{})
			return err
		},
	}, {
		name: "_last_checkpoint",
		key:  deltalog.LastCheckpointKey,
		run: func(tbl *Table) error {
			_, err := deltalog.ReadLastCheckpoint(ctx, tbl.Store())
			return err
		},
		ok: func(t *testing.T, tbl *Table) {
			// The hint is only a hint: the snapshot falls back to a
			// listing.
			if _, err := tbl.Snapshot(ctx); err != nil {
				t.Errorf("Snapshot with a huge _last_checkpoint: %v", err)
			}
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, ps, tbl := newTable(t)
			defer tbl.Close()
			if tc.prepare != nil {
				tc.prepare(t, dir, ps, tbl)
			} else {
				grow(t, dir, tc.key)
			}
			err := tc.run(tbl)
			if tc.readsNone {
				if err != nil {
					t.Errorf("error = %v, want none", err)
				}
			} else if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("error = %v, want ErrCorrupt naming %s", err, tc.key)
			}
			if tc.ok != nil {
				tc.ok(t, tbl)
			}
			if ps.peak > maxHeld {
				t.Errorf("a read returned %d bytes of %s at once, want at most %d", ps.peak, ps.key, maxHeld)
			}
		})
	}
}
