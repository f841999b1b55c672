//go:build unix

package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/catalogtest"
	"github.com/godelta/delta/catalog/postgres"
	"github.com/godelta/delta/catalog/postgres/pgtest"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/uc"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/scan"
)

// The processes of the kill tests are this test binary, told what to be
// by an environment variable holding a JSON spec.
const (
	catalogChildEnv = "GODELTA_CATALOG_CHILD"
	multiWriterEnv  = "GODELTA_MULTI_WRITER"
)

// openDB opens a catalog database: PostgreSQL for a postgres:// URL,
// else SQLite (the server's default).
func openDB(ctx context.Context, db string) (*catalog.SQLStore, error) {
	if server.IsPostgres(db) {
		return postgres.Open(ctx, db)
	}
	return nil, errors.ErrUnsupported
}

// catalogChildSpec is what a catalog server process serves.
type catalogChildSpec struct {
	Warehouse, DB string
}

// TestCatalogChildProcess is the body of a catalog server process of
// the kill tests: it serves until it is killed. It does nothing in a
// normal run.
func TestCatalogChildProcess(t *testing.T) {
	spec := childSpec[catalogChildSpec](t, catalogChildEnv, "a catalog server process of the kill tests")
	srv, _ := openCatalog(t, spec.Warehouse, spec.DB)
	// The listening socket is the parent's, passed as file descriptor 3:
	// it outlives every server process, so a restart serves the same
	// address and no other program can take the port meanwhile.
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("READY")
	if err := srv.Serve(context.Background(), ln); err != nil {
		t.Fatal(err)
	}
}

