package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/catalogtest"
	"github.com/godelta/delta/catalog/server"
)

// A TABLE of the form catalog://HOST/NS.TABLE: the server of `delta
// catalog serve` says where the table is; a catalog-managed table is read
// and committed through its commits API, any other opened at its
// location.
func TestCatalogTableURI(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	db := filepath.Join(t.TempDir(), "c.db")
	plain := filepath.Join(wh, "sales", "plain")
	mustRun(t, "create", plain, "--schema", "id BIGINT")
	in := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(in, []byte("id\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "append", plain, in)

	// The catalog-managed table is made through the catalog, before the
	// server runs on the same database.
	managed := filepath.Join(wh, "sales", "managed")
	func() {
		srv, err := server.Open(ctx, server.Config{Warehouse: "file://" + wh, DB: db, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		catalogtest.ManagedTable(t, srv.Store().(*catalog.SQLStore), catalog.TableIdent{Namespace: catalog.Namespace{"sales"}, Name: "managed"}, managed)
	}()

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	pr, pw := io.Pipe()
	go func() {
		runContext(sctx, []string{"catalog", "serve", "--warehouse", wh, "--listen", "127.0.0.1:0", "--db", db, "--token", "tok"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no line: %v", err)
	}
	go io.Copy(io.Discard, pr)
	host := regexp.MustCompile(`http://([0-9.:]+)`).FindStringSubmatch(line)
	if host == nil {
		t.Fatalf("serve: %q", line)
	}
	t.Setenv(catalogTokenEnv, "tok")
	uri := func(name string) string { return "catalog://" + host[1] + "/" + name }

	if r := mustRun(t, "scan", uri("sales.plain"), "--format", "csv"); r.stdout != "id\n1\n2\n" {
		t.Fatalf("scan of the plain table: %q", r.stdout)
	}
	mustRun(t, "append", uri("sales.managed"), in)
	mustRun(t, "append", uri("sales.managed"), in)
	if r := mustRun(t, "scan", uri("sales.managed"), "--format", "csv"); !sameLines(r.stdout, "id\n1\n2\n1\n2\n") {
		t.Fatalf("scan of the managed table: %q", r.stdout)
	}
	if r := mustRun(t, "describe", uri("sales.managed"), "--json"); !strings.Contains(r.stdout, `"version": 2`) {
		t.Fatalf("describe: %s", r.stdout)
	}
	// The commits went through the catalog: staged, ratified, published.
	staged, _ := filepath.Glob(filepath.Join(managed, "_delta_log", "_staged_commits", "*.json"))
	if len(staged) != 3 {
		t.Fatalf("%d staged commits, want 3 (create and two appends)", len(staged))
	}
	// Without the catalog the directory is refused, as before.
	if r := runDelta("scan", managed); r.code == 0 || !strings.Contains(r.stderr, "catalog") {
		t.Fatalf("scan of the managed directory: exit %d: %s", r.code, r.stderr)
	}
	for _, c := range []struct{ name, table, want string }{
		{"no such table", uri("sales.nope"), "no table sales.nope: table not found"},
		{"no namespace", uri("nodot"), "NAMESPACE.TABLE"},
	} {
		if r := runDelta("scan", c.table); r.code == 0 || !strings.Contains(strings.ToLower(r.stderr), strings.ToLower(c.want)) {
			t.Fatalf("%s: exit %d: %s", c.name, r.code, r.stderr)
		}
	}
	t.Setenv(catalogTokenEnv, "")
	if r := runDelta("scan", uri("sales.plain")); r.code == 0 || !strings.Contains(r.stderr, "401") {
		t.Fatalf("without the token: exit %d: %s", r.code, r.stderr)
	}
}

// sameLines reports whether a and b hold the same lines in any order.
func sameLines(a, b string) bool {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(la) != len(lb) {
		return false
	}
	count := map[string]int{}
	for _, l := range la {
		count[l]++
	}
	for _, l := range lb {
		count[l]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}
