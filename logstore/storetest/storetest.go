// Package storetest is the conformance suite for logstore.Store: the
// contract in the logstore package doc, written as tests. Every backend runs
// it from its own tests, with a function that makes a new, empty store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) logstore.Store {
//			s, err := local.New(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// Each subtest gets a store of its own, so a backend over a shared service
// (an object store on loopback, say) should give each a fresh bucket or
// prefix; the suite expects the store to start empty.
//
// The suite checks errors with errors.Is only, never by message. It covers
// missing objects, put and replace, PutIfAbsent alone and raced by many
// goroutines, ranges, listing order with awkward keys, startAfter,
// non-recursion, delete, invalid keys, cancelled contexts, reads that run
// alongside writes, use after Close (ErrClosed) and URI. RunMissingRoot adds
// the kinds for a missing root (bucket, container), for the backends where
// a root can be missing. RunWriter checks the streaming logstore.Writer:
// objects of several parts, nothing visible before Close, Abort and
// cancellation leaving nothing behind (WriterOptions.Leftovers looks at what
// the backend itself keeps), zero-byte objects, replacement and invalid keys.
// Names of objects avoid upper and lower case variants of one another, so
// the suite also runs on case-insensitive file systems.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/godelta/delta/logstore"
)

// Run runs the conformance suite against the stores newStore makes. It
// calls newStore once per subtest, with that subtest's t.
func Run(t *testing.T, newStore func(t *testing.T) logstore.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s logstore.Store)
	}{
		{"NotFound", testNotFound},
		{"PutGet", testPutGet},
		{"EmptyObject", testEmptyObject},
		{"LargeObject", testLargeObject},
		{"OwnsBytes", testOwnsBytes},
		{"PutReplaces", testPutReplaces},
		{"PutIfAbsent", testPutIfAbsent},
		{"PutIfAbsentRace", testPutIfAbsentRace},
		{"PutRace", testPutRace},
		{"GetRange", testGetRange},
		{"ListOrder", testListOrder},
		{"ListStartAfter", testListStartAfter},
		{"ListNonRecursive", testListNonRecursive},
		{"ListMissingDir", testListMissingDir},
		{"ListHivePartition", testListHivePartition},
		{"ListBreak", testListBreak},
		{"ListDirs", testListDirs},
		{"RemoveEmptyDir", testRemoveEmptyDir},
		{"ListWhileWriting", testListWhileWriting},
		{"Delete", testDelete},
		{"InvalidKey", testInvalidKey},
		{"CancelledContext", testCancelledContext},
		{"Close", testClose},
		{"URI", testURI},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
}

// put is Put that fails the test on error.
func put(t *testing.T, s logstore.Store, key, data string) {
	t.Helper()
	if err := s.Put(t.Context(), key, []byte(data)); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

// mustGet is Get that fails the test on error.
func mustGet(t *testing.T, s logstore.Store, key string) []byte {
	t.Helper()
	b, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return b
}

// wantContent checks that key holds want, through Get and Stat.
func wantContent(t *testing.T, s logstore.Store, key, want string) {
	t.Helper()
	if got := mustGet(t, s, key); string(got) != want {
		t.Fatalf("Get(%q) = %q, want %q", key, trim(got), trim([]byte(want)))
	}
	info, err := s.Stat(t.Context(), key)
	if err != nil {
		t.Fatalf("Stat(%q): %v", key, err)
	}
	if info.Key != key || info.Size != int64(len(want)) || info.ModTime.IsZero() {
		t.Fatalf("Stat(%q) = %+v, want key %q, size %d, a ModTime", key, info, key, len(want))
	}
}

// wantNotFound checks that Get, GetRange and Stat of key give ErrNotFound.
func wantNotFound(t *testing.T, s logstore.Store, key string) {
	t.Helper()
	ctx := t.Context()
	if b, err := s.Get(ctx, key); !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("Get(%q) = %q, %v; want ErrNotFound", key, trim(b), err)
	}
	if b, err := s.GetRange(ctx, key, 0, 1); !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("GetRange(%q) = %q, %v; want ErrNotFound", key, trim(b), err)
	}
	if info, err := s.Stat(ctx, key); !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("Stat(%q) = %+v, %v; want ErrNotFound", key, info, err)
	}
}

// list collects a listing, failing the test on an error. It also checks
// that keys increase strictly and lie directly under dir.
func list(t *testing.T, s logstore.Store, dir, startAfter string) []logstore.ObjectInfo {
	t.Helper()
	var infos []logstore.ObjectInfo
	for info, err := range s.List(t.Context(), dir, startAfter) {
		if err != nil {
			t.Fatalf("List(%q, %q): %v", dir, startAfter, err)
		}
		infos = append(infos, info)
	}
	for i, info := range infos {
		name, ok := strings.CutPrefix(info.Key, dir)
		if !ok || name == "" || strings.Contains(name, "/") {
			t.Errorf("List(%q, %q) yielded %q, which is not directly under the directory", dir, startAfter, info.Key)
		}
		if info.Key <= startAfter {
			t.Errorf("List(%q, %q) yielded %q, not after startAfter", dir, startAfter, info.Key)
		}
		if i > 0 && info.Key <= infos[i-1].Key {
			t.Errorf("List(%q, %q) yielded %q after %q: not strictly increasing", dir, startAfter, info.Key, infos[i-1].Key)
		}
	}
	return infos
}

