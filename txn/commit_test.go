package txn_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/txn"
)

// TestAmbiguousPut: a put that fails in a way that may have landed is
// settled by reading the version back, never by a blind retry.
func TestAmbiguousPut(t *testing.T) {
	cases := []struct {
		name        string
		fail        func(n int) fault
		getFail     func(key string) bool
		wantVersion int64
		wantErr     error
		wantOwn     []int64 // versions holding our txnId
		wantLog     []int64
	}{
		{name: "lands, then error", fail: func(n int) fault { return pick(n == 0, failAfter) },
			wantVersion: 1, wantOwn: []int64{1}, wantLog: []int64{0, 1}},
		{name: "error before writing", fail: func(n int) fault { return pick(n == 0, failBefore) },
			wantVersion: 1, wantOwn: []int64{1}, wantLog: []int64{0, 1}},
		{name: "several errors before writing", fail: func(n int) fault { return pick(n < 3, failBefore) },
			wantVersion: 1, wantOwn: []int64{1}, wantLog: []int64{0, 1}},
		{name: "lands late, found by the retry", fail: func(n int) fault { return pick(n == 0, failLate) },
			wantVersion: 1, wantOwn: []int64{1}, wantLog: []int64{0, 1}},
		{name: "another writer's commit is there", fail: func(n int) fault { return pick(n == 0, otherWriter) },
			wantVersion: 2, wantOwn: []int64{2}, wantLog: []int64{0, 1, 2}},
		{name: "read back fails too", fail: func(n int) fault { return pick(n == 0, failAfter) },
			getFail: func(key string) bool { return strings.HasSuffix(key, "01.json") },
			wantErr: txn.ErrCommitUnknown, wantOwn: []int64{1}, wantLog: []int64{0, 1}},
		{name: "every put fails before writing", fail: func(n int) fault { return failBefore },
			wantErr: txn.ErrCommitUnknown, wantLog: []int64{0}},
	}
	for _, sc := range stores {
		for _, c := range cases {
			t.Run(sc.name+"/"+c.name, func(t *testing.T) {
				ctx := context.Background()
				inner := sc.new(t)
				createTable(t, inner, tableSpec{})
				store := &faultStore{Store: inner, fail: c.fail, getFail: c.getFail}
				snap := load(t, store)
				tx := txn.Begin(snap, txn.Options{MaxRetries: 5})
				tx.Add(addFile("new", "a", 1))
				res, err := tx.Commit(ctx)
				v := res.Version
				if c.wantErr != nil {
					if !errors.Is(err, c.wantErr) {
						t.Fatalf("got version %d, err %v; want %v", v, err, c.wantErr)
					}
				} else if err != nil || v != c.wantVersion {
					t.Fatalf("got version %d, err %v; want version %d", v, err, c.wantVersion)
				}
				versions := commitVersions(t, inner)
				if !equal(versions, c.wantLog) {
					t.Fatalf("log versions %v, want %v", versions, c.wantLog)
				}
				var own []int64
				for _, v := range versions[1:] {
					if commitInfo(t, inner, v).TxnID == tx.ID() {
						own = append(own, v)
					}
				}
				if !equal(own, c.wantOwn) {
					t.Fatalf("our txnId is in versions %v, want %v", own, c.wantOwn)
				}
			})
		}
	}
}

