package snapshot_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil"
	"github.com/godelta/delta/testutil/countstore"
)

// The corpus table with log compaction files (written by Databricks:
// their commits' actions newest commit first) reads the same at every
// version as a copy without them, and the latest version reads the
// compaction files in place of the commits they cover.
func TestCorpusLogCompaction(t *testing.T) {
	ctx := context.Background()
	table := filepath.Join(testutil.CorpusDir(t), "kernel-rs", "compacted-log-files-table")
	if _, err := os.Stat(table); err != nil {
		t.Skipf("corpus table: %v", err)
	}
	bare := t.TempDir()
	if err := testutil.CopyTree(table, bare); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(bare, "_delta_log"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".compacted.json") {
			os.Remove(filepath.Join(bare, "_delta_log", e.Name()))
		}
	}
	withStore, err := local.New(table)
	if err != nil {
		t.Fatal(err)
	}
	with := countstore.New(withStore, nil)
	without, err := local.New(bare)
	if err != nil {
		t.Fatal(err)
	}
	latest, err := snapshot.Load(ctx, without, -1)
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(0); v <= latest.Version(); v++ {
		s1, err := snapshot.Load(ctx, with, v)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := snapshot.Load(ctx, without, v)
		if err != nil {
			t.Fatal(err)
		}
		st1, err1 := stateOf(ctx, s1)
		st2, err2 := stateOf(ctx, s2)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(st1, st2) {
			t.Errorf("version %d differs with compaction files:\n%+v (%v)\nwithout:\n%+v (%v)", v, st1, err1, st2, err2)
		}
	}

	with.Reset()
	s, err := snapshot.Load(ctx, with, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stateOf(ctx, s); err != nil {
		t.Fatal(err)
	}
	var read []string
	for _, r := range with.Requests() {
		if f, ok := deltalog.ParseName(r.Key); ok && r.Op != "list" && (f.Kind == deltalog.Commit || f.Kind == deltalog.Compacted) {
			read = append(read, filepath.Base(r.Key))
		}
	}
	slices.Sort(read)
	read = slices.Compact(read)
	for _, want := range []string{"00000000000000000000.00000000000000000005.compacted.json", "00000000000000000006.00000000000000000015.compacted.json", "00000000000000000025.json"} {
		if !slices.Contains(read, want) {
			t.Errorf("the latest load did not read %s; it read %q", want, read)
		}
	}
	for _, name := range read {
		if f, _ := deltalog.ParseName(name); f.Kind == deltalog.Commit && f.Version <= 15 {
			t.Errorf("the latest load read %s, which a compaction file covers", name)
		}
	}
}

// A compaction file this library writes, of a range of DELETEs, MERGEs,
// UPDATEs and OPTIMIZEs with deletion vectors (the corpus table's commits
// 16 to 24), reads the same at every version that uses it as the commits.
func TestWriteLogCompaction(t *testing.T) {
	ctx := context.Background()
	table := filepath.Join(testutil.CorpusDir(t), "kernel-rs", "compacted-log-files-table")
	if _, err := os.Stat(table); err != nil {
		t.Skipf("corpus table: %v", err)
	}
	dir := t.TempDir()
	if err := testutil.CopyTree(table, dir); err != nil {
		t.Fatal(err)
	}
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	latest, err := snapshot.Load(ctx, store, -1)
	if err != nil {
		t.Fatal(err)
	}
	var before []state
	for v := int64(16); v <= latest.Version(); v++ {
		s, err := snapshot.Load(ctx, store, v)
		if err != nil {
			t.Fatal(err)
		}
		st, err := stateOf(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, st)
	}
	for _, bad := range [][2]int64{{5, 5}, {-1, 3}, {20, latest.Version() + 1}} {
		if _, err := latest.WriteLogCompaction(ctx, bad[0], bad[1]); !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("range %v: %v", bad, err)
		}
	}
	key, err := latest.WriteLogCompaction(ctx, 16, 24)
	if err != nil {
		t.Fatal(err)
	}
	if key != deltalog.CompactedKey(16, 24) {
		t.Fatalf("key %s", key)
	}
	if _, err := latest.WriteLogCompaction(ctx, 16, 24); !errors.Is(err, logstore.ErrAlreadyExists) {
		t.Fatalf("a second write: %v", err)
	}
	counted := countstore.New(store, nil)
	for i, v := 0, int64(16); v <= latest.Version(); i, v = i+1, v+1 {
		s, err := snapshot.Load(ctx, counted, v)
		if err != nil {
			t.Fatal(err)
		}
		st, err := stateOf(ctx, s)
		if err != nil || !reflect.DeepEqual(st, before[i]) {
			t.Errorf("version %d with the compaction file:\n%+v (%v)\nwithout:\n%+v", v, st, err, before[i])
		}
	}
	used := false
	for _, r := range counted.Requests() {
		used = used || strings.HasSuffix(r.Key, "00000000000000000016.00000000000000000024.compacted.json") && r.Op != "list"
	}
	if !used {
		t.Error("version 25 was not read through the new compaction file")
	}
}

