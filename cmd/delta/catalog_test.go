package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCatalogCommands runs `delta catalog serve` over a warehouse on
// loopback and calls it with ls, create and register.
func TestCatalogCommands(t *testing.T) {
	wh := t.TempDir()
	var out, errb bytes.Buffer
	orders := filepath.Join(wh, "sales", "orders")
	if code := run([]string{"create", orders, "--schema", "id long, name string", "--property", "delta.universalFormat.enabledFormats=iceberg"}, &out, &errb); code != 0 {
		t.Fatalf("create: %d %s", code, errb.String())
	}
	elsewhere := t.TempDir() // outside the warehouse: --allow-location
	other := filepath.Join(elsewhere, "other")
	outside := filepath.Join(t.TempDir(), "outside") // outside, not allowed
	if code := run([]string{"create", outside, "--schema", "id long"}, &out, &errb); code != 0 {
		t.Fatalf("create: %d %s", code, errb.String())
	}
	if code := run([]string{"create", other, "--schema", "id long"}, &out, &errb); code != 0 {
		t.Fatalf("create: %d %s", code, errb.String())
	}

	ctx, stop := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	served := make(chan int, 1)
	go func() {
		served <- runContext(ctx, []string{"catalog", "serve", "--warehouse", wh, "--listen", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "c.db"), "--token", "tok", "--allow-location", elsewhere}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no line: %v", err)
	}
	go io.Copy(io.Discard, pr)
	url := regexp.MustCompile(`http://[0-9.:]+`).FindString(line)
	if url == "" || !strings.Contains(line, "1 tables registered") {
		t.Fatalf("serve: %q", line)
	}
	t.Setenv(catalogTokenEnv, "")
	t.Setenv(catalogURIEnv, url)

	cases := []struct {
		name string
		args []string
		code int
		out  string // the whole output, or the error's start for code != 0
	}{
		{"ls", []string{"catalog", "ls", "--token", "tok"}, 0, "sales\n"},
		{"ls without the token", []string{"catalog", "ls"}, 1, "delta: catalog: the catalog failed: GET /v1/namespaces: 401 NotAuthorizedException"},
		{"ls tables", []string{"catalog", "ls", "sales", "--token", "tok"}, 0, "sales.orders\n"},
		{"ls tables of a missing namespace", []string{"catalog", "ls", "nope", "--token", "tok"}, 1, "delta: catalog: no such namespace"},
		{"create", []string{"catalog", "create", "ops", "--property", "owner=me", "--token", "tok"}, 0, "created namespace ops\n"},
		{"create nested", []string{"catalog", "create", "ops.eu", "--token", "tok"}, 0, "created namespace ops.eu\n"},
		{"create existing", []string{"catalog", "create", "ops", "--token", "tok"}, 1, "delta: catalog: already exists"},
		{"create bad property", []string{"catalog", "create", "x", "--property", "novalue", "--token", "tok"}, 2, "delta: --property"},
		{"ls all levels", []string{"catalog", "ls", "--token", "tok", "--json"}, 0, "[\n  \"ops\",\n  \"ops.eu\",\n  \"sales\"\n]\n"},
		{"register", []string{"catalog", "register", "ops.other", other, "--token", "tok"}, 0, "registered ops.other at file://" + filepath.ToSlash(other) + "\niceberg metadata:  none (UniForm Iceberg is off: `delta iceberg --enable` turns it on)\n"},
		{"register again", []string{"catalog", "register", "ops.other", other, "--token", "tok"}, 1, "delta: catalog: already exists"},
		{"register UniForm", []string{"catalog", "register", "ops.orders", orders, "--token", "tok"}, 0, "registered ops.orders at file://" + filepath.ToSlash(orders) + "\niceberg metadata:  file://" + filepath.ToSlash(orders) + "/metadata/v1.metadata.json\n"},
		{"register no table", []string{"catalog", "register", "ops.x", filepath.Join(elsewhere, "none"), "--token", "tok"}, 1, "delta: catalog: the catalog refused the request"},
		{"register outside", []string{"catalog", "register", "ops.y", outside, "--token", "tok"}, 1, "delta: catalog: the catalog failed: POST /v1/namespaces/ops/register: 403 ForbiddenException: catalog server: file://" + filepath.ToSlash(outside) + " is outside the warehouse and every allowed location"},
		{"register bad name", []string{"catalog", "register", "nodot", other, "--token", "tok"}, 2, "delta: catalog: invalid name"},
		{"ls registered", []string{"catalog", "ls", "ops", "--token", "tok"}, 0, "ops.orders\nops.other\n"},
		{"bad catalog URL", []string{"catalog", "ls", "--catalog", "ftp://x"}, 2, "delta: catalog: URI \"ftp://x\""},
		{"serve without warehouse", []string{"catalog", "serve"}, 2, "delta: --warehouse is required"},
		{"unknown catalog command", []string{"catalog", "nope"}, 2, "delta: unknown catalog command"},
	}
	for _, c := range cases {
		out.Reset()
		errb.Reset()
		code := run(c.args, &out, &errb)
		if code != c.code {
			t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", c.name, code, c.code, out.String(), errb.String())
		}
		if c.code == 0 && out.String() != c.out {
			t.Fatalf("%s: output %q, want %q", c.name, out.String(), c.out)
		}
		if c.code != 0 && !strings.HasPrefix(errb.String(), c.out) {
			t.Fatalf("%s: error %q, want it to start with %q", c.name, errb.String(), c.out)
		}
	}
	stop()
	if code := <-served; code != 0 {
		t.Fatalf("serve ended with %d", code)
	}
	if _, err := os.Stat(filepath.Join(wh, "_delta_catalog.db")); !os.IsNotExist(err) {
		t.Fatalf("serve with --db wrote a database into the warehouse: %v", err)
	}
}
