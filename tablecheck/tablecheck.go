package tablecheck

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
)

// Kind is the kind of a problem. Its values are printed by `delta check
// --json` and are part of that stable output: never rename one.
type Kind string

// Kinds of problems.
const (
	// KindLog is a hole in the commits, an incomplete multi-part
	// checkpoint, a commit that cannot be decoded, or a latest version that
	// cannot be loaded.
	KindLog Kind = "log"
	// KindCheckpoint is a checkpoint that cannot be read, or whose content
	// differs from the replay of the log it replaces.
	KindCheckpoint Kind = "checkpoint"
	// KindCRC is a version checksum file (<v>.crc) that cannot be read,
	// or that differs from the replay of the log at its version.
	KindCRC Kind = "crc"
	// KindPathEscapes is a path of the log outside the table root and every
	// root the table trusts (deltaerr.ErrPathEscapesRoot), or one that
	// cannot be decoded.
	KindPathEscapes Kind = "path-escapes-root"
	// KindMissingFile is a live data file that is not in its store.
	KindMissingFile Kind = "missing-file"
	// KindFileSize is a live data file whose size differs from the log's.
	KindFileSize Kind = "file-size"
	// KindDeletionVector is a deletion vector that is missing, or whose
	// size, checksum, cardinality or bytes are wrong.
	KindDeletionVector Kind = "deletion-vector"
	// KindCloneRoot is an outside root the table trusts (the source of a
	// clone) that cannot be opened or listed.
	KindCloneRoot Kind = "clone-root"
	// KindFooter is a data file whose Parquet footer cannot be read, or
	// whose row count differs from the log's numRecords (Options.Deep).
	KindFooter Kind = "footer"
	// KindStats is a column statistic of the log (nullCount, minValues,
	// maxValues) that the file's footer contradicts (Options.Deep).
	KindStats Kind = "stats"
)

// Kinds returns every Kind, in the order of the steps of the package doc.
func Kinds() []Kind {
	return []Kind{KindLog, KindCheckpoint, KindCRC, KindPathEscapes, KindMissingFile, KindFileSize,
		KindDeletionVector, KindCloneRoot, KindFooter, KindStats}
}

// NoVersion is Problem.Version for a problem of no one version.
const NoVersion int64 = -1

// Problem is one inconsistency found in a table.
type Problem struct {
	Kind Kind `json:"kind"`
	// Version is the table version the problem concerns (a commit, a
	// checkpoint, the version whose files were checked), or NoVersion.
	Version int64 `json:"version"`
	// Path is the file concerned: a log file's store key, or a data file
	// or deletion vector path as the log writes it; "" when none.
	Path string `json:"path,omitempty"`
	// Message says what is wrong, in plain words.
	Message string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(string(p.Kind))
	if p.Version != NoVersion {
		fmt.Fprintf(&b, " at version %d", p.Version)
	}
	if p.Path != "" {
		fmt.Fprintf(&b, ": %s", p.Path)
	}
	b.WriteString(": ")
	b.WriteString(p.Message)
	return b.String()
}

// Options tune Check. The zero value checks everything but the footers.
type Options struct {
	// Deep also reads the Parquet footer of every live data file and
	// compares its row count and statistics with the log's.
	Deep bool
	// MaxPerCheckpoint caps the differences listed for one checkpoint
	// (the rest are counted in one more problem); 0 means 20.
	MaxPerCheckpoint int
	// MaxChecksums caps the version checksums compared with the replay,
	// newest first: each costs a replay of its version and a pass over its
	// files. Older ones are named in Report.Skipped. 0 means 10; a
	// negative value compares them all.
	MaxChecksums int
}

// Report is the outcome of a Check.
type Report struct {
	// Version is the latest version of the table, as the listing of its
	// log shows it.
	Version int64 `json:"version"`
	// Problems are every problem found, in the order of the steps of the
	// package doc. Empty for a sound table.
	Problems []Problem `json:"problems"`
	// Checked counts what was checked: "commits", "checkpoints",
	// "checksums", "files", "deletionVectors", "cloneRoots", "footers".
	Checked map[string]int64 `json:"checked"`
	// Skipped says which checks could not run and why (a checkpoint whose
	// commits log cleanup deleted, files of a version that cannot be
	// loaded); skipping is not a problem in itself.
	Skipped []string `json:"skipped"`
}

// OK reports whether the check found no problem.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// checker is one run of Check.
type checker struct {
	store logstore.Store
	opts  Options
	rep   *Report

	files []deltalog.LogFile // the listing of the whole log
	snap  *snapshot.Snapshot // the latest version; nil when it cannot load
}

// step is one check of the package doc. A step reports problems through
// c.report and returns an error only when the check cannot go on.
type step struct {
	name string
	run  func(ctx context.Context, c *checker) error
}

// steps are run in order. A new check (the version checksum, say) is one
// more entry and one more Kind.
var steps = []step{
	{"log", checkLog},
	{"commits", checkCommits},
	{"load", loadLatest},
	{"checkpoints", checkCheckpoints},
	{"crc", checkCRC},
	{"files", checkFiles},
	{"clone roots", checkCloneRoots},
}

