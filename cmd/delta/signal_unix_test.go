//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangLimit is how long the test waits before it calls the command hung:
// no performance bound (the command stops within interruptGrace), a hang
// is forever.
const hangLimit = 30 * time.Second

// TestSignalEndsBlockedCommand checks issue 19 item 14: SIGTERM ends a
// command blocked where its context does not reach, here `append` reading
// its input from a named pipe whose writer sends nothing. Before, the
// signal only cancelled the context, and the process never ended.
func TestSignalEndsBlockedCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "delta")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT")
	in := filepath.Join(dir, "in.csv")
	if err := syscall.Mkfifo(in, 0o666); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cmd := exec.Command(bin, "append", root, in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer cmd.Process.Kill() // when the test fails with the command hung
	// Opening the pipe's write end without blocking succeeds only once
	// the command has it open for reading: from then on it is blocked
	// reading a pipe that stays open and empty.
	deadline := time.Now().Add(hangLimit)
	var w *os.File
	for {
		f, err := os.OpenFile(in, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w = f
			break
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command did not open its input within %v", hangLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer w.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(hangLimit):
		t.Fatalf("still running %v after SIGTERM", hangLimit)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("exit: %v, want status %d", err, 128+int(syscall.SIGTERM))
	}
	if !strings.Contains(stderr.String(), "terminated") {
		t.Errorf("stderr %q does not name the signal", stderr.String())
	}
	// Nothing was committed.
	if v := mustRun(t, "describe", root, "--json").stdout; !strings.Contains(v, `"version": 0,`) {
		t.Errorf("table changed:\n%s", v)
	}
}
