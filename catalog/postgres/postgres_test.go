package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/catalogtest"
	"github.com/godelta/delta/catalog/postgres"
	"github.com/godelta/delta/catalog/postgres/pgtest"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/deltalog"
)

// TestConformance runs the Store suite against a real PostgreSQL server
// on loopback, a new database per subtest.
func TestConformance(t *testing.T) {
	pg := pgtest.Start(t)
	catalogtest.Run(t, func(t *testing.T) catalog.Store {
		s, err := postgres.Open(context.Background(), pg.NewDB(t))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestReplicas: two Stores on one database, as two catalog replicas,
// register the same names at once (each won once) and see each other's
// namespaces; a Store opened later finds the schema and the state.
func TestReplicas(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	dsn := pg.NewDB(t)
	var replicas []*catalog.SQLStore
	for range 2 {
		s, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		replicas = append(replicas, s)
	}
	if err := replicas[0].CreateNamespace(ctx, catalog.Namespace{"n"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := replicas[1].Namespace(ctx, catalog.Namespace{"n"}); err != nil {
		t.Fatal(err)
	}
	const names = 20
	wins := make([]int, names)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, s := range replicas {
		for j := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range names {
					_, err := s.RegisterTable(ctx, catalog.Table{Ident: catalog.TableIdent{Namespace: catalog.Namespace{"n"}, Name: fmt.Sprint("t", n)}, Location: fmt.Sprintf("mem://%d/%d", i, j)})
					if err == nil {
						mu.Lock()
						wins[n]++
						mu.Unlock()
					} else if !errors.Is(err, catalog.ErrAlreadyExists) {
						t.Error(err)
					}
				}
			}()
		}
	}
	wg.Wait()
	for n, w := range wins {
		if w != 1 {
			t.Fatalf("t%d registered %d times", n, w)
		}
	}
	later, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer later.Close()
	ids, _, err := later.ListTables(ctx, catalog.Namespace{"n"}, catalog.Page{})
	if err != nil || len(ids) != names {
		t.Fatalf("a later Store lists %d tables: %v", len(ids), err)
	}
}

// TestReplicasRatify: two replicas on one database race to ratify each
// version of a catalog-managed table; exactly one commit wins each
// version, the others get catalogmanaged.ErrConflict, and both replicas
// then report the same latest version and commits.
func TestReplicasRatify(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	dsn := pg.NewDB(t)
	var replicas []*catalog.SQLStore
	for range 2 {
		s, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		replicas = append(replicas, s)
	}
	const id, versions, racers = "t-1", 10, 4
	for v := int64(0); v < versions; v++ {
		wins := 0
		var mu sync.Mutex
		var wg sync.WaitGroup
		for r := range racers {
			wg.Go(func() {
				c := catalogmanaged.Commit{Version: v, Key: deltalog.StagedCommitKey(v, fmt.Sprintf("00000000-0000-0000-0000-%012d", r)), Size: 1, Timestamp: 1}
				err := replicas[r%2].RatifyCommit(ctx, id, c)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case !errors.Is(err, catalogmanaged.ErrConflict):
					t.Errorf("version %d racer %d: %v", v, r, err)
				}
			})
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("version %d ratified %d times", v, wins)
		}
	}
	a, err := replicas[0].ManagedCommits(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := replicas[1].ManagedCommits(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Latest != versions-1 || len(a.Commits) != versions || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("replicas disagree or are wrong: %+v / %+v", a, b)
	}
	if err := replicas[1].PublishedCommits(ctx, id, 4); err != nil {
		t.Fatal(err)
	}
	if a, err = replicas[0].ManagedCommits(ctx, id); err != nil || a.Latest != versions-1 || len(a.Commits) != versions-5 {
		t.Fatalf("after publication: %+v %v", a, err)
	}
}

// TestConcurrentStart: eight stores open one empty database at once, as
// replicas started together do; every one starts (the schema is created
// once, under the migration lock) and all see one schema.
func TestConcurrentStart(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	for round := range 3 {
		dsn := pg.NewDB(t)
		const n = 8
		stores := make([]*catalog.SQLStore, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { stores[i], errs[i] = postgres.Open(ctx, dsn) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: store %d of %d failed to start: %v", round, i, n, err)
			}
			defer stores[i].Close()
		}
		if err := stores[0].CreateNamespace(ctx, catalog.Namespace{"n"}, nil); err != nil {
			t.Fatal(err)
		}
		for i, s := range stores {
			if _, err := s.Namespace(ctx, catalog.Namespace{"n"}); err != nil {
				t.Fatalf("round %d: store %d: %v", round, i, err)
			}
		}
	}
}
