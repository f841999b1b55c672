package txn_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/testutil/faultstore"
	"github.com/godelta/delta/txn"
)

// newTableActions returns the protocol and metadata of a new test table;
// ict enables in-commit timestamps.
func newTableActions(ict bool) (actions.Protocol, actions.Metadata) {
	p := actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	conf := map[string]string{}
	if ict {
		p = actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{actions.FeatureInCommitTimestamp}}
		conf["delta.enableInCommitTimestamps"] = "true"
	}
	created := int64(1_700_000_000_000)
	return p, actions.Metadata{ID: "new-table", Format: actions.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString: testSchema, PartitionColumns: []string{}, Configuration: conf, CreatedTime: &created}
}

func beginCreate(store logstore.Store, opts txn.Options, ict bool) *txn.Transaction {
	p, m := newTableActions(ict)
	tx := txn.BeginCreate(store, opts)
	tx.SetProtocol(p)
	tx.SetMetadata(m)
	return tx
}

// TestBeginCreate: version 0 is written as Spark writes CREATE TABLE.
func TestBeginCreate(t *testing.T) {
	for _, b := range stores {
		for _, ict := range []bool{false, true} {
			t.Run(b.name+"/ict="+strconv.FormatBool(ict), func(t *testing.T) {
				ctx := context.Background()
				store := b.new(t)
				tx := beginCreate(store, txn.Options{EngineInfo: "test", OperationParameters: map[string]any{"isManaged": "false"}}, ict)
				if tx.Snapshot() != nil {
					t.Fatal("a new table's transaction has a snapshot")
				}
				res, err := tx.Commit(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if res.Version != 0 || res.Attempts != 1 || !res.Timestamp.Equal(time.UnixMilli(1_700_000_000_000)) || res.PostCommit.Checkpoint {
					t.Fatalf("result %+v", res)
				}
				acts := readCommit(t, store, 0)
				if len(acts) != 3 || acts[0].CommitInfo == nil || acts[1].Protocol == nil || acts[2].Metadata == nil {
					t.Fatalf("commit 0 holds %+v; want commitInfo, protocol, metaData", acts)
				}
				ci := acts[0].CommitInfo
				switch {
				case ci.Operation != "CREATE TABLE", ci.ReadVersion != nil, ci.IsolationLevel != "Serializable",
					ci.IsBlindAppend == nil || !*ci.IsBlindAppend, ci.TxnID != tx.ID(), ci.EngineInfo != "test",
					ci.OperationParameters["isManaged"] != "false",
					ci.Timestamp == nil || *ci.Timestamp != 1_700_000_000_000:
					t.Fatalf("commitInfo %+v", ci)
				case ict && (ci.InCommitTimestamp == nil || *ci.InCommitTimestamp != *ci.Timestamp):
					t.Fatalf("in-commit timestamp %v, want %d", ci.InCommitTimestamp, *ci.Timestamp)
				case !ict && ci.InCommitTimestamp != nil:
					t.Fatalf("in-commit timestamp %d on a table without them", *ci.InCommitTimestamp)
				}
				if snap := load(t, store); snap.Version() != 0 || snap.Metadata().ID != "new-table" {
					t.Fatalf("loaded version %d, table %q", snap.Version(), snap.Metadata().ID)
				}
			})
		}
	}
}

// TestBeginCreateExists: any log file, not only a commit 0, makes the table
// exist; a second creator, whoever it is, gets ErrTableExists.
func TestBeginCreateExists(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, store logstore.Store)
	}{
		{"commit 0", func(t *testing.T, store logstore.Store) { createTable(t, store, tableSpec{}) }},
		{"checkpoint only", func(t *testing.T, store logstore.Store) {
			if err := store.PutIfAbsent(ctx, "_delta_log/00000000000000000010.checkpoint.parquet", []byte("x")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := stores[0].new(t)
			c.setup(t, store)
			_, err := beginCreate(store, txn.Options{}, false).Commit(ctx)
			if !errors.Is(err, txn.ErrTableExists) || !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Fatalf("Commit: %v, want ErrTableExists", err)
			}
		})
	}
}

// TestBeginCreateRace: of concurrent creators exactly one wins, the others
// get ErrTableExists.
func TestBeginCreateRace(t *testing.T) {
	for _, b := range stores {
		t.Run(b.name, func(t *testing.T) {
			store := b.new(t)
			errs := make([]error, 8)
			var wg sync.WaitGroup
			for i := range errs {
				wg.Go(func() { _, errs[i] = beginCreate(store, txn.Options{}, false).Commit(context.Background()) })
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, txn.ErrTableExists):
					t.Errorf("unexpected error %v", err)
				}
			}
			if won != 1 {
				t.Fatalf("%d creators won", won)
			}
		})
	}
}