// listKeys is list, keeping only the keys.
func listKeys(t *testing.T, s logstore.Store, dir, startAfter string) []string {
	t.Helper()
	var keys []string
	for _, info := range list(t, s, dir, startAfter) {
		keys = append(keys, info.Key)
	}
	return keys
}

func wantKeys(t *testing.T, s logstore.Store, dir, startAfter string, want []string) {
	t.Helper()
	got := listKeys(t, s, dir, startAfter)
	if !slices.Equal(got, want) {
		t.Errorf("List(%q, %q) =\n\t%q\nwant\n\t%q", dir, startAfter, got, want)
	}
}

// trim shortens b for messages.
func trim(b []byte) string {
	if len(b) > 64 {
		return fmt.Sprintf("%s... (%d bytes)", b[:64], len(b))
	}
	return string(b)
}

func testNotFound(t *testing.T, s logstore.Store) {
	wantNotFound(t, s, "missing")
	wantNotFound(t, s, "no/such/dir/missing.json")

	// A key that only names a directory is not an object.
	put(t, s, "dir/child", "x")
	wantNotFound(t, s, "dir")
	wantNotFound(t, s, "dir/chil")
	wantNotFound(t, s, "dir/child/below")
}

func testPutGet(t *testing.T, s logstore.Store) {
	keys := []string{
		"top",
		"_delta_log/00000000000000000000.json",
		"a/b/c/d/e/deep.parquet",
		"with space/and %41 @ # + ; = , ~ & $ ! ' ( ) [ ]",
		"unicode/日本語/café-ü-😀",
	}
	for i, key := range keys {
		put(t, s, key, fmt.Sprintf("content %d of %q", i, key))
	}
	for i, key := range keys {
		wantContent(t, s, key, fmt.Sprintf("content %d of %q", i, key))
	}
}

func testEmptyObject(t *testing.T, s logstore.Store) {
	ctx := t.Context()
	put(t, s, "empty-put", "")
	if err := s.PutIfAbsent(ctx, "empty-pia", nil); err != nil {
		t.Fatalf("PutIfAbsent(nil data): %v", err)
	}
	for _, key := range []string{"empty-put", "empty-pia"} {
		wantContent(t, s, key, "")
		if b, err := s.GetRange(ctx, key, 0, 10); err != nil || len(b) != 0 {
			t.Errorf("GetRange(%q, 0, 10) = %q, %v; want empty, nil", key, b, err)
		}
	}
	wantKeys(t, s, "", "", []string{"empty-pia", "empty-put"})
	if err := s.PutIfAbsent(ctx, "empty-pia", []byte("x")); !errors.Is(err, logstore.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent over an empty object = %v, want ErrAlreadyExists", err)
	}
}

func testLargeObject(t *testing.T, s logstore.Store) {
	data := make([]byte, 3<<20+17)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	if err := s.PutIfAbsent(t.Context(), "large/blob", data); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "large/blob"); !bytes.Equal(got, data) {
		t.Fatalf("Get of a %d-byte object returned %d bytes, or other bytes", len(data), len(got))
	}
	off := int64(len(data) - 1000)
	got, err := s.GetRange(t.Context(), "large/blob", off, 4096)
	if err != nil || !bytes.Equal(got, data[off:]) {
		t.Fatalf("GetRange of the tail = %d bytes, %v; want the last 1000 bytes", len(got), err)
	}
}

// testOwnsBytes checks that a store keeps its own copy: changing the slice
// given to a write, or returned by a read, changes nothing stored.
func testOwnsBytes(t *testing.T, s logstore.Store) {
	ctx := t.Context()
	buf := []byte("original")
	if err := s.Put(ctx, "p", buf); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIfAbsent(ctx, "pia", buf); err != nil {
		t.Fatal(err)
	}
	copy(buf, "CHANGED!")
	for _, key := range []string{"p", "pia"} {
		wantContent(t, s, key, "original")
		b := mustGet(t, s, key)
		copy(b, "CHANGED!")
		r, err := s.GetRange(ctx, key, 0, 4)
		if err != nil {
			t.Fatal(err)
		}
		copy(r, "XXXX")
		wantContent(t, s, key, "original")
	}
}

