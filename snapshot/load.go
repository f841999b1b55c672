package snapshot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/tableconfig"
)

// Load reconstructs the table in store at version, or at its newest version
// for deltalog.Latest. It reads the listing, the commits after the
// checkpoint and the checkpoint's protocol and metaData; the checkpoint's
// file, txn and domain actions are read later, when first asked for (see
// the package doc).
//
// The _last_checkpoint hint, when present and readable, limits the listing
// to the versions from its checkpoint on; it is checked against the
// listing, and a hint that leads nowhere is ignored.
//
// A listing that raced a writer or log cleanup (a hole in the commits, a
// commit or checkpoint gone by the time it is read, a version asked for
// whose commit exists past the end of the listing) is listed again, a
// bounded number of times (deltalog.Relist); see the package doc's
// Listing races.
//
// Errors: deltaerr.ErrTableNotFound when store holds no Delta log;
// deltaerr.ErrVersionNotFound, deltaerr.ErrMissingLogFile from the segment
// rules (see deltalog.NewSegment), the latter only once the re-listing did
// not close the hole; a *deltaerr.CorruptError for a log that cannot be
// decoded or lacks protocol or metaData; a *deltaerr.FeatureError for a
// table this library cannot read.
func Load(ctx context.Context, store logstore.Store, version int64) (*Snapshot, error) {
	if version < 0 && version != deltalog.Latest {
		return nil, fmt.Errorf("version %d: %w", version, deltaerr.ErrInvalidArgument)
	}
	return deltalog.Relist(ctx, func() (*Snapshot, error) { return load(ctx, store, version) })
}

// load is one attempt of Load, with one listing of the log (two when the
// checkpoint hint leads nowhere).
func load(ctx context.Context, store logstore.Store, version int64) (*Snapshot, error) {
	from := int64(0)
	hint, err := deltalog.ReadLastCheckpoint(ctx, store)
	switch {
	case err != nil && !errors.Is(err, deltaerr.ErrCorrupt):
		return nil, err
	case err != nil:
		slog.WarnContext(ctx, "ignoring unreadable checkpoint hint", "err", err)
	case hint != nil && (version == deltalog.Latest || hint.Version <= version):
		from = hint.Version
	}

	files, err := deltalog.List(ctx, store, from)
	if err != nil {
		return nil, err
	}
	skip := map[int64]bool{}
	relisted := false
	for {
		s, err := loadFrom(ctx, store, files, version, skip, nil)
		cpErr, err := skippable(err)
		switch {
		case err == nil:
			return s, nil
		case from > 0 && (cpErr != nil || errors.Is(err, deltaerr.ErrVersionNotFound) ||
			errors.Is(err, deltaerr.ErrMissingLogFile) || errors.Is(err, deltaerr.ErrTableNotFound)):
			// The hint led to a listing that could not serve: list it all.
			slog.DebugContext(ctx, "checkpoint hint unusable, listing the whole log", "hint", from, "err", err)
			from = 0
			if files, err = deltalog.List(ctx, store, 0); err != nil {
				return nil, err
			}
		case cpErr != nil:
			slog.WarnContext(ctx, "skipping unreadable checkpoint", "version", cpErr.version, "err", cpErr.err)
			skip[cpErr.version] = true
		case errors.Is(err, deltaerr.ErrTableNotFound) && !relisted:
			// A listing with no commit and no checkpoint is either no
			// table or one that raced log cleanup: every file it named
			// was deleted before the store could describe it, and the
			// newer ones were not yet in it. A second listing tells them
			// apart, for one more request where there is no table.
			relisted = true
			if files, err = deltalog.List(ctx, store, 0); err != nil {
				return nil, err
			}
		default:
			return nil, pastListing(ctx, store, files, version, err)
		}
	}
}

// skippable returns the *checkpointError in err when err says a listed
// checkpoint cannot be decoded, for the caller to skip that checkpoint
// and fall back to an older one. A listed checkpoint that is not found is
// not skipped: it vanished after the listing (log cleanup replaced it with
// a newer one), and err becomes a deltalog.Vanished error, for
// deltalog.Relist to list again. A missing sidecar is damage, and skipped.
func skippable(err error) (*checkpointError, error) {
	var cpErr *checkpointError
	if !errors.As(err, &cpErr) {
		return nil, err
	}
	if cpErr.vanished {
		return nil, deltalog.Vanished(fmt.Sprintf("checkpoint of version %d", cpErr.version), cpErr.err)
	}
	return cpErr, err
}

