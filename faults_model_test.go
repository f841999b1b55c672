package delta

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil/faultstore"
	"github.com/godelta/delta/txn"
)

// The model test: writers and readers run at once against one table
// through a faultstore that fails, delays and lags calls at random, and
// the outcome is checked against a model built from what the writers were
// told:
//
//   - every acknowledged append is in the log exactly once, at the version
//     it was told;
//   - an append told ErrCommitUnknown is there at most once; one told any
//     other error is not there at all;
//   - the log's versions are contiguous, and every commit is one of ours;
//   - every snapshot a reader loaded (its files) and every scan it ran (its
//     rows) equals the model at that version.
//
// By default it runs two short trials. GODELTA_SOAK=3m runs trials with
// fresh seeds for that long and prints the figures; GODELTA_SEED=N runs
// only the trial with seed N (a failure prints its seed).

const (
	envSoak = "GODELTA_SOAK"
	envSeed = "GODELTA_SEED"
)

// modelFigures are the totals over trials.
type modelFigures struct {
	trials, acked, unknown, failed, lost, duplicated int64
	unknownLanded                                    int64
	snapshots, scans, readErrors                     int64
	faults                                           map[faultstore.Kind]int64
}

func (f *modelFigures) String() string {
	var kinds []string
	for _, k := range faultstore.Kinds() {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, f.faults[k]))
	}
	return fmt.Sprintf("trials=%d commits: acknowledged=%d unknown=%d (landed %d) failed=%d lost=%d duplicated=%d; "+
		"reader snapshots checked=%d scans checked=%d reader errors=%d; faults: %s",
		f.trials, f.acked, f.unknown, f.unknownLanded, f.failed, f.lost, f.duplicated, f.snapshots, f.scans, f.readErrors, strings.Join(kinds, " "))
}

func TestFaultsModel(t *testing.T) {
	figs := &modelFigures{faults: map[faultstore.Kind]int64{}}
	switch {
	case os.Getenv(envSeed) != "":
		seed, err := strconv.ParseUint(os.Getenv(envSeed), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		modelTrial(t, seed, faultBackends[seed%2].new(t), 6, 12, figs)
	case os.Getenv(envSoak) != "":
		d, err := time.ParseDuration(os.Getenv(envSoak))
		if err != nil {
			t.Fatal(err)
		}
		end := time.Now().Add(d)
		seed := uint64(time.Now().UnixNano())
		for time.Now().Before(end) && !t.Failed() {
			seed++
			b := faultBackends[seed%2]
			t.Run(fmt.Sprintf("seed=%d/%s", seed, b.name), func(t *testing.T) {
				modelTrial(t, seed, b.new(t), 6, 12, figs)
			})
		}
	default:
		for _, seed := range []uint64{1, 2} {
			b := faultBackends[seed%2]
			t.Run(fmt.Sprintf("seed=%d/%s", seed, b.name), func(t *testing.T) {
				modelTrial(t, seed, b.new(t), 4, 6, figs)
			})
		}
	}
	t.Log(figs)
	if figs.lost != 0 || figs.duplicated != 0 {
		t.Errorf("lost %d, duplicated %d", figs.lost, figs.duplicated)
	}
}

// TestFaultsModelCloud runs the model test through the fault-injecting
// store over each cloud backend on its loopback server: one short trial
// each by default; GODELTA_SOAK_CLOUD=<duration> runs trials on each
// backend for that long.
func TestFaultsModelCloud(t *testing.T) {
	soak := time.Duration(0)
	if v := os.Getenv("GODELTA_SOAK_CLOUD"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		soak = d
	}
	for _, b := range cloudBackends {
		t.Run(b.name, func(t *testing.T) {
			open := b.start(t)
			figs := &modelFigures{faults: map[faultstore.Kind]int64{}}
			end := time.Now().Add(soak)
			seed := uint64(7)
			if soak > 0 {
				seed = uint64(time.Now().UnixNano())
			}
			for first := true; first || time.Now().Before(end) && !t.Failed(); first = false {
				seed++
				store, err := open(fmt.Sprintf("model-%d/t", seed))
				if err != nil {
					t.Fatal(err)
				}
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					modelTrial(t, seed, store, 4, 6, figs)
				})
			}
			t.Log(figs)
			if figs.lost != 0 || figs.duplicated != 0 {
				t.Errorf("lost %d, duplicated %d", figs.lost, figs.duplicated)
			}
		})
	}
}

// modelOp is one append a writer tried.
type modelOp struct {
	id      string
	ids     []int64
	deleted []int64 // a DELETE of these ids, instead of an append of ids
	version int64   // when acknowledged
	err     error
}

// errNothingDeleted marks a DELETE of the model test that matched no row
// and so committed nothing (its rows' append had not landed after all).
var errNothingDeleted = errors.New("nothing deleted")

// readerSaw is one observation of a reader.
type readerSaw struct {
	version int64
	files   []string // canonical paths
	rows    []int64  // nil unless scanned
}

