package snapshot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// baseState is the state of the table at a segment's checkpoint, read on
// first use and shared by every snapshot built on that checkpoint (Load,
// then each Update). With no checkpoint it is empty and costs no I/O.
//
// Its three stages, files (add column), tombstones (remove column) and
// meta (txn and domainMetadata columns), are read independently, each
// once: the removes are not kept by a snapshot that only lists or plans
// its files. A stage that
// finds the checkpoint missing or undecodable rebuilds the state at the
// checkpoint's version from an older checkpoint or from the commits alone
// (fallback), once for both stages.
type baseState struct {
	store   logstore.Store
	version int64    // checkpoint version; -1 for none
	keys    []string // the checkpoint's files

	pm       lazy[*basePM]
	files    lazy[*baseFiles]
	tombs    lazy[[]actions.Remove]
	meta     lazy[*baseMeta]
	fallback lazy[*rebuilt]
}

// basePM is the protocol and metaData of a checkpoint; nil where it has
// none.
type basePM struct {
	protocol *actions.Protocol
	metadata *actions.Metadata
}

// baseFiles is the file state of a checkpoint.
type baseFiles struct {
	files *fileTable
	size  int64 // of all files
}

// baseMeta is the txn and domain state of a checkpoint.
type baseMeta struct {
	txns    map[string]actions.Txn
	domains map[string]actions.DomainMetadata // none removed
}

// rebuilt is the state at a checkpoint's version rebuilt without it.
type rebuilt struct {
	files      *baseFiles
	tombstones []actions.Remove
	meta       *baseMeta
}

func newBaseState(store logstore.Store, seg deltalog.Segment) *baseState {
	b := &baseState{store: store, version: -1}
	if v, ok := seg.CheckpointVersion(); ok {
		b.version = v
		b.keys = make([]string, len(seg.Checkpoint))
		for i, f := range seg.Checkpoint {
			b.keys[i] = f.Key
		}
	}
	return b
}

// same reports whether b and o, of the same table, are the state of the
// same checkpoint.
func (b *baseState) same(o *baseState) bool {
	return b.version == o.version && slices.Equal(b.keys, o.keys)
}

// loadPM returns the checkpoint's protocol and metaData, reading those
// two columns on first use. Unlike the other stages, it has no fallback
// of its own: Load skips a checkpoint whose protocol and metaData cannot
// be read (a *checkpointError) and builds a new segment.
func (b *baseState) loadPM(ctx context.Context) (*basePM, error) {
	return b.pm.get(ctx, func(ctx context.Context) (*basePM, error) {
		pm := &basePM{}
		err := readCheckpoint(ctx, b.store, b.version, b.keys, checkpoint.Protocol|checkpoint.Metadata, func(batch []actions.Action) error {
			for i := range batch {
				if a := &batch[i]; a.Protocol != nil {
					pm.protocol = a.Protocol
				} else if a.Metadata != nil {
					pm.metadata = a.Metadata
				}
			}
			return nil
		})
		return pm, err
	})
}

// exists checks that the checkpoint's first file is still in the store,
// without reading it: a missing one gives a *checkpointError for a
// vanished file, for Load to list the log again.
func (b *baseState) exists(ctx context.Context) error {
	if b.version < 0 || len(b.keys) == 0 {
		return nil
	}
	_, err := b.store.Stat(ctx, b.keys[0])
	if errors.Is(err, logstore.ErrNotFound) {
		return &checkpointError{version: b.version, err: err, vanished: true}
	}
	return err
}

// readCheckpoint streams the kinds in want of a checkpoint to fn. A
// checkpoint that is missing or cannot be decoded gives a
// *checkpointError.
func readCheckpoint(ctx context.Context, store logstore.Store, version int64, keys []string, want checkpoint.ActionSet, fn func([]actions.Action) error) error {
	err := checkpoint.Read(ctx, store, keys, want, func(batch []actions.Action) error {
		if err := checkBatch(version, keys, batch); err != nil {
			return err
		}
		return fn(batch)
	})
	return checkpointErr(err, version, keys)
}

// checkBatch holds a batch of the checkpoint of version to the per-action
// rules: a Parquet checkpoint does not go through actions.EachAction, and
// an add without a path must never be counted as a live file or copied
// into the next checkpoint. A checkpoint that breaks one is corrupt and is
// skipped like any unreadable checkpoint.
func checkBatch(version int64, keys []string, batch []actions.Action) error {
	for i := range batch {
		if err := batch[i].Check(); err != nil {
			return &deltaerr.CorruptError{Path: checkpointName(version, keys), Reason: "an action of the checkpoint", Err: err}
		}
	}
	return nil
}

