package delta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// The concurrency test: writers in this process and in child processes
// (this test binary run again) commit to one local table at once, mixing
// blind appends, exactly-once appends with an application id, partition
// overwrites and compactions that rewrite files without changing data.
// Every writer records each commit it made; the records, replayed in
// version order, must give exactly the rows a final scan returns.

const (
	concGoroutines    = 8
	concProcesses     = 2
	concPerProcess    = 2 // goroutines in each child process
	concPartitions    = 4
	concRowsPerCommit = 5
	childEnv          = "GODELTA_CONCURRENCY_CHILD" // "dir,worker,ops"
)

// commitRecord is one commit a writer made.
type commitRecord struct {
	Version   int64   `json:"version"`
	Kind      string  `json:"kind"` // append, app, overwrite, compact
	Partition string  `json:"partition,omitempty"`
	IDs       []int64 `json:"ids,omitempty"`
	App       string  `json:"app,omitempty"`
	AppVer    int64   `json:"appVersion,omitempty"`
}

func concSchema() *schema.StructType {
	st, err := schema.ParseDDL("id BIGINT NOT NULL, p STRING, w STRING")
	if err != nil {
		panic(err)
	}
	return st
}

func TestConcurrentWriters(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		runChildWorkers(t)
		return
	}
	opsPerWorker := 190 // 12 writers x 190 = 2,280 operations: over 2,000 commits
	if testing.Short() {
		opsPerWorker = 15
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	if _, err := Create(ctx, dir, TableSpec{Schema: concSchema(), PartitionColumns: []string{"p"},
		Properties: map[string]string{"delta.checkpointInterval": "50"}}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var records []commitRecord
	var wg sync.WaitGroup
	errs := make(chan error, concGoroutines+concProcesses)
	for w := range concGoroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs, err := concWorker(ctx, dir, w, opsPerWorker)
			mu.Lock()
			records = append(records, recs...)
			mu.Unlock()
			if err != nil {
				errs <- fmt.Errorf("worker %d: %w", w, err)
			}
		}()
	}
	for p := range concProcesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := concGoroutines + p*concPerProcess
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentWriters$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%d", childEnv, dir, first, opsPerWorker))
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs <- fmt.Errorf("child process %d: %v\n%s", p, err, out)
				return
			}
			data, err := os.ReadFile(filepath.Join(filepath.Dir(dir), fmt.Sprintf("records-%d.json", first)))
			if err != nil {
				errs <- err
				return
			}
			var recs []commitRecord
			if err := json.Unmarshal(data, &recs); err != nil {
				errs <- err
				return
			}
			mu.Lock()
			records = append(records, recs...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	checkConcurrentOutcome(t, dir, records)
}

// runChildWorkers is the body of a child process: its share of writers,
// their records written to a file for the parent.
func runChildWorkers(t *testing.T) {
	parts := strings.Split(os.Getenv(childEnv), ",")
	dir := parts[0]
	first, _ := strconv.Atoi(parts[1])
	ops, _ := strconv.Atoi(parts[2])
	ctx := context.Background()
	var mu sync.Mutex
	var records []commitRecord
	var wg sync.WaitGroup
	for w := first; w < first+concPerProcess; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs, err := concWorker(ctx, dir, w, ops)
			mu.Lock()
			records = append(records, recs...)
			mu.Unlock()
			if err != nil {
				t.Errorf("worker %d: %v", w, err)
			}
		}()
	}
	wg.Wait()
	data, _ := json.Marshal(records)
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), fmt.Sprintf("records-%d.json", first)), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// concWorker runs ops operations as writer w and returns its commits.
// Conflicts that Spark would also report (a compaction racing an
// overwrite of its files) drop the operation; every other error fails.
func concWorker(ctx context.Context, dir string, w, ops int) ([]commitRecord, error) {
	t, err := Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	return concOps(ctx, t, w, ops)
}

// concOps runs ops operations as writer w on t and returns its commits.
func concOps(ctx context.Context, t *Table, w, ops int) ([]commitRecord, error) {
	var recs []commitRecord
	nextID := int64(w) << 32
	appVersion := int64(0)
	app := fmt.Sprintf("app-%d", w)
	rows := func(p string) ([][]schema.Value, []int64) {
		var out [][]schema.Value
		var ids []int64
		for range concRowsPerCommit {
			out = append(out, []schema.Value{schema.LongValue(nextID), schema.StringValue(p), schema.StringValue(app)})
			ids = append(ids, nextID)
			nextID++
		}
		return out, ids
	}
	for op := range ops {
		p := fmt.Sprintf("p%d", (w+op)%concPartitions)
		switch op % 10 {
		case 3: // exactly-once append with an application id
			rs, ids := rows(p)
			appVersion++
			v, err := appAppend(ctx, t, app, appVersion, rs)
			if err != nil {
				return recs, fmt.Errorf("app commit: %w", err)
			}
			recs = append(recs, commitRecord{Version: v, Kind: "app", Partition: p, IDs: ids, App: app, AppVer: appVersion})
		case 6: // overwrite one partition
			rs, ids := rows(p)
			pred, _ := expr.Parse(fmt.Sprintf("p = '%s'", p))
			res, err := t.OverwriteRows(ctx, rs, OverwriteOptions{ReplaceWhere: pred,
				WriteOptions: WriteOptions{Txn: TxnOptions{Isolation: txn.Serializable}}})
			v := res.Version
			if err != nil {
				return recs, fmt.Errorf("overwrite: %w", err)
			}
			recs = append(recs, commitRecord{Version: v, Kind: "overwrite", Partition: p, IDs: ids})
		case 9: // compaction: rewrite a partition's files, no data change
			v, err := compact(ctx, t, p)
			if errors.Is(err, ErrConflict) || errors.Is(err, errNothingToCompact) {
				continue
			}
			if err != nil {
				return recs, fmt.Errorf("compaction: %w", err)
			}
			recs = append(recs, commitRecord{Version: v, Kind: "compact", Partition: p})
		default: // blind append
			rs, ids := rows(p)
			res, err := t.AppendRows(ctx, rs, WriteOptions{})
			v := res.Version
			if err != nil {
				return recs, fmt.Errorf("append: %w", err)
			}
			recs = append(recs, commitRecord{Version: v, Kind: "append", Partition: p, IDs: ids})
		}
	}
	return recs, nil
}

