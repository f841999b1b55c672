package catalogmanaged_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil"
)

// fixture is a row of kernel-rs/catalog_managed_0.
type fixture struct {
	Part1 int32 `parquet:"part1"`
	Col1  int32 `parquet:"col1"`
}

// corpusCopy copies kernel-rs/catalog_managed_0 (version 0 published,
// versions 1 and 2 only staged) to a temporary directory and returns a
// store over it, with the keys of its two staged commits.
func corpusCopy(t *testing.T) (logstore.Store, []string) {
	t.Helper()
	src := filepath.Join(testutil.CorpusDir(t), "kernel-rs", "catalog_managed_0")
	dir := t.TempDir()
	if err := testutil.CopyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	names, err := filepath.Glob(filepath.Join(dir, "_delta_log", "_staged_commits", "*.json"))
	if err != nil || len(names) != 2 {
		t.Fatalf("staged commits: %v %v", names, err)
	}
	slices.Sort(names)
	var keys []string
	for _, n := range names {
		keys = append(keys, deltalog.StagedDir+filepath.Base(n))
	}
	return store, keys
}

// ratifiedFixture is the fixture's catalog as kernel-rs's test sets it up:
// version 0 published, both staged commits ratified.
func ratifiedFixture(t *testing.T, keys []string) catalogmanaged.Client {
	t.Helper()
	ctx := context.Background()
	cat := catalogmanaged.NewMemory()
	if err := cat.Manage("t", 0); err != nil {
		t.Fatal(err)
	}
	c := cat.Table("t")
	for i, k := range keys {
		if err := c.Commit(ctx, catalogmanaged.Commit{Version: int64(i + 1), Key: k}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func fixtureRows(t *testing.T, tbl *delta.Table, snap *delta.Snapshot) []fixture {
	t.Helper()
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []fixture
	for r, err := range scan.All[fixture](context.Background(), s) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

// The corpus table, read with the commits its catalog ratified: version 2
// and 200 rows in columns part1 and col1, as kernel-rs's
// test_scan_returns_fixture_rows asserts; read as a plain directory, it is
// refused.
func TestCorpusThroughCatalog(t *testing.T) {
	ctx := context.Background()
	store, keys := corpusCopy(t)

	_, err := snapshot.Load(ctx, store, deltalog.Latest)
	var cm *deltaerr.CatalogManagedError
	if !errors.As(err, &cm) || !errors.Is(err, deltaerr.ErrCatalogManaged) || !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
		t.Fatalf("plain directory: got %v, want a CatalogManagedError", err)
	}

	view := catalogmanaged.New(store, ratifiedFixture(t, keys))
	tbl, err := delta.OpenStore(ctx, "catalog_managed_0", view)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != 2 {
		t.Fatalf("version %d, want 2", snap.Version())
	}
	var cols []string
	for _, f := range snap.Schema().Fields {
		cols = append(cols, f.Name)
	}
	if !slices.Equal(cols, []string{"part1", "col1"}) {
		t.Fatalf("columns %v", cols)
	}
	rows := fixtureRows(t, tbl, snap)
	if len(rows) != 200 {
		t.Fatalf("%d rows, want 200", len(rows))
	}
	// Time travel goes through the catalog's commits too.
	old, err := tbl.SnapshotAt(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fixtureRows(t, tbl, old)); n != 100 {
		t.Fatalf("version 1: %d rows, want 100", n)
	}
	// Reading published nothing: the fixture's staged commits stay staged.
	if _, err := store.Stat(ctx, deltalog.CommitKey(1)); !errors.Is(err, logstore.ErrNotFound) {
		t.Fatalf("a read published version 1: %v", err)
	}
}

// commitLines returns the actions of a commit file's content.
func commitLines(t *testing.T, data []byte) []actions.Action {
	t.Helper()
	acts, err := actions.DecodeCommitReader("commit", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

// The reading rules of PROTOCOL.md "Reading Catalog-managed Tables", one
// case each, on the corpus table.
func TestReadRules(t *testing.T) {
	ctx := context.Background()
	// addCommit is a commit of version v adding one more file of the
	// fixture (its first data file again, under another name).
	addCommit := func(t *testing.T, store logstore.Store, v int64) []byte {
		t.Helper()
		name := "part1=0/part-00000-13fefaba-8ec2-4762-b17e-aeda657451c5.c000.snappy.parquet"
		data, err := store.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		copyName := fmt.Sprintf("part1=0/copy-%d.parquet", v)
		if err := store.Put(ctx, copyName, data); err != nil {
			t.Fatal(err)
		}
		return fmt.Appendf(nil, `{"commitInfo":{"inCommitTimestamp":%d,"timestamp":%d,"operation":"WRITE","txnId":"x%d"}}`+"\n"+
			`{"add":{"path":%q,"partitionValues":{"part1":"0"},"size":%d,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":100}"}}`+"\n",
			1749830900000+v, 1749830900000+v, v, copyName, len(data))
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, store logstore.Store, keys []string) catalogmanaged.Client
		// version and rows the catalog's view must show
		version int64
		rows    int
	}{
		{
			// "Delta clients must ignore any files with versions greater
			// than the latest ratified commit version."
			name: "published version past the latest ratified is ignored",
			setup: func(t *testing.T, store logstore.Store, keys []string) catalogmanaged.Client {
				staged, err := store.Get(ctx, keys[0])
				if err != nil {
					t.Fatal(err)
				}
				for v, data := range map[int64][]byte{1: staged, 3: addCommit(t, store, 3)} {
					if err := store.PutIfAbsent(ctx, deltalog.CommitKey(v), data); err != nil {
						t.Fatal(err)
					}
				}
				return ratifiedFixture(t, keys)
			},
			version: 2, rows: 200,
		},
		{
			// "For commits that are both returned by the catalog and
			// already published, Delta clients must treat the catalog's
			// version as authoritative."
			name: "the catalog's commit stands over a published one",
			setup: func(t *testing.T, store logstore.Store, keys []string) catalogmanaged.Client {
				if err := store.PutIfAbsent(ctx, deltalog.CommitKey(2), addCommit(t, store, 2)); err != nil {
					t.Fatal(err)
				}
				return ratifiedFixture(t, keys)
			},
			version: 2, rows: 200,
		},
		{
			// Staged commits the catalog did not ratify are not part of
			// the table (a rejected or unfinished attempt).
			name: "an unratified staged commit is ignored",
			setup: func(t *testing.T, store logstore.Store, keys []string) catalogmanaged.Client {
				if err := store.PutIfAbsent(ctx, deltalog.StagedCommitKey(2, "0f707846-cd18-4e01-b40e-84ee0ae987b0"), addCommit(t, store, 2)); err != nil {
					t.Fatal(err)
				}
				if err := store.PutIfAbsent(ctx, deltalog.StagedCommitKey(3, "7a980438-cb67-4b89-82d2-86f73239b6d6"), addCommit(t, store, 3)); err != nil {
					t.Fatal(err)
				}
				return ratifiedFixture(t, keys)
			},
			version: 2, rows: 200,
		},
		{
			// A catalog that ratified only version 1: version 2's staged
			// commit is not the table.
			name: "only what the catalog ratified",
			setup: func(t *testing.T, store logstore.Store, keys []string) catalogmanaged.Client {
				return ratifiedFixture(t, keys[:1])
			},
			version: 1, rows: 100,
		},
		{
			// Published commits the catalog no longer stores are listed
			// from the directory.
			name: "published commits come from the listing",
			setup: func(t *testing.T, store logstore.Store, keys []string) catalogmanaged.Client {
				c := ratifiedFixture(t, keys)
				staged, err := store.Get(ctx, keys[0])
				if err != nil {
					t.Fatal(err)
				}
				if err := store.PutIfAbsent(ctx, deltalog.CommitKey(1), staged); err != nil {
					t.Fatal(err)
				}
				if err := c.Published(ctx, 1); err != nil {
					t.Fatal(err)
				}
				return c
			},
			version: 2, rows: 200,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store, keys := corpusCopy(t)
			view := catalogmanaged.New(store, tc.setup(t, store, keys))
			tbl, err := delta.OpenStore(ctx, "t", view)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Version() != tc.version {
				t.Fatalf("version %d, want %d", snap.Version(), tc.version)
			}
			if n := len(fixtureRows(t, tbl, snap)); n != tc.rows {
				t.Fatalf("%d rows, want %d", n, tc.rows)
			}
		})
	}
}

// item is a row of the tables the write tests make.
type item struct {
	ID   int64  `parquet:"id"`
	Name string `parquet:"name"`
}

var itemSpec = delta.TableSpec{
	Schema: &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "name", Type: schema.String, Nullable: true},
	}},
	Properties: map[string]string{
		"delta.feature.catalogManaged":   "supported",
		"delta.enableInCommitTimestamps": "true",
	},
}