// checkpointErr returns err, an error of reading the checkpoint of version,
// as a *checkpointError when it says that the checkpoint is missing or
// cannot be decoded.
func checkpointErr(err error, version int64, keys []string) error {
	if err != nil && (errors.Is(err, deltaerr.ErrCorrupt) || errors.Is(err, logstore.ErrNotFound)) {
		return &checkpointError{version: version, err: err, vanished: listedMissing(err, keys)}
	}
	return err
}

// listedMissing reports whether err says that one of keys, the files a
// listing named, was not found. An error that names no key (from a store
// that is not a *logstore.Portable) counts as one of them.
func listedMissing(err error, keys []string) bool {
	if !errors.Is(err, logstore.ErrNotFound) {
		return false
	}
	var op *logstore.OpError
	return !errors.As(err, &op) || slices.Contains(keys, op.Key)
}

// checkpointName names the checkpoint of version in an error: its file, or
// its first part and the count of parts.
func checkpointName(version int64, keys []string) string {
	switch len(keys) {
	case 0:
		return fmt.Sprintf("checkpoint at version %d", version)
	case 1:
		return keys[0]
	}
	return fmt.Sprintf("%s (part 1 of %d)", keys[0], len(keys))
}

// loadFiles returns the checkpoint's files, reading them on first use.
func (b *baseState) loadFiles(ctx context.Context) (*baseFiles, error) {
	return b.files.get(ctx, func(ctx context.Context) (*baseFiles, error) {
		if b.version < 0 {
			return newBaseFiles(nil, nil), nil
		}
		f, err := readBaseFiles(ctx, b.store, b.version, b.keys, nil, nil)
		if err == nil {
			return f, nil
		}
		r, rerr := b.rebuild(ctx, err)
		if rerr != nil {
			return nil, rerr
		}
		return r.files, nil
	})
}

// loadTombstones returns the checkpoint's removes, reading them on first
// use.
func (b *baseState) loadTombstones(ctx context.Context) ([]actions.Remove, error) {
	return b.tombs.get(ctx, func(ctx context.Context) ([]actions.Remove, error) {
		if b.version < 0 {
			return nil, nil
		}
		ts, err := readBaseTombstones(ctx, b.store, b.version, b.keys, nil, nil)
		if err == nil {
			return ts, nil
		}
		r, rerr := b.rebuild(ctx, err)
		if rerr != nil {
			return nil, rerr
		}
		return r.tombstones, nil
	})
}

// loadMeta returns the checkpoint's txns and domains, reading them on
// first use.
func (b *baseState) loadMeta(ctx context.Context) (*baseMeta, error) {
	return b.meta.get(ctx, func(ctx context.Context) (*baseMeta, error) {
		if b.version < 0 {
			return newBaseMeta(nil, nil, nil), nil
		}
		m, err := readBaseMeta(ctx, b.store, b.version, b.keys, nil, nil)
		if err == nil {
			return m, nil
		}
		r, rerr := b.rebuild(ctx, err)
		if rerr != nil {
			return nil, rerr
		}
		return r.meta, nil
	})
}

// rebuild returns the state at the checkpoint's version without it, when
// err says the checkpoint is unreadable; other errors are returned as
// they are.
func (b *baseState) rebuild(ctx context.Context, err error) (*rebuilt, error) {
	var cpErr *checkpointError
	if !errors.As(err, &cpErr) {
		return nil, err
	}
	slog.WarnContext(ctx, "checkpoint unreadable, rebuilding its state without it", "version", b.version, "err", cpErr.err)
	r, rerr := b.fallback.get(ctx, func(ctx context.Context) (*rebuilt, error) {
		return rebuildAt(ctx, b.store, b.version)
	})
	if rerr != nil {
		return nil, fmt.Errorf("%w; rebuilding version %d without it: %w", err, b.version, rerr)
	}
	return r, nil
}

// rebuildAt replays the log up to version, without its checkpoint at
// version: from an older checkpoint that can be read, or from the commits
// alone. It reads everything at once; it only runs when a checkpoint is
// found damaged.
func rebuildAt(ctx context.Context, store logstore.Store, version int64) (*rebuilt, error) {
	return deltalog.Relist(ctx, func() (*rebuilt, error) { return rebuildListed(ctx, store, version) })
}

