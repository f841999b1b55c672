package beamio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/write"
)

// genRange is a range of ids for genFn.
type genRange struct{ From, To int64 }

// genFn emits the rows of ids From to To-1 (see testRow).
type genFn struct{}

func (genFn) ProcessElement(r genRange, emit func(Row)) {
	for id := r.From; id < r.To; id++ {
		emit(Row{Values: testRow(id)})
	}
}

// testRow is the row of id in the test table: id, part, v, name.
func testRow(id int64) []schema.Value {
	return []schema.Value{
		schema.LongValue(id),
		schema.StringValue(fmt.Sprint("p", id%4)),
		schema.DoubleValue(float64(id) * 0.5),
		schema.StringValue(fmt.Sprint("n", id)),
	}
}

// newTable creates the test table: partitioned by part, with a NOT NULL
// column and a CHECK constraint, so that the writers' checks run.
func newTable(t *testing.T) string {
	t.Helper()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, part STRING, v DOUBLE, name STRING")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "table")
	tb, err := delta.Create(context.Background(), dir, delta.TableSpec{
		Schema: sch, PartitionColumns: []string{"part"},
		Properties: map[string]string{"delta.constraints.id_not_negative": "id >= 0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
	return dir
}

// writePipeline writes ids 0 to n-1, generated in chunks spread over the
// workers, with opts, and records the WriteResult under key.
func writePipeline(table string, n int64, key string, opts WriteOptions) *beam.Pipeline {
	p, s := beam.NewPipelineWithRoot()
	var ranges []genRange
	const chunk = 5_000
	for from := int64(0); from < n; from += chunk {
		ranges = append(ranges, genRange{From: from, To: min(from+chunk, n)})
	}
	rows := beam.ParDo(s, genFn{}, beam.Reshuffle(s, beam.CreateList(s, ranges)))
	beam.ParDo0(s, &resultFn{Key: key}, Write(s, table, rows, opts))
	return p
}

// checkTable checks, with the library's scan, that the table holds ids 0
// to n-1 each exactly once with their values, and that every data file
// the log names exists; it returns the number of data files the log names
// and the number of Parquet files under the table root.
func checkTable(t *testing.T, table string, n int64) (named, onDisk int) {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := tb.Scan(snap, delta.ScanOptions{Columns: []string{"id", "part", "v", "name"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, n)
	var rows int64
	for r, err := range sc.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		rows++
		id := r.Values()[0].Int64()
		if id < 0 || id >= n {
			t.Fatalf("row with id %d, not in [0, %d)", id, n)
		}
		if seen[id] {
			t.Fatalf("id %d is in the table twice", id)
		}
		seen[id] = true
		for j, want := range testRow(id) {
			if got := r.Values()[j]; got.String() != want.String() || got.Kind() != want.Kind() {
				t.Fatalf("id %d column %d: %v, want %v", id, j, got, want)
			}
		}
	}
	if rows != n {
		t.Fatalf("%d rows in the table, want %d", rows, n)
	}
	paths := map[string]bool{}
	for add, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		paths[delta.CanonicalPath(add.Path)] = true
	}
	err = filepath.WalkDir(table, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") || strings.Contains(p, "_delta_log") {
			return err
		}
		onDisk++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range paths {
		if _, err := fs.Stat(os.DirFS(table), p); err != nil {
			t.Errorf("the log names %s, which is not in the table: %v", p, err)
		}
	}
	return len(paths), onDisk
}

// commitsOf returns the commits after version 0 and how many of them
// carry a txn of appID.
func commitsOf(t *testing.T, table, appID string) (commits, withTxn int) {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= snap.Version(); v++ {
		data, err := tb.Store().Get(ctx, fmt.Sprintf("_delta_log/%020d.json", v))
		if err != nil {
			t.Fatal(err)
		}
		acts, err := actions.DecodeCommit("commit", data)
		if err != nil {
			t.Fatal(err)
		}
		commits++
		for _, a := range acts {
			if a.Txn != nil && a.Txn.AppID == appID {
				withTxn++
			}
		}
	}
	return commits, withTxn
}

// TestWrite writes rows into a partitioned table on Prism and reads them
// back with the library's scan.
//
// It writes 200,000 rows, to keep CI quick; BEAMIO_WRITE_ROWS=1000000
// writes a million (about 40 s on two cores).
func TestWrite(t *testing.T) {
	n := int64(200_000)
	if v := os.Getenv("BEAMIO_WRITE_ROWS"); v != "" {
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
			t.Fatalf("BEAMIO_WRITE_ROWS=%q: want a positive count", v)
		}
	}
	table := newTable(t)
	key := resultKey(t, "")
	opts := WriteOptions{WriteID: "test-write", Version: 0, Shards: 8}
	if err := run(t, writePipeline(table, n, key, opts)); err != nil {
		t.Fatal(err)
	}
	res := collectedResults(key)
	if len(res) != 1 || !res[0].Committed || res[0].Rows != n || res[0].Version != 1 {
		t.Fatalf("results %+v, want one commit of %d rows at version 1", res, n)
	}
	named, onDisk := checkTable(t, table, n)
	if named != onDisk || int64(named) != res[0].Files {
		t.Errorf("%d files named by the log, %d on disk, %d written", named, onDisk, res[0].Files)
	}
	if c, x := commitsOf(t, table, opts.WriteID); c != 1 || x != 1 {
		t.Errorf("%d commits, %d with the txn; want 1 and 1", c, x)
	}
}

// setHooks installs test hooks until the test ends.
func setHooks(t *testing.T, h testHooks) {
	hooksMu.Lock()
	hooks = h
	hooksMu.Unlock()
	t.Cleanup(func() {
		hooksMu.Lock()
		hooks = testHooks{}
		hooksMu.Unlock()
	})
}

var errInjected = errors.New("injected failure")

// resultKeys numbers the keys resultKey makes.
var resultKeys atomic.Int64

// resultKey returns a key for resultFn that no other run of the test
// shares (go test -count=N runs a test N times in one process).
func resultKey(t *testing.T, suffix string) string {
	return fmt.Sprint(t.Name(), "/", suffix, "#", resultKeys.Add(1))
}

// TestWriteExactlyOnce fails writers after they wrote their files, and a
// committer after its commit landed, then runs the same pipeline again,
// as a restarted pipeline would (Prism fails the job on a failed bundle
// rather than retrying it): every row lands once, the txn is committed
// once, and no file of a failed attempt is named by the log.
func TestWriteExactlyOnce(t *testing.T) {
	const n = 20_000
	tests := []struct {
		name  string
		hooks func(attempts map[string]int, mu *sync.Mutex) testHooks
		// orphans says whether the failed runs leave uncommitted files.
		orphans bool
	}{
		{"writers fail after writing their files", func(attempts map[string]int, mu *sync.Mutex) testHooks {
			return testHooks{afterFiles: func(id string, shard int) error {
				mu.Lock()
				defer mu.Unlock()
				k := fmt.Sprint(id, "/", shard)
				attempts[k]++
				if shard%2 == 1 && attempts[k] == 1 {
					return fmt.Errorf("writer of shard %d: %w", shard, errInjected)
				}
				return nil
			}}
		}, true},
		{"the committer dies between its put and its acknowledgment", func(attempts map[string]int, mu *sync.Mutex) testHooks {
			return testHooks{afterCommit: func(id string, version int) error {
				mu.Lock()
				defer mu.Unlock()
				attempts[id]++
				if attempts[id] == 1 {
					return fmt.Errorf("committer after version %d: %w", version, errInjected)
				}
				return nil
			}}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table := newTable(t)
			var mu sync.Mutex
			setHooks(t, tc.hooks(map[string]int{}, &mu))
			opts := WriteOptions{WriteID: "exactly-once", Version: 7, Shards: 4}
			// Run the pipeline until a run succeeds, in bounded rounds:
			// a run stops at its first failure, so the failures injected
			// into other bundles come in later runs.
			key, failed := "", 0
			for round := 0; ; round++ {
				if round == 8 {
					t.Fatalf("no run succeeded in %d rounds", round)
				}
				key = resultKey(t, fmt.Sprint(round))
				err := run(t, writePipeline(table, n, key, opts))
				if err == nil {
					break
				}
				if !strings.Contains(err.Error(), errInjected.Error()) {
					t.Fatalf("run %d: %v, want the injected failure", round, err)
				}
				failed++
			}
			if failed == 0 {
				t.Fatal("no run failed: no failure was injected")
			}
			named, onDisk := checkTable(t, table, n)
			if c, x := commitsOf(t, table, opts.WriteID); c != 1 || x != 1 {
				t.Errorf("%d commits, %d with the txn; want 1 and 1", c, x)
			}
			if tc.orphans && onDisk <= named {
				t.Errorf("%d files on disk, %d named by the log: the failed run left no files", onDisk, named)
			}
			res := collectedResults(key)
			if len(res) != 1 {
				t.Fatalf("results %+v, want one", res)
			}
			// After a writer failure the commit is this run's; after a
			// committer failure it was the failed run's.
			if res[0].Committed != tc.orphans {
				t.Errorf("the last run committed: %v, want %v", res[0].Committed, tc.orphans)
			}

			// The same pipeline once more: the plan finds the txn and no
			// file is written.
			again := resultKey(t, "again")
			if err := run(t, writePipeline(table, n, again, opts)); err != nil {
				t.Fatal(err)
			}
			if res := collectedResults(again); len(res) != 1 || res[0].Committed || res[0].Files != 0 {
				t.Errorf("a run after the commit: %+v, want nothing written or committed", res)
			}
			if _, onDisk2 := checkTable(t, table, n); onDisk2 != onDisk {
				t.Errorf("a run after the commit wrote %d files", onDisk2-onDisk)
			}
		})
	}
}

// TestCommitTwice runs the committing step twice on the same adds and the
// same plan, as a runner does when it retries the committer after its
// commit landed: the second commits nothing and deletes nothing.
func TestCommitTwice(t *testing.T) {
	ctx := context.Background()
	table := newTable(t)
	tb, err := delta.Open(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adds, err := write.Rows(ctx, snap, rowBatches(rowsOf(0, 1000), 4), write.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var encoded [][]byte
	for i := range adds {
		b, err := actions.EncodeCommit([]actions.Action{{Add: &adds[i]}})
		if err != nil {
			t.Fatal(err)
		}
		encoded = append(encoded, b)
	}
	plan := writePlan{SnapshotVersion: snap.Version()}
	opts := WriteOptions{WriteID: "twice", Version: 3}
	for attempt, wantCommitted := range []bool{true, false} {
		var got []WriteResult
		err := (&commitFn{Table: table, Opts: opts}).ProcessElement(ctx, 0, sliceIter(encoded), plan, func(r WriteResult) { got = append(got, r) })
		if err != nil {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		if len(got) != 1 || got[0].Committed != wantCommitted || got[0].Rows != 1000 {
			t.Fatalf("attempt %d: %+v, want committed %v of 1000 rows", attempt, got, wantCommitted)
		}
	}
	if c, x := commitsOf(t, table, opts.WriteID); c != 1 || x != 1 {
		t.Errorf("%d commits, %d with the txn; want 1 and 1", c, x)
	}
	checkTable(t, table, 1000)
}

// rowsOf is an iterator of the test rows of ids from to to-1, as a
// GroupByKey hands them to a DoFn.
func rowsOf(from, to int64) func(*Row) bool {
	id := from
	return func(r *Row) bool {
		if id >= to {
			return false
		}
		*r = Row{Values: testRow(id)}
		id++
		return true
	}
}

func sliceIter(xs [][]byte) func(*[]byte) bool {
	i := 0
	return func(b *[]byte) bool {
		if i >= len(xs) {
			return false
		}
		*b = xs[i]
		i++
		return true
	}
}

// TestWriteConstraint writes a row that breaks the table's CHECK
// constraint: the writer's row checks fail the pipeline, and nothing is
// committed.
func TestWriteConstraint(t *testing.T) {
	table := newTable(t)
	p, s := beam.NewPipelineWithRoot()
	rows := beam.CreateList(s, []Row{{Values: testRow(1)}, {Values: []schema.Value{
		schema.LongValue(-1), schema.StringValue("p1"), {}, {}}}})
	beam.ParDo0(s, &resultFn{Key: t.Name()}, Write(s, table, rows, WriteOptions{WriteID: "bad", Shards: 1}))
	err := run(t, p)
	if err == nil || !strings.Contains(err.Error(), "id_not_negative") {
		t.Fatalf("run: %v, want the CHECK constraint id_not_negative broken", err)
	}
	if c, _ := commitsOf(t, table, "bad"); c != 0 {
		t.Errorf("%d commits, want none", c)
	}
}
