package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAppendAppVersion(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT")
	in := writeFile(t, filepath.Join(dir, "a.jsonl"), `{"id":1}`+"\n"+`{"id":2}`+"\n")
	if r := mustRun(t, "append", root, in, "--app-id", "etl", "--app-version", "3"); !strings.Contains(r.stdout, "appended 2 rows at version 1") {
		t.Fatalf("first append: %q", r.stdout)
	}
	for _, v := range []string{"3", "2"} {
		r := mustRun(t, "append", root, in, "--app-id", "etl", "--app-version", v)
		want := `appended 0 rows: application "etl" already committed version ` + v + ` (the table holds version 3), nothing committed`
		if strings.TrimSpace(r.stdout) != want {
			t.Fatalf("replay of %s: %q, want %q", v, r.stdout, want)
		}
	}
	if r := mustRun(t, "append", root, in, "--app-id", "etl", "--app-version", "4"); !strings.Contains(r.stdout, "at version 2") {
		t.Fatalf("next batch: %q", r.stdout)
	}
	for _, args := range [][]string{{"--app-id", "etl"}, {"--app-version", "1"}, {"--app-id", "", "--app-version", "1"}, {"--app-id", "x", "--app-version", "-1"}} {
		if r := runDelta(append([]string{"append", root, in}, args...)...); r.code != exitUsage {
			t.Errorf("append %v: exit %d, want %d (%s)", args, r.code, exitUsage, r.stderr)
		}
	}
	if got := strings.Count(mustRun(t, "scan", root, "--format", "jsonl").stdout, "\n"); got != 4 {
		t.Fatalf("table has %d rows, want 4", got)
	}
}

func TestTailOnce(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT", "--property", "delta.enableChangeDataFeed=true")
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.jsonl"), `{"id":1}`+"\n"))
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "b.jsonl"), `{"id":2}`+"\n"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "jsonl"}, `{"id":1}` + "\n" + `{"id":2}` + "\n"},
		{[]string{"--format", "jsonl", "--from", "2"}, `{"id":2}` + "\n"},
		{[]string{"--format", "jsonl", "--from-timestamp", "2000-01-01"}, `{"id":1}` + "\n" + `{"id":2}` + "\n"},
		{[]string{"--from", "1", "--max-files", "1"}, "id\n1\n(1 rows)\nid\n2\n(1 rows)\n"},
	} {
		r := mustRun(t, append([]string{"tail", root, "--once"}, tc.args...)...)
		if r.stdout != tc.want {
			t.Errorf("tail %v:\n%s\nwant\n%s", tc.args, r.stdout, tc.want)
		}
	}
	r := mustRun(t, "tail", root, "--once", "--format", "jsonl", "--from", "2", "--cdf")
	if !strings.HasPrefix(r.stdout, `{"id":2,"_change_type":"insert","_commit_version":2,"_commit_timestamp":"`) || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("tail --cdf: %q", r.stdout)
	}
	for _, args := range [][]string{{"--from", "1", "--from-timestamp", "2000-01-01"}, {"--format", "csv"}, {"--from", "-1"}, {"--from-timestamp", "nope"}} {
		if r := runDelta(append([]string{"tail", root, "--once"}, args...)...); r.code != exitUsage {
			t.Errorf("tail %v: exit %d, want %d", args, r.code, exitUsage)
		}
	}
	if r := runDelta("tail", root, "--once", "--from", "9"); r.code != exitFailure {
		t.Errorf("tail --from past the latest version: exit %d", r.code)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTailFollows checks that tail without --once prints new commits as
// they land and ends cleanly when cancelled (as by SIGINT).
func TestTailFollows(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT")
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.jsonl"), `{"id":1}`+"\n"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- runContext(ctx, []string{"tail", root, "--format", "jsonl", "--poll", "20ms"}, &out, &errOut)
	}()
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for out.String() != want {
			if time.Now().After(deadline) {
				t.Fatalf("tail printed %q, want %q", out.String(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor(`{"id":1}` + "\n")
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "b.jsonl"), `{"id":2}`+"\n"))
	waitFor(`{"id":1}` + "\n" + `{"id":2}` + "\n")
	cancel()
	if code := <-done; code != exitOK || errOut.String() != "" {
		t.Fatalf("tail after cancel: exit %d, %q", code, errOut.String())
	}
}
