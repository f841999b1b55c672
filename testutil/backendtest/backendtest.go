// Package backendtest holds the tests that every cloud backend of
// logstore (s3, gcs, azblob) runs against its emulator: a PutIfAbsent race
// over many versions, listing over many small pages, a Delta table written
// by concurrent writers and read back, and corpus tables uploaded and
// compared with the local disk. Each backend calls them from its own tests
// with stores on its own server; what only one backend has (credentials,
// emulator quirks, server stops) stays in that backend's tests.
//
// Unlike storetest, these tests assume an object store: a key may name an
// object and, followed by "/", a directory at the same time.
package backendtest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/testutil"
)

// PutRace races writers over versions commit keys of a log, as Delta
// writers do: each writer tries every version in turn. Every version must
// have exactly one winner, every other writer must see ErrAlreadyExists,
// and the stored content must be the winner's. With lockstep, all writers
// start each version's race together; without it, they run free.
func PutRace(t *testing.T, st logstore.Store, writers, versions int, lockstep bool) {
	t.Helper()
	ctx := t.Context()
	key := func(v int) string { return fmt.Sprintf("_delta_log/%020d.json", v) }
	content := func(w, v int) []byte {
		return []byte(strings.Repeat(fmt.Sprintf("writer %02d version %03d|", w, v), 1+w*3))
	}
	errs := make([][]error, writers)
	for w := range writers {
		errs[w] = make([]error, versions)
	}
	race := func(vs ...int) {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range writers {
			wg.Go(func() {
				<-start
				for _, v := range vs {
					errs[w][v] = st.PutIfAbsent(ctx, key(v), content(w, v))
				}
			})
		}
		close(start)
		wg.Wait()
	}
	if lockstep {
		for v := range versions {
			race(v)
		}
	} else {
		var all []int
		for v := range versions {
			all = append(all, v)
		}
		race(all...)
	}
	wins := make([]int, writers)
	for v := range versions {
		winner := -1
		for w := range writers {
			switch err := errs[w][v]; {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("version %d: writers %d and %d both won", v, winner, w)
				}
				winner = w
			case !errors.Is(err, logstore.ErrAlreadyExists):
				t.Errorf("version %d: writer %d: %v, want nil or ErrAlreadyExists", v, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("version %d: no winner", v)
		}
		wins[winner]++
		got, err := st.Get(ctx, key(v))
		if err != nil || !bytes.Equal(got, content(winner, v)) {
			t.Fatalf("version %d: Get = %.40q..., %v; want writer %d's content", v, got, err, winner)
		}
	}
	n := 0
	for _, err := range st.List(ctx, "_delta_log/", "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != versions {
		t.Errorf("List found %d commits, want %d", n, versions)
	}
	t.Logf("wins per writer: %v", wins)
}

// ListDir is the directory Pagination lists.
const ListDir = "tbl/_delta_log/"

// ListOptions describe the store Pagination lists.
type ListOptions struct {
	// PageSize is the number of keys the store lists a page.
	PageSize int
	// Sibling, if not nil, is a store under another prefix of the same
	// service; the keys written to it must not show.
	Sibling logstore.Store
	// NoObjectDirs leaves out directories named like an object beside
	// them ("a" and "a/b"), for servers on a file system that refuse them.
	NoObjectDirs bool
	// ValidUTF8 leaves out start positions that are not valid UTF-8, for
	// servers that refuse them.
	ValidUTF8 bool
}

// Pagination lists a directory of 66 objects from every start position:
// keys that are prefixes of one another, and directories whose names sort
// between them, which List must not enter or yield. It returns the keys of
// the directory, sorted.
func Pagination(t *testing.T, st logstore.Store, opts ListOptions) []string {
	t.Helper()
	ctx := t.Context()
	const dir = ListDir
	var want []string
	for v := range 50 {
		want = append(want, fmt.Sprintf("%s%020d.json", dir, v))
	}
	want = append(want,
		dir+"00000000000000000010.checkpoint.parquet",
		dir+"00000000000000000020.checkpoint.0000000001.0000000002.parquet",
		dir+"00000000000000000020.checkpoint.0000000002.0000000002.parquet",
		dir+"00000000000000000030.crc",
		dir+"_last_checkpoint",
		dir+"0", dir+"00", dir+"000", // prefixes of one another and of the commits
		dir+"a", dir+"a.b", dir+"a0", dir+"aaa", dir+"ab", dir+"abc", dir+"b", dir+"b-",
	)
	if len(want) != 66 {
		t.Fatalf("%d keys, want 66", len(want))
	}
	// Directories beside the objects, named so that they sort between them
	// ("aa/" between "a0" and "aaa"; "00...05.json/" right after a key it
	// extends) and so that a page may end on them; and objects beside the
	// directory.
	sidecars := []string{dir + "_sidecars/00000000000000000001.parquet", dir + "_sidecars/00000000000000000002.parquet"}
	others := append(slices.Clone(sidecars),
		dir+"aa/x", dir+"aa/y/z",
		dir+"00000000000000000005.json.d/one",
		dir+"00000000000000000036.json0/two",
		dir+"_commits/00000000000000000001.uuid.json",
		dir+"~tail/three",
		"tbl/_delta_log0", "tbl/_delta_log.txt", "tbl/_delta_log.json", "tbl/part-0.parquet",
		"tbl0/_delta_log/x", "other/_delta_log/x",
	)
	if !opts.NoObjectDirs {
		others = append(others,
			dir+"00000000000000000005.json/not-a-commit",
			dir+"00000000000000000007.json/below",
			dir+"0/x", dir+"000/y/z", dir+"ab/c", dir+"a/b/c",
		)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, key := range slices.Concat(want, others) {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := st.Put(ctx, key, []byte(key)); err != nil {
				t.Error(err)
			}
			if opts.Sibling != nil {
				if err := opts.Sibling.Put(ctx, key+"-other", []byte("x")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	slices.Sort(want)
	list := func(dir, startAfter string) []string {
		var keys []string
		for info, err := range st.List(ctx, dir, startAfter) {
			if err != nil {
				t.Fatalf("List(%q, %q): %v", dir, startAfter, err)
			}
			if info.Size != int64(len(info.Key)) || info.ModTime.IsZero() {
				t.Errorf("List yielded %+v, want size %d and a ModTime", info, len(info.Key))
			}
			keys = append(keys, info.Key)
		}
		return keys
	}
	after := func(startAfter string) []string {
		i, _ := slices.BinarySearch(want, startAfter)
		for i < len(want) && want[i] <= startAfter {
			i++
		}
		return want[i:]
	}
	check := func(startAfter string) {
		t.Helper()
		if got, w := list(dir, startAfter), after(startAfter); !slices.Equal(got, w) {
			t.Errorf("List(%q, %q) =\n\t%q\nwant\n\t%q", dir, startAfter, got, w)
		}
	}
	for _, k := range want {
		last := k[len(k)-1]
		starts := []string{
			k,                // exclusive at every position
			k[:len(k)-1],     // a prefix of the key
			k + "\x00",       // just after the key
			k + "0", k + "/", // after it, and its directory
			k[:len(k)-1] + string(rune(last-1)) + "~", // just before it
		}
		if !opts.ValidUTF8 {
			starts = append(starts, k[:len(k)-1]+"\xff") // after every key it is a prefix of
		}
		for _, sa := range starts {
			check(sa)
		}
	}
	for _, sa := range []string{
		"", "_", "tbl/", "tbl/_delta_log", dir, dir + "\x01", "tbl/_delta_log0", "zzz", dir + "~",
		dir + "aa", dir + "aa/", dir + "aa/zz", dir + "00000000000000000007.json/", dir + "0/",
	} {
		check(sa)
	}
	if len(after(dir+"a")) != 7 || len(after("tbl/_delta_log0")) != 0 || len(after("")) != len(want) {
		t.Fatal("test bug: after")
	}
	// Sub-directories list on their own.
	if got := list(dir+"aa/", ""); !slices.Equal(got, []string{dir + "aa/x"}) {
		t.Errorf("List(%q) = %q", dir+"aa/", got)
	}
	if got := list(dir+"_sidecars/", ""); !slices.Equal(got, sidecars) {
		t.Errorf("List(%q) = %q, want %q", dir+"_sidecars/", got, sidecars)
	}
	// Break in the middle of a page and of the second page.
	for _, stop := range []int{3, opts.PageSize + 2} {
		n := 0
		for _, err := range st.List(ctx, dir, "") {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == stop {
				break
			}
		}
		if n != stop {
			t.Errorf("break after %d: loop ran %d times", stop, n)
		}
	}
	return want
}

// TableRoundTrip creates a partitioned table in st, appends to it 200
// commits from 4 goroutines at once (half of them through one shared
// handle, half each through a handle of its own, as separate processes
// would), checkpoints it, and reads back exactly the rows appended, through
// reopened: a store on the same place as st, as another process would open
// it.
func TableRoundTrip(t *testing.T, st, reopened logstore.Store) {
	t.Helper()
	const writers, commits, rowsPerCommit = 4, 200, 3
	ctx := t.Context()
	name := tableName(st)
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, w STRING, p STRING")
	if err != nil {
		t.Fatal(err)
	}
	shared, err := delta.CreateStore(ctx, name, st, delta.TableSpec{
		Schema:           sch,
		PartitionColumns: []string{"p"},
		Properties:       map[string]string{tableconfig.KeyCheckpointInterval: "50"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		versions []int64
	)
	for w := range writers {
		wg.Go(func() {
			tbl := shared
			if w%2 == 1 {
				var err error
				if tbl, err = delta.OpenStore(ctx, name, st); err != nil {
					t.Error(err)
					return
				}
			}
			for c := range commits / writers {
				var rows [][]schema.Value
				for r := range rowsPerCommit {
					id := int64((w*commits/writers+c)*rowsPerCommit + r)
					rows = append(rows, []schema.Value{schema.LongValue(id), schema.StringValue(fmt.Sprint("w", w)), schema.StringValue(fmt.Sprint(id % 3))})
				}
				res, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{})
				if err != nil {
					t.Errorf("writer %d, commit %d: %v", w, c, err)
					return
				}
				mu.Lock()
				versions = append(versions, res.Version)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	slices.Sort(versions)
	for i, v := range versions {
		if v != int64(i+1) {
			t.Fatalf("commit versions %v: want 1..%d, each once", versions, commits)
		}
	}
	cv, err := shared.Checkpoint(ctx)
	if err != nil || cv != commits {
		t.Fatalf("Checkpoint = %d, %v; want %d", cv, err, commits)
	}
	for _, key := range []string{"_delta_log/_last_checkpoint", fmt.Sprintf("_delta_log/%020d.checkpoint.parquet", cv)} {
		if _, err := reopened.Stat(ctx, key); err != nil {
			t.Errorf("after Checkpoint: %v", err)
		}
	}
	// Read through a fresh handle, so the checkpoint is what it starts from.
	tbl, err := delta.OpenStore(ctx, tableName(reopened), reopened)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != commits || snap.Segment().Checkpoint == nil {
		t.Errorf("snapshot at %d, segment %+v; want version %d from a checkpoint", snap.Version(), snap.Segment(), commits)
	}
	if n, err := snap.NumFiles(ctx); err != nil || n != commits*rowsPerCommit {
		t.Errorf("snapshot holds %d files (%v), want one a partition a commit: %d", n, err, commits*rowsPerCommit)
	}
	ids := ScanIDs(t, tbl, snap)
	if len(ids) != commits*rowsPerCommit {
		t.Fatalf("scan returned %d rows, want %d", len(ids), commits*rowsPerCommit)
	}
	for i, id := range ids {
		if id != int64(i) {
			t.Fatalf("scan ids: position %d holds %d", i, id)
		}
	}
}

// ScanIDs returns the "id" column of a full scan of snap, sorted.
func ScanIDs(t *testing.T, tbl *delta.Table, snap *delta.Snapshot) []int64 {
	t.Helper()
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for row, err := range s.Rows(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		v, ok := row.Get("id")
		if !ok {
			t.Fatal("row without id")
		}
		ids = append(ids, v.Int64())
	}
	slices.Sort(ids)
	return ids
}

// tableName is the name a table over st is opened with: its URI when the
// store has one.
func tableName(st logstore.Store) string {
	if u, ok := st.(interface{ URI() string }); ok {
		return u.URI()
	}
	return fmt.Sprintf("%T", st)
}

// CorpusTables are the corpus tables Corpus uploads.
var CorpusTables = []string{
	"golden/checkpoint/delta",
	"kernel-rs/table-with-dv-small",
	"golden/dv-with-columnmapping/delta",
	"kernel-rs/v2-checkpoints-parquet-with-last-checkpoint",
}

// Testdata returns the shared corpus (see testutil.CorpusDir).
func Testdata(t *testing.T) string { return testutil.CorpusDir(t) }

// Corpus uploads each of CorpusTables with Put to a store from newStore,
// and reads it through the backend: the same version, files, sizes and
// rows as from disk. Some corpus tables keep only their log; their scans
// must fail alike.
func Corpus(t *testing.T, newStore func(t *testing.T) logstore.Store) {
	root := Testdata(t)
	for _, name := range CorpusTables {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			dir := filepath.Join(root, filepath.FromSlash(name))
			if _, err := os.Stat(dir); err != nil {
				if os.Getenv("CI") != "" {
					t.Fatal(err)
				}
				t.Skip(err)
			}
			st := newStore(t)
			n := 0
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				n++
				return st.Put(ctx, filepath.ToSlash(rel), data)
			})
			if err != nil {
				t.Fatal(err)
			}
			want := describe(t, "disk", func() (*delta.Table, error) { return delta.Open(ctx, dir) })
			got := describe(t, "store", func() (*delta.Table, error) { return delta.OpenStore(ctx, tableName(st), st) })
			if got != want {
				t.Errorf("through %T: %+v; from disk: %+v", st, got, want)
			}
			t.Logf("%d objects; %+v", n, got)
		})
	}
}

// summary is what Corpus compares between a table on disk and in a store.
type summary struct {
	Version, Files, Bytes, Rows int64
	ScanFails                   bool
}

func describe(t *testing.T, where string, open func() (*delta.Table, error)) summary {
	t.Helper()
	ctx := t.Context()
	tbl, err := open()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sum := summary{Version: snap.Version()}
	if sum.Files, err = snap.NumFiles(ctx); err != nil {
		t.Fatal(err)
	}
	for f, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		sum.Bytes += f.Size
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range s.Rows(ctx) {
		if err != nil {
			t.Logf("%s: scan: %v", where, err)
			sum.ScanFails = true
			break
		}
		sum.Rows++
	}
	return sum
}