func pick(cond bool, f fault) fault {
	if cond {
		return f
	}
	return noFault
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAmbiguousPutConflict: the commit found at an ambiguous version is
// another writer's and conflicts.
func TestAmbiguousPutConflict(t *testing.T) {
	ctx := context.Background()
	inner := stores[0].new(t)
	createTable(t, inner, tableSpec{})
	store := &faultStore{Store: inner, fail: func(n int) fault { return pick(n == 0, otherWriter) }}
	tx := txn.Begin(load(t, store), txn.Options{Isolation: txn.Serializable})
	tx.ReadPredicate(mustParse(t, "part = 'a'"))
	tx.Remove(removeFile("f1", true))
	_, err := tx.Commit(ctx)
	var ce *txn.ConflictError
	if !errors.As(err, &ce) || ce.Kind != txn.ConflictConcurrentAppend || ce.Version != 1 {
		t.Fatalf("got %v, want a concurrent-append conflict at 1", err)
	}
}

func TestCommitInfo(t *testing.T) {
	ctx := context.Background()
	store := stores[0].new(t)
	createTable(t, store, tableSpec{})
	clock := time.UnixMilli(1_700_000_000_000)
	tx := txn.Begin(load(t, store), txn.Options{
		Operation: "STREAMING UPDATE", OperationParameters: map[string]any{"mode": "Append"},
		EngineInfo: "godelta-test", Clock: func() time.Time { return clock },
	})
	tx.SetTransaction("stream", 3)
	tx.Add(addFile("new", "a", 1))
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	acts := readCommit(t, store, 1)
	ci := acts[0].CommitInfo
	if ci == nil {
		t.Fatal("commitInfo is not the first action")
	}
	if *ci.Timestamp != clock.UnixMilli() || ci.Operation != "STREAMING UPDATE" || ci.OperationParameters["mode"] != "Append" ||
		*ci.ReadVersion != 0 || ci.IsolationLevel != "WriteSerializable" || !*ci.IsBlindAppend ||
		ci.EngineInfo != "godelta-test" || ci.TxnID != tx.ID() || ci.InCommitTimestamp != nil {
		t.Errorf("commitInfo %s", ci.Raw)
	}
	if len(tx.ID()) != 36 {
		t.Errorf("txnId %q is not a UUID", tx.ID())
	}
	var txnAct *actions.Txn
	for _, a := range acts {
		if a.Txn != nil {
			txnAct = a.Txn
		}
	}
	if txnAct == nil || txnAct.Version != 3 || txnAct.LastUpdated == nil || *txnAct.LastUpdated != clock.UnixMilli() {
		t.Errorf("txn action %+v", txnAct)
	}
	if _, err := tx.Commit(ctx); !errors.Is(err, txn.ErrDone) {
		t.Errorf("second Commit: %v, want ErrDone", err)
	}
}

// TestIsolationRecorded: the level written is the one used, after the
// downgrade of data-neutral transactions.
func TestIsolationRecorded(t *testing.T) {
	cases := []struct {
		name  string
		opts  txn.Options
		stage func(*txn.Transaction)
		want  string
		blind bool
	}{
		{"append", txn.Options{}, func(tx *txn.Transaction) { tx.Add(addFile("n", "a", 1)) }, "WriteSerializable", true},
		{"serializable delete", txn.Options{Isolation: txn.Serializable}, func(tx *txn.Transaction) {
			tx.ReadFiles("f1")
			tx.Remove(removeFile("f1", true))
		}, "Serializable", false},
		{"compaction", txn.Options{Isolation: txn.Serializable}, func(tx *txn.Transaction) {
			tx.ReadFiles("f1")
			tx.Remove(removeFile("f1", false))
			a := addFile("c", "a", 10)
			a.DataChange = false
			tx.Add(a)
		}, "SnapshotIsolation", false},
		{"empty", txn.Options{}, func(tx *txn.Transaction) {}, "SnapshotIsolation", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := stores[0].new(t)
			createTable(t, store, tableSpec{})
			tx := txn.Begin(load(t, store), c.opts)
			c.stage(tx)
			if _, err := tx.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			ci := commitInfo(t, store, 1)
			if ci.IsolationLevel != c.want || *ci.IsBlindAppend != c.blind {
				t.Errorf("isolationLevel %q, isBlindAppend %v; want %q, %v", ci.IsolationLevel, *ci.IsBlindAppend, c.want, c.blind)
			}
		})
	}
}

func TestRetriesExhausted(t *testing.T) {
	ctx := context.Background()
	store := stores[0].new(t)
	createTable(t, store, tableSpec{})
	snap := load(t, store)
	w := txn.Begin(snap, txn.Options{})
	w.Add(addFile("w", "a", 1))
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tx := txn.Begin(snap, txn.Options{MaxRetries: -1})
	tx.Add(addFile("o", "a", 1))
	if _, err := tx.Commit(ctx); !errors.Is(err, txn.ErrRetriesExhausted) || errors.Is(err, txn.ErrConflict) {
		t.Fatalf("got %v, want ErrRetriesExhausted", err)
	}
}

