package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// The demo's shape: writers appending at once, commits each, rows each.
const (
	demoWriters       = 4
	demoCommitsEach   = 5
	demoRowsPerCommit = 2000
)

func newDemoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "demo [DIR]",
		Short: "Create a table, write to it from several goroutines, read it back",
		Long: "demo walks through the library on local disk: it creates a partitioned table in\n" +
			"DIR (a new temporary directory by default), appends to it from several goroutines\n" +
			"at once, scans it with a predicate, time-travels, checkpoints, and prints what\n" +
			"each step did and how long it took. The table stays for you to explore with the\n" +
			"other commands.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf(cmd, "want at most one DIR")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			} else {
				tmp, err := os.MkdirTemp("", "godelta-demo-*")
				if err != nil {
					return failure(err)
				}
				dir = tmp
			}
			w, flush := output(cmd)
			if err := runDemo(cmd.Context(), w, dir); err != nil {
				flush()
				return failure(err)
			}
			return flush()
		},
	}
}

func runDemo(ctx context.Context, w io.Writer, dir string) error {
	step := func(name string, start time.Time, format string, args ...any) {
		fmt.Fprintf(w, "%-12s %9s  %s\n", name, time.Since(start).Round(10*time.Microsecond), fmt.Sprintf(format, args...))
		if f, ok := w.(interface{ Flush() error }); ok {
			f.Flush()
		}
	}
	fmt.Fprintf(w, "godelta demo: a Delta table at %s\n\n", dir)

	// 1. Create.
	start := time.Now()
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, ts TIMESTAMP, region STRING, amount DECIMAL(10,2), note STRING")
	if err != nil {
		return err
	}
	t, err := delta.Create(ctx, dir, delta.TableSpec{
		Schema: sch, PartitionColumns: []string{"region"}, Name: "events",
		Properties: map[string]string{tableconfig.KeyConstraintPrefix + "positive_amount": "amount >= 0"},
	})
	if err != nil {
		return err
	}
	defer t.Close()
	step("create", start, "events, partitioned by region, CHECK (amount >= 0)")

	// 2. Concurrent appends.
	start = time.Now()
	regions := []string{"eu", "us", "apac"}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	var wg sync.WaitGroup
	errs := make([]error, demoWriters)
	for g := range demoWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range demoCommitsEach {
				rows := make([][]schema.Value, demoRowsPerCommit)
				for i := range rows {
					id := int64((g*demoCommitsEach+c)*demoRowsPerCommit + i)
					cents := (id * 7919) % 100000
					rows[i] = []schema.Value{
						schema.LongValue(id),
						schema.TimestampValue(base + id*1_000_000),
						schema.StringValue(regions[id%3]),
						must(schema.DecimalValueInt64(cents, 10, 2)),
						schema.StringValue(fmt.Sprintf("writer %d, commit %d", g, c)),
					}
				}
				if _, err := t.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
					errs[g] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return err
	}
	total := int64(demoWriters * demoCommitsEach * demoRowsPerCommit)
	step("append", start, "%d goroutines x %d commits of %d rows at once: versions 1..%d",
		demoWriters, demoCommitsEach, demoRowsPerCommit, snap.Version())

	// 3. Scan with a predicate.
	start = time.Now()
	const where = "region = 'eu' AND id < 8000 AND amount >= 900.00"
	pred, err := delta.ParsePredicate(where)
	if err != nil {
		return err
	}
	s, err := t.Scan(snap, delta.ScanOptions{Predicate: pred, Columns: []string{"id", "amount"}})
	if err != nil {
		return err
	}
	n := 0
	for _, err := range s.Rows(ctx) {
		if err != nil {
			return err
		}
		n++
	}
	m := s.Metrics()
	step("scan", start, "%s: %d rows; %d of %d files skipped unread", where, n, m.FilesSkipped(), m.FilesTotal)

	// 4. Time travel.
	start = time.Now()
	old, err := t.SnapshotAt(ctx, 5)
	if err != nil {
		return err
	}
	then, err := countRows(ctx, t, old)
	if err != nil {
		return err
	}
	now, err := countRows(ctx, t, snap)
	if err != nil {
		return err
	}
	if now != total {
		return fmt.Errorf("demo: %d rows in the table, want %d", now, total)
	}
	step("time travel", start, "version 5 had %d rows; version %d has %d", then, snap.Version(), now)

	// 5. Checkpoint, and load from it.
	start = time.Now()
	v, err := t.Checkpoint(ctx)
	if err != nil {
		return err
	}
	fresh, err := t.Snapshot(ctx)
	if err != nil {
		return err
	}
	cp, _ := fresh.Segment().CheckpointVersion()
	numFiles, err := fresh.NumFiles(ctx)
	if err != nil {
		return err
	}
	step("checkpoint", start, "at version %d; the table now loads from checkpoint %d, %d files", v, cp, numFiles)

	// 6. A constraint at work.
	start = time.Now()
	_, err = t.AppendRows(ctx, [][]schema.Value{{schema.LongValue(-1), schema.Value{}, schema.StringValue("eu"),
		must(schema.DecimalValueInt64(-100, 10, 2)), schema.Value{}}}, delta.WriteOptions{})
	if err == nil {
		return fmt.Errorf("demo: a row breaking the CHECK constraint was written")
	}
	if !errors.Is(err, delta.ErrConstraint) {
		return fmt.Errorf("demo: a row breaking the CHECK constraint: %w", err)
	}
	step("constraint", start, "a row with amount -1.00 is refused, nothing committed")

	// 7. Rows changed in place: a DELETE, then an OPTIMIZE of the files
	// it and the appends left, then what VACUUM would reclaim.
	start = time.Now()
	del, err := t.Delete(ctx, "region = 'us' AND id % 10 = 0", delta.DMLOptions{})
	if err != nil {
		return err
	}
	step("delete", start, "region = 'us' AND id %% 10 = 0: %d rows deleted (%s), %d files rewritten, version %d",
		del.Metrics.NumDeletedRows, del.Strategy, del.Metrics.NumRemovedFiles, del.Commit.Version)

	start = time.Now()
	opt, err := t.Optimize(ctx, delta.OptimizeOptions{})
	if err != nil {
		return err
	}
	step("optimize", start, "%d small files compacted into %d (dataChange=false), version %d",
		opt.Metrics.NumFilesRemoved, opt.Metrics.NumFilesAdded, opt.Commit.Version)

	start = time.Now()
	vac, err := t.Vacuum(ctx, delta.VacuumOptions{DryRun: true})
	if err != nil {
		return err
	}
	step("vacuum", start, "dry run: %d files to delete; the %d files DELETE and OPTIMIZE removed stay %v for readers of older versions",
		len(vac.Files), del.Metrics.NumRemovedFiles+opt.Metrics.NumFilesRemoved, vac.TableRetention)

	// 8. History.
	start = time.Now()
	hist, err := t.History(ctx, 3)
	if err != nil {
		return err
	}
	step("history", start, "%d commits; the latest is %s at version %d", hist[0].Version+1, hist[0].Info.Operation, hist[0].Version)

	fmt.Fprintf(w, "\nTry: go run ./cmd/delta scan %s --where \"region = 'us' AND id < 20\"\n", dir)
	fmt.Fprintf(w, "     go run ./cmd/delta history %s --limit 5\n", dir)
	return nil
}

func countRows(ctx context.Context, t *delta.Table, snap *delta.Snapshot) (int64, error) {
	s, err := t.Scan(snap, delta.ScanOptions{Columns: []string{}})
	if err != nil {
		return 0, err
	}
	var n int64
	for b, err := range s.Batches(ctx) {
		if err != nil {
			return 0, err
		}
		n += int64(b.Len)
	}
	return n, nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
