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
