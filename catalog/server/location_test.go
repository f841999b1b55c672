package server_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/icebergrest"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/catalogmanaged/ucrest"
)

// TestLocationPolicy: clients register tables (Iceberg's register, the
// Delta-Tables API's EXTERNAL create) inside the warehouse and the
// allowed locations only. A location elsewhere, one that climbs out of
// the warehouse with "..", and an object store location on another
// endpoint are refused with 403 before the server opens them (the
// endpoint on loopback is never connected to), and nothing is
// registered.
func TestLocationPolicy(t *testing.T) {
	ctx := context.Background()
	wh, _ := warehouse(t)
	allowed, outside := t.TempDir(), t.TempDir()
	makeTable(t, filepath.Join(allowed, "t"), true)
	makeTable(t, filepath.Join(outside, "t"), true)
	makeTable(t, filepath.Join(wh, "_joined", "t"), true) // in the warehouse, not scanned

	// An endpoint that counts the connections made to it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dialed atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			c.Close()
		}
	}()
	defer ln.Close()

	srv, base := serve(t, server.Config{Warehouse: wh, Token: "tok", AllowLocations: []string{"file://" + filepath.ToSlash(allowed)}})
	c, err := icebergrest.NewClient(base, "tok", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []catalog.Namespace{{"ops"}, {"ops", "default"}} {
		if err := c.CreateNamespace(ctx, ns, nil); err != nil {
			t.Fatal(err)
		}
	}
	api := base + server.UCRoot + ucrest.V1Path
	for i, tc := range []struct {
		name, loc string
		ok        bool
	}{
		{"allowed location", "file://" + filepath.ToSlash(filepath.Join(allowed, "t")), true},
		{"inside the warehouse", "file://" + filepath.ToSlash(filepath.Join(wh, "_joined", "t")), true},
		{"elsewhere", "file://" + filepath.ToSlash(filepath.Join(outside, "t")), false},
		{"out of the warehouse by ..", "file://" + filepath.ToSlash(wh) + "/../" + filepath.Base(outside) + "/t", false},
		{"out of an allowed location by ..", "file://" + filepath.ToSlash(allowed) + "/../" + filepath.Base(outside) + "/t", false},
		{"another endpoint", "s3://bucket/t?endpoint=http://" + ln.Addr().String(), false},
	} {
		for _, via := range []string{"iceberg", "delta"} {
			name := "t" + string(rune('a'+i)) + via
			t.Run(tc.name+" through "+via, func(t *testing.T) {
				id := catalog.TableIdent{Namespace: catalog.Namespace{"ops"}, Name: name}
				var status int
				var typ string
				if via == "iceberg" {
					_, err := c.RegisterTable(ctx, id, tc.loc)
					if tc.ok != (err == nil) {
						t.Fatalf("register at %s: %v", tc.loc, err)
					}
					if err != nil {
						status, typ = 403, "ForbiddenException"
						if !strings.Contains(err.Error(), "403 ForbiddenException") || !strings.Contains(err.Error(), "outside the warehouse") {
							t.Fatalf("refusal: %v", err)
						}
					}
				} else {
					a := call(t, "POST", api+"/catalogs/ops/schemas/default/tables", "tok", `{"name": "`+name+`", "location": "`+tc.loc+`", "table-type": "EXTERNAL", "columns": {"type": "struct", "fields": []}, "protocol": {"min-reader-version": 1, "min-writer-version": 2}, "properties": {}, "last-commit-timestamp-ms": 1}`)
					status = a.status
					if !tc.ok {
						typ = "PermissionDeniedException"
						if a.status != 403 || !strings.Contains(a.body, typ) {
							t.Fatalf("EXTERNAL create at %s: %d %s", tc.loc, a.status, a.body)
						}
					} else if a.status != 200 {
						t.Fatalf("EXTERNAL create at %s: %d %s", tc.loc, a.status, a.body)
					}
					id = catalog.TableIdent{Namespace: catalog.Namespace{"ops", "default"}, Name: name}
				}
				if !tc.ok {
					if _, err := srv.Store().Table(ctx, id); err == nil {
						t.Fatalf("refused (%d %s) but registered", status, typ)
					}
				}
			})
		}
	}
	if n := dialed.Load(); n != 0 {
		t.Fatalf("the server connected %d times to a location it refused", n)
	}
}