// appAppend commits rows with txn (app, version), retrying on conflicts
// with other writers; the version is asked of the snapshot on each run, so
// a run after a commit that did land would stop, not apply it twice.
func appAppend(ctx context.Context, t *Table, app string, version int64, rows [][]schema.Value) (int64, error) {
	res, err := t.Update(ctx, TxnOptions{Operation: "WRITE"}, func(tx *Transaction) error {
		v, ok, err := tx.TxnVersion(ctx, app)
		if err != nil {
			return err
		}
		if ok && v >= version {
			return fmt.Errorf("app %s version %d is already committed", app, version)
		}
		adds, err := write.Rows(ctx, tx.Snapshot(), Rows(rows), write.Options{})
		if err != nil {
			return err
		}
		tx.Add(adds...)
		rowcheck.Mark(tx) // package write checked the rows
		tx.SetTransaction(app, version)
		return nil
	})
	return res.Version, err
}

var errNothingToCompact = errors.New("nothing to compact")

// compact rewrites the files of partition p as one file, with
// dataChange=false, as OPTIMIZE does.
func compact(ctx context.Context, t *Table, p string) (int64, error) {
	tx, err := t.Begin(ctx, TxnOptions{Operation: "OPTIMIZE"})
	if err != nil {
		return 0, err
	}
	snap := tx.Snapshot()
	var old []*actions.Add
	for f, err := range snap.Files(ctx) {
		if err != nil {
			return 0, err
		}
		if f.PartitionValues["p"] == p {
			old = append(old, f)
		}
	}
	if len(old) < 2 {
		return 0, errNothingToCompact
	}
	keep := func(*actions.Add, int64, []schema.Value) (write.Verdict, []schema.Value, error) {
		return write.Keep, nil, nil
	}
	r, err := write.Rewrite(ctx, snap, old, keep, write.RewriteOptions{Copy: true, NoDataChange: true})
	if err != nil {
		return 0, err
	}
	tx.ReadFiles(r.Read...)
	tx.Remove(r.Removes...)
	adds := r.Adds
	tx.Add(adds...)
	rowcheck.Mark(tx) // package write checked the rows
	res, err := tx.Commit(ctx)
	if err != nil {
		return 0, err
	}
	t.PostCommit(ctx, &res)
	return res.Version, nil
}

// checkConcurrentOutcome checks the table against the writers' records.
func checkConcurrentOutcome(t *testing.T, dir string, records []commitRecord) {
	tbl, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	checkConcurrentTable(t, tbl, records)
}

func checkConcurrentTable(t *testing.T, tbl *Table, records []commitRecord) {
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Versions are contiguous and each was made by exactly one record
	// (the version of compactions and appends alike).
	slices.SortFunc(records, func(a, b commitRecord) int { return int(a.Version - b.Version) })
	for i, r := range records {
		if r.Version != int64(i+1) {
			t.Fatalf("commit records are not versions 1..%d: record %d is version %d (%s)", len(records), i, r.Version, r.Kind)
		}
	}
	if snap.Version() != int64(len(records)) {
		t.Fatalf("table at version %d, %d commits recorded", snap.Version(), len(records))
	}
	// Replay: appends add rows; an overwrite replaces its partition (it ran
	// Serializable, so no append into the partition slipped in between its
	// read and its commit); compactions change nothing.
	want := map[int64]string{} // id -> partition
	apps := map[string]int64{}
	kinds := map[string]int{}
	for _, r := range records {
		kinds[r.Kind]++
		switch r.Kind {
		case "overwrite":
			for id, p := range want {
				if p == r.Partition {
					delete(want, id)
				}
			}
		case "app":
			apps[r.App] = r.AppVer
		}
		for _, id := range r.IDs {
			if _, dup := want[id]; dup {
				t.Fatalf("row %d recorded twice", id)
			}
			want[id] = r.Partition
		}
	}
	t.Logf("%d commits: %v", len(records), kinds)
	s, err := tbl.Scan(snap, ScanOptions{Columns: []string{"id", "p"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	for row, err := range s.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		id, p := row.Values()[0].Int64(), row.Values()[1].String()
		if _, dup := got[id]; dup {
			t.Fatalf("row %d appears twice in the table", id)
		}
		got[id] = p
	}
	if len(got) != len(want) {
		t.Errorf("%d rows in the table, want %d", len(got), len(want))
	}
	for id, p := range want {
		if got[id] != p {
			t.Errorf("row %d: partition %q, want %q", id, got[id], p)
			break
		}
	}
	for app, v := range apps {
		if got, ok, err := snap.TxnVersion(ctx, app); !ok || got != v || err != nil {
			t.Errorf("app %s: txn version %d (%v, %v), want %d", app, got, ok, err, v)
		}
	}
	if kinds["compact"] == 0 || kinds["overwrite"] == 0 || kinds["app"] == 0 {
		t.Errorf("not every kind of commit happened: %v", kinds)
	}
	validateLog(t, tbl)
}
