package delta

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil/faultstore"
	"github.com/godelta/delta/txn"
)

// Crash tests, in the manner of bbolt's failpoint tests: run one operation
// (an append, a checkpoint, a log cleanup) against a faultstore that
// crashes at its Nth storage call, for every N until the operation
// finishes before the crash; then open the table again on the store
// underneath, as a new process would, and check that every version that
// should be there opens and reads exactly the rows it had before.

var faultBackends = []struct {
	name string
	new  func(t *testing.T) logstore.Store
}{
	{"memory", func(t *testing.T) logstore.Store { return memory.New() }},
	{"local", func(t *testing.T) logstore.Store {
		s, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

// faultTable creates a table (id BIGINT NOT NULL, p STRING, partitioned by
// p) on store with commits appends of rows each, and returns the rows at
// every version.
func faultTable(t *testing.T, store logstore.Store, props map[string]string, commits, rows int) (*Table, [][]int64) {
	t.Helper()
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, p STRING")
	if err != nil {
		t.Fatal(err)
	}
	if props == nil {
		props = map[string]string{}
	}
	tbl, err := CreateStore(ctx, "faulty", store, TableSpec{Schema: sch, PartitionColumns: []string{"p"}, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	model := [][]int64{nil}
	next := int64(0)
	for c := range commits {
		var rs [][]schema.Value
		var ids []int64
		for range rows {
			rs = append(rs, []schema.Value{schema.LongValue(next), schema.StringValue(fmt.Sprintf("p%d", c%3))})
			ids = append(ids, next)
			next++
		}
		res, err := tbl.AppendRows(ctx, rs, WriteOptions{Txn: TxnOptions{NoCheckpoint: true}})
		v := res.Version
		if err != nil {
			t.Fatal(err)
		}
		if v != int64(len(model)) {
			t.Fatalf("append %d committed version %d", c, v)
		}
		model = append(model, append(slices.Clone(model[len(model)-1]), ids...))
	}
	return tbl, model
}

// tableRows returns the sorted ids of the table at version v.
func tableRows(ctx context.Context, tbl *Table, v int64) ([]int64, error) {
	snap, err := tbl.SnapshotAt(ctx, v)
	if err != nil {
		return nil, err
	}
	s, err := tbl.Scan(snap, ScanOptions{Columns: []string{"id"}})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for row, err := range s.Rows(ctx) {
		if err != nil {
			return nil, err
		}
		ids = append(ids, row.Values()[0].Int64())
	}
	slices.Sort(ids)
	return ids, nil
}

// checkVersions opens store afresh and checks that every version from
// first to the latest reads the rows of model, and that versions before
// first either read them too or are refused as gone; never other rows.
func checkVersions(t *testing.T, store logstore.Store, model [][]int64, first int64) *Table {
	t.Helper()
	ctx := context.Background()
	tbl, err := OpenStore(ctx, "reopened", store)
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	latest, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatalf("latest snapshot: %v", err)
	}
	if latest.Version() >= int64(len(model)) {
		t.Fatalf("table at version %d, the model has %d versions", latest.Version(), len(model))
	}
	for v := int64(0); v <= latest.Version(); v++ {
		got, err := tableRows(ctx, tbl, v)
		if err != nil {
			if v < first && (errors.Is(err, ErrVersionNotFound) || errors.Is(err, ErrMissingLogFile)) {
				continue
			}
			t.Fatalf("version %d: %v", v, err)
		}
		if !slices.Equal(got, model[v]) {
			t.Fatalf("version %d reads %v, want %v", v, got, model[v])
		}
	}
	if _, err := store.Stat(ctx, deltalog.CommitKey(0)); err == nil {
		validateLog(t, tbl)
	}
	return tbl
}

// sweep runs op against a faultstore over a fresh table that crashes at
// call n (kind Crash or CrashAfter), for n = 1, 2, ... until op completes
// without reaching the crash, and calls check after each crash.
func sweep(t *testing.T, kind faultstore.Kind, setup func(t *testing.T) (logstore.Store, [][]int64),
	op func(ctx context.Context, tbl *Table) error, check func(t *testing.T, inner logstore.Store, model [][]int64, opErr error)) {
	ctx := context.Background()
	for n := 1; ; n++ {
		inner, model := setup(t)
		fs := faultstore.New(inner, uint64(n))
		tbl, err := OpenStore(ctx, "faulty", fs)
		if err != nil {
			t.Fatal(err)
		}
		// Not in the version checksum the post-commit chain writes
		// after the commit landed: a crash there leaves the commit
		// standing, and the operation rightly reports success (the
		// hook's failure is only reported; the txn tests cover it).
		fs.AddRule(faultstore.Rule{Kind: kind, Nth: n, Match: func(key string) bool { return !strings.HasSuffix(key, ".crc") }})
		err = op(ctx, tbl)
		if !fs.Crashed() {
			if err != nil {
				t.Fatalf("crash point %d not reached, yet: %v", n, err)
			}
			t.Logf("%v: %d crash points", kind, n-1)
			return
		}
		if err == nil && kind == faultstore.Crash {
			t.Fatalf("crash at call %d: the operation reported success", n)
		}
		t.Run(fmt.Sprintf("at-%d", n), func(t *testing.T) { check(t, inner, model, err) })
		if t.Failed() {
			t.Fatalf("crash %v at call %d", kind, n)
		}
	}
}

// TestAppendCrashFault: an append crashed at any storage call leaves the
// table at the old version with the old rows (only orphan data files), or,
// when the commit put was done, at the new version with all new rows.
func TestAppendCrashFault(t *testing.T) {
	for _, b := range faultBackends {
		for _, kind := range []faultstore.Kind{faultstore.Crash, faultstore.CrashAfter} {
			t.Run(b.name+"/"+kind.String(), func(t *testing.T) {
				newRows := []int64{1000, 1001, 1002}
				setup := func(t *testing.T) (logstore.Store, [][]int64) {
					store := b.new(t)
					_, model := faultTable(t, store, nil, 2, 3)
					return store, append(model, append(slices.Clone(model[len(model)-1]), newRows...))
				}
				op := func(ctx context.Context, tbl *Table) error {
					var rs [][]schema.Value
					for _, id := range newRows {
						rs = append(rs, []schema.Value{schema.LongValue(id), schema.StringValue("p9")})
					}
					_, err := tbl.AppendRows(ctx, rs, WriteOptions{})
					return err
				}
				sweep(t, kind, setup, op, func(t *testing.T, inner logstore.Store, model [][]int64, opErr error) {
					tbl := checkVersions(t, inner, model, 0)
					snap, err := tbl.Snapshot(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					// The crash hides the outcome from the writer: it
					// must not have said the commit failed for sure
					// when it landed.
					if snap.Version() == int64(len(model)-1) && opErr != nil && !errors.Is(opErr, txn.ErrCommitUnknown) &&
						!errors.Is(opErr, faultstore.ErrCrashed) {
						t.Errorf("the commit landed, but the append said %v", opErr)
					}
				})
			})
		}
	}
}

// TestCheckpointCrashFault: a checkpoint crashed at any point (sidecars
// written but not the checkpoint; the checkpoint but not _last_checkpoint;
// _last_checkpoint half done) leaves every version readable with its rows,
// and the table can be checkpointed and appended to afterwards.
func TestCheckpointCrashFault(t *testing.T) {
	kinds := []struct {
		name  string
		props map[string]string
		opts  checkpoint.WriteOptions
	}{
		{"classic", nil, checkpoint.WriteOptions{}},
		{"v2-sidecars", map[string]string{"delta.checkpointPolicy": "v2"}, checkpoint.WriteOptions{SidecarMinActions: 1, SidecarMaxActions: 2}},
		{"v2-json", map[string]string{"delta.checkpointPolicy": "v2"}, checkpoint.WriteOptions{V2Format: "json"}},
	}
	for _, b := range faultBackends {
		for _, k := range kinds {
			for _, crash := range []faultstore.Kind{faultstore.Crash, faultstore.CrashAfter} {
				t.Run(b.name+"/"+k.name+"/"+crash.String(), func(t *testing.T) {
					setup := func(t *testing.T) (logstore.Store, [][]int64) {
						store := b.new(t)
						_, model := faultTable(t, store, k.props, 4, 2)
						return store, model
					}
					op := func(ctx context.Context, tbl *Table) error {
						snap, err := tbl.Snapshot(ctx)
						if err != nil {
							return err
						}
						_, err = checkpoint.Write(ctx, tbl.Store(), snap, k.opts)
						return err
					}
					sweep(t, crash, setup, op, func(t *testing.T, inner logstore.Store, model [][]int64, _ error) {
						tbl := checkVersions(t, inner, model, 0)
						ctx := context.Background()
						if _, err := tbl.Checkpoint(ctx); err != nil {
							t.Fatalf("checkpoint after the crash: %v", err)
						}
						if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(5000), schema.StringValue("p0")}}, WriteOptions{}); err != nil {
							t.Fatalf("append after the crash: %v", err)
						}
						checkVersions(t, inner, append(model, append(slices.Clone(model[len(model)-1]), 5000)), 0)
					})
				})
			}
		}
	}
}

// TestBrokenCheckpointHintFault: a _last_checkpoint that points at a
// missing, truncated or future checkpoint, or is itself torn, changes no
// version's rows.
func TestBrokenCheckpointHintFault(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		break_ func(t *testing.T, store logstore.Store, cpKey string)
	}{
		{"checkpoint missing", func(t *testing.T, s logstore.Store, cp string) { mustDo(t, s.Delete(ctx, cp)) }},
		{"checkpoint truncated", func(t *testing.T, s logstore.Store, cp string) {
			data, err := s.Get(ctx, cp)
			mustDo(t, err)
			mustDo(t, s.Put(ctx, cp, data[:len(data)/2]))
		}},
		{"checkpoint empty", func(t *testing.T, s logstore.Store, cp string) { mustDo(t, s.Put(ctx, cp, nil)) }},
		{"hint torn", func(t *testing.T, s logstore.Store, _ string) {
			data, err := s.Get(ctx, deltalog.LastCheckpointKey)
			mustDo(t, err)
			mustDo(t, s.Put(ctx, deltalog.LastCheckpointKey, data[:len(data)/2]))
		}},
		{"hint in the future", func(t *testing.T, s logstore.Store, _ string) {
			data, err := deltalog.EncodeLastCheckpoint(deltalog.LastCheckpoint{Version: 99, Size: 3})
			mustDo(t, err)
			mustDo(t, s.Put(ctx, deltalog.LastCheckpointKey, data))
		}},
		{"hint with a bad checksum", func(t *testing.T, s logstore.Store, _ string) {
			mustDo(t, s.Put(ctx, deltalog.LastCheckpointKey, []byte(`{"version":3,"size":4,"checksum":"00"}`)))
		}},
	}
	for _, b := range faultBackends {
		for _, c := range cases {
			t.Run(b.name+"/"+c.name, func(t *testing.T) {
				store := b.new(t)
				tbl, model := faultTable(t, store, nil, 3, 2)
				if _, err := tbl.Checkpoint(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(77), schema.StringValue("p1")}}, WriteOptions{}); err != nil {
					t.Fatal(err)
				}
				model = append(model, append(slices.Clone(model[3]), 77))
				c.break_(t, store, deltalog.ClassicCheckpointKey(3))
				checkVersions(t, store, model, 0)
			})
		}
	}
}