// pastListing turns err, the failure to load version from files, into a
// deltaerr.ErrMissingLogFile error, for deltalog.Relist to list again,
// when version was asked for explicitly, is past the newest version of
// the listing, and its commit exists: the listing ended before it (a
// listing that lags behind a writer). Otherwise err is returned as it is.
func pastListing(ctx context.Context, store logstore.Store, files []deltalog.LogFile, version int64, err error) error {
	if version == deltalog.Latest || !errors.Is(err, deltaerr.ErrVersionNotFound) {
		return err
	}
	for _, f := range files {
		if (f.Kind == deltalog.Commit || f.Kind.IsCheckpoint()) && f.Version >= version {
			return err // the listing reaches version: it is too old instead
		}
	}
	if _, serr := store.Stat(ctx, deltalog.CommitKey(version)); serr != nil {
		return err
	}
	return fmt.Errorf("commit %s exists, but the listing of the log ended before it: %w", deltalog.CommitKey(version), deltaerr.ErrMissingLogFile)
}

// checkpointError marks a checkpoint that could not be read (missing or
// corrupt), so that Load can fall back to an older one.
type checkpointError struct {
	version int64
	err     error
	// vanished is set when a file the listing named (a checkpoint part,
	// not a sidecar it references) was not found.
	vanished bool
}

func (e *checkpointError) Error() string {
	return fmt.Sprintf("checkpoint %d: %v", e.version, e.err)
}
func (e *checkpointError) Unwrap() error { return e.err }

// loadFrom loads version from a listing, skipping the checkpoints in skip.
// When reuse, the checkpoint state of another snapshot of the table, is of
// the checkpoint the segment names, the new snapshot shares it.
func loadFrom(ctx context.Context, store logstore.Store, files []deltalog.LogFile, version int64, skip map[int64]bool, reuse *baseState) (*Snapshot, error) {
	seg, err := deltalog.NewSegment(files, version, skip)
	if err != nil {
		return nil, err
	}
	r := newReplay(nil)
	if err := r.applyCommits(ctx, store, seg.Plan()); err != nil {
		return nil, err
	}
	base := newBaseState(store, seg)
	if reuse != nil && reuse.same(base) {
		base = reuse // what it has read serves this snapshot too
	}
	s := &Snapshot{store: store, version: seg.Version, segment: seg}
	// The version checksum, when there is one and the commits agree with
	// it, gives the protocol and metaData (and the txns and domains)
	// without the checkpoint; one that the checks below refuse is
	// dropped, and the checkpoint read as if there were none.
	crc := r.readChecksum(ctx, s)
	checked := false // protocol and metaData set on s and checked
	if crc != nil && (r.protocol == nil || r.metadata == nil) {
		cr := *r
		cr.applyCheckpointPM(crc.Protocol, crc.Metadata)
		if err := cr.finishPM(s); err != nil {
			slog.WarnContext(ctx, "snapshot: not using the version checksum; reading the log instead", "version", s.version, "err", err)
			crc = nil
		} else {
			r.protocol, r.metadata, checked = cr.protocol, cr.metadata, true
			// The checkpoint is not read now, but must still be
			// there: one that log cleanup deleted since the listing
			// makes Load list again, as when it reads it.
			if err := base.exists(ctx); err != nil {
				return nil, err
			}
		}
	}
	// Protocol and metaData only: the checkpoint's file actions wait for
	// the first accessor that needs them.
	if base.version >= 0 && (r.protocol == nil || r.metadata == nil) {
		pm, err := base.loadPM(ctx)
		if err != nil {
			return nil, err
		}
		r.applyCheckpointPM(pm.protocol, pm.metadata)
	}
	if !checked {
		if err := r.finishPM(s); err != nil {
			return nil, err
		}
	}
	r.finish(s, base)
	s.crc = crc
	if v := metaFromChecksum(crc); v != nil {
		s.meta.set(v)
	}
	s.timestamp = commitTimestamp(s, seg, r.lastCommitInfo)
	return s, nil
}