func TestInvalidStaging(t *testing.T) {
	cases := []struct {
		name  string
		spec  tableSpec
		stage func(*txn.Transaction)
	}{
		{"add twice", tableSpec{}, func(tx *txn.Transaction) { tx.Add(addFile("x", "a", 1), addFile("x", "a", 1)) }},
		{"add and remove", tableSpec{}, func(tx *txn.Transaction) {
			tx.Add(addFile("x", "a", 1))
			tx.Remove(removeFile("x", true))
		}},
		{"empty path", tableSpec{}, func(tx *txn.Transaction) { tx.Add(actions.Add{}) }},
		// Issue 19: actions the protocol forbids are never written.
		{"negative add size", tableSpec{}, func(tx *txn.Transaction) {
			a := addFile("x", "a", 1)
			a.Size = -1
			tx.Add(a)
		}},
		{"negative remove size", tableSpec{}, func(tx *txn.Transaction) {
			r := removeFile("f1", true)
			r.ExtendedFileMetadata, r.Size = ptr(true), ptr(int64(-3))
			tx.Remove(r)
		}},
		{"remove without path", tableSpec{}, func(tx *txn.Transaction) { tx.Remove(actions.Remove{DataChange: true}) }},
		{"cdc without path", tableSpec{}, func(tx *txn.Transaction) {
			tx.AddCDC(actions.CDC{PartitionValues: map[string]string{}, Size: 1})
		}},
		{"cdc with negative size", tableSpec{}, func(tx *txn.Transaction) {
			tx.AddCDC(actions.CDC{Path: "_change_data/c.parquet", PartitionValues: map[string]string{}, Size: -1})
		}},
		{"append-only table", tableSpec{config: map[string]string{"delta.appendOnly": "true"}},
			func(tx *txn.Transaction) { tx.Remove(removeFile("f1", true)) }},
		{"row tracking domain", tableSpec{}, func(tx *txn.Transaction) {
			tx.SetDomainMetadata(actions.DomainMetadata{Domain: "delta.rowTracking", Configuration: "{}"})
		}},
		{"bad isolation", tableSpec{}, func(tx *txn.Transaction) {}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := stores[0].new(t)
			createTable(t, store, c.spec)
			opts := txn.Options{}
			if c.name == "bad isolation" {
				opts.Isolation = "ReadCommitted"
			}
			tx := txn.Begin(load(t, store), opts)
			c.stage(tx)
			if _, err := tx.Commit(context.Background()); !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Fatalf("got %v, want ErrInvalidArgument", err)
			}
			if got := commitVersions(t, store); len(got) != 1 {
				t.Fatalf("log %v", got)
			}
		})
	}
	// A compaction on an append-only table is allowed.
	store := stores[0].new(t)
	createTable(t, store, tableSpec{config: map[string]string{"delta.appendOnly": "true"}})
	tx := txn.Begin(load(t, store), txn.Options{})
	tx.Remove(removeFile("f1", false))
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func ictSpec(firstICT int64) tableSpec {
	return tableSpec{
		protocol: actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{actions.FeatureInCommitTimestamp}},
		config: map[string]string{"delta.enableInCommitTimestamps": "true"},
		extra:  []actions.Action{{CommitInfo: &actions.CommitInfo{InCommitTimestamp: &firstICT, TxnID: "creator"}}},
	}
}