// rebuildListed is one attempt of rebuildAt, with one listing.
func rebuildListed(ctx context.Context, store logstore.Store, version int64) (*rebuilt, error) {
	files, err := deltalog.List(ctx, store, 0)
	if err != nil {
		return nil, err
	}
	skip := map[int64]bool{version: true}
	for {
		seg, err := deltalog.NewSegment(files, version, skip)
		if err != nil {
			return nil, err
		}
		r := newReplay(nil)
		if err := r.applyCommits(ctx, store, seg.Plan()); err != nil {
			return nil, err
		}
		r.finishTail()
		base := newBaseState(store, seg)
		var keys []string
		if base.version >= 0 {
			keys = base.keys
		}
		fs, err := readBaseFiles(ctx, store, base.version, keys, r.tail, r.order)
		var ts []actions.Remove
		if err == nil {
			ts, err = readBaseTombstones(ctx, store, base.version, keys, r.tail, r.order)
		}
		var ms *baseMeta
		if err == nil {
			ms, err = readBaseMeta(ctx, store, base.version, keys, r.txns, r.domains)
		}
		cpErr, err := skippable(err)
		switch {
		case err == nil:
			return &rebuilt{files: fs, tombstones: ts, meta: ms}, nil
		case cpErr != nil:
			slog.WarnContext(ctx, "skipping unreadable checkpoint", "version", cpErr.version, "err", cpErr.err)
			skip[cpErr.version] = true
		default:
			return nil, err
		}
	}
}

// readBaseFiles reads the adds of a checkpoint (none when keys is empty)
// into a file table and flattens onto them a tail of later file actions:
// the checkpoint's adds whose key is in tail are dropped, and tail's adds
// are appended in order.
func readBaseFiles(ctx context.Context, store logstore.Store, version int64, keys []string, tail map[fileKey]fileEntry, order []fileEntry) (*baseFiles, error) {
	t := newFileTable()
	if len(keys) > 0 {
		// The table copies every byte it keeps (fileTable.add): the
		// checkpoint is read without copying its pages' strings first.
		// What needs only the table's seed is done on the decoding
		// goroutine.
		seed := t.seed
		prepare := func(a *actions.Add) addPrep { return prepareAdd(seed, a) }
		err := eachCheckpointFile(ctx, store, version, keys, tail, prepare, func(a *actions.Add, p *addPrep) bool {
			t.addPrepared(a, p)
			return true
		}, nil)
		if err != nil {
			return nil, err
		}
	}
	return newBaseFiles(t, order), nil
}

// readBaseTombstones reads the removes of a checkpoint (none when keys is
// empty), less those whose key is in tail, and appends tail's removes in
// order.
func readBaseTombstones(ctx context.Context, store logstore.Store, version int64, keys []string, tail map[fileKey]fileEntry, order []fileEntry) ([]actions.Remove, error) {
	var ts []actions.Remove
	if len(keys) > 0 {
		err := eachCheckpointFile(ctx, store, version, keys, tail, nil, nil, func(r *actions.Remove) {
			ts = append(ts, *r)
		})
		if err != nil {
			return nil, err
		}
	}
	for _, e := range order {
		if e.remove != nil {
			ts = append(ts, *e.remove)
		}
	}
	return ts, nil
}