func testPutReplaces(t *testing.T, s logstore.Store) {
	ctx := t.Context()
	put(t, s, "obj", "first, rather long content")
	put(t, s, "obj", "second")
	wantContent(t, s, "obj", "second")
	put(t, s, "obj", "third, now longer than the second one was")
	wantContent(t, s, "obj", "third, now longer than the second one was")
	wantKeys(t, s, "", "", []string{"obj"})

	// Put over an object made by PutIfAbsent replaces it too.
	if err := s.PutIfAbsent(ctx, "made-by-pia", []byte("pia")); err != nil {
		t.Fatal(err)
	}
	put(t, s, "made-by-pia", "put")
	wantContent(t, s, "made-by-pia", "put")
}

func testPutIfAbsent(t *testing.T, s logstore.Store) {
	ctx := t.Context()
	const key = "_delta_log/00000000000000000000.json"
	if err := s.PutIfAbsent(ctx, key, []byte("winner")); err != nil {
		t.Fatalf("PutIfAbsent of a new key: %v", err)
	}
	wantContent(t, s, key, "winner")
	for _, data := range []string{"loser", "", "a longer loser than the winner"} {
		if err := s.PutIfAbsent(ctx, key, []byte(data)); !errors.Is(err, logstore.ErrAlreadyExists) {
			t.Errorf("PutIfAbsent(%q) over an existing key = %v, want ErrAlreadyExists", data, err)
		}
	}
	wantContent(t, s, key, "winner")
	wantKeys(t, s, "_delta_log/", "", []string{key})

	// Over an object made by Put.
	put(t, s, "by-put", "put")
	if err := s.PutIfAbsent(ctx, "by-put", []byte("pia")); !errors.Is(err, logstore.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent over an object made by Put = %v, want ErrAlreadyExists", err)
	}
	wantContent(t, s, "by-put", "put")

	// A deleted key is free again.
	if err := s.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIfAbsent(ctx, key, []byte("again")); err != nil {
		t.Fatalf("PutIfAbsent after Delete: %v", err)
	}
	wantContent(t, s, key, "again")
}

// payload is what writer i of a race writes: distinct for each writer, and
// of a length of its own, so that a mix of two would show.
func payload(round, i int) []byte {
	return []byte(strings.Repeat(fmt.Sprintf("round %d writer %02d|", round, i), 1+i*37))
}

// testPutIfAbsentRace races many goroutines on one key, in a directory
// that does not exist yet, while others read it. Exactly one writer must
// win, every other must get ErrAlreadyExists, and every read that finds the
// object must find the winner's bytes whole.
func testPutIfAbsentRace(t *testing.T, s logstore.Store) {
	const (
		writers = 32
		readers = 4
		rounds  = 5
	)
	ctx := t.Context()
	for round := range rounds {
		key := fmt.Sprintf("race/round-%d/_delta_log/%020d.json", round, round+1)
		start := make(chan struct{})
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				<-start
				errs[i] = s.PutIfAbsent(ctx, key, payload(round, i))
			})
		}
		var (
			readMu sync.Mutex
			seen   [][]byte // contents read during the race
			rerr   error
		)
		done := make(chan struct{})
		var rwg sync.WaitGroup
		for range readers {
			rwg.Go(func() {
				<-start
				for {
					b, err := s.Get(ctx, key)
					readMu.Lock()
					switch {
					case err == nil:
						seen = append(seen, b)
					case !errors.Is(err, logstore.ErrNotFound) && rerr == nil:
						rerr = err
					}
					readMu.Unlock()
					select {
					case <-done:
						return
					default:
					}
				}
			})
		}
		close(start)
		wg.Wait()
		close(done)
		rwg.Wait()

		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, i)
				}
				winner = i
			case !errors.Is(err, logstore.ErrAlreadyExists):
				t.Errorf("round %d: writer %d: %v, want nil or ErrAlreadyExists", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		want := payload(round, winner)
		wantContent(t, s, key, string(want))
		if rerr != nil {
			t.Errorf("round %d: a reader failed: %v", round, rerr)
		}
		for _, b := range seen {
			if !bytes.Equal(b, want) {
				t.Fatalf("round %d: a reader saw %q while the winner wrote %q", round, trim(b), trim(want))
			}
		}
		wantKeys(t, s, fmt.Sprintf("race/round-%d/_delta_log/", round), "", []string{key})
	}
}