// TestCleanupCrashFault: a log cleanup crashed at any point leaves every
// version from the cut-off checkpoint on readable with its rows, and older
// versions either readable with theirs or refused as gone.
func TestCleanupCrashFault(t *testing.T) {
	old := time.Now().Add(-60 * 24 * time.Hour)
	for _, b := range faultBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			setup := func(t *testing.T) (logstore.Store, [][]int64) {
				store := b.new(t)
				tbl, model := faultTable(t, store, nil, 4, 2)
				if _, err := tbl.Checkpoint(ctx); err != nil {
					t.Fatal(err)
				}
				files, err := deltalog.List(ctx, store, 0)
				mustDo(t, err)
				for _, f := range files {
					age(t, store, f.Key, old)
				}
				for _, id := range []int64{90, 91} {
					if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(id), schema.StringValue("p2")}}, WriteOptions{}); err != nil {
						t.Fatal(err)
					}
					model = append(model, append(slices.Clone(model[len(model)-1]), id))
				}
				return store, model
			}
			sweep(t, faultstore.Crash, setup, func(ctx context.Context, tbl *Table) error {
				res, err := tbl.CleanupLog(ctx, false)
				if err == nil && res.CheckpointVersion != 4 {
					return fmt.Errorf("cleanup kept checkpoint %d, want 4", res.CheckpointVersion)
				}
				return err
			}, func(t *testing.T, inner logstore.Store, model [][]int64, _ error) {
				checkVersions(t, inner, model, 4)
			})
		})
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// age sets the modification time of key to when.
func age(t *testing.T, store logstore.Store, key string, when time.Time) {
	t.Helper()
	if s, ok := logstore.DriverOf[*memory.Store](store); ok {
		data, err := s.Get(context.Background(), key)
		mustDo(t, err)
		s.SetClock(func() time.Time { return when })
		defer s.SetClock(nil)
		mustDo(t, s.Put(context.Background(), key, data))
	} else if s, ok := logstore.DriverOf[*local.Store](store); ok {
		mustDo(t, os.Chtimes(filepath.Join(s.Root(), filepath.FromSlash(key)), when, when))
	} else {
		t.Fatalf("cannot age a %T", store)
	}
}