// The reconciliation a compaction file holds: the newest protocol,
// metaData, txn of each application and domain of each domain (a removal
// kept, since it hides an older one), and the last action of each file (a
// remove kept, a file removed then added again live), read the same at the
// versions after it as the commits.
func TestWriteLogCompactionReconciles(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	proto := `{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["domainMetadata","appendOnly","invariants"]}}`
	rm := func(p string) string {
		return `{"remove":{"path":"` + p + `","deletionTimestamp":5,"dataChange":true}}`
	}
	commit(t, s, 0, proto, meta, add("a"), `{"domainMetadata":{"domain":"d0","configuration":"x","removed":false}}`)
	commit(t, s, 1, add("b"), `{"txn":{"appId":"app","version":1}}`)
	commit(t, s, 2, `{"domainMetadata":{"domain":"d1","configuration":"1","removed":false}}`, `{"domainMetadata":{"domain":"d0","configuration":"x","removed":true}}`)
	commit(t, s, 3, strings.Replace(meta, `"configuration":{}`, `"configuration":{"k":"v"}`, 1))
	commit(t, s, 4, rm("a"), `{"txn":{"appId":"app","version":2}}`, `{"txn":{"appId":"other","version":7}}`)
	commit(t, s, 5, rm("b"), add("c"))
	commit(t, s, 6, add("a"), `{"domainMetadata":{"domain":"d1","configuration":"2","removed":false}}`)
	commit(t, s, 7, add("d"))
	var before []state
	for v := int64(0); v <= 7; v++ {
		snap, err := snapshot.Load(ctx, s, v)
		if err != nil {
			t.Fatal(err)
		}
		st, err := stateOf(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, st)
	}
	latest, err := snapshot.Load(ctx, s, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := latest.WriteLogCompaction(ctx, 2, 6); err != nil {
		t.Fatal(err)
	}
	for v := int64(0); v <= 7; v++ {
		snap, err := snapshot.Load(ctx, s, v)
		if err != nil {
			t.Fatal(err)
		}
		st, err := stateOf(ctx, snap)
		if err != nil || !reflect.DeepEqual(st, before[v]) {
			t.Errorf("version %d with the compaction file:\n%+v (%v)\nwithout:\n%+v", v, st, err, before[v])
		}
	}
	if seg := latest.Segment(); len(seg.Compactions) != 0 {
		t.Fatalf("the snapshot loaded before the file has compactions %v", seg.Compactions)
	}
	snap, _ := snapshot.Load(ctx, s, 7)
	if plan := snap.Segment().Plan(); len(plan) != 4 || plan[2].Kind != deltalog.Compacted {
		t.Errorf("plan of version 7: %v", plan)
	}
}