// loadListed is Load from a listing of the whole log, skipping the
// checkpoints whose protocol and metaData cannot be read; see loadFrom for
// reuse.
func loadListed(ctx context.Context, store logstore.Store, files []deltalog.LogFile, version int64, reuse *baseState) (*Snapshot, error) {
	skip := map[int64]bool{}
	for {
		s, err := loadFrom(ctx, store, files, version, skip, reuse)
		cpErr, err := skippable(err)
		if cpErr == nil {
			return s, err
		}
		slog.WarnContext(ctx, "skipping unreadable checkpoint", "version", cpErr.version, "err", cpErr.err)
		skip[cpErr.version] = true
	}
}

var _ checkpoint.LatestConfigurer = (*Snapshot)(nil)

// LatestConfig returns the table configuration of the newest version of
// the table (Update's): what checkpoint.Write checks a checkpoint of an
// older version against (checkpointProtection).
func (s *Snapshot) LatestConfig(ctx context.Context) (*tableconfig.Config, error) {
	u, err := s.Update(ctx)
	if err != nil {
		return nil, err
	}
	return u.Config(), nil
}

// Update returns a snapshot of the newest version of the table, built from
// s by reading only the commits added since. It returns s itself when
// nothing was committed since. The new snapshot shares s's checkpoint
// state: files s has read are not read again, and files s has not read are
// not read by Update either.
//
// Like Load, Update lists the log again (deltalog.Relist) when its listing
// has a hole or a commit it names is gone by the time it is read; a hole
// that stays is deltaerr.ErrMissingLogFile.
func (s *Snapshot) Update(ctx context.Context) (*Snapshot, error) {
	return deltalog.Relist(ctx, func() (*Snapshot, error) { return s.update(ctx) })
}

// update is one attempt of Update, with one listing.
func (s *Snapshot) update(ctx context.Context) (*Snapshot, error) {
	files, err := deltalog.List(ctx, s.store, s.version+1)
	if err != nil {
		return nil, err
	}
	var commits []deltalog.LogFile
	for _, f := range files {
		if f.Kind != deltalog.Commit {
			continue
		}
		if f.Version != s.version+1+int64(len(commits)) {
			return s.skipAhead(ctx, files, fmt.Errorf("commit %s is missing: %w", deltalog.CommitKey(s.version+1+int64(len(commits))), deltaerr.ErrMissingLogFile))
		}
		commits = append(commits, f)
	}
	if len(commits) == 0 {
		return s, nil
	}
	r := newReplay(s)
	if err := r.applyCommits(ctx, s.store, commits); err != nil {
		if errors.Is(err, deltaerr.ErrMissingLogFile) {
			return s.skipAhead(ctx, files, err)
		}
		return nil, err
	}
	seg := s.segment
	seg.Commits = append(slices.Clip(seg.Commits), commits...)
	seg.Version = commits[len(commits)-1].Version
	seg.Checksum = deltalog.ChecksumOf(files, seg.Version)
	ns := &Snapshot{store: s.store, version: seg.Version, segment: seg}
	if err := r.finishPM(ns); err != nil {
		return nil, err
	}
	r.finish(ns, s.base)
	ns.inheritMeta(s)
	ns.timestamp = commitTimestamp(ns, seg, r.lastCommitInfo)
	return ns, nil
}

