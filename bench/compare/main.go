// Command compare runs this library and rivian/delta-go side by side on the
// same synthetic tables (see package bench/synth) and prints the median
// time and peak RSS of each case, and their ratios. See bench/README.md.
//
// Every measurement runs in a child process (this binary, re-executed with
// -child), so that its peak RSS is the child's own (getrusage). The two
// libraries alternate, repetition by repetition, on the same table, and
// each child prints a digest of the paths of the active files it saw (an
// order-independent sum of their hashes, computed the same way by both,
// after the timed operation; its memory counts in the peak RSS); the
// parent checks that both libraries agree.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/godelta/delta/bench/synth"
	"github.com/godelta/delta/logstore/local"
)

// result is what a child prints on stdout, as JSON.
type result struct {
	Millis float64 `json:"ms"`
	Files  int     `json:"files"`
	Digest string  `json:"digest"`
	Note   string  `json:"note,omitempty"`
}

// A case is one measured operation.
type caseDef struct {
	name    string
	minSize int  // run only on tables at least this big
	ours    bool // no delta-go counterpart
}

var cases = []caseDef{
	{name: "open-latest"},
	{name: "open-v5"},
	{name: "update-10"},
	{name: "scan-plan", minSize: 1_000_000, ours: true},
	{name: "checkpoint", minSize: 1_000_000},
}

func main() {
	child := flag.String("child", "", "internal: run one measurement: IMPL CASE DIR")
	sizesFlag := flag.String("sizes", "10000,100000", "table sizes (live files in the checkpoint)")
	large := flag.Bool("large", false, "add the 1,000,000-file table")
	reps := flag.Int("reps", 3, "repetitions per case and library")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "godelta-compare"), "where the tables are built (kept between runs)")
	only := flag.String("cases", "", "comma-separated case names to run (default all)")
	flag.Parse()
	if *child != "" {
		runChild(*child, flag.Args())
		return
	}
	var sizes []int
	for _, s := range strings.Split(*sizesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fatalf("bad -sizes: %v", err)
		}
		sizes = append(sizes, n)
	}
	if *large && !slices.Contains(sizes, 1_000_000) {
		sizes = append(sizes, 1_000_000)
	}
	self, err := os.Executable()
	if err != nil {
		fatalf("%v", err)
	}
	fmt.Printf("%-12s %-10s %-8s %12s %12s %10s %10s  %s\n", "case", "files", "library", "median ms", "peak RSS MB", "x time", "x RSS", "active files / digest")
	for _, n := range sizes {
		table := filepath.Join(*dir, fmt.Sprintf("t%d", n))
		if err := build(table, n); err != nil {
			fatalf("building %s: %v", table, err)
		}
		for _, c := range cases {
			if n < c.minSize || (*only != "" && !slices.Contains(strings.Split(*only, ","), c.name)) {
				continue
			}
			runCase(self, c, table, n, *reps)
		}
	}
}

// build writes the synthetic table of n checkpoint files and 10 commits
// into dir unless it is already there.
func build(dir string, n int) error {
	if _, err := os.Stat(filepath.Join(dir, "_delta_log", "00000000000000000010.json")); err == nil {
		return nil
	}
	os.RemoveAll(dir)
	store, err := local.New(dir, local.WithoutSync())
	if err != nil {
		return err
	}
	t := time.Now()
	live, err := synth.Build(context.Background(), store, n, 10)
	fmt.Fprintf(os.Stderr, "built %s: %d live files in %v\n", dir, live, time.Since(t).Round(time.Millisecond))
	return err
}

type sample struct {
	res   result
	rssKB int64
}

func runCase(self string, c caseDef, table string, n, reps int) {
	impls := []string{"godelta", "deltago"}
	if c.ours {
		impls = impls[:1]
	}
	samples := map[string][]sample{}
	for r := 0; r < reps; r++ {
		for _, impl := range impls {
			dir := table
			if c.name == "update-10" || c.name == "checkpoint" {
				// These cases write: give each run its own copy of the log.
				var err error
				if dir, err = copyTable(table); err != nil {
					fatalf("%v", err)
				}
			}
			s, err := runOnce(self, impl, c.name, dir)
			if dir != table {
				os.RemoveAll(dir)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s %s on %s: %v\n", impl, c.name, table, err)
				continue
			}
			samples[impl] = append(samples[impl], s)
		}
	}
	med := map[string][2]float64{}
	for _, impl := range impls {
		ss := samples[impl]
		if len(ss) == 0 {
			continue
		}
		var ms, rss []float64
		for _, s := range ss {
			ms = append(ms, s.res.Millis)
			rss = append(rss, float64(s.rssKB)/1024)
		}
		med[impl] = [2]float64{median(ms), median(rss)}
	}
	var digests []string
	for _, impl := range impls {
		ss := samples[impl]
		if len(ss) == 0 {
			fmt.Printf("%-12s %-10d %-8s %12s %12s\n", c.name, n, impl, "failed", "-")
			continue
		}
		m := med[impl]
		xt, xr := "", ""
		if impl == "deltago" {
			if g, ok := med["godelta"]; ok {
				xt, xr = fmt.Sprintf("%.2f", m[0]/g[0]), fmt.Sprintf("%.2f", m[1]/g[1])
			}
		}
		last := ss[len(ss)-1].res
		what := fmt.Sprintf("%d %s", last.Files, last.Digest)
		if last.Note != "" {
			what += " (" + last.Note + ")"
		}
		if last.Digest != "" {
			digests = append(digests, fmt.Sprintf("%d/%s", last.Files, last.Digest))
		}
		fmt.Printf("%-12s %-10d %-8s %12.1f %12.1f %10s %10s  %s\n", c.name, n, impl, m[0], m[1], xt, xr, what)
	}
	if len(digests) == 2 && digests[0] != digests[1] {
		fmt.Printf("%-12s %-10d MISMATCH: the two libraries saw different active files\n", c.name, n)
	}
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// runOnce runs one child and returns its result and peak RSS.
func runOnce(self, impl, name, dir string) (sample, error) {
	cmd := exec.Command(self, "-child", impl, name, dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%v: %s", err, strings.TrimSpace(errb.String()))
	}
	var s sample
	if err := json.Unmarshal(out.Bytes(), &s.res); err != nil {
		return sample{}, fmt.Errorf("child output %q: %v", out.String(), err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.rssKB = ru.Maxrss // kilobytes on Linux
	}
	return s, nil
}

// copyTable copies the _delta_log of table into a new directory.
func copyTable(table string) (string, error) {
	dst, err := os.MkdirTemp(filepath.Dir(table), "copy-*")
	if err != nil {
		return "", err
	}
	src := filepath.Join(table, "_delta_log")
	if err := os.MkdirAll(filepath.Join(dst, "_delta_log"), 0o755); err != nil {
		return "", err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dst, "_delta_log", e.Name()), data, 0o644); err != nil {
			return "", err
		}
	}
	return dst, nil
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "compare: "+format+"\n", args...)
	os.Exit(1)
}