// TestInCommitTimestamps: ICT = max(now, previous + 1), recomputed against
// the winner on a rebase, and commitInfo comes first.
func TestInCommitTimestamps(t *testing.T) {
	const first = 1_000_000
	cases := []struct {
		name      string
		now       int64
		race      bool // a winner commits first with the same clock
		wantV1    int64
		wantOurTS int64
	}{
		{name: "clock behind the log", now: 500, wantOurTS: first + 1},
		{name: "clock ahead", now: 2_000_000, wantOurTS: 2_000_000},
		{name: "clock behind, rebased on a winner", now: 500, race: true, wantV1: first + 1, wantOurTS: first + 2},
		{name: "same clock as the winner", now: 3_000_000, race: true, wantV1: 3_000_000, wantOurTS: 3_000_001},
	}
	for _, sc := range stores {
		for _, c := range cases {
			t.Run(sc.name+"/"+c.name, func(t *testing.T) {
				ctx := context.Background()
				store := sc.new(t)
				createTable(t, store, ictSpec(first))
				snap := load(t, store)
				clock := func() time.Time { return time.UnixMilli(c.now) }
				ours := txn.Begin(snap, txn.Options{Clock: clock})
				ours.Add(addFile("o", "a", 1))
				wantVersion := int64(1)
				if c.race {
					w := txn.Begin(snap, txn.Options{Clock: clock})
					w.Add(addFile("w", "a", 1))
					if _, err := w.Commit(ctx); err != nil {
						t.Fatal(err)
					}
					if got := *commitInfo(t, store, 1).InCommitTimestamp; got != c.wantV1 {
						t.Fatalf("winner ICT %d, want %d", got, c.wantV1)
					}
					wantVersion = 2
				}
				res, err := ours.Commit(ctx)
				v := res.Version
				if err != nil || v != wantVersion {
					t.Fatalf("version %d, err %v", v, err)
				}
				acts := readCommit(t, store, v)
				ci := acts[0].CommitInfo
				if ci == nil || ci.InCommitTimestamp == nil {
					t.Fatalf("first action of %d is not a commitInfo with an ICT", v)
				}
				if *ci.InCommitTimestamp != c.wantOurTS || *ci.Timestamp != c.wantOurTS {
					t.Errorf("ICT %d, timestamp %d; want %d", *ci.InCommitTimestamp, *ci.Timestamp, c.wantOurTS)
				}
				if got := load(t, store).Timestamp().UnixMilli(); got != c.wantOurTS {
					t.Errorf("snapshot timestamp %d, want %d", got, c.wantOurTS)
				}
			})
		}
	}
}

func rowTrackingSpec(mark int64, withDomain bool) tableSpec {
	s := tableSpec{
		protocol: actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{actions.FeatureRowTracking, actions.FeatureDomainMetadata}},
		config: map[string]string{"delta.enableRowTracking": "true"},
	}
	if withDomain {
		s.extra = []actions.Action{{DomainMetadata: &actions.DomainMetadata{
			Domain: "delta.rowTracking", Configuration: `{"rowIdHighWaterMark":` + itoa(mark) + `}`}}}
	}
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

type rowIDs struct {
	base, version int64
}

// TestRowTracking: fresh row ids come from the high-water mark, and a
// rebase takes them again from the winner's mark.
func TestRowTracking(t *testing.T) {
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			ctx := context.Background()
			store := sc.new(t)
			// Version 0 holds f1 and f2 (10 rows each) and, as the mark, 19.
			createTable(t, store, rowTrackingSpec(19, true))
			snap := load(t, store)

			a := txn.Begin(snap, txn.Options{})
			a.Add(addFile("a1", "a", 5), addFile("a2", "a", 2))
			b := txn.Begin(snap, txn.Options{})
			kept := addFile("b0", "b", 100)
			kept.BaseRowID, kept.DefaultRowCommitVersion = ptr(int64(7)), ptr(int64(0)) // a recommit keeps its ids
			b.Add(addFile("b1", "b", 3), kept)

			if res, err := a.Commit(ctx); err != nil || res.Version != 1 {
				t.Fatalf("a: %d, %v", res.Version, err)
			}
			if res, err := b.Commit(ctx); err != nil || res.Version != 2 {
				t.Fatalf("b: %d, %v", res.Version, err)
			}
			final := load(t, store)
			want := map[string]rowIDs{"a1": {20, 1}, "a2": {25, 1}, "b1": {27, 2}, "b0": {7, 0}}
			for f, err := range final.Files(t.Context()) {
				if err != nil {
					t.Fatal(err)
				}
				w, ok := want[f.Path]
				if !ok {
					continue
				}
				if f.BaseRowID == nil || f.DefaultRowCommitVersion == nil ||
					*f.BaseRowID != w.base || *f.DefaultRowCommitVersion != w.version {
					t.Errorf("%s: baseRowId %v, defaultRowCommitVersion %v; want %+v", f.Path, f.BaseRowID, f.DefaultRowCommitVersion, w)
				}
			}
			if cfg, _, _ := final.DomainMetadata(t.Context(), "delta.rowTracking"); cfg != `{"rowIdHighWaterMark":29}` {
				t.Errorf("high-water mark %s, want 29", cfg)
			}
		})
	}
}

