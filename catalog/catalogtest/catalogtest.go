// Package catalogtest is the conformance suite every catalog.Store
// backend passes: namespaces and their tree, registration, paging, errors,
// and racing writers on one name; and ManagedTable, the catalog-managed
// table the tests and benchmarks of commits through a catalog start from.
package catalogtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/godelta/delta/catalog"
)

// Run runs the suite; open returns a new, empty Store for each subtest
// (the suite closes it).
func Run(t *testing.T, open func(t *testing.T) catalog.Store) {
	t.Run("Namespaces", func(t *testing.T) { testNamespaces(t, open(t)) })
	t.Run("Tables", func(t *testing.T) { testTables(t, open(t)) })
	t.Run("Paging", func(t *testing.T) { testPaging(t, open(t)) })
	t.Run("InvalidNames", func(t *testing.T) { testInvalid(t, open(t)) })
	t.Run("RacingRegistrations", func(t *testing.T) { testRace(t, open(t)) })
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// levels prints namespaces as lists of levels.
func levels(nss []catalog.Namespace) string {
	var out [][]string
	for _, ns := range nss {
		out = append(out, ns)
	}
	return fmt.Sprint(out)
}

func testNamespaces(t *testing.T, s catalog.Store) {
	defer s.Close()
	ctx := context.Background()
	steps := []struct {
		name string
		do   func() error
		want error
	}{
		{"create a", func() error { return s.CreateNamespace(ctx, catalog.Namespace{"a"}, map[string]string{"owner": "x"}) }, nil},
		{"create a again", func() error { return s.CreateNamespace(ctx, catalog.Namespace{"a"}, nil) }, catalog.ErrAlreadyExists},
		{"create a.b", func() error { return s.CreateNamespace(ctx, catalog.Namespace{"a", "b"}, nil) }, nil},
		{"create c.d without c", func() error { return s.CreateNamespace(ctx, catalog.Namespace{"c", "d"}, nil) }, catalog.ErrNoSuchNamespace},
		{"create z", func() error { return s.CreateNamespace(ctx, catalog.Namespace{"z"}, nil) }, nil},
		{"drop a (has a child)", func() error { return s.DropNamespace(ctx, catalog.Namespace{"a"}) }, catalog.ErrNamespaceNotEmpty},
		{"drop missing", func() error { return s.DropNamespace(ctx, catalog.Namespace{"nope"}) }, catalog.ErrNoSuchNamespace},
		{"load missing", func() error { _, err := s.Namespace(ctx, catalog.Namespace{"nope"}); return err }, catalog.ErrNoSuchNamespace},
		{"list children of missing", func() error {
			_, _, err := s.ListNamespaces(ctx, catalog.Namespace{"nope"}, catalog.Page{})
			return err
		}, catalog.ErrNoSuchNamespace},
	}
	for _, st := range steps {
		if err := st.do(); !errors.Is(err, st.want) || (st.want == nil && err != nil) {
			t.Fatalf("%s: got %v, want %v", st.name, err, st.want)
		}
	}
	info, err := s.Namespace(ctx, catalog.Namespace{"a"})
	must(t, err)
	if info.Properties["owner"] != "x" {
		t.Fatalf("properties of a: %v", info.Properties)
	}
	top, _, err := s.ListNamespaces(ctx, nil, catalog.Page{})
	must(t, err)
	if levels(top) != "[[a] [z]]" {
		t.Fatalf("top-level namespaces: %v", top)
	}
	sub, _, err := s.ListNamespaces(ctx, catalog.Namespace{"a"}, catalog.Page{})
	must(t, err)
	if levels(sub) != "[[a b]]" {
		t.Fatalf("children of a: %v", sub)
	}
	must(t, s.DropNamespace(ctx, catalog.Namespace{"a", "b"}))
	must(t, s.DropNamespace(ctx, catalog.Namespace{"a"}))
	top, _, err = s.ListNamespaces(ctx, nil, catalog.Page{})
	must(t, err)
	if levels(top) != "[[z]]" {
		t.Fatalf("after drops: %v", top)
	}
}

func testTables(t *testing.T, s catalog.Store) {
	defer s.Close()
	ctx := context.Background()
	ns := catalog.Namespace{"sales"}
	id := catalog.TableIdent{Namespace: ns, Name: "orders"}
	if _, err := s.RegisterTable(ctx, catalog.Table{Ident: id, Location: "file:///w/sales/orders"}); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Fatalf("register without namespace: %v", err)
	}
	must(t, s.CreateNamespace(ctx, ns, nil))
	reg, err := s.RegisterTable(ctx, catalog.Table{Ident: id, Location: "file:///w/sales/orders"})
	must(t, err)
	if reg.ID == "" || reg.Created.IsZero() {
		t.Fatalf("registration without id or time: %+v", reg)
	}
	if _, err := s.RegisterTable(ctx, catalog.Table{Ident: id, Location: "file:///elsewhere"}); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Fatalf("second registration: %v", err)
	}
	got, err := s.Table(ctx, id)
	must(t, err)
	if got.ID != reg.ID || got.Location != "file:///w/sales/orders" || !got.Created.Equal(reg.Created) {
		t.Fatalf("loaded %+v, registered %+v", got, reg)
	}
	if _, err := s.Table(ctx, catalog.TableIdent{Namespace: ns, Name: "nope"}); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("missing table: %v", err)
	}
	if _, err := s.Table(ctx, catalog.TableIdent{Namespace: catalog.Namespace{"nope"}, Name: "t"}); !errors.Is(err, catalog.ErrNoSuchNamespace) {
		t.Fatalf("table of a missing namespace: %v", err)
	}
	if err := s.DropNamespace(ctx, ns); !errors.Is(err, catalog.ErrNamespaceNotEmpty) {
		t.Fatalf("drop namespace with a table: %v", err)
	}
	list, _, err := s.ListTables(ctx, ns, catalog.Page{})
	must(t, err)
	if len(list) != 1 || list[0].String() != "sales.orders" {
		t.Fatalf("tables: %v", list)
	}
	must(t, s.DropTable(ctx, id))
	if err := s.DropTable(ctx, id); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("second drop: %v", err)
	}
	must(t, s.DropNamespace(ctx, ns))
}

