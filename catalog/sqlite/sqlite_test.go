package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/catalogtest"
	"github.com/godelta/delta/catalog/sqlite"
)

func TestConformance(t *testing.T) {
	for _, where := range []string{"file", "memory"} {
		t.Run(where, func(t *testing.T) {
			catalogtest.Run(t, func(t *testing.T) catalog.Store {
				path := ":memory:"
				if where == "file" {
					path = filepath.Join(t.TempDir(), "catalog.db")
				}
				s, err := sqlite.Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}

// TestRestart closes the database and opens the same file again: the
// namespaces, tables, ids and properties are those committed before.
func TestRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dir with space", "catalog.db")
	if _, err := sqlite.Open(ctx, path); err == nil {
		t.Fatal("opened a database in a directory that does not exist")
	}
	path = filepath.Join(t.TempDir(), "catalog.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ns := catalog.Namespace{"a"}
	if err := s.CreateNamespace(ctx, ns, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	reg, err := s.RegisterTable(ctx, catalog.Table{Ident: catalog.TableIdent{Namespace: ns, Name: "t"}, Location: "file:///w/a/t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s, err = sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Table(ctx, reg.Ident)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Namespace(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != reg.ID || got.Location != reg.Location || info.Properties["k"] != "v" {
			t.Fatalf("after reopening: %+v %+v, before %+v", got, info, reg)
		}
		s.Close()
	}
}

// TestTwoStoresOneFile registers names from two Stores on one file at
// once, as two server processes would: each name is won once.
func TestTwoStoresOneFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	var stores []*catalog.SQLStore
	for range 2 {
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	if err := stores[0].CreateNamespace(ctx, catalog.Namespace{"n"}, nil); err != nil {
		t.Fatal(err)
	}
	const names = 20
	wins := make([]int, names)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, s := range stores {
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
}

// TestNewerSchemaRefused: a database whose schema version this program
// does not know is refused, not changed.
func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `UPDATE catalog_meta SET value = '99' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := sqlite.Open(ctx, path); !errors.Is(err, catalog.ErrSchemaVersion) {
		t.Fatalf("opening a newer schema: %v", err)
	}
}
