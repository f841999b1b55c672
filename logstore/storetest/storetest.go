// Package storetest is the conformance suite every logstore.Store backend
// must pass: local, memory, and the object-store backends against a real
// server. It checks the contract written in package logstore, including the
// one property a Delta commit rests on: of many racing PutIfAbsent calls on
// one key, exactly one wins and its bytes are what is stored.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/godelta/delta/logstore"
)

// Run runs the suite; newStore returns an empty store for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) logstore.Store) {
	ctx := context.Background()
	t.Run("Missing", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.Get(ctx, "a/b"); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("Get missing: %v", err)
		}
		if _, err := s.GetRange(ctx, "a/b", 0, 1); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("GetRange missing: %v", err)
		}
		if _, err := s.Stat(ctx, "a/b"); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("Stat missing: %v", err)
		}
		if err := s.Delete(ctx, "a/b"); err != nil {
			t.Errorf("Delete missing: %v", err)
		}
		if n := count(t, s, "nodir/", ""); n != 0 {
			t.Errorf("List of a missing dir yields %d", n)
		}
	})
	t.Run("PutGetReplaceDelete", func(t *testing.T) {
		s := newStore(t)
		must(t, s.Put(ctx, "d/k", []byte("one")))
		expect(t, s, "d/k", "one")
		must(t, s.Put(ctx, "d/k", []byte("two")))
		expect(t, s, "d/k", "two")
		info, err := s.Stat(ctx, "d/k")
		if err != nil || info.Size != 3 || info.Key != "d/k" {
			t.Errorf("Stat = %+v, %v", info, err)
		}
		must(t, s.Delete(ctx, "d/k"))
		if _, err := s.Get(ctx, "d/k"); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("Get after Delete: %v", err)
		}
	})
	t.Run("PutIfAbsent", func(t *testing.T) {
		s := newStore(t)
		must(t, s.PutIfAbsent(ctx, "new/dir/k", []byte("first")))
		if err := s.PutIfAbsent(ctx, "new/dir/k", []byte("second")); !errors.Is(err, logstore.ErrAlreadyExists) {
			t.Errorf("second PutIfAbsent: %v, want ErrAlreadyExists", err)
		}
		expect(t, s, "new/dir/k", "first")
	})
	t.Run("PutIfAbsentRace", func(t *testing.T) {
		s := newStore(t)
		const racers, rounds = 32, 5
		for round := range rounds {
			key := fmt.Sprintf("_delta_log/%020d.json", round)
			var wg sync.WaitGroup
			errs := make([]error, racers)
			for i := range racers {
				wg.Go(func() { errs[i] = s.PutIfAbsent(ctx, key, []byte(fmt.Sprintf("writer %d", i))) })
			}
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Fatalf("round %d: writers %d and %d both won", round, winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, logstore.ErrAlreadyExists):
					t.Fatalf("round %d: writer %d: %v", round, i, err)
				}
			}
			if winner < 0 {
				t.Fatalf("round %d: no writer won", round)
			}
			expect(t, s, key, fmt.Sprintf("writer %d", winner))
		}
	})
	t.Run("GetRange", func(t *testing.T) {
		s := newStore(t)
		must(t, s.Put(ctx, "r", []byte("0123456789")))
		for _, tc := range []struct {
			off, n int64
			want   string
		}{{0, 4, "0123"}, {3, 4, "3456"}, {6, 4, "6789"}, {8, 10, "89"}, {10, 5, ""}} {
			got, err := s.GetRange(ctx, "r", tc.off, tc.n)
			if err != nil || string(got) != tc.want {
				t.Errorf("GetRange(%d, %d) = %q, %v; want %q", tc.off, tc.n, got, err, tc.want)
			}
		}
	})
	t.Run("List", func(t *testing.T) {
		s := newStore(t)
		keys := []string{
			"_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json",
			"_delta_log/00000000000000000010.checkpoint.parquet", "_delta_log/00000000000000000010.json",
			"_delta_log/_last_checkpoint", "_delta_log/a b", "_delta_log/p%20q", "_delta_log/x=A%2FA",
			"_delta_log/@#", "_delta_log/é", "_delta_log/9",
		}
		for _, k := range keys {
			must(t, s.Put(ctx, k, []byte(k)))
		}
		must(t, s.Put(ctx, "_delta_log/_sidecars/s.parquet", []byte("x"))) // in a sub-directory
		must(t, s.Put(ctx, "other.parquet", []byte("x")))                   // outside
		want := slices.Clone(keys)
		slices.Sort(want)
		if got := list(t, s, "_delta_log/", ""); !slices.Equal(got, want) {
			t.Errorf("List = %q\nwant %q", got, want)
		}
		after := "_delta_log/00000000000000000001.json"
		i := slices.Index(want, after)
		if got := list(t, s, "_delta_log/", after); !slices.Equal(got, want[i+1:]) {
			t.Errorf("List after %q = %q, want %q", after, got, want[i+1:])
		}
		// startAfter need not be a key.
		if got := list(t, s, "_delta_log/", "_delta_log/00000000000000000005"); !slices.Equal(got, want[2:]) {
			t.Errorf("List after a non-key = %q, want %q", got, want[2:])
		}
		if got := list(t, s, "", ""); !slices.Equal(got, []string{"other.parquet"}) {
			t.Errorf("List of root = %q", got)
		}
	})
	t.Run("InvalidKeys", func(t *testing.T) {
		s := newStore(t)
		for _, k := range []string{"", "/abs", "a/../b", "a//b", "./a", "a/", "..", "a/."} {
			if _, err := s.Get(ctx, k); !errors.Is(err, logstore.ErrInvalidKey) {
				t.Errorf("Get(%q): %v", k, err)
			}
			if err := s.Put(ctx, k, nil); !errors.Is(err, logstore.ErrInvalidKey) {
				t.Errorf("Put(%q): %v", k, err)
			}
			if err := s.PutIfAbsent(ctx, k, nil); !errors.Is(err, logstore.ErrInvalidKey) {
				t.Errorf("PutIfAbsent(%q): %v", k, err)
			}
			if err := s.Delete(ctx, k); !errors.Is(err, logstore.ErrInvalidKey) {
				t.Errorf("Delete(%q): %v", k, err)
			}
			if _, err := s.Stat(ctx, k); !errors.Is(err, logstore.ErrInvalidKey) {
				t.Errorf("Stat(%q): %v", k, err)
			}
		}
		for _, d := range []string{"/abs/", "a/../", "a"} {
			for _, err := range s.List(ctx, d, "") {
				if !errors.Is(err, logstore.ErrInvalidKey) {
					t.Errorf("List(%q): %v", d, err)
				}
				break
			}
		}
	})
	t.Run("CancelledContext", func(t *testing.T) {
		s := newStore(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.PutIfAbsent(cctx, "k", []byte("x")); err == nil {
			t.Error("PutIfAbsent with a cancelled context succeeded")
		}
		if _, err := s.Get(cctx, "k"); err == nil || errors.Is(err, logstore.ErrNotFound) && !errors.Is(err, context.Canceled) {
			t.Errorf("Get with a cancelled context: %v", err)
		}
	})
	t.Run("ConcurrentReadWrite", func(t *testing.T) {
		s := newStore(t)
		must(t, s.Put(ctx, "c", []byte("aaaa")))
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				for j := range 50 {
					if i%2 == 0 {
						must(t, s.Put(ctx, "c", bytes.Repeat([]byte{byte('a' + j%2)}, 4)))
						continue
					}
					b, err := s.Get(ctx, "c")
					if err != nil || (string(b) != "aaaa" && string(b) != "bbbb") {
						t.Errorf("read %q, %v: a torn or failed read", b, err)
					}
				}
			})
		}
		wg.Wait()
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func expect(t *testing.T, s logstore.Store, key, want string) {
	t.Helper()
	got, err := s.Get(context.Background(), key)
	if err != nil || string(got) != want {
		t.Errorf("Get(%q) = %q, %v; want %q", key, got, err, want)
	}
}

func list(t *testing.T, s logstore.Store, dir, after string) []string {
	t.Helper()
	var out []string
	for obj, err := range s.List(context.Background(), dir, after) {
		if err != nil {
			t.Fatalf("List(%q, %q): %v", dir, after, err)
		}
		out = append(out, obj.Key)
	}
	return out
}

func count(t *testing.T, s logstore.Store, dir, after string) int {
	return len(list(t, s, dir, after))
}