// Committed returns the snapshot after a commit of acts at version
// s.Version()+1, built from s and the actions as written, without reading
// the log: what a writer that has just committed holds (kernel-rs's
// post-commit snapshot). modTime is the commit file's time in
// milliseconds (the writer's clock), the snapshot's timestamp when the
// table has no in-commit timestamps. The result shares s's checkpoint
// state, as Update's does. A version other than s.Version()+1 is
// deltaerr.ErrInvalidArgument: a commit that landed after others must be
// read with Update, which sees them too.
func (s *Snapshot) Committed(version, modTime int64, acts []actions.Action) (*Snapshot, error) {
	if version != s.version+1 {
		return nil, fmt.Errorf("snapshot: a commit at version %d on top of version %d: %w", version, s.version, deltaerr.ErrInvalidArgument)
	}
	r := newReplay(s)
	for i := range acts {
		r.applyCommitAction(&acts[i])
	}
	r.lastVersion = version
	seg := s.segment
	seg.Commits = append(slices.Clip(seg.Commits), deltalog.LogFile{Key: deltalog.CommitKey(version), Kind: deltalog.Commit, Version: version, ModTime: modTime})
	seg.Version = version
	seg.Checksum = nil // written after the commit, if at all
	ns := &Snapshot{store: s.store, version: version, segment: seg}
	if err := r.finishPM(ns); err != nil {
		return nil, err
	}
	r.finish(ns, s.base)
	ns.inheritMeta(s)
	ns.timestamp = commitTimestamp(ns, seg, r.lastCommitInfo)
	return ns, nil
}

// WithMetadata returns the table of s as a writer sees it while it writes
// rows under a protocol and metaData that its own commit will stage: the
// same version, files, txns and domains as s, with protocol p and
// metadata m (checked as a load checks them). It serves a writer that
// changes the schema and writes rows under the new schema in one commit,
// as MERGE with schema evolution does. The result is not a version of the
// table: it is never committed against, only written with.
func (s *Snapshot) WithMetadata(p actions.Protocol, m actions.Metadata) (*Snapshot, error) {
	ns := &Snapshot{store: s.store, version: s.version, segment: s.segment,
		base: s.base, tail: s.tail, tailOrder: s.tailOrder, tailTxns: s.tailTxns, tailDomains: s.tailDomains,
		commitInfo: s.commitInfo, timestamp: s.timestamp}
	r := &replay{protocol: &p, metadata: &m}
	if err := r.finishPM(ns); err != nil {
		return nil, err
	}
	ns.inheritMeta(s)
	return ns, nil
}

// skipAhead is Update when the commits right after s are gone (err, a
// deltaerr.ErrMissingLogFile error): log cleanup deleted them once a newer
// checkpoint covered them, as it may for a snapshot held longer than the
// log's retention. files, the listing from s.version+1, then holds that
// checkpoint, and the newest version is loaded from it as Load would,
// without s's state. Without a checkpoint in files, err is returned, for
// deltalog.Relist to list again.
func (s *Snapshot) skipAhead(ctx context.Context, files []deltalog.LogFile, err error) (*Snapshot, error) {
	for _, f := range files {
		if f.Kind.IsCheckpoint() {
			return loadListed(ctx, s.store, files, deltalog.Latest, nil)
		}
	}
	return nil, err
}

// replay accumulates the reconciled state of a log, newest action winning.
type replay struct {
	protocol *actions.Protocol
	metadata *actions.Metadata
	tail     map[fileKey]fileEntry
	seq      int64
	txns     map[string]actions.Txn
	domains  map[string]actions.DomainMetadata // removals kept: they hide the checkpoint's

	lastCommitInfo *actions.CommitInfo // of the newest commit applied
	lastVersion    int64

	order []fileEntry // tail in commit order, set by finishTail
}

// newReplay starts from the state of prev, or from nothing.
func newReplay(prev *Snapshot) *replay {
	r := &replay{
		tail:    map[fileKey]fileEntry{},
		txns:    map[string]actions.Txn{},
		domains: map[string]actions.DomainMetadata{},
	}
	if prev != nil {
		p, m := prev.protocol, prev.metadata
		r.protocol, r.metadata = &p, &m
		r.tail = maps.Clone(prev.tail)
		r.txns = maps.Clone(prev.tailTxns)
		r.domains = maps.Clone(prev.tailDomains)
		for _, e := range prev.tail {
			r.seq = max(r.seq, e.seq)
		}
	}
	return r
}

// commitReadConcurrency bounds the commit files read at once; reads are
// I/O bound on object stores.
const commitReadConcurrency = 8