// eachCheckpointFile reads the file actions of a checkpoint and hands them,
// in the checkpoint's order, to add and remove (a column is not read when
// its function is nil), less those whose key is in tail: the commits
// after the checkpoint supersede them. add returning false stops the read.
//
// With prepare, add and remove copy whatever they keep of an action before
// they return: the checkpoint is then read with
// checkpoint.ReadTransientPrepared, its strings aliasing the decoder's
// pages, which are released once a batch is applied; add and remove are
// then called on a goroutine of checkpoint's, one batch at a time, while
// the next batch is decoded (they must touch nothing the caller uses
// during the read). The decoding goroutine checks each batch (checkBatch),
// drops the superseded actions and calls prepare on each add left, whose
// result add gets: work on an add that needs none of add's state is done
// there, so that the two goroutines share the work. Without, the
// checkpoint is read ahead on another goroutine (readAhead), the actions
// may be kept, and add gets a nil *addPrep.
//
// It is the one place a checkpoint's files enter a snapshot: kept in a
// file table (readBaseFiles, where tail is empty but for a rebuild, the
// snapshot's own tail being applied later by newFileView with the same
// rule) or streamed to a caller who keeps what it wants (StreamFiles).
func eachCheckpointFile(ctx context.Context, store logstore.Store, version int64, keys []string, tail map[fileKey]fileEntry, prepare func(*actions.Add) addPrep, add func(*actions.Add, *addPrep) bool, remove func(*actions.Remove)) error {
	var want checkpoint.ActionSet
	if add != nil {
		want |= checkpoint.Add
	}
	if remove != nil {
		want |= checkpoint.Remove
	}
	superseded := func(path string, dv *actions.DeletionVector) bool {
		if len(tail) == 0 {
			return false
		}
		_, ok := tail[keyOf(path, dv)]
		return ok
	}
	if prepare != nil {
		// The decoding goroutine checks a batch, drops what is superseded
		// (nil in its slot of the prepared batch) and prepares each add
		// left; the table's goroutine applies the rest.
		prep := func(batch []actions.Action, ps preparedBatch) (preparedBatch, error) {
			if err := checkBatch(version, keys, batch); err != nil {
				return ps, err
			}
			ps.keep = slices.Grow(ps.keep[:0], len(batch))[:len(batch)]
			ps.adds = slices.Grow(ps.adds[:0], len(batch))[:len(batch)]
			for i := range batch {
				switch a := &batch[i]; {
				case a.Add != nil && add != nil:
					if ps.keep[i] = !superseded(a.Add.Path, a.Add.DeletionVector); ps.keep[i] {
						ps.adds[i] = prepare(a.Add)
					}
				case a.Remove != nil && remove != nil:
					ps.keep[i] = !superseded(a.Remove.Path, a.Remove.DeletionVector)
				default:
					ps.keep[i] = false
				}
			}
			return ps, nil
		}
		err := checkpoint.ReadTransientPrepared(ctx, store, keys, want, prep, func(batch []actions.Action, ps preparedBatch) error {
			for i := range batch {
				if !ps.keep[i] {
					continue
				}
				if a := &batch[i]; a.Add != nil && add != nil {
					if !add(a.Add, &ps.adds[i]) {
						return errStopped
					}
				} else {
					remove(a.Remove)
				}
			}
			return nil
		})
		if errors.Is(err, errStopped) {
			return nil
		}
		return checkpointErr(err, version, keys)
	}
	apply := func(batch []actions.Action) bool {
		for i := range batch {
			switch a := &batch[i]; {
			case a.Add != nil && add != nil:
				if !superseded(a.Add.Path, a.Add.DeletionVector) && !add(a.Add, nil) {
					return false
				}
			case a.Remove != nil && remove != nil:
				if !superseded(a.Remove.Path, a.Remove.DeletionVector) {
					remove(a.Remove)
				}
			}
		}
		return true
	}
	return readAhead(func(fn func([]actions.Action) error) error {
		return readCheckpoint(ctx, store, version, keys, want, fn)
	}, apply)
}

// preparedBatch is what the decoding goroutine makes of a batch of a
// checkpoint for eachCheckpointFile, by position in the batch: whether
// the action is applied, and for an add what prepare made of it.
type preparedBatch struct {
	keep []bool
	adds []addPrep
}

// newBaseFiles finishes a checkpoint's file table (nil for an empty one),
// appending the adds of order.
func newBaseFiles(t *fileTable, order []fileEntry) *baseFiles {
	if t == nil {
		t = newFileTable()
	}
	for _, e := range order {
		if e.add != nil {
			t.add(e.add)
		}
	}
	t.finish()
	return &baseFiles{files: t, size: t.totalSize}
}

// readBaseMeta reads the txns and domains of a checkpoint (none when keys
// is empty), under those of a tail of later commits.
func readBaseMeta(ctx context.Context, store logstore.Store, version int64, keys []string, txns map[string]actions.Txn, domains map[string]actions.DomainMetadata) (*baseMeta, error) {
	m := &baseMeta{txns: map[string]actions.Txn{}, domains: map[string]actions.DomainMetadata{}}
	if len(keys) > 0 {
		err := readCheckpoint(ctx, store, version, keys, checkpoint.Txn|checkpoint.DomainMetadata, func(batch []actions.Action) error {
			for i := range batch {
				switch a := &batch[i]; {
				case a.Txn != nil:
					m.txns[a.Txn.AppID] = *a.Txn
				case a.DomainMetadata != nil:
					m.domains[a.DomainMetadata.Domain] = *a.DomainMetadata
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return newBaseMeta(m, txns, domains), nil
}

// newBaseMeta lays txns and domains over m (nil for an empty one) and
// drops removed domains.
func newBaseMeta(m *baseMeta, txns map[string]actions.Txn, domains map[string]actions.DomainMetadata) *baseMeta {
	if m == nil {
		m = &baseMeta{txns: map[string]actions.Txn{}, domains: map[string]actions.DomainMetadata{}}
	}
	for id, t := range txns {
		m.txns[id] = t
	}
	for name, d := range domains {
		m.domains[name] = d
	}
	for name, d := range m.domains {
		if d.Removed {
			delete(m.domains, name)
		}
	}
	return m
}
