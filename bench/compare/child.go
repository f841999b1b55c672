package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"time"

	deltago "github.com/rivian/delta-go"
	"github.com/rivian/delta-go/lock/nillock"
	"github.com/rivian/delta-go/state/localstate"
	"github.com/rivian/delta-go/storage"
	"github.com/rivian/delta-go/storage/filestore"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/bench/synth"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/snapshot"
)

// oldVersion is the version the open-v5 case opens.
const oldVersion = 5

// selective is the predicate of the scan-plan case: one partition value
// and a range of ids that only a few files of that partition hold.
const selective = "date = '2026-03-03' AND id >= 10000000 AND id < 10500000"

// runChild runs one measurement and prints its result as JSON.
func runChild(impl string, args []string) {
	if len(args) != 2 {
		fatalf("-child IMPL CASE DIR")
	}
	name, dir := args[0], args[1]
	var r result
	var err error
	switch impl {
	case "godelta":
		r, err = ours(name, dir)
	case "deltago":
		r, err = theirs(name, dir)
	default:
		err = fmt.Errorf("unknown library %q", impl)
	}
	if err != nil {
		fatalf("%s %s: %v", impl, name, err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fatalf("%v", err)
	}
}

// pathDigest is an order-independent digest of a set of paths: the sum,
// lane by lane (mod 2^64), of the first 16 bytes of each path's SHA-256,
// and their count. Both libraries compute it the same way, one path at a
// time as they yield them, so that the check costs neither side a copy
// and a sort of every path (which, for godelta, whose file table holds no
// path strings, was 100+ MB of the child's peak at 1M files, against
// slice headers to delta-go's map of existing strings). A sum of hashes
// is a multiset hash: the same paths in any order give the same digest,
// a different set gives another but with negligible probability.
type pathDigest struct {
	n   int
	sum [2]uint64
}

func (d *pathDigest) add(path string) {
	h := sha256.Sum256([]byte(path))
	d.sum[0] += binary.LittleEndian.Uint64(h[0:8])
	d.sum[1] += binary.LittleEndian.Uint64(h[8:16])
	d.n++
}

func (d *pathDigest) result() (int, string) {
	return d.n, fmt.Sprintf("%016x", d.sum[0]^d.sum[1])
}

// digest returns the number of paths and their digest.
func digest(paths []string) (int, string) {
	var d pathDigest
	for _, p := range paths {
		d.add(p)
	}
	return d.result()
}

func since(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

func ourPaths(files iter.Seq2[*actions.Add, error]) (int, string, error) {
	var d pathDigest
	for a, err := range files {
		if err != nil {
			return 0, "", err
		}
		d.add(a.Path)
	}
	n, h := d.result()
	return n, h, nil
}

// tableSize reads back the number of checkpoint files the table was built
// with, from its checkpoint hint.
func tableSize(dir string) (int, error) {
	data, err := os.ReadFile(dir + "/_delta_log/_last_checkpoint")
	if err != nil {
		return 0, err
	}
	var lc deltalog.LastCheckpoint
	if err := json.Unmarshal(data, &lc); err != nil {
		return 0, err
	}
	return int(lc.Size) - 2, nil
}

// addCommits writes commits 11..20 to the table in dir.
func addCommits(dir string) error {
	n, err := tableSize(dir)
	if err != nil {
		return err
	}
	store, err := local.New(dir, local.WithoutSync())
	if err != nil {
		return err
	}
	for v := int64(11); v <= 20; v++ {
		if err := synth.Commit(context.Background(), store, v, n); err != nil {
			return err
		}
	}
	return nil
}

func ours(name, dir string) (result, error) {
	ctx := context.Background()
	store, err := local.New(dir)
	if err != nil {
		return result{}, err
	}
	var r result
	switch name {
	case "open-latest", "open-v5":
		v := deltalog.Latest
		if name == "open-v5" {
			v = oldVersion
		}
		// Load reads the checkpoint's files on first use; NumFiles makes
		// it read them, so that the time covers what OpenTable does.
		t := time.Now()
		s, err := snapshot.Load(ctx, store, v)
		if err != nil {
			return r, err
		}
		loaded := since(t)
		if _, err := s.NumFiles(ctx); err != nil {
			return r, err
		}
		r.Millis = since(t)
		r.Note = fmt.Sprintf("Load %.1f ms + file replay", loaded)
		if r.Files, r.Digest, err = ourPaths(s.Files(ctx)); err != nil {
			return r, err
		}
	case "update-10":
		s, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			return r, err
		}
		if _, err := s.NumFiles(ctx); err != nil { // an open snapshot, files read
			return r, err
		}
		if err := addCommits(dir); err != nil {
			return r, err
		}
		t := time.Now()
		s2, err := s.Update(ctx)
		if err != nil {
			return r, err
		}
		if _, err := s2.NumFiles(ctx); err != nil {
			return r, err
		}
		r.Millis = since(t)
		if s2.Version() != 20 {
			return r, fmt.Errorf("updated to version %d, want 20", s2.Version())
		}
		if r.Files, r.Digest, err = ourPaths(s2.Files(ctx)); err != nil {
			return r, err
		}
		r.Note = "Snapshot.Update + NumFiles"
	case "scan-plan":
		pred, err := expr.Parse(selective)
		if err != nil {
			return r, err
		}
		t := time.Now()
		s, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			return r, err
		}
		sc, err := scan.New(s, scan.Options{Predicate: pred})
		if err != nil {
			return r, err
		}
		var paths []string
		for f, err := range sc.Files(ctx) {
			if err != nil {
				return r, err
			}
			paths = append(paths, f.Add.Path)
		}
		r.Millis = since(t)
		r.Files, r.Digest = digest(paths)
		r.Note = "cold open + scan.New + Files: " + selective
	case "checkpoint":
		s, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			return r, err
		}
		t := time.Now()
		if _, err := checkpoint.Write(ctx, store, s, checkpoint.WriteOptions{}); err != nil {
			return r, err
		}
		r.Millis = since(t)
		s2, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			return r, err
		}
		if r.Files, r.Digest, err = ourPaths(s2.Files(ctx)); err != nil {
			return r, err
		}
		r.Note = "write time only; RSS includes the open"
	default:
		return r, fmt.Errorf("unknown case %q", name)
	}
	return r, nil
}