// testPutRace races Puts of one key while readers read it: every read must
// see one writer's bytes whole, and the last state must be one of them.
func testPutRace(t *testing.T, s logstore.Store) {
	const (
		writers = 8
		puts    = 10
		readers = 4
	)
	ctx := t.Context()
	const key = "put-race/obj"
	put(t, s, key, string(payload(-1, 0)))
	valid := func(b []byte) bool {
		if bytes.Equal(b, payload(-1, 0)) {
			return true
		}
		for i := range writers {
			if bytes.Equal(b, payload(0, i)) {
				return true
			}
		}
		return false
	}
	var (
		wg, rwg sync.WaitGroup
		mu      sync.Mutex
		bad     []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		bad = append(bad, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	done := make(chan struct{})
	for range readers {
		rwg.Go(func() {
			for {
				b, err := s.Get(ctx, key)
				if err != nil {
					fail("Get during Puts: %v", err)
				} else if !valid(b) {
					fail("Get during Puts saw a mix: %q", trim(b))
				}
				info, err := s.Stat(ctx, key)
				if err != nil {
					fail("Stat during Puts: %v", err)
				} else if info.Size <= 0 {
					fail("Stat during Puts: size %d", info.Size)
				}
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	for i := range writers {
		wg.Go(func() {
			for range puts {
				if err := s.Put(ctx, key, payload(0, i)); err != nil {
					fail("Put by writer %d: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
	close(done)
	rwg.Wait()
	for _, msg := range bad {
		t.Error(msg)
	}
	if b := mustGet(t, s, key); !valid(b) {
		t.Errorf("after the race, Get = %q, which no writer wrote", trim(b))
	}
	wantKeys(t, s, "put-race/", "", []string{key})
}

func testGetRange(t *testing.T, s logstore.Store) {
	ctx := t.Context()
	const key = "range/obj"
	put(t, s, key, "0123456789")
	tests := []struct {
		name           string
		offset, length int64
		want           string
	}{
		{"start", 0, 4, "0123"},
		{"middle", 3, 4, "3456"},
		{"one byte", 5, 1, "5"},
		{"whole", 0, 10, "0123456789"},
		{"up to the end", 6, 4, "6789"},
		{"runs past the end", 8, 10, "89"},
		{"huge length", 2, math.MaxInt64, "23456789"},
		{"zero length", 4, 0, ""},
		{"at the end", 10, 5, ""},
		{"past the end", 20, 5, ""},
		{"far past the end", math.MaxInt64, math.MaxInt64, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.GetRange(ctx, key, tc.offset, tc.length)
			if err != nil || string(got) != tc.want {
				t.Errorf("GetRange(%d, %d) = %q, %v; want %q, nil", tc.offset, tc.length, got, err, tc.want)
			}
		})
	}
	t.Run("negative", func(t *testing.T) {
		for _, r := range [][2]int64{{-1, 2}, {0, -1}, {math.MinInt64, 1}} {
			if got, err := s.GetRange(ctx, key, r[0], r[1]); !errors.Is(err, logstore.ErrInvalidRange) {
				t.Errorf("GetRange(%d, %d) = %q, %v; want ErrInvalidRange", r[0], r[1], got, err)
			}
		}
	})
	t.Run("missing", func(t *testing.T) {
		if _, err := s.GetRange(ctx, "range/missing", 0, 4); !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("GetRange of a missing object = %v, want ErrNotFound", err)
		}
	})
}

// awkwardNames are object names that sort in ways a careless backend gets
// wrong: digits of different lengths, escapes, punctuation below and above
// the letters, multi-byte UTF-8, and a leading dot.
var awkwardNames = []string{
	"1", "10", "2", "100", "09", "9",
	"00000000000000000009.json", "00000000000000000010.json",
	"00000000000000000010.checkpoint.parquet", "00000000000000000010.crc",
	"a b", "a  b", "a%20b", "a%2Fb", "a+b", "a-b", "a.b", "a_b", "a~b",
	"x=A%2FA", "x=A", "x=%3D",
	"@at", "#hash", "!bang", "(paren)", "[bracket]", "{brace}", "'quote'",
	"café", "cafe", "cafez", "日本", "日", "ü", "😀", "Ωmega",
	".dot", "_underscore", "-dash", "~tilde", "Upper",
}

func testListOrder(t *testing.T, s logstore.Store) {
	const dir = "list/"
	want := make([]string, 0, len(awkwardNames))
	for i, name := range awkwardNames {
		put(t, s, dir+name, strings.Repeat("x", i))
		want = append(want, dir+name)
	}
	slices.Sort(want) // byte order
	infos := list(t, s, dir, "")
	var got []string
	for _, info := range infos {
		got = append(got, info.Key)
		i := slices.Index(awkwardNames, strings.TrimPrefix(info.Key, dir))
		if i >= 0 && info.Size != int64(i) {
			t.Errorf("List yielded %q with size %d, want %d", info.Key, info.Size, i)
		}
		if info.ModTime.IsZero() {
			t.Errorf("List yielded %q with no ModTime", info.Key)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("List(%q) =\n\t%q\nwant, in byte order,\n\t%q", dir, got, want)
	}
	// The same listing twice.
	wantKeys(t, s, dir, "", want)
}

func testListStartAfter(t *testing.T, s logstore.Store) {
	const dir = "_delta_log/"
	var all []string
	for v := range 12 {
		key := fmt.Sprintf("%s%020d.json", dir, v)
		put(t, s, key, "{}")
		all = append(all, key)
	}
	put(t, s, dir+"00000000000000000010.checkpoint.parquet", "PAR1")
	put(t, s, dir+"_last_checkpoint", "{}")
	all = append(all, dir+"00000000000000000010.checkpoint.parquet", dir+"_last_checkpoint")
	slices.Sort(all)
	after := func(startAfter string) []string {
		var keys []string
		for _, k := range all {
			if k > startAfter {
				keys = append(keys, k)
			}
		}
		return keys
	}
	tests := []struct{ name, startAfter string }{
		{"empty", ""},
		{"existing key is excluded", dir + "00000000000000000005.json"},
		{"first key", all[0]},
		{"last key", all[len(all)-1]},
		{"bare version between keys", dir + "00000000000000000007"},
		{"prefix of a key", dir + "00000000000000000010"},
		{"between checkpoint and commit", dir + "00000000000000000010.checkpoint.parquet"},
		{"the directory itself", dir},
		{"before the directory", "_"},
		{"after the directory", "_delta_log0"},
		{"after every key", dir + "~"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantKeys(t, s, dir, tc.startAfter, after(tc.startAfter))
		})
	}
}

func testListNonRecursive(t *testing.T, s logstore.Store) {
	for _, key := range []string{
		"top1", "top2",
		"tree/a", "tree/c", "tree/b/c", "tree/b/d/e", "tree/bb",
		"tree/d/only/deeper",
	} {
		put(t, s, key, key)
	}
	wantKeys(t, s, "", "", []string{"top1", "top2"})
	wantKeys(t, s, "tree/", "", []string{"tree/a", "tree/bb", "tree/c"})
	wantKeys(t, s, "tree/b/", "", []string{"tree/b/c"})
	wantKeys(t, s, "tree/b/d/", "", []string{"tree/b/d/e"})
	wantKeys(t, s, "tree/d/", "", nil)
	wantKeys(t, s, "tree/", "tree/a", []string{"tree/bb", "tree/c"})
	// "tree/b" is a directory, and sorts before "tree/bb": it must not
	// show, whatever startAfter is.
	wantKeys(t, s, "tree/", "tree/b", []string{"tree/bb", "tree/c"})
}

// testListDirs checks the optional logstore.DirLister capability (the
// sub-directories under a directory, and a walk of the tree), and is
// skipped for a store without it.
func testListDirs(t *testing.T, s logstore.Store) {
	ctx := t.Context()
	for _, key := range []string{"top", "x=1/a", "x=1/y=2/b", "x=2/c", "x=A%2FA/d", "_delta_log/0.json"} {
		put(t, s, key, key)
	}
	dirs := func(dir string) []string {
		var out []string
		for d, err := range logstore.ListDirs(ctx, s, dir) {
			if errors.Is(err, errors.ErrUnsupported) {
				t.Skip("the store has no DirLister")
			}
			if err != nil {
				t.Fatalf("ListDirs(%q): %v", dir, err)
			}
			out = append(out, d)
		}
		return out
	}
	for _, c := range []struct {
		dir  string
		want []string
	}{
		{"", []string{"_delta_log/", "x=1/", "x=2/", "x=A%2FA/"}},
		{"x=1/", []string{"x=1/y=2/"}},
		{"x=2/", nil},
		{"missing/", nil},
	} {
		if got := dirs(c.dir); !slices.Equal(got, c.want) {
			t.Errorf("ListDirs(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
	var walked []string
	for info, err := range logstore.Walk(ctx, s, "", func(sub string) bool { return sub != "_delta_log/" }) {
		if err != nil {
			t.Fatalf("Walk: %v", err)
		}
		walked = append(walked, info.Key)
	}
	slices.Sort(walked)
	if want := []string{"top", "x=1/a", "x=1/y=2/b", "x=2/c", "x=A%2FA/d"}; !slices.Equal(walked, want) {
		t.Errorf("Walk = %q, want %q", walked, want)
	}
}

// testRemoveEmptyDir checks logstore.RemoveEmptyDir, whether the store
// has the optional DirRemover or not: it never removes an object, never
// the root, and the store takes writes into a removed directory again.
func testRemoveEmptyDir(t *testing.T, s logstore.Store) {
	ctx := t.Context()
	put(t, s, "d=1/e=2/k", "x")
	put(t, s, "d=1/e=3/k", "y")
	for _, dir := range []string{"d=1/", "d=1/e=2/", "d=1/e=2/k/", "missing/"} {
		if removed, err := logstore.RemoveEmptyDir(ctx, s, dir); removed || err != nil {
			t.Errorf("RemoveEmptyDir(%q) = %v, %v; want false, nil (not empty, not a directory, missing)", dir, removed, err)
		}
	}
	if _, err := logstore.RemoveEmptyDir(ctx, s, ""); !errors.Is(err, logstore.ErrInvalidKey) {
		t.Errorf("RemoveEmptyDir of the root: %v, want ErrInvalidKey", err)
	}
	if got := string(mustGet(t, s, "d=1/e=2/k")); got != "x" {
		t.Fatalf("d=1/e=2/k = %q after RemoveEmptyDir", got)
	}
	if err := s.Delete(ctx, "d=1/e=2/k"); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"d=1/e=2/", "d=1/"} {
		if _, err := logstore.RemoveEmptyDir(ctx, s, dir); err != nil {
			t.Errorf("RemoveEmptyDir(%q): %v", dir, err)
		}
	}
	wantKeys(t, s, "d=1/e=2/", "", nil)
	wantKeys(t, s, "d=1/e=3/", "", []string{"d=1/e=3/k"})
	put(t, s, "d=1/e=2/k2", "z")
	if got := string(mustGet(t, s, "d=1/e=2/k2")); got != "z" {
		t.Fatalf("a write into a removed directory reads %q", got)
	}
}

func testListMissingDir(t *testing.T, s logstore.Store) {
	wantKeys(t, s, "", "", nil) // an empty store
	wantKeys(t, s, "missing/", "", nil)
	wantKeys(t, s, "missing/deeper/", "", nil)
	put(t, s, "file", "x")
	wantKeys(t, s, "fil/", "", nil)
	// A directory named like an object lists as empty: "file" is an object,
	// and there is no directory "file/".
	wantKeys(t, s, "file/", "", nil)
}

func testListHivePartition(t *testing.T, s logstore.Store) {
	keys := []string{
		"x=A%2FA/part-00000.parquet",
		"x=A%2FA/part-00001.parquet",
		"x=A/part-00000.parquet",
		"x=__HIVE_DEFAULT_PARTITION__/part-00000.parquet",
		"x=a b/part-00000.parquet",
		"x=%3D/part-00000.parquet",
	}
	for _, key := range keys {
		put(t, s, key, key)
	}
	wantKeys(t, s, "x=A%2FA/", "", []string{"x=A%2FA/part-00000.parquet", "x=A%2FA/part-00001.parquet"})
	wantKeys(t, s, "x=A%2FA/", "x=A%2FA/part-00000.parquet", []string{"x=A%2FA/part-00001.parquet"})
	wantKeys(t, s, "x=A/", "", []string{"x=A/part-00000.parquet"})
	wantKeys(t, s, "x=a b/", "", []string{"x=a b/part-00000.parquet"})
	wantKeys(t, s, "x=%3D/", "", []string{"x=%3D/part-00000.parquet"})
	wantKeys(t, s, "", "", nil)
	for _, key := range keys {
		wantContent(t, s, key, key)
	}
}

// testListBreak checks that a loop over List may stop early, and that the
// store is usable from inside the loop.
func testListBreak(t *testing.T, s logstore.Store) {
	for i := range 5 {
		put(t, s, fmt.Sprintf("brk/%d", i), "x")
	}
	n := 0
	for info, err := range s.List(t.Context(), "brk/", "") {
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(t.Context(), info.Key); err != nil {
			t.Fatalf("Get(%q) inside a List loop: %v", info.Key, err)
		}
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("List loop ran %d times before break, want 2", n)
	}
}

// testListWhileWriting lists a directory while objects are added to it.
// Every listing must be strictly increasing and yield only objects that
// were written (no temporary or partial names); an object whose
// PutIfAbsent returned before the listing began must be in it.
func testListWhileWriting(t *testing.T, s logstore.Store) {
	const (
		dir     = "lw/_delta_log/"
		commits = 60
	)
	ctx := t.Context()
	key := func(v int) string { return fmt.Sprintf("%s%020d.json", dir, v) }
	written := map[string]bool{}
	for v := range commits {
		written[key(v)] = true
	}
	var (
		mu   sync.Mutex
		done int // commits 0..done-1 have returned
	)
	var wg sync.WaitGroup
	wg.Go(func() {
		for v := range commits {
			if err := s.PutIfAbsent(ctx, key(v), []byte(key(v))); err != nil {
				t.Errorf("PutIfAbsent(%q): %v", key(v), err)
				return
			}
			if v%10 == 0 {
				put(t, s, fmt.Sprintf("lw/part-%05d.parquet", v), "data")
			}
			mu.Lock()
			done = v + 1
			mu.Unlock()
		}
	})
	for range 3 {
		wg.Go(func() {
			for {
				mu.Lock()
				before := done
				mu.Unlock()
				var keys []string
				for info, err := range s.List(ctx, dir, "") {
					if err != nil {
						t.Errorf("List during writes: %v", err)
						return
					}
					if !written[info.Key] {
						t.Errorf("List during writes yielded %q, which was never written", info.Key)
						return
					}
					keys = append(keys, info.Key)
				}
				if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
					t.Errorf("List during writes is not strictly increasing: %q", keys)
					return
				}
				for v := range before {
					if !slices.Contains(keys, key(v)) {
						t.Errorf("List during writes misses %q, written before it began", key(v))
						return
					}
				}
				if before == commits {
					return
				}
			}
		})
	}
	wg.Wait()
	if got := listKeys(t, s, dir, ""); len(got) != commits {
		t.Errorf("after the writes, List(%q) has %d keys, want %d", dir, len(got), commits)
	}
	for v := range commits {
		wantContent(t, s, key(v), key(v))
	}
}

func testDelete(t *testing.T, s logstore.Store) {
	ctx := t.Context()
	if err := s.Delete(ctx, "missing"); err != nil {
		t.Errorf("Delete of a missing object = %v, want nil", err)
	}
	if err := s.Delete(ctx, "no/such/dir/missing"); err != nil {
		t.Errorf("Delete in a missing directory = %v, want nil", err)
	}
	for _, key := range []string{"del/a1", "del/a10", "del/a2", "del/sub/x", "del/sub/y"} {
		put(t, s, key, key)
	}
	if err := s.Delete(ctx, "del/a1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantNotFound(t, s, "del/a1")
	if err := s.Delete(ctx, "del/a1"); err != nil {
		t.Errorf("second Delete = %v, want nil", err)
	}
	wantKeys(t, s, "del/", "", []string{"del/a10", "del/a2"})
	wantContent(t, s, "del/a10", "del/a10")

	// A key that names a directory holds no object: Delete of it does
	// nothing, and removes nothing below it.
	if err := s.Delete(ctx, "del/sub"); err != nil {
		t.Errorf("Delete of a directory name = %v, want nil", err)
	}
	wantKeys(t, s, "del/sub/", "", []string{"del/sub/x", "del/sub/y"})

	// Deleting the last object of a directory leaves other directories,
	// and writing there again works.
	for _, key := range []string{"del/sub/x", "del/sub/y"} {
		if err := s.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	wantKeys(t, s, "del/sub/", "", nil)
	wantKeys(t, s, "del/", "", []string{"del/a10", "del/a2"})
	if err := s.PutIfAbsent(ctx, "del/sub/x", []byte("new")); err != nil {
		t.Fatalf("PutIfAbsent after deleting a directory's objects: %v", err)
	}
	wantContent(t, s, "del/sub/x", "new")
}

// invalidKeys are refused by every method with ErrInvalidKey.
var invalidKeys = []string{
	"", "/", "/abs", "//abs", "a/../b", "..", "../a", "a/..", ".", "./a", "a/.", "a/./b",
	"a//b", "a/", "a\\b", "a\x00b",
}

// invalidDirs are refused by List with ErrInvalidKey.
var invalidDirs = []string{
	"a", "/", "/a/", "a//", "//", "./", "../", "a/../", "a/./", "a/b", ".", "\\/",
}

func testInvalidKey(t *testing.T, s logstore.Store) {
	ctx := t.Context()
	put(t, s, "a/b", "x") // so that a key escaping into it would find something
	for _, key := range invalidKeys {
		t.Run(fmt.Sprintf("%q", key), func(t *testing.T) {
			check := func(method string, err error) {
				t.Helper()
				if !errors.Is(err, logstore.ErrInvalidKey) {
					t.Errorf("%s(%q) = %v, want ErrInvalidKey", method, key, err)
				}
			}
			_, err := s.Get(ctx, key)
			check("Get", err)
			_, err = s.GetRange(ctx, key, 0, 1)
			check("GetRange", err)
			_, err = s.Stat(ctx, key)
			check("Stat", err)
			check("PutIfAbsent", s.PutIfAbsent(ctx, key, []byte("x")))
			check("Put", s.Put(ctx, key, []byte("x")))
			check("Delete", s.Delete(ctx, key))
		})
	}
	for _, dir := range invalidDirs {
		t.Run(fmt.Sprintf("List(%q)", dir), func(t *testing.T) {
			n := 0
			for info, err := range s.List(ctx, dir, "") {
				n++
				if !errors.Is(err, logstore.ErrInvalidKey) || info != (logstore.ObjectInfo{}) {
					t.Errorf("List(%q) yielded %+v, %v; want a zero ObjectInfo and ErrInvalidKey", dir, info, err)
				}
			}
			if n != 1 {
				t.Errorf("List(%q) yielded %d times, want once (the error)", dir, n)
			}
		})
	}
	// Nothing was written by the refused calls.
	wantKeys(t, s, "", "", nil)
	wantKeys(t, s, "a/", "", []string{"a/b"})
	wantContent(t, s, "a/b", "x")
}

func testCancelledContext(t *testing.T, s logstore.Store) {
	put(t, s, "c/obj", "content")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	check := func(method string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want context.Canceled", method, err)
		}
	}
	_, err := s.Get(ctx, "c/obj")
	check("Get", err)
	_, err = s.GetRange(ctx, "c/obj", 0, 1)
	check("GetRange", err)
	_, err = s.Stat(ctx, "c/obj")
	check("Stat", err)
	check("PutIfAbsent", s.PutIfAbsent(ctx, "c/new", []byte("x")))
	check("Put", s.Put(ctx, "c/obj", []byte("replaced")))
	check("Delete", s.Delete(ctx, "c/obj"))
	n := 0
	for info, err := range s.List(ctx, "c/", "") {
		n++
		if info != (logstore.ObjectInfo{}) {
			t.Errorf("List with a cancelled context yielded %+v", info)
		}
		check("List", err)
	}
	if n != 1 {
		t.Errorf("List with a cancelled context yielded %d times, want once (the error)", n)
	}
	// The store still works with a live context. (Whether a cancelled write
	// landed is not checked: the contract leaves it open.)
	if _, err := s.Get(t.Context(), "c/obj"); err != nil {
		t.Errorf("Get after the cancelled calls: %v", err)
	}
}

// testClose checks that every method fails with ErrClosed after Close, that
// a second Close is nil, and that URI still answers.
func testClose(t *testing.T, s logstore.Store) {
	put(t, s, "c/obj", "content")
	uri := s.URI()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := t.Context()
	check := func(method string, err error) {
		t.Helper()
		if !errors.Is(err, logstore.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", method, err)
		}
	}
	_, err := s.Get(ctx, "c/obj")
	check("Get", err)
	_, err = s.GetRange(ctx, "c/obj", 0, 1)
	check("GetRange", err)
	_, err = s.Stat(ctx, "c/obj")
	check("Stat", err)
	check("PutIfAbsent", s.PutIfAbsent(ctx, "c/new", []byte("x")))
	check("Put", s.Put(ctx, "c/obj", []byte("replaced")))
	check("Delete", s.Delete(ctx, "c/obj"))
	w, err := s.NewWriter(ctx, "c/w")
	check("NewWriter", err)
	if w != nil {
		t.Errorf("NewWriter after Close returned a Writer")
	}
	n := 0
	for _, err := range s.List(ctx, "c/", "") {
		n++
		check("List", err)
	}
	if n != 1 {
		t.Errorf("List after Close yielded %d times, want once (the error)", n)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if got := s.URI(); got != uri {
		t.Errorf("URI after Close = %q, want %q as before", got, uri)
	}
}

// testURI checks that URI is an absolute URI without user information,
// query or fragment, where secrets would go.
func testURI(t *testing.T, s logstore.Store) {
	uri := s.URI()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatalf("URI() = %q, which does not parse: %v", uri, err)
	}
	if u.Scheme == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		t.Errorf("URI() = %q, want scheme://root without user, query or fragment", uri)
	}
}

// RunMissingRoot checks the error kinds of a store whose root (a bucket or
// container) does not exist. open makes such a store: a constructor that
// checks its root must fail with ErrRootNotFound, which passes; one that
// does not (a check turned off) must return a store whose List, Put and
// PutIfAbsent fail with ErrRootNotFound, and whose reads fail with it or,
// where the service answers a missing root and a missing object alike, with
// ErrNotFound. No call may report ErrAlreadyExists. Backends whose root
// cannot be missing (local creates its directory, memory has none) do not
// run it.
func RunMissingRoot(t *testing.T, open func(t *testing.T) (logstore.Store, error)) {
	s, err := open(t)
	if err != nil {
		if !errors.Is(err, logstore.ErrRootNotFound) || errors.Is(err, logstore.ErrNotFound) {
			t.Fatalf("opening a store over a missing root = %v, want ErrRootNotFound (and not ErrNotFound)", err)
		}
		return
	}
	defer s.Close()
	ctx := t.Context()
	strict := func(method string, err error) {
		t.Helper()
		if !errors.Is(err, logstore.ErrRootNotFound) || errors.Is(err, logstore.ErrNotFound) || errors.Is(err, logstore.ErrAlreadyExists) {
			t.Errorf("%s on a missing root = %v, want ErrRootNotFound only", method, err)
		}
	}
	read := func(method string, err error) {
		t.Helper()
		if !errors.Is(err, logstore.ErrRootNotFound) && !errors.Is(err, logstore.ErrNotFound) {
			t.Errorf("%s on a missing root = %v, want ErrRootNotFound or ErrNotFound", method, err)
		}
	}
	_, err = s.Get(ctx, "k")
	read("Get", err)
	_, err = s.Stat(ctx, "k")
	read("Stat", err)
	strict("Put", s.Put(ctx, "k", []byte("x")))
	strict("PutIfAbsent", s.PutIfAbsent(ctx, "k2", []byte("x")))
	n := 0
	for _, err := range s.List(ctx, "", "") {
		n++
		strict("List", err)
	}
	if n != 1 {
		t.Errorf("List on a missing root yielded %d times, want once (the error)", n)
	}
}