// Check checks the table in store (see the package doc) and returns every
// problem it finds. store is the table's store as the facade opens it (a
// store from location.Trust for a Spark shallow clone). The error is
// non-nil only when the check cannot run: deltaerr.ErrTableNotFound when
// store holds no Delta log, a *deltaerr.FeatureError for a table this
// library cannot read, a store's error or the context's.
func Check(ctx context.Context, store logstore.Store, opts Options) (*Report, error) {
	if opts.MaxPerCheckpoint <= 0 {
		opts.MaxPerCheckpoint = 20
	}
	if opts.MaxChecksums == 0 {
		opts.MaxChecksums = 10
	}
	c := &checker{store: store, opts: opts, rep: &Report{Version: NoVersion, Problems: []Problem{}, Checked: map[string]int64{}, Skipped: []string{}}}
	for _, s := range steps {
		if err := s.run(ctx, c); err != nil {
			return nil, fmt.Errorf("checking %s: %w", s.name, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return c.rep, nil
}

func (c *checker) report(kind Kind, version int64, path, format string, args ...any) {
	c.rep.Problems = append(c.rep.Problems, Problem{Kind: kind, Version: version, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) skip(format string, args ...any) {
	c.rep.Skipped = append(c.rep.Skipped, fmt.Sprintf(format, args...))
}

// checkpointSet is the files of one complete checkpoint.
type checkpointSet struct {
	version int64
	parts   []deltalog.LogFile
}

func (s checkpointSet) keys() []string {
	keys := make([]string, len(s.parts))
	for i, p := range s.parts {
		keys[i] = p.Key
	}
	return keys
}

func (s checkpointSet) name() string { return s.parts[0].Key }

// checkpoints returns the complete checkpoints of the listing, oldest
// first, and reports the incomplete multi-part ones.
func (c *checker) checkpoints() []checkpointSet {
	var sets []checkpointSet
	type mpKey struct {
		version int64
		parts   int
	}
	multi := map[mpKey][]deltalog.LogFile{}
	var order []mpKey
	for _, f := range c.files {
		switch f.Kind {
		case deltalog.ClassicCheckpoint, deltalog.UUIDCheckpoint:
			sets = append(sets, checkpointSet{f.Version, []deltalog.LogFile{f}})
		case deltalog.MultiPartCheckpoint:
			k := mpKey{f.Version, f.NumParts}
			if _, ok := multi[k]; !ok {
				order = append(order, k)
			}
			multi[k] = append(multi[k], f)
		}
	}
	for _, k := range order {
		parts := multi[k]
		sort.Slice(parts, func(i, j int) bool { return parts[i].Part < parts[j].Part })
		seen := map[int]bool{}
		for _, p := range parts {
			seen[p.Part] = true
		}
		if len(seen) != k.parts {
			c.report(KindLog, k.version, parts[0].Key, "multi-part checkpoint has %d of its %d parts; readers ignore it", len(seen), k.parts)
			continue
		}
		sets = append(sets, checkpointSet{k.version, parts})
	}
	sort.SliceStable(sets, func(i, j int) bool { return sets[i].version < sets[j].version })
	return sets
}

// checkLog lists the log and checks that the commits are contiguous from
// the oldest version it can rebuild to the latest.
func checkLog(ctx context.Context, c *checker) error {
	files, err := deltalog.List(ctx, c.store, 0)
	if err != nil {
		return err
	}
	c.files = files
	commits := map[int64]bool{}
	latest := NoVersion
	for _, f := range files {
		if f.Kind == deltalog.Commit {
			commits[f.Version] = true
		}
		if (f.Kind == deltalog.Commit || f.Kind.IsCheckpoint()) && f.Version > latest {
			latest = f.Version
		}
	}
	if latest == NoVersion {
		return fmt.Errorf("no commit and no checkpoint in the log: %w", deltaerr.ErrTableNotFound)
	}
	c.rep.Version = latest
	c.rep.Checked["commits"] = int64(len(commits))
	start := NoVersion
	if commits[0] {
		start = 0
	}
	if cps := c.checkpoints(); len(cps) > 0 && (start == NoVersion || cps[0].version < start) {
		start = cps[0].version
	}
	if start == NoVersion {
		c.report(KindLog, NoVersion, deltalog.CommitKey(0), "the log has neither commit 0 nor a complete checkpoint: no version can be rebuilt")
		return nil
	}
	for v := start + 1; v <= latest; v++ {
		if commits[v] {
			continue
		}
		end := v
		for end+1 <= latest && !commits[end+1] {
			end++
		}
		if end == v {
			c.report(KindLog, v, deltalog.CommitKey(v), "commit %d is missing: the log has a hole between versions %d and %d", v, v-1, v+1)
		} else {
			c.report(KindLog, v, deltalog.CommitKey(v), "commits %d through %d are missing: the log has a hole", v, end)
		}
		v = end
	}
	return nil
}

// loadLatest loads the latest version, the state steps 4 and 5 check.
func loadLatest(ctx context.Context, c *checker) error {
	snap, err := snapshot.Load(ctx, c.store, deltalog.Latest)
	switch {
	case err == nil:
		c.snap = snap
		return nil
	case errors.Is(err, deltaerr.ErrMissingLogFile), errors.Is(err, deltaerr.ErrCorrupt),
		errors.Is(err, deltaerr.ErrVersionNotFound):
		if !errors.Is(err, deltaerr.ErrMissingLogFile) || !c.hasHoleProblem() {
			c.report(KindLog, c.rep.Version, "", "the latest version cannot be loaded: %v", err)
		}
		c.skip("files and clone roots: the latest version cannot be loaded")
		return nil
	default:
		return err
	}
}

func (c *checker) hasHoleProblem() bool {
	for _, p := range c.rep.Problems {
		if p.Kind == KindLog {
			return true
		}
	}
	return false
}
