//go:build unix

package delta

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/local"
)

// fifoHangLimit is how long a call may take before the test calls it hung:
// no performance bound (the calls take milliseconds), a hang is forever.
const fifoHangLimit = 30 * time.Second

// TestFIFOInTable checks issue 19 item 14: a named pipe where the table has
// a data file, or at the name of the next commit, is refused at once with
// an error naming it (local.ErrNotRegular), where before `scan` and
// `append` blocked forever opening it.
func TestFIFOInTable(t *testing.T) {
	cases := []struct {
		name string
		// fifo returns the file of the table to replace by a pipe.
		fifo func(t *testing.T, dir string) string
		run  func(ctx context.Context, tbl *Table) error
	}{{
		name: "data file, read by a scan",
		fifo: func(t *testing.T, dir string) string {
			m, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
			if err != nil || len(m) != 1 {
				t.Fatalf("data files %q, %v; want one", m, err)
			}
			return m[0]
		},
		run: func(ctx context.Context, tbl *Table) error {
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				return err
			}
			s, err := tbl.Scan(snap, ScanOptions{})
			if err != nil {
				return err
			}
			for _, err := range s.Rows(ctx) {
				if err != nil {
					return err
				}
			}
			return nil
		},
	}, {
		name: "next commit, met by an append",
		fifo: func(t *testing.T, dir string) string {
			return filepath.Join(dir, filepath.FromSlash(deltalog.CommitKey(2)))
		},
		run: func(ctx context.Context, tbl *Table) error {
			_, err := tbl.AppendRows(ctx, longRows(3), WriteOptions{})
			return err
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			tbl, err := Create(ctx, dir, TableSpec{Schema: idSchema})
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Close()
			if _, err := tbl.AppendRows(ctx, longRows(1, 2), WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			p := tc.fifo(t, dir)
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o666); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan error, 1)
			go func() { done <- tc.run(ctx, tbl) }()
			select {
			case err = <-done:
			case <-time.After(fifoHangLimit):
				t.Fatalf("still blocked after %v", fifoHangLimit)
			}
			if !errors.Is(err, local.ErrNotRegular) || !strings.Contains(err.Error(), p) {
				t.Errorf("error = %v, want local.ErrNotRegular naming %s", err, p)
			}
		})
	}
}