func modelTrial(t *testing.T, seed uint64, inner logstore.Store, writers, opsPerWriter int, figs *modelFigures) {
	ctx := context.Background()
	t.Logf("seed %d (replay with %s=%d)", seed, envSeed, seed)
	defer func() {
		if t.Failed() {
			t.Logf("FAILED with seed %d: replay with %s=%d go test -run TestFaultsModel .", seed, envSeed, seed)
		}
	}()
	props := map[string]string{"delta.checkpointInterval": "5"}
	if seed%3 == 1 { // DELETEs by deletion vectors, else by copy-on-write
		props["delta.enableDeletionVectors"] = "true"
	}
	faultTable(t, inner, props, 0, 0)
	rules := []faultstore.Rule{
		{Ops: faultstore.OpPutIfAbsent, Kind: faultstore.After, Prob: 0.08},
		{Ops: faultstore.OpPutIfAbsent, Kind: faultstore.Deadline, Prob: 0.04},
		{Ops: faultstore.Writes, Kind: faultstore.Before, Prob: 0.03},
		{Ops: faultstore.OpPut | faultstore.OpPutIfAbsent, Kind: faultstore.Lag, Prob: 0.15, Lag: 2},
		{Kind: faultstore.Transient, Prob: 0.03},
		{Kind: faultstore.Delay, Prob: 0.02, Delay: 200 * time.Microsecond},
	}
	fs := faultstore.New(inner, seed, rules...)

	var mu sync.Mutex
	var ops []*modelOp
	var saw []readerSaw
	var readErrs int64
	done := make(chan struct{})
	var wg, rwg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			tbl, err := OpenStore(ctx, "model", fs)
			for err != nil {
				tbl, err = OpenStore(ctx, "model", fs)
			}
			var mine []int64 // ids this writer appended, acknowledged, not yet deleted
			for k := range opsPerWriter {
				op := &modelOp{id: fmt.Sprintf("w%d-%d", w, k)}
				if k%4 == 3 && len(mine) > 0 {
					// A DELETE of some of this writer's rows.
					n := min(len(mine), 1+rng.IntN(2))
					op.deleted, mine = mine[:n:n], mine[n:]
					var in []string
					for _, id := range op.deleted {
						in = append(in, strconv.FormatInt(id, 10))
					}
					// Serializable: a DELETE lands at v only if it read
					// the table of v-1, as the model assumes (a lagging
					// listing may show it a version without its writer's
					// last append, which WriteSerializable would let it
					// commit over, as Spark does).
					res, err := tbl.Delete(ctx, "id IN ("+strings.Join(in, ", ")+")",
						DMLOptions{Txn: TxnOptions{UserMetadata: op.id, Isolation: txn.Serializable}, ConflictRetries: 5})
					op.version, op.err = res.Commit.Version, err
					if err == nil && !res.Committed {
						op.err = errNothingDeleted
					}
					mu.Lock()
					ops = append(ops, op)
					mu.Unlock()
					continue
				}
				var rs [][]schema.Value
				for r := range 1 + rng.IntN(3) {
					id := int64(w)<<32 | int64(k)<<8 | int64(r)
					op.ids = append(op.ids, id)
					rs = append(rs, []schema.Value{schema.LongValue(id), schema.StringValue(fmt.Sprintf("p%d", rng.IntN(3)))})
				}
				res, err := tbl.AppendRows(ctx, rs, WriteOptions{Txn: TxnOptions{UserMetadata: op.id}})
				op.version, op.err = res.Version, err
				if err == nil {
					mine = append(mine, op.ids...)
				}
				mu.Lock()
				ops = append(ops, op)
				mu.Unlock()
			}
		}()
	}
	for r := range 2 {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			tbl := &Table{uri: "model", store: fs}
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				s, err := readOnce(ctx, tbl, (i+r)%2 == 0)
				mu.Lock()
				if err != nil {
					readErrs++
				} else {
					saw = append(saw, s)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(done)
	rwg.Wait()
	fs.SetEnabled(false)

	// The log, read without faults.
	files, err := deltalog.List(ctx, inner, 0)
	if err != nil {
		t.Fatal(err)
	}
	var versions []int64
	for _, f := range files {
		if f.Kind == deltalog.Commit {
			versions = append(versions, f.Version)
		}
	}
	for i, v := range versions {
		if v != int64(i) {
			t.Fatalf("log versions are not contiguous: %v", versions)
		}
	}
	byOp := map[string][]int64{}
	filesAt := make([][]string, len(versions)) // live files after each version
	var live []string
	for _, v := range versions {
		data, err := inner.Get(ctx, deltalog.CommitKey(v))
		if err != nil {
			t.Fatal(err)
		}
		acts, err := actions.DecodeCommit(deltalog.CommitKey(v), data)
		if err != nil {
			t.Fatal(err)
		}
		// Removes first: a DELETE by deletion vector removes a file and
		// adds it again, by the same path, in one commit.
		for _, a := range acts {
			if a.Remove != nil {
				p := CanonicalPath(a.Remove.Path)
				i := slices.Index(live, p)
				if i < 0 {
					t.Fatalf("version %d removes %s, which is not in the table", v, p)
				}
				live = slices.Delete(live, i, i+1)
			}
		}
		for _, a := range acts {
			switch {
			case a.CommitInfo != nil && v > 0:
				byOp[a.CommitInfo.UserMetadata] = append(byOp[a.CommitInfo.UserMetadata], v)
			case a.Add != nil:
				live = append(live, CanonicalPath(a.Add.Path))
			}
		}
		filesAt[v] = slices.Sorted(slices.Values(live))
	}
	rowsAt := make([][]int64, len(versions))
	opAt := make([]*modelOp, len(versions))
	known := map[string]bool{}
	var acked, unknown, failed, lost, dup, unknownLanded int64
	for _, op := range ops {
		known[op.id] = true
		at := byOp[op.id]
		if len(at) > 1 {
			dup++
			t.Errorf("%s is in the log %d times: %v", op.id, len(at), at)
		}
		switch {
		case op.err == nil:
			acked++
			if len(at) == 0 {
				lost++
				t.Errorf("%s was acknowledged at version %d but is not in the log", op.id, op.version)
			} else if at[0] != op.version {
				t.Errorf("%s was acknowledged at version %d but is at %v", op.id, op.version, at)
			}
		case errors.Is(op.err, txn.ErrCommitUnknown):
			unknown++
			if len(at) > 0 {
				unknownLanded++
			}
		default:
			failed++
			if errors.Is(op.err, logstore.ErrAlreadyExists) {
				t.Errorf("%s: a fault surfaced as ErrAlreadyExists: %v", op.id, op.err)
			}
			if len(at) > 0 {
				t.Errorf("%s failed for sure (%v) but is in the log at %v", op.id, op.err, at)
			}
		}
		if len(at) > 0 {
			opAt[at[0]] = op
		}
	}
	var delLanded, delTried int
	for _, op := range ops {
		if op.deleted != nil {
			delTried++
			if len(byOp[op.id]) > 0 {
				delLanded++
			}
		}
	}
	t.Logf("DELETEs: %d tried, %d in the log", delTried, delLanded)
	for id, at := range byOp {
		if !known[id] {
			t.Errorf("version %v was committed by %q, which no writer tried", at, id)
		}
	}
	for v := range versions {
		if v > 0 {
			rowsAt[v] = slices.Clone(rowsAt[v-1])
			if op := opAt[v]; op != nil {
				rowsAt[v] = append(rowsAt[v], op.ids...)
				rowsAt[v] = slices.DeleteFunc(rowsAt[v], func(id int64) bool { return slices.Contains(op.deleted, id) })
			}
			slices.Sort(rowsAt[v])
		}
	}
	for _, s := range saw {
		if s.version >= int64(len(versions)) {
			t.Fatalf("a reader saw version %d; the log ends at %d", s.version, len(versions)-1)
		}
		if !slices.Equal(s.files, filesAt[s.version]) {
			t.Fatalf("a reader's snapshot at version %d has files %v, want %v", s.version, s.files, filesAt[s.version])
		}
		if s.rows != nil && !slices.Equal(s.rows, rowsAt[s.version]) {
			t.Fatalf("a reader's scan at version %d has rows %v, want %v", s.version, s.rows, rowsAt[s.version])
		}
	}
	// Every version reads its rows afterwards, without faults.
	for v := range versions {
		if v%4 != 0 && v != len(versions)-1 {
			continue
		}
		got, err := tableRows(ctx, &Table{uri: "model", store: inner}, int64(v))
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if !slices.Equal(got, rowsAt[v]) && !(len(got) == 0 && len(rowsAt[v]) == 0) {
			t.Fatalf("version %d reads %v, want %v", v, got, rowsAt[v])
		}
	}

	mu.Lock()
	defer mu.Unlock()
	figs.trials++
	figs.acked += acked
	figs.unknown += unknown
	figs.unknownLanded += unknownLanded
	figs.failed += failed
	figs.lost += lost
	figs.duplicated += dup
	figs.readErrors += readErrs
	for _, s := range saw {
		figs.snapshots++
		if s.rows != nil {
			figs.scans++
		}
	}
	for k, n := range fs.Counts() {
		figs.faults[k] += n
	}
}

// readOnce loads the latest snapshot and, when scan is set, reads its rows.
func readOnce(ctx context.Context, tbl *Table, scan bool) (readerSaw, error) {
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return readerSaw{}, err
	}
	s := readerSaw{version: snap.Version(), files: []string{}}
	for f, err := range snap.Files(ctx) {
		if err != nil {
			return readerSaw{}, err
		}
		s.files = append(s.files, CanonicalPath(f.Path))
	}
	slices.Sort(s.files)
	if !scan {
		return s, nil
	}
	sc, err := tbl.Scan(snap, ScanOptions{Columns: []string{"id"}})
	if err != nil {
		return readerSaw{}, err
	}
	s.rows = []int64{}
	for row, err := range sc.Rows(ctx) {
		if err != nil {
			return readerSaw{}, err
		}
		s.rows = append(s.rows, row.Values()[0].Int64())
	}
	slices.Sort(s.rows)
	return s, nil
}
