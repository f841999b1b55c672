package optimize_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/txn"
)

// Exit statuses of the child process.
const (
	childOK       = 0
	childConflict = 3
	childFailed   = 4
)

// TestMain runs OPTIMIZE as a child process when the environment asks for
// it: the test binary re-executes itself, so that separate processes, with
// nothing shared but the table's directory, optimize one table.
func TestMain(m *testing.M) {
	if dir := os.Getenv("OPTIMIZE_CHILD_TABLE"); dir != "" {
		os.Exit(child(dir, os.Getenv("OPTIMIZE_CHILD_VERSION"), os.Getenv("OPTIMIZE_CHILD_WHERE")))
	}
	os.Exit(m.Run())
}

// child optimizes the table at dir as of version (all of them started at
// once read the same version), limited to where.
func child(dir, version, where string) int {
	tbl, err := delta.Open(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return childFailed
	}
	defer tbl.Close()
	v, _ := strconv.ParseInt(version, 10, 64)
	snap, err := tbl.SnapshotAt(ctx, v)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return childFailed
	}
	var opts optimize.Options
	if where != "" {
		if opts.Where, err = expr.Parse(where); err != nil {
			return childFailed
		}
	}
	_, err = optimize.Run(ctx, snap, opts)
	switch {
	case errors.Is(err, txn.ErrConflict):
		fmt.Fprintln(os.Stderr, err)
		return childConflict
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return childFailed
	}
	return childOK
}

// runChildren starts one process per predicate, all at version v, and
// returns their exit statuses.
func runChildren(t *testing.T, dir string, v int64, wheres []string) []int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	codes := make([]int, len(wheres))
	var wg sync.WaitGroup
	for i, w := range wheres {
		wg.Go(func() {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), "OPTIMIZE_CHILD_TABLE="+dir, "OPTIMIZE_CHILD_VERSION="+strconv.FormatInt(v, 10), "OPTIMIZE_CHILD_WHERE="+w)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			switch {
			case errors.As(err, &ee):
				codes[i] = ee.ExitCode()
			case err != nil:
				t.Error(err)
			}
			if len(out) > 0 {
				t.Logf("child %q: %s", w, strings.TrimSpace(string(out)))
			}
		})
	}
	wg.Wait()
	return codes
}

// everAdded lists the paths every commit of the table added.
func everAdded(t *testing.T, tbl *delta.Table) []string {
	t.Helper()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for v := int64(0); v <= snap.Version(); v++ {
		for _, a := range commitActions(t, tbl, v) {
			if a.Add != nil {
				out = append(out, a.Add.Path)
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestSeparateProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	setup := func(t *testing.T) (*delta.Table, string, []string) {
		dir := filepath.Join(t.TempDir(), "t")
		tbl, err := delta.Create(ctx, dir, delta.TableSpec{Schema: eventSchema(), PartitionColumns: []string{"p"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tbl.Close() })
		var next int64
		return tbl, dir, sortedCopy(appendFiles(t, tbl, []string{"a", "b", "c"}, 3, 20, &next))
	}

	t.Run("disjoint partitions all commit", func(t *testing.T) {
		tbl, dir, want := setup(t)
		snap, _ := tbl.Snapshot(ctx)
		codes := runChildren(t, dir, snap.Version(), []string{"p = 'a'", "p = 'b'", "p = 'c'"})
		if !slices.Equal(codes, []int{childOK, childOK, childOK}) {
			t.Fatalf("exit statuses %v", codes)
		}
		if n := len(liveFiles(t, tbl)); n != 3 {
			t.Errorf("%d files, want one per partition", n)
		}
		if got := tableRows(t, tbl); !slices.Equal(got, want) {
			t.Fatal("rows changed")
		}
	})

	t.Run("overlapping: one conflicts and leaves nothing", func(t *testing.T) {
		tbl, dir, want := setup(t)
		snap, _ := tbl.Snapshot(ctx)
		codes := runChildren(t, dir, snap.Version(), []string{"p = 'a'", "p IN ('a', 'b')", ""})
		slices.Sort(codes)
		// All three rewrite partition a: exactly one wins.
		if !slices.Equal(codes, []int{childOK, childConflict, childConflict}) {
			t.Fatalf("exit statuses %v", codes)
		}
		if got := tableRows(t, tbl); !slices.Equal(got, want) {
			t.Fatal("rows changed")
		}
		// Every Parquet file on disk is one some commit added: the
		// losers deleted theirs.
		if disk, logged := dataFiles(t, tbl), everAdded(t, tbl); !slices.Equal(disk, logged) {
			t.Errorf("files on disk %v\nfiles in the log %v", disk, logged)
		}
		var ops []string
		for v := snap.Version() + 1; ; v++ {
			if _, err := tbl.Store().Get(ctx, fmt.Sprintf("_delta_log/%020d.json", v)); err != nil {
				break
			}
			for _, a := range commitActions(t, tbl, v) {
				if a.CommitInfo != nil {
					ops = append(ops, a.CommitInfo.Operation)
				}
			}
		}
		if !slices.Equal(ops, []string{"OPTIMIZE"}) {
			t.Errorf("commits after the setup: %v", ops)
		}
	})
}
