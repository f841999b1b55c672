package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTailTableReplaced: tail following a table whose directory is
// deleted and a table created there again stops with one message saying
// so, instead of printing the new table's rows as if the old one went on
// (and skipping those of its first commits).
func TestTailTableReplaced(t *testing.T) {
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
	deadline := time.Now().Add(30 * time.Second)
	for out.String() != `{"id":1}`+"\n" {
		if time.Now().After(deadline) {
			t.Fatalf("tail printed %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The table is deleted and created again, with more commits than the
	// old one had.
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "create", root, "--schema", "id BIGINT")
	for i := 100; i < 103; i++ {
		mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "b.jsonl"), `{"id":`+strconv.Itoa(i)+`}`+"\n"))
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("tail still running after the table was replaced; printed %q", out.String())
	}
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	if out.String() != `{"id":1}`+"\n" {
		t.Errorf("tail printed the new table's rows: %q", out.String())
	}
	stderr := errOut.String()
	checkErrorLine(t, "tail of a replaced table", stderr)
	if !strings.Contains(stderr, "replaced") {
		t.Errorf("stderr %q does not say the table was replaced", stderr)
	}
}