func appendItems(ctx context.Context, tbl *delta.Table, from, n int) error {
	rows := make([]item, n)
	for i := range rows {
		rows[i] = item{ID: int64(from + i), Name: fmt.Sprint("n", from+i)}
	}
	_, err := delta.AppendStructs(ctx, tbl, slices.Values(rows), delta.WriteOptions{})
	return err
}

func itemIDs(t *testing.T, tbl *delta.Table) []int64 {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for r, err := range scan.All[item](ctx, s) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	return ids
}

// Commits through the catalog follow the protocol's commit rules: each
// version is a staged commit the catalog ratified, then published to
// <v>.json in order with the same content; commitInfo comes first with an
// in-commit timestamp and a txnId; the catalog stores nothing once
// published.
func TestWriteRules(t *testing.T) {
	ctx := context.Background()
	base := memory.New()
	defer base.Close()
	cat := catalogmanaged.NewMemory()
	if err := cat.Manage("items", -1); err != nil {
		t.Fatal(err)
	}
	view := catalogmanaged.New(base, cat.Table("items"))
	tbl, err := delta.CreateStore(ctx, "items", view, itemSpec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := appendItems(ctx, tbl, i*10, 10); err != nil {
			t.Fatal(err)
		}
	}
	if got := itemIDs(t, tbl); len(got) != 30 || got[0] != 0 || got[29] != 29 {
		t.Fatalf("ids %v", got)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != 3 {
		t.Fatalf("version %d, want 3", snap.Version())
	}
	p := snap.Protocol()
	if !slices.Contains(p.ReaderFeatures, actions.FeatureCatalogManaged) || !slices.Contains(p.WriterFeatures, actions.FeatureCatalogManaged) ||
		!slices.Contains(p.WriterFeatures, actions.FeatureInCommitTimestamp) || p.MinReaderVersion != 3 || p.MinWriterVersion != 7 {
		t.Fatalf("protocol %+v", p)
	}

	staged := map[int64][]string{}
	for obj, err := range base.List(ctx, deltalog.StagedDir, "") {
		if err != nil {
			t.Fatal(err)
		}
		v, _, ok := deltalog.ParseStagedName(obj.Key)
		if !ok {
			t.Fatalf("stray file %s among the staged commits", obj.Key)
		}
		staged[v] = append(staged[v], obj.Key)
	}
	txnIDs := map[string]bool{}
	for v := range int64(4) {
		if len(staged[v]) != 1 {
			t.Fatalf("version %d: staged commits %v, want one", v, staged[v])
		}
		stagedData, err := base.Get(ctx, staged[v][0])
		if err != nil {
			t.Fatal(err)
		}
		published, err := base.Get(ctx, deltalog.CommitKey(v))
		if err != nil {
			t.Fatalf("version %d not published: %v", v, err)
		}
		if !bytes.Equal(stagedData, published) {
			t.Fatalf("version %d: published content differs from the ratified commit", v)
		}
		acts := commitLines(t, published)
		ci := acts[0].CommitInfo
		if ci == nil || ci.InCommitTimestamp == nil || ci.TxnID == "" || txnIDs[ci.TxnID] {
			t.Fatalf("version %d: first action %+v: want a commitInfo with inCommitTimestamp and a new txnId", v, acts[0])
		}
		txnIDs[ci.TxnID] = true
	}
	r, err := cat.Table("items").Commits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Latest != 3 || len(r.Commits) != 0 {
		t.Fatalf("catalog: latest %d, %d commits stored; want 3 and none (all published)", r.Latest, len(r.Commits))
	}
	// The checksum files of the commits are there; the cleanup the
	// protocol forbids did not run.
	if _, err := base.Stat(ctx, deltalog.CRCKey(3)); err != nil {
		t.Fatalf("no version checksum for version 3: %v", err)
	}
}

// Without the catalog a catalog-managed table is neither read nor
// written, and a table cannot be made catalog-managed behind the
// catalog's back.
func TestDirectoryAccessRefused(t *testing.T) {
	ctx := context.Background()
	base := memory.New()
	defer base.Close()
	cat := catalogmanaged.NewMemory()
	if err := cat.Manage("items", -1); err != nil {
		t.Fatal(err)
	}
	tbl, err := delta.CreateStore(ctx, "items", catalogmanaged.New(base, cat.Table("items")), itemSpec)
	if err != nil {
		t.Fatal(err)
	}
	if err := appendItems(ctx, tbl, 0, 5); err != nil {
		t.Fatal(err)
	}
	direct, err := delta.OpenStore(ctx, "direct", base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Snapshot(ctx); !errors.Is(err, deltaerr.ErrCatalogManaged) {
		t.Fatalf("direct read: %v", err)
	}
	if err := appendItems(ctx, direct, 5, 5); !errors.Is(err, deltaerr.ErrCatalogManaged) {
		t.Fatalf("direct append: %v", err)
	}
	other := memory.New()
	defer other.Close()
	if _, err := delta.CreateStore(ctx, "other", other, itemSpec); !errors.Is(err, deltaerr.ErrCatalogManaged) {
		t.Fatalf("create without a catalog: %v", err)
	}
	// In-commit timestamps are a writer requirement.
	noICT := itemSpec
	noICT.Properties = map[string]string{"delta.feature.catalogManaged": "supported"}
	if err := cat.Manage("noict", -1); err != nil {
		t.Fatal(err)
	}
	_, err = delta.CreateStore(ctx, "noict", catalogmanaged.New(memory.New(), cat.Table("noict")), noICT)
	if !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("a catalog-managed table without in-commit timestamps: %v", err)
	}
}

// The maintenance the protocol forbids without the catalog's permission
// is refused; checkpoints stay allowed and are of published versions.
func TestMaintenance(t *testing.T) {
	ctx := context.Background()
	base := memory.New()
	defer base.Close()
	cat := catalogmanaged.NewMemory()
	if err := cat.Manage("items", -1); err != nil {
		t.Fatal(err)
	}
	view := catalogmanaged.New(base, cat.Table("items"))
	tbl, err := delta.CreateStore(ctx, "items", view, itemSpec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := appendItems(ctx, tbl, i*10, 10); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.Vacuum(ctx, delta.VacuumOptions{DryRun: true}); !errors.Is(err, deltaerr.ErrCatalogManaged) {
		t.Fatalf("VACUUM: %v", err)
	}
	if _, err := tbl.Optimize(ctx, delta.OptimizeOptions{}); !errors.Is(err, deltaerr.ErrCatalogManaged) {
		t.Fatalf("OPTIMIZE: %v", err)
	}
	if _, err := tbl.CleanupLog(ctx, true); !errors.Is(err, deltaerr.ErrCatalogManaged) {
		t.Fatalf("log cleanup: %v", err)
	}
	v, err := tbl.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := base.Stat(ctx, deltalog.CommitKey(v)); err != nil {
		t.Fatalf("checkpoint of version %d, which is not published: %v", v, err)
	}
	// The store refuses to delete or replace commits itself.
	if err := view.Delete(ctx, deltalog.CommitKey(0)); !errors.Is(err, deltaerr.ErrCatalogManaged) {
		t.Fatalf("delete of a commit: %v", err)
	}
	if got := itemIDs(t, tbl); len(got) != 30 {
		t.Fatalf("%d rows after maintenance", len(got))
	}
}

// Writers through the same catalog race for versions; the catalog
// ratifies each version once, the losers rebase and retry, and every
// acknowledged append is there once.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	base := memory.New()
	defer base.Close()
	cat := catalogmanaged.NewMemory()
	if err := cat.Manage("items", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := delta.CreateStore(ctx, "items", catalogmanaged.New(base, cat.Table("items")), itemSpec); err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			// Each writer has its own view, as a separate process would.
			tbl, err := delta.OpenStore(ctx, "items", catalogmanaged.New(base, cat.Table("items")))
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				if err := appendItems(ctx, tbl, (w*each+i)*10, 10); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	tbl, err := delta.OpenStore(ctx, "items", catalogmanaged.New(base, cat.Table("items")))
	if err != nil {
		t.Fatal(err)
	}
	ids := itemIDs(t, tbl)
	if len(ids) != writers*each*10 {
		t.Fatalf("%d rows, want %d", len(ids), writers*each*10)
	}
	for i, id := range ids {
		if id != int64(i) {
			t.Fatalf("row %d has id %d: a lost or duplicated append", i, id)
		}
	}
	// Every version is published once, in order, and equals its ratified
	// staged commit; losing attempts left staged files nobody reads.
	last := int64(writers * each)
	for v := int64(0); v <= last; v++ {
		if _, err := base.Stat(ctx, deltalog.CommitKey(v)); err != nil {
			t.Fatalf("version %d not published: %v", v, err)
		}
	}
	if _, err := base.Stat(ctx, deltalog.CommitKey(last+1)); !errors.Is(err, logstore.ErrNotFound) {
		t.Fatalf("version %d exists: %v", last+1, err)
	}
}

// A commit the catalog ratified stands when its publication fails: readers
// get it from the catalog, and the next commit publishes it first.
func TestPublicationFailure(t *testing.T) {
	ctx := context.Background()
	base := memory.New()
	defer base.Close()
	cat := catalogmanaged.NewMemory()
	if err := cat.Manage("items", -1); err != nil {
		t.Fatal(err)
	}
	tbl, err := delta.CreateStore(ctx, "items", catalogmanaged.New(base, cat.Table("items")), itemSpec)
	if err != nil {
		t.Fatal(err)
	}
	// Version 1 is ratified by a writer that died before publishing: its
	// staged commit is there and the catalog has it, <1>.json is not.
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ict := snap.Timestamp().UnixMilli() + 1
	add := fmt.Sprintf(`{"commitInfo":{"inCommitTimestamp":%d,"timestamp":%d,"operation":"WRITE","txnId":"dead-writer"}}`+"\n", ict, ict)
	key := deltalog.StagedCommitKey(1, "c8d4a9d4-3f5e-4a43-9d59-0f3c5d3b1e11")
	if err := base.PutIfAbsent(ctx, key, []byte(add)); err != nil {
		t.Fatal(err)
	}
	if err := cat.Table("items").Commit(ctx, catalogmanaged.Commit{Version: 1, Key: key}); err != nil {
		t.Fatal(err)
	}
	fresh, err := delta.OpenStore(ctx, "items", catalogmanaged.New(base, cat.Table("items")))
	if err != nil {
		t.Fatal(err)
	}
	s1, err := fresh.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s1.Version() != 1 {
		t.Fatalf("version %d, want the ratified 1", s1.Version())
	}
	if err := appendItems(ctx, fresh, 0, 3); err != nil {
		t.Fatal(err)
	}
	for v := range int64(3) {
		if _, err := base.Stat(ctx, deltalog.CommitKey(v)); err != nil {
			t.Fatalf("version %d not published: %v", v, err)
		}
	}
	data, err := base.Get(ctx, deltalog.CommitKey(1))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Scan()
	var line map[string]json.RawMessage
	if err := json.Unmarshal(sc.Bytes(), &line); err != nil || !strings.Contains(string(line["commitInfo"]), "dead-writer") {
		t.Fatalf("published version 1 is not the ratified commit: %s", data)
	}
}

// delta.OpenWith with OpenOptions.Catalog opens a catalog-managed table by
// its URI, with the log cache and a trusted root beside the catalog's view;
// Close closes the store the view wraps.
func TestOpenWithCatalog(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(testutil.CorpusDir(t), "kernel-rs", "catalog_managed_0")
	dir := t.TempDir()
	if err := testutil.CopyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "_delta_log", "_staged_commits", "*.json"))
	slices.Sort(names)
	var keys []string
	for _, n := range names {
		keys = append(keys, deltalog.StagedDir+filepath.Base(n))
	}
	client := ratifiedFixture(t, keys)
	if _, err := delta.Open(ctx, dir); err != nil {
		t.Fatal(err) // opening finds a log; reading it is what is refused
	}
	tbl, err := delta.OpenWith(ctx, dir, delta.OpenOptions{Catalog: client, LogCacheDir: t.TempDir(), TrustRoots: []string{"file:///elsewhere"}})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != 2 || len(fixtureRows(t, tbl, snap)) != 200 {
		t.Fatalf("version %d", snap.Version())
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Snapshot(ctx); !errors.Is(err, logstore.ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}