// TestBeginCreateAmbiguousPut: a create whose put landed but reported an
// error finds its own commit 0 and succeeds; one whose read-back fails
// says the outcome is unknown, not that the table exists.
func TestBeginCreateAmbiguousPut(t *testing.T) {
	put, get := faultstore.OpPutIfAbsent, faultstore.OpGet|faultstore.OpGetRange
	for _, c := range []struct {
		name    string
		rules   []faultstore.Rule
		wantErr error
	}{
		{"put landed, error", []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.After, Nth: 1}}, nil},
		{"put refused", []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.Before, Nth: 1}}, nil},
		{"put landed, read-back fails", []faultstore.Rule{
			{Ops: put, Key: commitKeys, Kind: faultstore.After, Nth: 1},
			{Ops: get, Key: commitKeys, Kind: faultstore.Before},
		}, txn.ErrCommitUnknown},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner := stores[0].new(t)
			fs := faultstore.New(inner, 1)
			for _, r := range c.rules {
				fs.AddRule(r)
			}
			tx := beginCreate(fs, txn.Options{}, false)
			res, err := tx.Commit(context.Background())
			switch {
			case c.wantErr == nil && (err != nil || res.Version != 0):
				t.Fatalf("Commit: %+v, %v", res, err)
			case c.wantErr != nil && (!errors.Is(err, c.wantErr) || errors.Is(err, txn.ErrTableExists)):
				t.Fatalf("Commit: %v, want %v", err, c.wantErr)
			}
			checkCommitOutcome(t, inner, tx.ID(), res.Version, err)
		})
	}
}

// TestBeginCreateInvalid: a new table needs a protocol and a metaData and
// has nothing to remove.
func TestBeginCreateInvalid(t *testing.T) {
	p, m := newTableActions(false)
	for _, c := range []struct {
		name  string
		stage func(tx *txn.Transaction)
	}{
		{"no protocol", func(tx *txn.Transaction) { tx.SetMetadata(m) }},
		{"no metadata", func(tx *txn.Transaction) { tx.SetProtocol(p) }},
		{"remove", func(tx *txn.Transaction) {
			tx.SetProtocol(p)
			tx.SetMetadata(m)
			tx.Remove(actions.Remove{Path: "x.parquet", DataChange: true})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := stores[0].new(t)
			tx := txn.BeginCreate(store, txn.Options{})
			c.stage(tx)
			if _, err := tx.Commit(context.Background()); !errors.Is(err, deltaerr.ErrInvalidArgument) || errors.Is(err, txn.ErrTableExists) {
				t.Fatalf("Commit: %v, want ErrInvalidArgument", err)
			}
			if versions := commitVersions(t, store); len(versions) != 0 {
				t.Fatalf("a refused create wrote %v", versions)
			}
		})
	}
}

// TestCommitResult: the result carries the version, the commitInfo
// timestamp and the attempts, counting lost races.
func TestCommitResult(t *testing.T) {
	ctx := context.Background()
	store := stores[0].new(t)
	createTable(t, store, tableSpec{})
	snap := load(t, store)
	at := time.UnixMilli(1_800_000_000_000)
	// Two winners get there first: the third attempt lands.
	for range 2 {
		w := txn.Begin(load(t, store), txn.Options{})
		w.Add(addFile("w"+time.Now().String(), "b", 1))
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tx := txn.Begin(snap, txn.Options{Clock: func() time.Time { return at }})
	tx.Add(addFile("mine", "a", 1))
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 3 || res.Attempts != 2 || !res.Timestamp.Equal(at) {
		t.Fatalf("result %+v; want version 3 after 2 attempts at %v", res, at)
	}
	ci := readCommit(t, store, 3)[0].CommitInfo
	if ci == nil || *ci.Timestamp != at.UnixMilli() {
		t.Fatalf("commitInfo %+v", ci)
	}
}

// TestPostCommitFailure: a checkpoint that fails leaves the commit standing
// and is reported in the result, not as an error.
func TestPostCommitFailure(t *testing.T) {
	ctx := context.Background()
	inner := stores[0].new(t)
	createTable(t, inner, tableSpec{config: map[string]string{"delta.checkpointInterval": "1"}})
	fs := faultstore.New(inner, 1)
	fs.AddRule(faultstore.Rule{Ops: faultstore.OpPut | faultstore.OpPutIfAbsent, Key: "_delta_log/*.checkpoint*", Kind: faultstore.Before})
	tx := txn.Begin(load(t, fs), txn.Options{})
	tx.Add(addFile("mine", "a", 1))
	res, err := tx.Commit(ctx)
	if err != nil || !res.PostCommit.Checkpoint {
		t.Fatalf("Commit: %+v, %v; want a checkpoint due", res, err)
	}
	txn.PostCommit(ctx, &res)
	w := res.PostCommit
	if !w.Ran || w.Checkpointed || !errors.Is(w.Err, faultstore.ErrInjected) {
		t.Fatalf("post-commit %+v; want a failed checkpoint", w)
	}
	if snap := load(t, inner); snap.Version() != 1 || hasCheckpoint(t, inner, 1) {
		t.Fatalf("version %d (checkpoint %v); want the commit without a checkpoint", snap.Version(), hasCheckpoint(t, inner, 1))
	}
	// Work that ran is not run again.
	txn.PostCommit(ctx, &res)
	if !reflect.DeepEqual(res.PostCommit, w) {
		t.Fatalf("post-commit ran twice: %+v", res.PostCommit)
	}
}
