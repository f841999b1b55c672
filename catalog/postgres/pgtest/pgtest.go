// Package pgtest starts a real PostgreSQL server on loopback for tests:
// initdb into a temporary directory, pg_ctl start on a free port, trust
// authentication, stopped and removed when the test ends. It finds the
// server's programs on PATH or under /usr/lib/postgresql/*/bin (Debian's
// postgresql package); a test without them is skipped, saying so. Run as
// root, the server runs as the user postgres (PostgreSQL refuses root).
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// Server is a running PostgreSQL server.
type Server struct {
	// Port is the TCP port on 127.0.0.1.
	Port int
	dbs  atomic.Int64
}

// bin finds a PostgreSQL program.
func bin(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p, true
		}
	}
	return "", false
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Start starts a server for the test t and stops it at t's end.
func Start(t testing.TB) *Server {
	t.Helper()
	initdb, ok1 := bin("initdb")
	pgctl, ok2 := bin("pg_ctl")
	if !ok1 || !ok2 {
		t.Skip("PostgreSQL's initdb and pg_ctl are not installed (apt-get install postgresql)")
	}
	dir, err := os.MkdirTemp("", "pgtest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var asUser []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root and there is no user postgres to run PostgreSQL as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		runuser, ok := bin("runuser")
		if !ok {
			t.Skip("running as root without runuser to run PostgreSQL as postgres")
		}
		asUser = []string{runuser, "-u", "postgres", "--"}
	}
	run := func(args ...string) {
		t.Helper()
		argv := append(append([]string{}, asUser...), args...)
		cmd := exec.Command(argv[0], argv[1:]...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	data := filepath.Join(dir, "data")
	run(initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	opts := fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -c fsync=off -c full_page_writes=off", port, dir)
	run(pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start")
	t.Cleanup(func() { run(pgctl, "-D", data, "-m", "immediate", "-w", "stop") })
	return &Server{Port: port}
}

// DSN is the URL of database db on the server.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// NewDB creates an empty database and returns its URL.
func (s *Server) NewDB(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("db%d", s.dbs.Add(1))
	db, err := sql.Open("pgx", s.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return s.DSN(name)
}