// applyCommits reads the commit files (in version order; a log compaction
// file stands for the commits it covers, see deltalog.Segment.Plan) and
// reconciles their actions in order.
func (r *replay) applyCommits(ctx context.Context, store logstore.Store, commits []deltalog.LogFile) error {
	decoded := make([][]actions.Action, len(commits))
	errs := make([]error, len(commits))
	var wg sync.WaitGroup
	sem := make(chan struct{}, commitReadConcurrency)
	for i, f := range commits {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			// Streamed in windows, so a huge or sparse commit file costs
			// a line's worth of memory and a corrupt-file error, not all
			// of the machine's memory.
			acts, err := actions.DecodeCommitReader(f.Key, logstore.NewWindowReader(ctx, store, f.Key, 0))
			decoded[i], errs[i] = acts, deltalog.Vanished(f.Key, err)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, acts := range decoded {
		r.lastCommitInfo = nil
		if commits[i].Kind == deltalog.Compacted {
			// A compaction file is reconciled (one action per file, order
			// immaterial) as the protocol asks, or, as Databricks writes
			// them, its commits' actions newest commit first, in which
			// the first action of a file wins. Applied from its end, the
			// last wins, which is right for both.
			slices.Reverse(acts)
		}
		for j := range acts {
			r.applyCommitAction(&acts[j])
		}
		r.lastVersion = commits[i].Version
		if commits[i].Kind == deltalog.Compacted {
			r.lastVersion = commits[i].EndVersion
		}
		decoded[i] = nil
	}
	return nil
}

func (r *replay) applyCommitAction(a *actions.Action) {
	r.seq++
	switch {
	case a.Add != nil:
		r.tail[keyOf(a.Add.Path, a.Add.DeletionVector)] = fileEntry{add: a.Add, seq: r.seq}
	case a.Remove != nil:
		r.tail[keyOf(a.Remove.Path, a.Remove.DeletionVector)] = fileEntry{remove: a.Remove, seq: r.seq}
	case a.Protocol != nil:
		r.protocol = a.Protocol
	case a.Metadata != nil:
		r.metadata = a.Metadata
	case a.Txn != nil:
		r.txns[a.Txn.AppID] = *a.Txn
	case a.DomainMetadata != nil:
		r.domains[a.DomainMetadata.Domain] = *a.DomainMetadata
	case a.CommitInfo != nil:
		r.lastCommitInfo = a.CommitInfo
	}
}

// applyCheckpointPM takes protocol and metaData from the checkpoint where
// no commit after it set them.
func (r *replay) applyCheckpointPM(p *actions.Protocol, m *actions.Metadata) {
	if p != nil && r.protocol == nil {
		r.protocol = p
	}
	if m != nil && r.metadata == nil {
		r.metadata = m
	}
}

// finishPM checks protocol and metaData and sets them on s.
func (r *replay) finishPM(s *Snapshot) error {
	switch {
	case r.protocol == nil:
		return deltaerr.Corruptf(deltalog.LogDir, "no protocol action in the log up to version %d", s.version)
	case r.metadata == nil:
		return deltaerr.Corruptf(deltalog.LogDir, "no metaData action in the log up to version %d", s.version)
	}
	if err := tableconfig.ReadSupported(r.protocol); err != nil {
		return err
	}
	// A catalog-managed table read from its directory alone would show
	// the published commits, not the ones the catalog ratified.
	if tableconfig.HasReaderFeature(r.protocol, actions.FeatureCatalogManaged) && !deltalog.ThroughCatalog(s.store) {
		return &deltaerr.CatalogManagedError{Op: "read"}
	}
	// The checked configuration parses the schema (an empty schemaString,
	// as old Spark tests wrote, is an empty schema) and every known table
	// property; a value Spark refuses makes the table unreadable, as in
	// Spark (see package tableconfig).
	cfg, err := tableconfig.New(*r.protocol, *r.metadata)
	if err != nil {
		return fmt.Errorf("snapshot: version %d: %w", s.version, err)
	}
	s.protocol, s.metadata, s.schema, s.config = *r.protocol, *r.metadata, cfg.Schema(), cfg
	s.loc = location.New(s.store, s.metadata.Configuration)
	return nil
}

// finish moves the reconciled commits into s, on top of base.
func (r *replay) finish(s *Snapshot, base *baseState) {
	s.base, s.tail, s.tailTxns, s.tailDomains = base, r.tail, r.txns, r.domains
	s.commitInfo = r.lastCommitInfo
	if len(s.segment.Commits) == 0 || r.lastVersion != s.version {
		s.commitInfo = nil
	}
	r.finishTail()
	s.tailOrder = r.order
}

// finishTail sorts the tail's entries into commit order.
func (r *replay) finishTail() {
	r.order = make([]fileEntry, 0, len(r.tail))
	for _, e := range r.tail {
		r.order = append(r.order, e)
	}
	slices.SortFunc(r.order, func(a, b fileEntry) int { return cmp.Compare(a.seq, b.seq) })
}

// commitTimestamp is the commit time of the segment's version.
func commitTimestamp(s *Snapshot, seg deltalog.Segment, ci *actions.CommitInfo) int64 {
	if from, ok := s.InCommitTimestampsFrom(); ok && seg.Version >= from && ci != nil && ci.InCommitTimestamp != nil {
		return *ci.InCommitTimestamp
	}
	if n := len(seg.Commits); n > 0 {
		return seg.Commits[n-1].ModTime
	}
	if len(seg.Checkpoint) > 0 {
		return seg.Checkpoint[0].ModTime
	}
	return 0
}

// readAheadDepth is how many batches readAhead lets the reader run ahead.
const readAheadDepth = 4

// errStopped ends a read whose batches are no longer wanted.
var errStopped = errors.New("snapshot: read stopped")

// readAhead runs read in a goroutine of its own and hands its batches to
// apply here, in order: decoding a checkpoint and building the file table
// from it (or a caller's loop over the files streamed) then overlap, on
// two cores. read's callback copies each batch, which checkpoint.Read
// reuses once the callback returns (the actions' pointers may be kept),
// into one of a few recycled buffers. apply sees every batch read until it
// returns false, which stops the read (nil is then returned); read's error
// is returned once apply has seen every batch. The reader goroutine has
// ended when readAhead returns, however apply ends (a panic included).
func readAhead(read func(fn func([]actions.Action) error) error, apply func([]actions.Action) bool) error {
	full := make(chan []actions.Action, readAheadDepth)
	free := make(chan []actions.Action, readAheadDepth+1)
	stop := make(chan struct{})
	var err error
	go func() {
		defer close(full)
		err = read(func(batch []actions.Action) error {
			var buf []actions.Action
			select {
			case buf = <-free:
			default:
			}
			select {
			case full <- append(buf[:0], batch...):
				return nil
			case <-stop:
				return errStopped
			}
		})
	}()
	defer func() {
		close(stop)
		for range full { // wait for the reader to end
		}
	}()
	for batch := range full {
		if !apply(batch) {
			return nil
		}
		clear(batch) // drop the pointers while the buffer waits
		select {
		case free <- batch:
		default:
		}
	}
	return err // written before full was closed
}

// LoadWithoutCheckpoints loads version as Load does, but as if the log held
// no checkpoint at or above below, no version checksum and no log
// compaction file: from the newest older checkpoint that can be read, or
// from the commits alone, and never from a .crc or compacted file. files is the listing of the whole log (deltalog.List
// from version 0), which a caller that replays many versions takes once;
// nil lists the log here. It does not list again (a hole is reported as it
// is, with deltaerr.ErrMissingLogFile, or deltaerr.ErrVersionNotFound when
// the commits that would rebuild the version are gone).
//
// It is for the table check (package tablecheck), which compares each
// checkpoint and each version checksum with the replay it replaces; readers
// use Load.
func LoadWithoutCheckpoints(ctx context.Context, store logstore.Store, files []deltalog.LogFile, version, below int64) (*Snapshot, error) {
	if version < 0 {
		return nil, fmt.Errorf("version %d: %w", version, deltaerr.ErrInvalidArgument)
	}
	if files == nil {
		var err error
		if files, err = deltalog.List(ctx, store, 0); err != nil {
			return nil, err
		}
	}
	kept := files[:0:0]
	for _, f := range files {
		if f.Kind == deltalog.CRC || f.Kind == deltalog.Compacted || f.Kind.IsCheckpoint() && f.Version >= below {
			continue
		}
		kept = append(kept, f)
	}
	return loadListed(ctx, store, kept, version, nil)
}