func TestRowTrackingEdges(t *testing.T) {
	ctx := context.Background()
	t.Run("no mark yet starts at 0", func(t *testing.T) {
		store := stores[0].new(t)
		createTable(t, store, rowTrackingSpec(0, false))
		tx := txn.Begin(load(t, store), txn.Options{})
		tx.Add(addFile("n", "a", 4))
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		s := load(t, store)
		for f, err := range s.Files(t.Context()) {
			if err != nil {
				t.Fatal(err)
			}
			if f.Path == "n" && (f.BaseRowID == nil || *f.BaseRowID != 0) {
				t.Errorf("baseRowId %v, want 0", f.BaseRowID)
			}
		}
		if cfg, _, _ := s.DomainMetadata(t.Context(), "delta.rowTracking"); cfg != `{"rowIdHighWaterMark":3}` {
			t.Errorf("mark %s", cfg)
		}
	})
	t.Run("no stats", func(t *testing.T) {
		store := stores[0].new(t)
		createTable(t, store, rowTrackingSpec(0, false))
		tx := txn.Begin(load(t, store), txn.Options{})
		a := addFile("n", "a", 4)
		a.Stats = ""
		tx.Add(a)
		if _, err := tx.Commit(ctx); !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Fatalf("got %v, want ErrInvalidArgument", err)
		}
	})
	t.Run("remove carries the ids of its add, no domain action", func(t *testing.T) {
		store := stores[0].new(t)
		s := rowTrackingSpec(19, true)
		f := addFile("g", "a", 10)
		f.BaseRowID, f.DefaultRowCommitVersion = ptr(int64(20)), ptr(int64(0))
		s.extra = append(s.extra, actions.Action{Add: &f})
		createTable(t, store, s)
		tx := txn.Begin(load(t, store), txn.Options{})
		tx.Remove(removeFile("g", true))
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		for _, a := range readCommit(t, store, 1) {
			if a.DomainMetadata != nil {
				t.Errorf("unexpected %+v", a.DomainMetadata)
			}
			if r := a.Remove; r != nil && (r.BaseRowID == nil || *r.BaseRowID != 20 || r.DefaultRowCommitVersion == nil || *r.DefaultRowCommitVersion != 0) {
				t.Errorf("remove %+v lacks the add's row ids", r)
			}
		}
	})
	t.Run("corrupt mark", func(t *testing.T) {
		store := stores[0].new(t)
		s := rowTrackingSpec(0, false)
		s.extra = []actions.Action{{DomainMetadata: &actions.DomainMetadata{Domain: "delta.rowTracking", Configuration: `{"x":1}`}}}
		createTable(t, store, s)
		tx := txn.Begin(load(t, store), txn.Options{})
		tx.Add(addFile("n", "a", 4))
		if _, err := tx.Commit(ctx); !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Fatalf("got %v, want ErrCorrupt", err)
		}
	})
}