// childSpec returns the spec of a child process from the environment
// variable env, or skips the test (a normal run) when it is not set.
func childSpec[T any](t *testing.T, env, what string) T {
	t.Helper()
	var spec T
	raw := os.Getenv(env)
	if raw == "" {
		t.Skip(what)
	}
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// killTable is a table of the kill tests.
type killTable struct {
	ID, Location string
}

// multiWriterSpec is what a writer process does: transactions First to
// First+N-1, transaction i on the tables Sets[i % len(Sets)], each
// appending one row with id i to each of its tables, through the catalog
// at URLs[i % len(URLs)]. With DieAt >= 0 it kills itself in transaction
// DieAt, at the point Die names: "before-round" (every table staged) or
// "after-ratify" (ratified, nothing published).
type multiWriterSpec struct {
	URLs   []string
	Tables map[string]killTable
	Sets   [][]string
	First  int
	N      int
	DieAt  int
	Die    string
}

// dying is a MultiCommitter that kills its process at a point.
type dying struct {
	catalogmanaged.MultiCommitter
	at string
}

func (d dying) CommitAll(ctx context.Context, cs []catalogmanaged.TableCommit) error {
	if d.at == "before-round" {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	err := d.MultiCommitter.CommitAll(ctx, cs)
	if err == nil && d.at == "after-ratify" {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	return err
}

// TestMultiWriterProcess is the body of a writer process of the kill
// tests: it prints "ACK i" for each transaction acknowledged. It does
// nothing in a normal run.
func TestMultiWriterProcess(t *testing.T) {
	spec := childSpec[multiWriterSpec](t, multiWriterEnv, "a writer process of the kill tests")
	out := bufio.NewWriter(os.Stdout)
	for i := spec.First; i < spec.First+spec.N; i++ {
		client := uc.NewClient(spec.URLs[i%len(spec.URLs)], "tok", nil)
		var committer catalogmanaged.MultiCommitter = client
		if i == spec.DieAt {
			committer = dying{client, spec.Die}
		}
		m := delta.NewMultiTableTxn(committer)
		for _, name := range spec.Sets[i%len(spec.Sets)] {
			tb := spec.Tables[name]
			m.Table(tb.Location, tb.ID, client.Table(tb.ID, tb.Location), func(ctx context.Context, tbl *delta.Table) error {
				_, err := delta.AppendStructs(ctx, tbl, slices.Values([]managedRow{{int64(i)}}), delta.WriteOptions{})
				return err
			})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := m.Commit(ctx)
		cancel()
		if err == nil {
			fmt.Fprintf(out, "ACK %d\n", i)
		} else {
			fmt.Fprintf(out, "ERR %d %s\n", i, strings.ReplaceAll(err.Error(), "\n", " | "))
			time.Sleep(20 * time.Millisecond)
		}
		out.Flush()
	}
}

// killRig runs catalog server processes over one database and writer
// processes against them, and kills them.
type killRig struct {
	t         *testing.T
	exe       string
	warehouse string
	db        string
	// listeners are the replicas' listening sockets, held by the test
	// and passed to each server process it starts: a client's connection
	// to a killed server waits in the backlog for the next one.
	listeners []*os.File
	addrs     []string

	mu      sync.Mutex
	servers []*exec.Cmd // by replica; nil when not running
	acked   map[int]bool
	errs    []string
}

// newKillRig returns a rig of replicas catalog servers over warehouse and
// db, each with a listening socket on loopback.
func newKillRig(t *testing.T, warehouse, db string, replicas int) *killRig {
	t.Helper()
	rig := &killRig{t: t, exe: os.Args[0], warehouse: warehouse, db: db, servers: make([]*exec.Cmd, replicas), acked: map[int]bool{}}
	for range replicas {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f, err := ln.(*net.TCPListener).File()
		if err != nil {
			t.Fatal(err)
		}
		rig.addrs = append(rig.addrs, ln.Addr().String())
		ln.Close() // f holds the socket
		rig.listeners = append(rig.listeners, f)
	}
	t.Cleanup(func() {
		for i := range replicas {
			rig.killServer(i)
			rig.listeners[i].Close()
		}
	})
	return rig
}

// url is the commits API root of replica i.
func (r *killRig) url(i int) string { return "http://" + r.addrs[i] + server.UCRoot }

// startServer starts catalog server process i and waits for it to serve.
func (r *killRig) startServer(i int) {
	r.t.Helper()
	spec, _ := json.Marshal(catalogChildSpec{Warehouse: r.warehouse, DB: r.db})
	cmd := exec.Command(r.exe, "-test.run", "^TestCatalogChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), catalogChildEnv+"="+string(spec))
	cmd.ExtraFiles = []*os.File{r.listeners[i]}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	rd := bufio.NewReader(stdout)
	line, _ := rd.ReadString('\n')
	if strings.TrimSpace(line) != "READY" {
		rest, _ := io.ReadAll(rd)
		cmd.Wait()
		r.t.Fatalf("catalog server %d did not start: %s%s%s", i, line, rest, stderr.String())
	}
	go io.Copy(io.Discard, rd)
	r.mu.Lock()
	r.servers[i] = cmd
	r.mu.Unlock()
}

// killServer kills catalog server process i.
func (r *killRig) killServer(i int) {
	r.mu.Lock()
	cmd := r.servers[i]
	r.servers[i] = nil
	r.mu.Unlock()
	if cmd != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// startWriter starts a writer process; the returned channel closes when
// it has exited and its acknowledgements are recorded.
func (r *killRig) startWriter(spec multiWriterSpec) (*exec.Cmd, <-chan struct{}) {
	r.t.Helper()
	raw, _ := json.Marshal(spec)
	cmd := exec.Command(r.exe, "-test.run", "^TestMultiWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), multiWriterEnv+"="+string(raw))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			r.mu.Lock()
			if id, ok := strings.CutPrefix(line, "ACK "); ok {
				n, _ := strconv.Atoi(id)
				r.acked[n] = true
			} else if strings.HasPrefix(line, "ERR ") {
				r.errs = append(r.errs, line)
			}
			r.mu.Unlock()
		}
		cmd.Wait()
	}()
	return cmd, done
}

// openCatalog opens the catalog of warehouse on db in this process.
func openCatalog(t *testing.T, warehouse, db string) (*server.Server, *catalog.SQLStore) {
	t.Helper()
	cfg := server.Config{Warehouse: "file://" + warehouse, DB: db, Logger: quiet}
	if server.IsPostgres(db) {
		cfg.OpenDB = openDB
	}
	srv, err := server.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, srv.Store().(*catalog.SQLStore)
}

// killTables creates the catalog-managed tables a to d, registered in
// the database db, and returns them.
func killTables(t *testing.T, warehouse, db string) map[string]killTable {
	t.Helper()
	srv, st := openCatalog(t, warehouse, db)
	defer srv.Close()
	if err := st.CreateNamespace(context.Background(), catalog.Namespace{"k"}, nil); err != nil {
		t.Fatal(err)
	}
	tables := map[string]killTable{}
	for _, name := range []string{"a", "b", "c", "d"} {
		reg := catalogtest.ManagedTable(t, st, catalog.TableIdent{Namespace: catalog.Namespace{"k"}, Name: name}, filepath.Join(warehouse, "k", name))
		tables[name] = killTable{ID: reg.ID, Location: reg.Location}
	}
	return tables
}

var killSets = [][]string{{"a", "b"}, {"b", "c"}, {"c", "d"}, {"a", "b", "c", "d"}, {"a", "c"}}

// runKillRounds runs rounds of writers against the catalog servers,
// killing servers and writers at random moments and at the points where
// a multi-table commit is staged everywhere and where it is ratified but
// not published; then checks the tables and the database.
func runKillRounds(t *testing.T, warehouse, db string, replicas, rounds int) {
	ctx := context.Background()
	tables := killTables(t, warehouse, db)
	r := newKillRig(t, warehouse, db, replicas)
	var urls []string
	for i := range replicas {
		r.startServer(i)
		urls = append(urls, r.url(i))
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	t.Logf("seed-free randomness: kills at random moments; replicas %d, rounds %d", replicas, rounds)
	const writers, each = 3, 12
	next := 0
	for round := range rounds {
		var cmds []*exec.Cmd
		var dones []<-chan struct{}
		for w := range writers {
			spec := multiWriterSpec{URLs: urls, Tables: tables, Sets: killSets, First: next, N: each, DieAt: -1}
			switch w {
			case 1:
				spec.DieAt, spec.Die = next+rng.IntN(each), "before-round"
			case 2:
				spec.DieAt, spec.Die = next+rng.IntN(each), "after-ratify"
			}
			next += each
			cmd, done := r.startWriter(spec)
			cmds, dones = append(cmds, cmd), append(dones, done)
		}
		time.Sleep(time.Duration(50+rng.IntN(250)) * time.Millisecond)
		switch round % 3 {
		case 0: // a catalog server dies mid-transaction and comes back
			i := rng.IntN(replicas)
			r.killServer(i)
			time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
			r.startServer(i)
		case 1: // a committing process dies mid-transaction
			cmds[0].Process.Kill()
		case 2: // both
			i := rng.IntN(replicas)
			r.killServer(i)
			cmds[0].Process.Kill()
			r.startServer(i)
		}
		for _, d := range dones {
			<-d
		}
	}
	for i := range replicas {
		r.killServer(i)
	}
	t.Logf("%d transactions: %d acknowledged, %d failed (server or process killed)", next, len(r.acked), len(r.errs))
	for _, e := range r.errs[:min(3, len(r.errs))] {
		t.Logf("e.g. %.300s", e)
	}
	if len(r.acked) == 0 {
		t.Fatalf("no transaction was acknowledged: %v", r.errs)
	}
	checkAllOrNothing(t, ctx, warehouse, db, tables, r.acked, next)
}

// checkAllOrNothing checks, with the catalog in this process, that every
// transaction is on every table of its set or on none, that every
// acknowledged one is there, that no row is there twice, that every
// version of each table reads, and that the database and the published
// logs agree; then that one more transaction publishes every ratified
// commit, after which the database holds none unpublished.
func checkAllOrNothing(t *testing.T, ctx context.Context, warehouse, db string, tables map[string]killTable, acked map[int]bool, txns int) {
	t.Helper()
	srv, st := openCatalog(t, warehouse, db)
	defer srv.Close()
	where := map[int][]string{} // transaction -> tables it is on
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		tb := tables[name]
		storage, err := local.New(filepath.Join(warehouse, "k", name))
		if err != nil {
			t.Fatal(err)
		}
		defer storage.Close()
		checkDBAgainstLog(t, ctx, st, tb.ID, storage, name)
		tbl, err := delta.OpenStore(ctx, name, catalogmanaged.New(storage, st.ManagedClient(tb.ID)))
		if err != nil {
			t.Fatal(err)
		}
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatalf("table %s: %v", name, err)
		}
		hist, err := tbl.History(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(hist)) != snap.Version()+1 {
			t.Fatalf("table %s: %d commits in its history for version %d: a version is lost", name, len(hist), snap.Version())
		}
		s, err := tbl.Scan(snap, delta.ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for row, err := range scan.All[managedRow](ctx, s) {
			if err != nil {
				t.Fatal(err)
			}
			i := int(row.ID)
			if seen[i] {
				t.Fatalf("table %s: transaction %d's row is there twice", name, i)
			}
			seen[i] = true
			where[i] = append(where[i], name)
		}
		// One commit per transaction that landed, after the create.
		if int64(len(seen)) != snap.Version() {
			t.Fatalf("table %s: %d transactions' rows in %d versions after the create", name, len(seen), snap.Version())
		}
	}
	for i := range txns {
		want := killSets[i%len(killSets)]
		got := where[i]
		slices.Sort(got)
		switch {
		case len(got) == 0 && acked[i]:
			t.Fatalf("transaction %d was acknowledged but is on no table", i)
		case len(got) != 0 && !slices.Equal(got, want):
			t.Fatalf("transaction %d is on tables %v of %v: not all or nothing", i, got, want)
		}
	}

	// One more transaction over every table publishes what was ratified
	// and left unpublished by a killed process.
	m := delta.NewMultiTableTxn(st)
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		tb := tables[name]
		storage, err := local.New(filepath.Join(warehouse, "k", name))
		if err != nil {
			t.Fatal(err)
		}
		defer storage.Close()
		m.TableStore(name, storage, tb.ID, st.ManagedClient(tb.ID), func(ctx context.Context, tbl *delta.Table) error {
			_, err := delta.AppendStructs(ctx, tbl, slices.Values([]managedRow{{-1}}), delta.WriteOptions{})
			return err
		})
	}
	if err := m.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		tb := tables[name]
		r, err := st.ManagedCommits(ctx, tb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Commits) != 0 {
			t.Fatalf("table %s: %d ratified commits still unpublished after a new commit", name, len(r.Commits))
		}
		if _, err := os.Stat(filepath.Join(warehouse, "k", name, "_delta_log", fmt.Sprintf("%020d.json", r.Latest))); err != nil {
			t.Fatalf("table %s: latest ratified version %d is not published: %v", name, r.Latest, err)
		}
		if _, err := os.Stat(filepath.Join(warehouse, "k", name, "_delta_log", fmt.Sprintf("%020d.json", r.Latest+1))); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("table %s: a published version %d past the latest ratified", name, r.Latest+1)
		}
	}
}

// checkDBAgainstLog checks that the database's view of a table and its
// _delta_log agree: every version up to the latest ratified one is
// published or held by the catalog (with its staged commit present and,
// when also published, equal to it), and nothing is published past it.
func checkDBAgainstLog(t *testing.T, ctx context.Context, st *catalog.SQLStore, id string, storage logstore.Store, name string) {
	t.Helper()
	r, err := st.ManagedCommits(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	held := map[int64]catalogmanaged.Commit{}
	for _, c := range r.Commits {
		held[c.Version] = c
	}
	published := map[int64]bool{}
	for obj, err := range storage.List(ctx, deltalog.LogDir, "") {
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := deltalog.ParseName(obj.Key); ok && f.Kind == deltalog.Commit {
			published[f.Version] = true
			if f.Version > r.Latest {
				t.Fatalf("table %s: version %d published past the latest ratified %d", name, f.Version, r.Latest)
			}
		}
	}
	for v := int64(0); v <= r.Latest; v++ {
		c, isHeld := held[v]
		switch {
		case isHeld:
			staged, err := storage.Get(ctx, c.Key)
			if err != nil {
				t.Fatalf("table %s: ratified version %d's staged commit: %v", name, v, err)
			}
			if published[v] {
				pub, err := storage.Get(ctx, deltalog.CommitKey(v))
				if err != nil {
					t.Fatal(err)
				}
				if string(pub) != string(staged) {
					t.Fatalf("table %s: version %d published with other content than the ratified commit", name, v)
				}
			}
		case !published[v]:
			t.Fatalf("table %s: version %d neither published nor held by the catalog", name, v)
		}
	}
}

// Multi-table transactions through a catalog server on SQLite, with the
// server and committing processes SIGKILLed at random moments and at
// the points between staging and ratification and between ratification
// and publication: after restart, each transaction is on all its tables
// or on none, no version is lost, and the database equals the logs.
func TestMultiTableKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	runKillRounds(t, t.TempDir(), filepath.Join(t.TempDir(), "catalog.db"), 1, 4)
}

// The same with two catalog server replicas on one PostgreSQL database,
// the writers alternating between them.
func TestMultiTableKillReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	pg := pgtest.Start(t)
	runKillRounds(t, t.TempDir(), pg.NewDB(t), 2, 4)
}

// Eight processes commit multi-table transactions over overlapping sets
// of tables through the catalog server, nothing killed: every
// transaction is acknowledged and on each of its tables once.
func TestMultiTableProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 8 processes")
	}
	ctx := context.Background()
	warehouse, db := t.TempDir(), filepath.Join(t.TempDir(), "catalog.db")
	tables := killTables(t, warehouse, db)
	r := newKillRig(t, warehouse, db, 1)
	r.startServer(0)
	urls := []string{r.url(0)}
	const procs, each = 8, 6
	var dones []<-chan struct{}
	for p := range procs {
		_, done := r.startWriter(multiWriterSpec{URLs: urls, Tables: tables, Sets: killSets, First: p * each, N: each, DieAt: -1})
		dones = append(dones, done)
	}
	for _, d := range dones {
		<-d
	}
	r.killServer(0)
	if len(r.errs) != 0 || len(r.acked) != procs*each {
		t.Fatalf("%d of %d transactions acknowledged; failures: %v", len(r.acked), procs*each, r.errs)
	}
	checkAllOrNothing(t, ctx, warehouse, db, tables, r.acked, procs*each)
}
