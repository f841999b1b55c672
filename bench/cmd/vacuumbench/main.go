// Command vacuumbench measures VACUUM on a synthetic table of many files
// (issue 14). build writes the table: the log of package synth (a
// checkpoint of N live files) plus one commit that removes half of them,
// an empty data file on disk for every file the log names, and 1% more
// orphan files that no log names, all dated 30 days ago. run
// vacuums it (full, or -lite) with the default 7-day retention and prints
// the time and what it deleted; run it under /usr/bin/time -v for the peak
// RSS, on a fresh build each time (a run deletes files). bare is the floor
// VACUUM is measured against: it walks the same directories through the
// same store and deletes the same files (it knows them from how build made
// the table, with no log) with as many workers as VACUUM uses on a local
// disk.
//
//	go run ./bench/cmd/vacuumbench build -files 100000 /tmp/vac
//	go build -o /tmp/vacuumbench ./bench/cmd/vacuumbench
//	/usr/bin/time -v /tmp/vacuumbench run [-lite] [-dry-run] /tmp/vac
//	/usr/bin/time -v /tmp/vacuumbench bare [-dry-run] /tmp/vac
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/bench/synth"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "build":
		fs := flag.NewFlagSet("build", flag.ExitOnError)
		files := fs.Int("files", 100_000, "files in the table (live and removed)")
		fs.Parse(os.Args[2:])
		if fs.NArg() != 1 {
			usage()
		}
		err = build(fs.Arg(0), *files)
	case "run":
		fs := flag.NewFlagSet("run", flag.ExitOnError)
		lite := fs.Bool("lite", false, "lite mode (from the log alone)")
		dry := fs.Bool("dry-run", false, "find the files, delete nothing")
		fs.Parse(os.Args[2:])
		if fs.NArg() != 1 {
			usage()
		}
		err = run(fs.Arg(0), *lite, *dry)
	case "bare":
		fs := flag.NewFlagSet("bare", flag.ExitOnError)
		dry := fs.Bool("dry-run", false, "list only, delete nothing")
		fs.Parse(os.Args[2:])
		if fs.NArg() != 1 {
			usage()
		}
		err = bare(fs.Arg(0), *dry)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vacuumbench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: vacuumbench build [-files N] DIR | vacuumbench run [-lite] [-dry-run] DIR | vacuumbench bare [-dry-run] DIR")
	os.Exit(2)
}

func build(dir string, n int) error {
	ctx := context.Background()
	store, err := local.New(dir, local.WithoutSync())
	if err != nil {
		return err
	}
	if _, err := synth.Build(ctx, store, n, 0); err != nil {
		return err
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	ts := old.UnixMilli()
	acts := []actions.Action{{CommitInfo: &actions.CommitInfo{Timestamp: &ts, Operation: "DELETE"}}}
	for i := 0; i < n; i += 2 {
		a := synth.File(i)
		acts = append(acts, actions.Action{Remove: new(actions.RemoveOf(&a, ts, true))})
	}
	data, err := actions.EncodeCommit(acts)
	if err != nil {
		return err
	}
	if err := store.PutIfAbsent(ctx, deltalog.CommitKey(1), data); err != nil {
		return err
	}
	touch := func(rel string) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}
	for i := range n {
		if err := touch(synth.File(i).Path); err != nil {
			return err
		}
	}
	for i := range n / 100 {
		if err := touch(fmt.Sprintf("date=2026-01-%02d/orphan-%06d.parquet", i%28+1, i)); err != nil {
			return err
		}
	}
	// The commits are dated 30 days ago too (their files' times: the table
	// has no in-commit timestamps), so that lite mode, which reads only
	// the commits older than the retention as Spark's LITE does, finds the
	// removes.
	logFiles, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	if err != nil {
		return err
	}
	for _, f := range logFiles {
		if f.Type().IsRegular() {
			if err := os.Chtimes(filepath.Join(dir, "_delta_log", f.Name()), old, old); err != nil {
				return err
			}
		}
	}
	fmt.Printf("%s: %d files in the log (%d removed 30 days ago), %d orphans\n", dir, n, (n+1)/2, n/100)
	return nil
}

func run(dir string, lite, dry bool) error {
	ctx := context.Background()
	t, err := delta.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer t.Close()
	start := time.Now()
	res, err := t.Vacuum(ctx, delta.VacuumOptions{Lite: lite, DryRun: dry})
	if err != nil {
		return err
	}
	fmt.Printf("vacuum lite=%v dryRun=%v: %d files found, %d deleted, %d directories, in %v\n",
		lite, dry, len(res.Files), res.Deleted, res.Dirs, time.Since(start).Round(time.Millisecond))
	return nil
}

// bare walks every directory of the table but _delta_log through the store
// VACUUM uses and deletes what full VACUUM deletes there (the files build
// removed 30 days ago and the orphans), with 4 workers as VACUUM on a
// local disk: a listing plus the deletes, nothing else.
func bare(dir string, dry bool) error {
	ctx := context.Background()
	store, err := local.New(dir)
	if err != nil {
		return err
	}
	defer store.Close()
	start := time.Now()
	// Which files full VACUUM deletes, from the file's name: build removes
	// synth.File(i) for even i, and names orphans "orphan-*".
	doomed := map[string]bool{}
	for i := 0; ; i += 2 {
		f := synth.File(i)
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil {
			break
		}
		doomed[f.Path] = true
	}
	built := time.Since(start)
	start = time.Now()
	var found []string
	for info, err := range logstore.Walk(ctx, store, "", func(sub string) bool { return sub != deltalog.LogDir }) {
		if err != nil {
			return err
		}
		if doomed[info.Key] || strings.HasPrefix(path.Base(info.Key), "orphan-") {
			found = append(found, info.Key)
		}
	}
	listed := time.Since(start)
	jobs := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 4 {
		wg.Go(func() {
			for k := range jobs {
				if err := store.Delete(ctx, k); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	if !dry {
		for _, k := range found {
			jobs <- k
		}
	}
	close(jobs)
	wg.Wait()
	fmt.Printf("bare dryRun=%v: %d files found, listed in %v, deleted in %v, total %v (+%v to name the files, not counted)\n",
		dry, len(found), listed.Round(time.Millisecond), (time.Since(start) - listed).Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond), built.Round(time.Millisecond))
	return firstErr
}