func TestWriterFeatures(t *testing.T) {
	invariantSchema := `{"type":"struct","fields":[` +
		`{"name":"id","type":"long","nullable":true,"metadata":{"delta.invariants":"{\"expression\":{\"expression\":\"id > 0\"}}"}},` +
		`{"name":"part","type":"string","nullable":true,"metadata":{}}]}`
	cases := []struct {
		name    string
		spec    tableSpec
		feature string // "" for a writable table
	}{
		{name: "legacy writer 2, nothing active", spec: tableSpec{}},
		{name: "legacy writer 6, nothing active", spec: tableSpec{protocol: actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 6}}},
		{name: "legacy invariants in use", spec: tableSpec{schema: invariantSchema}, feature: "invariants"},
		{name: "check constraint in use",
			spec:    tableSpec{protocol: actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 3}, config: map[string]string{"delta.constraints.pos": "id > 0"}},
			feature: "checkConstraints"},
		{name: "table features, all honoured", spec: tableSpec{protocol: actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors", "v2Checkpoint"},
			WriterFeatures: []string{"deletionVectors", "v2Checkpoint", "appendOnly", "domainMetadata", "changeDataFeed"}}}},
		// Clustering is honoured (issue 15): appends write stats and stay
		// unclustered until OPTIMIZE clusters them.
		{name: "clustering", spec: tableSpec{protocol: actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{"domainMetadata", "clustering"}}}},
		{name: "liquid preview", spec: tableSpec{protocol: actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{"domainMetadata", "liquid"}}}},
		{name: "unknown writer feature", spec: tableSpec{protocol: actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{"someFutureFeature"}}}, feature: "someFutureFeature"},
		{name: "writer version 8", spec: tableSpec{protocol: actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 8}}, feature: "minWriterVersion 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := stores[0].new(t)
			if c.name == "writer version 8" {
				// The snapshot loader accepts it; write version 0 directly.
				createTable(t, store, c.spec)
				p := c.spec.protocol
				m := actions.Metadata{SchemaString: testSchema}
				if err := txn.WriteSupported(&p, &m); !errors.Is(err, deltaerr.ErrUnsupportedFeature) || !strings.Contains(err.Error(), c.feature) {
					t.Fatalf("WriteSupported: %v", err)
				}
				return
			}
			createTable(t, store, c.spec)
			tx := txn.Begin(load(t, store), txn.Options{})
			tx.Add(addFile("n", "a", 1))
			_, err := tx.Commit(context.Background())
			if c.feature == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *deltaerr.FeatureError
			if !errors.Is(err, deltaerr.ErrUnsupportedFeature) || !errors.As(err, &fe) || !strings.Contains(fe.Feature, c.feature) || fe.Op != "write" {
				t.Fatalf("got %v, want a write FeatureError naming %s", err, c.feature)
			}
			if got := commitVersions(t, store); len(got) != 1 {
				t.Fatalf("log %v", got)
			}
		})
	}
}

// TestCommitKey: the commit lands under the log's name for its version.
func TestCommitKey(t *testing.T) {
	store := stores[1].new(t)
	createTable(t, store, tableSpec{})
	tx := txn.Begin(load(t, store), txn.Options{})
	tx.Add(addFile("n", "a", 1))
	res, err := tx.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Stat(context.Background(), deltalog.CommitKey(res.Version)); err != nil {
		t.Fatal(err)
	}
	if n, err := load(t, store).NumFiles(t.Context()); n != 3 || err != nil {
		t.Fatalf("%d files (%v), want 3", n, err)
	}
}

