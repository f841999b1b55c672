package server_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/uc"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

type managedRow struct {
	ID int64 `parquet:"id"`
}

// A catalog-managed table committed through the server's Delta commits
// API: the server ratifies each version once in its database, and writers
// of separate views that race land every append once.
func TestManagedCommits(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	db := filepath.Join(t.TempDir(), "catalog.db")
	srv, base := serve(t, server.Config{Warehouse: wh, DB: db, Token: "tok"})
	st := srv.Store().(*catalog.SQLStore)
	if err := st.CreateNamespace(ctx, catalog.Namespace{"ops"}, nil); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(wh, "ops", "events")
	reg, err := st.RegisterTable(ctx, catalog.Table{Ident: catalog.TableIdent{Namespace: catalog.Namespace{"ops"}, Name: "events"}, Location: "file://" + dir})
	if err != nil {
		t.Fatal(err)
	}
	storage, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer storage.Close()
	client := uc.NewClient(base+server.UCRoot, "tok", nil)
	view := func() logstore.Store { return catalogmanaged.New(storage, client.Table(reg.ID, reg.Location)) }

	tbl, err := delta.CreateStore(ctx, "events", view(), delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{
			"delta.feature.catalogManaged":   "supported",
			"delta.enableInCommitTimestamps": "true",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			tw, err := delta.OpenStore(ctx, "events", view())
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				if _, err := delta.AppendStructs(ctx, tw, slices.Values([]managedRow{{int64(w*each + i)}}), delta.WriteOptions{}); err != nil {
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
	ids := func(tbl *delta.Table) []int64 {
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s, err := tbl.Scan(snap, delta.ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for r, err := range scan.All[managedRow](ctx, s) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r.ID)
		}
		slices.Sort(out)
		return out
	}
	got := ids(tbl)
	if len(got) != writers*each || got[0] != 0 || got[len(got)-1] != writers*each-1 {
		t.Fatalf("ids %v", got)
	}
	r, err := st.ManagedCommits(ctx, reg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Latest != writers*each || len(r.Commits) != 0 {
		t.Fatalf("database: latest %d, %d unpublished commits; want %d and none", r.Latest, len(r.Commits), writers*each)
	}

	// The database refuses a second commit of a ratified version, and
	// takes the same one again.
	c1 := catalogmanaged.Commit{Version: r.Latest + 1, Key: deltalog.StagedCommitKey(r.Latest+1, "11111111-1111-1111-1111-111111111111"), Size: 1, Timestamp: 1}
	c2 := catalogmanaged.Commit{Version: r.Latest + 1, Key: deltalog.StagedCommitKey(r.Latest+1, "22222222-2222-2222-2222-222222222222"), Size: 1, Timestamp: 1}
	if err := st.RatifyCommit(ctx, reg.ID, c1); err != nil {
		t.Fatal(err)
	}
	if err := st.RatifyCommit(ctx, reg.ID, c1); err != nil {
		t.Fatalf("the same commit again: %v", err)
	}
	if err := st.RatifyCommit(ctx, reg.ID, c2); !errors.Is(err, catalogmanaged.ErrConflict) {
		t.Fatalf("another commit of a ratified version: %v", err)
	}
	far := catalogmanaged.Commit{Version: r.Latest + 5, Key: deltalog.StagedCommitKey(r.Latest+5, "33333333-3333-3333-3333-333333333333"), Size: 1, Timestamp: 1}
	if err := st.RatifyCommit(ctx, reg.ID, far); !errors.Is(err, catalogmanaged.ErrConflict) {
		t.Fatalf("a version that does not follow: %v", err)
	}
	if err := st.PublishedCommits(ctx, reg.ID, c1.Version); err != nil {
		t.Fatal(err)
	}

	// Another location for the table's id is refused.
	other := uc.NewClient(base+server.UCRoot, "tok", nil).Table(reg.ID, "file:///elsewhere")
	if _, err := other.Commits(ctx); err == nil {
		t.Fatal("a client with another location was answered")
	}
	// Without the token the API is closed like the rest of the server.
	if _, err := uc.NewClient(base+server.UCRoot, "", nil).Table(reg.ID, reg.Location).Commits(ctx); err == nil {
		t.Fatal("the commits API answered without the token")
	}
}

// managedChildEnv makes the test binary a writer process of
// TestManagedCommitsProcesses: it appends rows through the server's
// commits API and exits.
const managedChildEnv = "GODELTA_MANAGED_WRITER"

// TestManagedWriterProcess is the body of one writer process; it does
// nothing in a normal run.
func TestManagedWriterProcess(t *testing.T) {
	spec := os.Getenv(managedChildEnv)
	if spec == "" {
		t.Skip("the writer process of TestManagedCommitsProcesses")
	}
	var url, id, loc string
	var first, n int
	if _, err := fmt.Sscanf(spec, "%s %s %s %d %d", &url, &id, &loc, &first, &n); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tbl, err := delta.OpenWith(ctx, loc, delta.OpenOptions{Catalog: uc.NewClient(url, "tok", nil).Table(id, loc)})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for i := range n {
		if _, err := delta.AppendStructs(ctx, tbl, slices.Values([]managedRow{{int64(first + i)}}), delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// Eight processes commit to one catalog-managed table through the
// server: every acknowledged append is in the table once, versions are
// ratified once each, and all are published.
func TestManagedCommitsProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 8 processes")
	}
	ctx := context.Background()
	wh := t.TempDir()
	srv, base := serve(t, server.Config{Warehouse: wh, DB: filepath.Join(t.TempDir(), "catalog.db"), Token: "tok"})
	st := srv.Store().(*catalog.SQLStore)
	if err := st.CreateNamespace(ctx, catalog.Namespace{"ops"}, nil); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(wh, "ops", "many")
	reg, err := st.RegisterTable(ctx, catalog.Table{Ident: catalog.TableIdent{Namespace: catalog.Namespace{"ops"}, Name: "many"}, Location: "file://" + dir})
	if err != nil {
		t.Fatal(err)
	}
	storage, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer storage.Close()
	url := base + server.UCRoot
	if _, err := delta.CreateStore(ctx, "many", catalogmanaged.New(storage, uc.NewClient(url, "tok", nil).Table(reg.ID, reg.Location)), delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{"delta.feature.catalogManaged": "supported", "delta.enableInCommitTimestamps": "true"},
	}); err != nil {
		t.Fatal(err)
	}
	const procs, each = 8, 3
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	for p := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestManagedWriterProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %s %d %d", managedChildEnv, url, reg.ID, reg.Location, p*each, each))
			outs[p], errs[p] = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	for p := range procs {
		if errs[p] != nil {
			t.Fatalf("writer %d: %v\n%s", p, errs[p], outs[p])
		}
	}
	tbl, err := delta.OpenWith(ctx, reg.Location, delta.OpenOptions{Catalog: uc.NewClient(url, "tok", nil).Table(reg.ID, reg.Location)})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for r, err := range scan.All[managedRow](ctx, s) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.ID)
	}
	slices.Sort(got)
	if len(got) != procs*each {
		t.Fatalf("%d rows, want %d: %v", len(got), procs*each, got)
	}
	for i, id := range got {
		if id != int64(i) {
			t.Fatalf("ids %v: a lost or duplicated append", got)
		}
	}
	if snap.Version() != procs*each {
		t.Fatalf("version %d, want %d (one per append)", snap.Version(), procs*each)
	}
	r, err := st.ManagedCommits(ctx, reg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Latest != procs*each || len(r.Commits) != 0 {
		t.Fatalf("database: latest %d, %d unpublished", r.Latest, len(r.Commits))
	}
	for v := int64(0); v <= procs*each; v++ {
		if _, err := storage.Stat(ctx, deltalog.CommitKey(v)); err != nil {
			t.Fatalf("version %d not published: %v", v, err)
		}
	}
}

// The server's multi-table commits endpoint: all or none in its
// database, a taken version is a conflict that ratifies nothing, and a
// table the client was not told of, or at another location, is refused
// with nothing written.
func TestManagedCommitAll(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	srv, base := serve(t, server.Config{Warehouse: wh, DB: filepath.Join(t.TempDir(), "catalog.db"), Token: "tok"})
	st := srv.Store().(*catalog.SQLStore)
	if err := st.CreateNamespace(ctx, catalog.Namespace{"ops"}, nil); err != nil {
		t.Fatal(err)
	}
	var regs []catalog.Table
	for _, name := range []string{"x", "y"} {
		reg, err := st.RegisterTable(ctx, catalog.Table{Ident: catalog.TableIdent{Namespace: catalog.Namespace{"ops"}, Name: name}, Location: "file://" + filepath.Join(wh, "ops", name)})
		if err != nil {
			t.Fatal(err)
		}
		regs = append(regs, reg)
	}
	client := uc.NewClient(base+server.UCRoot, "tok", nil)
	for _, reg := range regs {
		client.Table(reg.ID, reg.Location)
	}
	staged := func(table string, v int64, n int) catalogmanaged.TableCommit {
		return catalogmanaged.TableCommit{Table: table, Commit: catalogmanaged.Commit{Version: v, Key: deltalog.StagedCommitKey(v, fmt.Sprintf("00000000-0000-0000-0000-%012d", n)), Size: 1, Timestamp: 1}}
	}
	both := []catalogmanaged.TableCommit{staged(regs[0].ID, 0, 1), staged(regs[1].ID, 0, 2)}
	if err := client.CommitAll(ctx, both); err != nil {
		t.Fatal(err)
	}
	if err := client.CommitAll(ctx, both); err != nil {
		t.Fatalf("the same commits again: %v", err)
	}
	// x's version 1 is free, y's version 0 is taken: nothing is ratified.
	err := client.CommitAll(ctx, []catalogmanaged.TableCommit{staged(regs[0].ID, 1, 3), staged(regs[1].ID, 0, 4)})
	if !errors.Is(err, catalogmanaged.ErrConflict) {
		t.Fatalf("got %v, want ErrConflict", err)
	}
	for _, reg := range regs {
		r, err := st.ManagedCommits(ctx, reg.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Latest != 0 {
			t.Fatalf("table %s at version %d after a refused multi-table commit", reg.Ident.Name, r.Latest)
		}
	}
	if err := client.CommitAll(ctx, []catalogmanaged.TableCommit{staged("not-told", 0, 5)}); !logstore.IsCertainFailure(err) {
		t.Fatalf("a table the client was not told of: %v, want a certain failure", err)
	}
	other := uc.NewClient(base+server.UCRoot, "tok", nil)
	other.Table(regs[0].ID, "file:///elsewhere")
	if err := other.CommitAll(ctx, []catalogmanaged.TableCommit{staged(regs[0].ID, 1, 6)}); !logstore.IsCertainFailure(err) {
		t.Fatalf("another location: %v, want a certain failure", err)
	}
}
