// Package testserver starts the object-store servers the backend tests run
// against (versitygw for S3, fake-gcs-server for GCS, Azurite for Azure
// Blob) as child processes on 127.0.0.1, each with its data in a temporary
// directory or in memory, and stops them when the test binary ends.
//
// A server's binary is found through an environment variable, else where
// scripts/test-servers.sh installs it. When it is missing the caller gets
// ErrNotInstalled, whose message names the one command that installs all
// three; tests skip with it, except in CI (CI set), where they fail.
package testserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// ErrNotInstalled is returned when a server's binary cannot be found.
var ErrNotInstalled = errors.New("testserver: server not installed; run scripts/test-servers.sh install")

// Server is a running server process.
type Server struct {
	// Addr is host:port on 127.0.0.1.
	Addr   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has been waited for
	dir    string
	out    *lockedBuffer
}

// URL returns http://Addr.
func (s *Server) URL() string { return "http://" + s.Addr }

// Stop ends the process and removes its data directory.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Output returns what the server printed, for failure messages.
func (s *Server) Output() string { return s.out.String() }

// Require returns the server, or ends the test: it is skipped when the
// server is not installed, unless CI is set, and fails on other errors.
func Require(t testing.TB, s *Server, err error) *Server {
	t.Helper()
	if errors.Is(err, ErrNotInstalled) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// repoRoot is the module root, found from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// findBinary returns the binary named by env, else the first of paths
// that exists, else ErrNotInstalled.
func findBinary(env string, paths ...string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w (%s=%s: %v)", ErrNotInstalled, env, p, err)
		}
		return p, nil
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(filepath.Base(paths[0])); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w (looked for %s)", ErrNotInstalled, filepath.Base(paths[0]))
}

func goBin() string {
	if gb := os.Getenv("GOBIN"); gb != "" {
		return gb
	}
	gp := os.Getenv("GOPATH")
	if gp == "" {
		home, _ := os.UserHomeDir()
		gp = filepath.Join(home, "go")
	}
	return filepath.Join(gp, "bin")
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs bin with args and waits until readyURL answers 2xx, or the
// process exits, or 60 seconds pass. dir, if set, is removed by Stop.
func start(bin string, args []string, env []string, dir string, port int, readyPath string) (*Server, error) {
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir, out: &lockedBuffer{}}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		s.Stop()
		return nil, fmt.Errorf("testserver: starting %s: %w", bin, err)
	}
	s.exited = make(chan struct{})
	exited := make(chan error, 1)
	go func() {
		exited <- s.cmd.Wait()
		close(s.exited)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case err := <-exited:
			<-s.exited
			s.cmd = nil
			s.Stop()
			return nil, fmt.Errorf("testserver: %s exited before it was ready (%v): %s", filepath.Base(bin), err, s.out.String())
		case <-ctx.Done():
			s.Stop()
			return nil, fmt.Errorf("testserver: %s not ready after 60s: %s", filepath.Base(bin), s.out.String())
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := client.Get(s.URL() + readyPath)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return s, nil
			}
		}
	}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf) < 1<<20 {
		b.buf = append(b.buf, p...)
	}
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