// Every delta.checkpointInterval commits a checkpoint is written, and the
// table loads from it.
func TestCheckpointInterval(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	acts := []actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &actions.Metadata{ID: "t", Format: actions.Format{Provider: "parquet"},
			SchemaString:  `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
			Configuration: map[string]string{"delta.checkpointInterval": "3"}}},
	}
	data, err := actions.EncodeCommit(acts)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(ctx, deltalog.CommitKey(0), data); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		snap, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			t.Fatal(err)
		}
		tx := txn.Begin(snap, txn.Options{})
		tx.Add(actions.Add{Path: fmt.Sprintf("f%d.parquet", i), Size: 1, DataChange: true})
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if due := res.Version%3 == 0; res.PostCommit.Checkpoint != due {
			t.Fatalf("version %d: checkpoint due %v, want %v", res.Version, res.PostCommit.Checkpoint, due)
		}
		// Commit only says what is due: the checkpoint waits for PostCommit.
		if has := hasCheckpoint(t, store, res.Version); has {
			t.Fatalf("version %d: Commit wrote a checkpoint", res.Version)
		}
		txn.PostCommit(ctx, &res)
		if w := res.PostCommit; !w.Ran || w.Checkpointed != w.Checkpoint || w.Err != nil {
			t.Fatalf("version %d: post-commit %+v", res.Version, w)
		}
	}
	var cps []int64
	for obj, err := range store.List(ctx, deltalog.LogDir, "") {
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := deltalog.ParseName(obj.Key); ok && f.Kind.IsCheckpoint() {
			cps = append(cps, f.Version)
		}
	}
	if !slices.Equal(cps, []int64{3, 6}) {
		t.Fatalf("checkpoints at %v, want [3 6]", cps)
	}
	lc, err := deltalog.ReadLastCheckpoint(ctx, store)
	if err != nil || lc == nil || lc.Version != 6 {
		t.Fatalf("_last_checkpoint %+v, %v", lc, err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := snap.NumFiles(ctx); err != nil || n != 7 {
		t.Fatalf("latest: %v files, %v", n, err)
	}
	if v, ok := snap.Segment().CheckpointVersion(); !ok || v != 6 {
		t.Fatalf("loaded from checkpoint %d (%v), want 6", v, ok)
	}
}

// hasCheckpoint reports whether store holds a checkpoint of version.
func hasCheckpoint(t *testing.T, store logstore.Store, version int64) bool {
	t.Helper()
	for obj, err := range store.List(context.Background(), deltalog.LogDir, "") {
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := deltalog.ParseName(obj.Key); ok && f.Kind.IsCheckpoint() && f.Version == version {
			return true
		}
	}
	return false
}

// A table that uses CHECK constraints is refused by a plain transaction,
// which cannot see rows, and accepted from a writer that checked them
// (which only this module's writers can say, through internal/rowcheck).
func TestRowsChecked(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	acts := []actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 3}},
		{Metadata: &actions.Metadata{ID: "t", Format: actions.Format{Provider: "parquet"},
			SchemaString:  `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
			Configuration: map[string]string{"delta.constraints.pos": "id > 0"}}},
	}
	data, _ := actions.EncodeCommit(acts)
	if err := store.PutIfAbsent(ctx, deltalog.CommitKey(0), data); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	tx := txn.Begin(snap, txn.Options{})
	tx.Add(actions.Add{Path: "a.parquet", Size: 1, DataChange: true})
	if _, err := tx.Commit(ctx); !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
		t.Fatalf("unchecked commit: %v, want ErrUnsupportedFeature", err)
	}
	tx = txn.Begin(snap, txn.Options{})
	tx.Add(actions.Add{Path: "a.parquet", Size: 1, DataChange: true})
	if !rowcheck.Mark(tx) {
		t.Fatal("rowcheck.Mark refused a transaction")
	}
	if rowcheck.Mark("not a transaction") {
		t.Fatal("rowcheck.Mark accepted a string")
	}
	if res, err := tx.Commit(ctx); err != nil || res.Version != 1 {
		t.Fatalf("checked commit: %d, %v", res.Version, err)
	}
}

// TestRowTrackingPreservedTag: on a table with row tracking enabled, a
// commit says whether it preserved row identities (PROTOCOL.md "Row
// Tracking"): true when it removes nothing or its writer says so, false
// when it removes files and does not; a table where the feature is only
// supported gets no tag.
func TestRowTrackingPreservedTag(t *testing.T) {
	supported := rowTrackingSpec(19, true)
	supported.config = nil
	for _, c := range []struct {
		name   string
		spec   tableSpec
		opts   txn.Options
		remove bool
		want   string // "" for no tag
	}{
		{"append", rowTrackingSpec(19, true), txn.Options{}, false, "true"},
		{"rewrite that preserves", rowTrackingSpec(19, true), txn.Options{RowTrackingPreserved: true}, true, "true"},
		{"rewrite that does not say", rowTrackingSpec(19, true), txn.Options{}, true, "false"},
		{"feature only supported", supported, txn.Options{RowTrackingPreserved: true}, true, ""},
		{"no row tracking", tableSpec{}, txn.Options{}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := memory.New()
			createTable(t, store, c.spec)
			if ci := readCommit(t, store, 0)[0].CommitInfo; ci != nil && ci.Tags[actions.TagRowTrackingPreserved] != "" {
				t.Errorf("the create is tagged %v", ci.Tags)
			}
			tx := txn.Begin(load(t, store), c.opts)
			tx.Add(addFile("n1", "a", 3))
			if c.remove {
				tx.Remove(removeFile("f1", true))
			}
			if _, err := tx.Commit(t.Context()); err != nil {
				t.Fatal(err)
			}
			ci := readCommit(t, store, 1)[0].CommitInfo
			got, ok := ci.Tags[actions.TagRowTrackingPreserved]
			if c.want == "" && ok || got != c.want {
				t.Errorf("tag %q (set %v), want %q", got, ok, c.want)
			}
		})
	}
}
