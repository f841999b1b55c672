//go:build catalog_postgres

package main

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/godelta/delta/catalog/postgres/pgtest"
)

// TestCatalogServePostgres runs two `delta catalog serve` over one
// PostgreSQL database (on loopback): a namespace created through one is
// listed by the other.
func TestCatalogServePostgres(t *testing.T) {
	pg := pgtest.Start(t)
	dsn := pg.NewDB(t)
	wh := t.TempDir()
	if code := run([]string{"create", filepath.Join(wh, "sales", "orders"), "--schema", "id long"}, io.Discard, io.Discard); code != 0 {
		t.Fatal("create failed")
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var urls []string
	for range 2 {
		pr, pw := io.Pipe()
		go func() {
			runContext(ctx, []string{"catalog", "serve", "--warehouse", wh, "--listen", "127.0.0.1:0", "--db", dsn}, pw, io.Discard)
			pw.Close()
		}()
		line, err := bufio.NewReader(pr).ReadString('\n')
		if err != nil {
			t.Fatalf("serve printed no line: %v", err)
		}
		go io.Copy(io.Discard, pr)
		if strings.Contains(line, "postgres@") {
			t.Fatalf("serve prints the database URL with its user: %q", line)
		}
		urls = append(urls, regexp.MustCompile(`http://[0-9.:]+`).FindString(line))
	}
	var out strings.Builder
	if code := run([]string{"catalog", "create", "ops", "--catalog", urls[0]}, &out, io.Discard); code != 0 {
		t.Fatalf("create through the first server: %d", code)
	}
	out.Reset()
	if code := run([]string{"catalog", "ls", "--catalog", urls[1]}, &out, io.Discard); code != 0 || out.String() != "ops\nsales\n" {
		t.Fatalf("ls through the second server: %d %q", code, out.String())
	}
}