func theirPaths(t *deltago.Table) (int, string) {
	var d pathDigest
	for _, a := range t.State.Files {
		d.add(a.Path)
	}
	return d.result()
}

func theirs(name, dir string) (result, error) {
	store := filestore.New(storage.NewPath(dir))
	var r result
	switch name {
	case "open-latest", "open-v5":
		t := time.Now()
		var tbl *deltago.Table
		var err error
		if name == "open-v5" {
			tbl, err = deltago.OpenTableWithVersion(store, nillock.New(), localstate.New(-1), oldVersion)
		} else {
			tbl, err = deltago.OpenTable(store, nillock.New(), localstate.New(-1))
		}
		if err = readOnly(tbl, err); err != nil {
			return r, err
		}
		r.Millis = since(t)
		r.Files, r.Digest = theirPaths(tbl)
	case "update-10":
		tbl, err := deltago.OpenTable(store, nillock.New(), localstate.New(-1))
		if err = readOnly(tbl, err); err != nil {
			return r, err
		}
		if err := addCommits(dir); err != nil {
			return r, err
		}
		t := time.Now()
		// delta-go has no public incremental update: Load reloads from
		// the newest checkpoint.
		if err := tbl.Load(nil); err != nil {
			return r, err
		}
		r.Millis = since(t)
		r.Files, r.Digest = theirPaths(tbl)
		r.Note = "Table.Load: a full reload, no incremental API"
	case "scan-plan":
		return r, fmt.Errorf("delta-go has no scan planning with statistics")
	case "checkpoint":
		tbl, err := deltago.OpenTable(store, nillock.New(), localstate.New(-1))
		if err = readOnly(tbl, err); err != nil {
			return r, err
		}
		t := time.Now()
		cfg := deltago.NewCheckpointConfiguration()
		cfg.DisableCleanup = true
		cfg.UnsafeIgnoreUnsupportedReaderWriterVersionErrors = true // writer version 2, see readOnly
		if _, err := deltago.CreateCheckpoint(store, nillock.New(), cfg, tbl.State.Version); err != nil {
			return r, err
		}
		r.Millis = since(t)
		r.Note = "CreateCheckpoint (reopens the table itself); RSS includes the open"
		ourStore, err := local.New(dir)
		if err != nil {
			return r, err
		}
		s2, err := snapshot.Load(context.Background(), ourStore, deltalog.Latest)
		if err != nil {
			return r, err
		}
		if s2.Segment().Checkpoint == nil || len(s2.Segment().Commits) != 0 {
			return r, fmt.Errorf("the new checkpoint is not used")
		}
		if r.Files, r.Digest, err = ourPaths(s2.Files(context.Background())); err != nil {
			return r, err
		}
	default:
		return r, fmt.Errorf("unknown case %q", name)
	}
	return r, nil
}

// readOnly drops delta-go's error for a table whose writer version (2 for
// the synthetic tables) is above the one it supports for writing: the
// table is opened all the same, and these cases only read it.
func readOnly(tbl *deltago.Table, err error) error {
	if err != nil && tbl != nil && errors.Is(err, deltago.ErrUnsupportedWriterVersion) && !errors.Is(err, deltago.ErrUnsupportedReaderVersion) {
		return nil
	}
	return err
}