func testPaging(t *testing.T, s catalog.Store) {
	defer s.Close()
	ctx := context.Background()
	ns := catalog.Namespace{"n"}
	must(t, s.CreateNamespace(ctx, ns, nil))
	var want []string
	for i := range 23 {
		name := fmt.Sprintf("t%02d", i)
		want = append(want, name)
		_, err := s.RegisterTable(ctx, catalog.Table{Ident: catalog.TableIdent{Namespace: ns, Name: name}, Location: "mem://" + name})
		must(t, err)
		must(t, s.CreateNamespace(ctx, catalog.Namespace{"n", name}, nil))
	}
	for _, size := range []int{0, 1, 5, 23, 100} {
		var tables, namespaces []string
		tok := ""
		for pages := 0; ; pages++ {
			if pages > 30 {
				t.Fatalf("size %d: paging does not end", size)
			}
			page, next, err := s.ListTables(ctx, ns, catalog.Page{Token: tok, Size: size})
			must(t, err)
			if size > 0 && len(page) > size {
				t.Fatalf("size %d: a page of %d", size, len(page))
			}
			for _, id := range page {
				tables = append(tables, id.Name)
			}
			if tok = next; tok == "" {
				break
			}
		}
		for pages := 0; ; pages++ {
			if pages > 30 {
				t.Fatalf("size %d: paging does not end", size)
			}
			page, next, err := s.ListNamespaces(ctx, ns, catalog.Page{Token: tok, Size: size})
			must(t, err)
			for _, n := range page {
				namespaces = append(namespaces, n[1])
			}
			if tok = next; tok == "" {
				break
			}
		}
		if !slices.Equal(tables, want) || !slices.Equal(namespaces, want) {
			t.Fatalf("size %d: tables %v, namespaces %v, want %v", size, tables, namespaces, want)
		}
	}
	if _, _, err := s.ListTables(ctx, ns, catalog.Page{Token: "!!not base64"}); !errors.Is(err, catalog.ErrInvalidPageToken) {
		t.Fatalf("bad token: %v", err)
	}
}

func testInvalid(t *testing.T, s catalog.Store) {
	defer s.Close()
	ctx := context.Background()
	for _, name := range []string{"", ".", "..", "a/b", `a\b`, "a\x1fb", "a\nb", string(make([]byte, 256)), "\xff"} {
		if err := s.CreateNamespace(ctx, catalog.Namespace{name}, nil); !errors.Is(err, catalog.ErrInvalidName) {
			t.Errorf("namespace %q: %v", name, err)
		}
		if _, err := s.RegisterTable(ctx, catalog.Table{Ident: catalog.TableIdent{Namespace: catalog.Namespace{"ok"}, Name: name}, Location: "mem://x"}); !errors.Is(err, catalog.ErrInvalidName) {
			t.Errorf("table %q: %v", name, err)
		}
	}
	if err := s.CreateNamespace(ctx, nil, nil); !errors.Is(err, catalog.ErrInvalidName) {
		t.Errorf("empty namespace: %v", err)
	}
}

// testRace registers each of a few names from many goroutines at once:
// exactly one registration of each wins, the others get ErrAlreadyExists.
func testRace(t *testing.T, s catalog.Store) {
	defer s.Close()
	ctx := context.Background()
	ns := catalog.Namespace{"race"}
	must(t, s.CreateNamespace(ctx, ns, nil))
	const names, writers = 4, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[string][]string{}
	errs := make(chan error, names*writers)
	for w := range writers {
		for n := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("t%d", n)
				loc := fmt.Sprintf("mem://w%d/%s", w, name)
				_, err := s.RegisterTable(ctx, catalog.Table{Ident: catalog.TableIdent{Namespace: ns, Name: name}, Location: loc})
				switch {
				case err == nil:
					mu.Lock()
					won[name] = append(won[name], loc)
					mu.Unlock()
				case !errors.Is(err, catalog.ErrAlreadyExists):
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for n := range names {
		name := fmt.Sprintf("t%d", n)
		if len(won[name]) != 1 {
			t.Fatalf("%s: %d registrations won: %v", name, len(won[name]), won[name])
		}
		got, err := s.Table(ctx, catalog.TableIdent{Namespace: ns, Name: name})
		must(t, err)
		if got.Location != won[name][0] {
			t.Fatalf("%s: at %s, the winner registered %s", name, got.Location, won[name][0])
		}
	}
}
