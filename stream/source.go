package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// Defaults of Options.
const (
	// DefaultMaxFilesPerTrigger is Spark's default for a Delta source.
	DefaultMaxFilesPerTrigger = 1000
	DefaultPollInterval       = 100 * time.Millisecond
	DefaultMaxPollInterval    = 5 * time.Second
)

// Options configure a Source. The zero value streams every column of the
// latest snapshot and then of every commit, in batches of up to 1000 files.
type Options struct {
	// Start is where the stream begins; see Start.
	Start Start
	// Columns are the table columns to read, in order; nil reads them all,
	// as the table has them where the stream begins.
	Columns []string
	// ReadChangeFeed reads the change data feed: every row each commit
	// inserted, deleted or updated, followed by the columns _change_type,
	// _commit_version and _commit_timestamp (see scan.Changes). The table
	// must have delta.enableChangeDataFeed on. Rows of the initial
	// snapshot are inserts at its version.
	ReadChangeFeed bool
	// MaxFilesPerTrigger bounds the files of a batch (Spark's
	// maxFilesPerTrigger); 0 means DefaultMaxFilesPerTrigger, a negative
	// value no bound.
	MaxFilesPerTrigger int
	// MaxBytesPerTrigger ends a batch once its files reach this many bytes
	// (Spark's maxBytesPerTrigger, a soft limit: the file that crosses it
	// is in the batch); 0 means no bound.
	MaxBytesPerTrigger int64
	// SkipChangeCommits passes over, whole, every commit that removes rows
	// (Spark's skipChangeCommits); without it, and without ReadChangeFeed,
	// such a commit is a *ChangeCommitError. Not used with ReadChangeFeed.
	SkipChangeCommits bool
	// IgnoreDeletes passes over the commits that only remove files
	// (Spark's ignoreDeletes). Not used with ReadChangeFeed.
	IgnoreDeletes bool
	// PollInterval is the first wait of Next when the stream has caught
	// up; 0 means DefaultPollInterval. Each empty poll doubles it, up to
	// MaxPollInterval (0: DefaultMaxPollInterval).
	PollInterval    time.Duration
	MaxPollInterval time.Duration
	// BatchSize is as in scan.Options. The stores the stream opens for
	// the files of a shallow clone's source (the snapshot's Location) are
	// closed by Close.
	BatchSize int
	// Logger receives debug records of skipped commits; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Source tails a table: see the package doc. It holds no resource; a
// Source that is dropped needs no closing. It is not safe for concurrent
// use.
type Source struct {
	store logstore.Store
	opts  Options
	cols  []string
	base  *schema.StructType // the table columns read, as the stream began
	mode  schema.ColumnMappingMode
	id    string // table id as the stream began
	// protocol is the table's newest protocol the stream has read.
	protocol actions.Protocol
	out      *schema.StructType
	reader   *scan.FileReader
	// readers are every reader the stream made, the current one and those
	// it replaced (a batch planned before may still read with one), for
	// Close.
	readers []*scan.FileReader
	pos     Offset // without TableID: at stamps it on what the stream gives
	latest  int64  // the newest commit seen in the log
	// tip is the listing's entry of commit latest, to tell when that
	// commit is no longer the one the stream saw (the table replaced).
	tip deltalog.LogFile

	snapFiles []*actions.Add // the initial snapshot's files, while pos.Snapshot
	snapTime  time.Time
	cur       *commitPlan // the commit at pos.Version, decoded
	wait      time.Duration
	log       *slog.Logger
}

// NewSource opens a stream over the table in store. It loads the table
// (the latest snapshot, and the one where the stream begins), but reads no
// row. Errors: those of snapshot.Load; deltaerr.ErrInvalidArgument for a
// column not in the table; scan.ErrChangeDataFeedDisabled with
// ReadChangeFeed on a table without the change data feed;
// deltaerr.ErrVersionNotFound for FromVersion past the latest version;
// ErrVersionsCleanedUp for a start whose commit is no longer in the log.
func NewSource(ctx context.Context, store logstore.Store, opts Options) (*Source, error) {
	if opts.MaxFilesPerTrigger == 0 {
		opts.MaxFilesPerTrigger = DefaultMaxFilesPerTrigger
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.MaxPollInterval <= 0 {
		opts.MaxPollInterval = DefaultMaxPollInterval
	}
	opts.MaxPollInterval = max(opts.MaxPollInterval, opts.PollInterval)
	s := &Source{store: store, opts: opts, log: opts.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	latest, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		return nil, err
	}
	s.latest = latest.Version()
	for _, f := range latest.Segment().Commits {
		if f.Version == s.latest {
			s.tip = f
		}
	}
	if err := s.resolveStart(ctx, latest); err != nil {
		return nil, err
	}
	// The table as the stream begins: the schema it carries.
	base := latest
	if s.pos.Version < latest.Version() {
		if base, err = snapshot.Load(ctx, store, s.pos.Version); err != nil {
			if !errors.Is(err, deltaerr.ErrVersionNotFound) && !errors.Is(err, deltaerr.ErrMissingLogFile) {
				return nil, err
			}
			// Not reconstructable (cleaned up before a later checkpoint);
			// the commits themselves may still be there, which the reading
			// finds out.
			base = latest
		}
	}
	if opts.ReadChangeFeed && !base.Config().ChangeDataFeed() {
		return nil, fmt.Errorf("stream of version %d: %w", base.Version(), scan.ErrChangeDataFeedDisabled)
	}
	if s.reader, err = s.newReader(base, opts.Columns); err != nil {
		return nil, err
	}
	s.out = s.reader.Schema()
	for _, f := range s.out.Fields {
		s.cols = append(s.cols, f.Name)
	}
	s.base = &schema.StructType{}
	for _, name := range s.cols {
		f, _ := base.Schema().Field(name)
		s.base.Fields = append(s.base.Fields, *f)
	}
	s.mode = base.Config().ColumnMappingMode()
	s.id = base.Metadata().ID
	s.protocol = base.Protocol()
	if opts.ReadChangeFeed {
		s.out = &schema.StructType{Fields: append(slices.Clip(s.out.Fields),
			schema.StructField{Name: scan.ChangeTypeColumn, Type: schema.String},
			schema.StructField{Name: scan.CommitVersionColumn, Type: schema.Long},
			schema.StructField{Name: scan.CommitTimestampColumn, Type: schema.Timestamp})}
	}
	if s.pos.Snapshot {
		if err := s.loadSnapshotFiles(ctx, base); err != nil {
			return nil, err
		}
	}
	s.wait = opts.PollInterval
	return s, nil
}

// resolveStart sets the position where the stream begins.
func (s *Source) resolveStart(ctx context.Context, latest *snapshot.Snapshot) error {
	st := s.opts.Start
	switch st.kind {
	case startSnapshot:
		s.pos = Offset{Version: latest.Version(), Snapshot: true}
	case startLatest:
		s.pos = Offset{Version: latest.Version() + 1}
	case startOffset:
		if st.off.Version < 0 || st.off.Index < 0 {
			return fmt.Errorf("%s: %w", st.off, ErrOffset)
		}
		if id := latest.Metadata().ID; st.off.TableID != "" && st.off.TableID != id {
			return &TableReplacedError{Was: st.off.TableID, Now: id, Version: -1, Resumed: true}
		}
		s.pos = st.off
		s.pos.TableID = ""
	case startVersion:
		switch {
		case st.version < 0:
			return fmt.Errorf("stream from version %d: %w", st.version, deltaerr.ErrInvalidArgument)
		case st.version > latest.Version():
			return fmt.Errorf("stream from version %d after the latest version %d: %w", st.version, latest.Version(), deltaerr.ErrVersionNotFound)
		}
		s.pos = Offset{Version: st.version}
	case startTimestamp:
		v, err := s.firstCommitAtOrAfter(ctx, latest, st.ts)
		if err != nil {
			return err
		}
		s.pos = Offset{Version: v}
	}
	return nil
}

// firstCommitAtOrAfter is the version of the first commit made at or after
// t: the one after the version current just before t.
func (s *Source) firstCommitAtOrAfter(ctx context.Context, latest *snapshot.Snapshot, t time.Time) (int64, error) {
	if t.After(latest.Timestamp()) {
		return latest.Version() + 1, nil
	}
	v, err := snapshot.VersionAtTimestamp(ctx, latest, t.Add(-time.Millisecond))
	if errors.Is(err, deltaerr.ErrTimestampOutOfRange) {
		return snapshot.EarliestVersion(ctx, s.store) // t is before the earliest commit
	}
	if err != nil {
		return 0, err
	}
	return v + 1, nil
}

// loadSnapshotFiles reads the live files of the snapshot the stream begins
// with, in Spark's order (modification time, then path), so that an index
// into them survives a restart.
func (s *Source) loadSnapshotFiles(ctx context.Context, snap *snapshot.Snapshot) error {
	if snap.Version() != s.pos.Version {
		var err error
		if snap, err = snapshot.Load(ctx, s.store, s.pos.Version); err != nil {
			if errors.Is(err, deltaerr.ErrVersionNotFound) || errors.Is(err, deltaerr.ErrMissingLogFile) {
				err = fmt.Errorf("snapshot %d: %w: %w", s.pos.Version, ErrVersionsCleanedUp, err)
			}
			return err
		}
	}
	var files []*actions.Add
	for a, err := range snap.Files(ctx) {
		if err != nil {
			return err
		}
		files = append(files, a)
	}
	slices.SortFunc(files, func(a, b *actions.Add) int {
		return cmp.Or(cmp.Compare(a.ModificationTime, b.ModificationTime), cmp.Compare(a.Path, b.Path))
	})
	s.snapFiles, s.snapTime = files, snap.Timestamp()
	return nil
}

// newReader returns a reader of snap's files with the stream's options,
// kept for Close.
func (s *Source) newReader(snap *snapshot.Snapshot, cols []string) (*scan.FileReader, error) {
	r, err := scan.NewFileReader(snap, scan.Options{Columns: cols, BatchSize: s.opts.BatchSize})
	if err != nil {
		return nil, err
	}
	s.readers = append(s.readers, r)
	return r, nil
}

// Close releases what the stream holds: the stores it opened for
// the outside roots its table trusts (a shallow clone's source). A batch read after
// Close fails on a file under such a root. Close is idempotent; a stream
// of a table that is not a clone holds nothing, and Close is then a no-op.
func (s *Source) Close() error {
	var errs []error
	for _, r := range s.readers {
		errs = append(errs, r.Close())
	}
	s.readers = nil
	return errors.Join(errs...)
}

// Schema returns the schema of the rows the stream yields.
func (s *Source) Schema() *schema.StructType { return s.out }

// Offset returns the position of the stream: where the next batch begins.
func (s *Source) Offset() Offset { return s.at(s.pos) }

// at returns o with the stream's table id.
func (s *Source) at(o Offset) Offset {
	o.TableID = s.id
	return o
}

// Next returns the next batch, waiting for one when the stream has caught
// up: it polls the log with backoff (see Options.PollInterval) until a
// commit with rows to read arrives or ctx ends (ctx.Err()).
func (s *Source) Next(ctx context.Context) (*Batch, error) {
	for {
		b, ok, err := s.TryNext(ctx)
		if err != nil || ok {
			return b, err
		}
		t := time.NewTimer(s.wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		s.wait = min(2*s.wait, s.opts.MaxPollInterval)
	}
}

// TryNext returns the next batch, or false when the stream has caught up
// with the log: every commit in it has been read or passed over. It never
// waits.
func (s *Source) TryNext(ctx context.Context) (*Batch, bool, error) {
	b, err := s.plan(ctx)
	if err != nil || b == nil {
		return nil, false, err
	}
	s.wait = s.opts.PollInterval
	return b, true, nil
}

// Batches yields batches as Next returns them, until ctx ends or an error,
// which is yielded last (ctx.Err() when ctx ends).
func (s *Source) Batches(ctx context.Context) iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		for {
			b, err := s.Next(ctx)
			if !yield(b, err) || err != nil {
				return
			}
		}
	}
}

// plan builds the batch that begins at s.pos and moves s.pos to its end;
// nil when there is nothing to read.
func (s *Source) plan(ctx context.Context) (*Batch, error) {
	b := &Batch{Start: s.at(s.pos), schema: s.out, src: s}
	var bytes int64
	full := func() bool {
		n := len(b.units)
		return n > 0 && ((s.opts.MaxFilesPerTrigger > 0 && b.files >= s.opts.MaxFilesPerTrigger) ||
			(s.opts.MaxBytesPerTrigger > 0 && bytes >= s.opts.MaxBytesPerTrigger))
	}
	for !full() {
		if s.pos.Snapshot {
			for s.pos.Index < int64(len(s.snapFiles)) && !full() {
				a := s.snapFiles[s.pos.Index]
				b.units = append(b.units, unit{r: s.reader, add: a, version: s.pos.Version, ts: s.snapTime, change: scan.ChangeInsert})
				b.files++
				bytes += a.Size
				s.pos.Index++
			}
			if s.pos.Index < int64(len(s.snapFiles)) {
				break
			}
			s.pos, s.snapFiles = Offset{Version: s.pos.Version + 1}, nil
			continue
		}
		c, err := s.commit(ctx, s.pos.Version)
		if err != nil {
			if len(b.units) > 0 {
				break // the rows before it first; the next call meets the error again
			}
			return nil, err
		}
		if c == nil {
			break // caught up
		}
		if c.skip {
			s.pos = Offset{Version: c.version + 1}
			continue
		}
		if s.opts.ReadChangeFeed {
			b.units = append(b.units, unit{version: c.version, changes: true})
			b.files += c.files
			bytes += c.bytes
			s.pos = Offset{Version: c.version + 1}
			continue
		}
		for s.pos.Index < int64(len(c.adds)) && !full() {
			a := c.adds[s.pos.Index]
			b.units = append(b.units, unit{r: c.reader, add: a, version: c.version})
			b.files++
			bytes += a.Size
			s.pos.Index++
		}
		if s.pos.Index < int64(len(c.adds)) {
			break
		}
		s.pos = Offset{Version: c.version + 1}
	}
	b.End = s.at(s.pos)
	if len(b.units) == 0 {
		return nil, nil
	}
	return b, nil
}

// commitPlan is one commit, decoded and judged.
type commitPlan struct {
	version int64
	skip    bool           // nothing to read
	adds    []*actions.Add // data-changing adds (added rows)
	files   int            // data-changing file actions (change data feed)
	bytes   int64
	reader  *scan.FileReader // reads its files: the stream's, or one at this version after a metaData
}

// commit returns commit v decoded, or nil when it is not in the log yet.
func (s *Source) commit(ctx context.Context, v int64) (*commitPlan, error) {
	if s.cur != nil && s.cur.version == v {
		return s.cur, nil
	}
	if v > s.latest {
		if err := s.refresh(ctx); err != nil {
			return nil, err
		}
		if v > s.latest {
			return nil, nil
		}
	}
	key := deltalog.CommitKey(v)
	acts, err := actions.DecodeCommitReader(key, logstore.NewWindowReader(ctx, s.store, key, 0))
	if errors.Is(err, logstore.ErrNotFound) {
		// A later commit is in the log (v <= s.latest), so v was written
		// before it: it is gone, not yet to come.
		return nil, fmt.Errorf("commit %d (the log holds commit %d): %w: %w", v, s.latest, ErrVersionsCleanedUp, err)
	}
	if err != nil {
		return nil, err
	}
	c, err := s.judge(ctx, v, acts)
	if err != nil {
		return nil, err
	}
	s.cur = c
	return c, nil
}

// refresh lists the log from the newest commit seen, for the commits
// after it. The listing only says how far the log goes: a listing that
// runs concurrently with commits may show a commit and miss the one
// before it (a directory read is not atomic), so whether a commit is there
// is decided by reading it (commit), never by its absence from a listing.
//
// It also makes sure that the log is still the one of the table the
// stream reads (checkTable) before the stream reads a commit it lists: a
// table deleted and created again at the same location has commits of the
// same versions, which would otherwise read as the next ones. When new
// commits are listed, the table is loaded again and its id compared (as
// Spark's source updates its snapshot each batch). When none is, the
// newest commit seen (the tip) is compared with the listing's entry of it,
// and a tip gone or changed (size, modification time) has the table
// loaded again too, so that a new table with no more commits than the old
// one is found at once. A table that is gone is a log with nothing new:
// the stream waits, as for commits, and checks again at the next poll.
func (s *Source) refresh(ctx context.Context) error {
	files, err := deltalog.List(ctx, s.store, s.latest)
	if err != nil {
		return err
	}
	var tip, last *deltalog.LogFile
	for i := range files {
		switch f := &files[i]; {
		case f.Kind != deltalog.Commit:
		case f.Version == s.latest:
			tip = f
		case f.Version > s.latest && (last == nil || f.Version > last.Version):
			last = f
		}
	}
	suspect := last != nil
	if !suspect && s.tip.Key != "" {
		if tip == nil {
			// The listing may have missed it: look it up.
			info, err := s.store.Stat(ctx, s.tip.Key)
			switch {
			case errors.Is(err, logstore.ErrNotFound):
			case err != nil:
				return err
			default:
				f := s.tip
				f.Size, f.ModTime = info.Size, info.ModTime.UnixMilli()
				tip = &f
			}
		}
		suspect = tip == nil || tip.Size != s.tip.Size || tip.ModTime != s.tip.ModTime
	}
	if suspect {
		gone, err := s.checkTable(ctx)
		if err != nil || gone {
			return err
		}
	}
	switch {
	case last != nil:
		s.latest, s.tip = last.Version, *last
	case tip != nil:
		s.tip = *tip
	}
	return nil
}

// checkTable loads the newest version of the table and returns a
// *TableReplacedError when its id is not the stream's, and true when
// there is no table (deleted, and maybe about to be created again).
func (s *Source) checkTable(ctx context.Context) (gone bool, err error) {
	snap, err := snapshot.Load(ctx, s.store, deltalog.Latest)
	if errors.Is(err, deltaerr.ErrTableNotFound) {
		s.log.DebugContext(ctx, "stream: the table's log is gone; waiting for it", "version", s.latest)
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if id := snap.Metadata().ID; id != s.id {
		return false, &TableReplacedError{Was: s.id, Now: id, Version: -1}
	}
	return false, nil
}

// judge decides what of commit v the stream reads.
func (s *Source) judge(ctx context.Context, v int64, acts []actions.Action) (*commitPlan, error) {
	c := &commitPlan{version: v, reader: s.reader}
	var (
		removed    int
		removedOne string
		changed    bool // a protocol or metaData
	)
	for i := range acts {
		if p := acts[i].Protocol; p != nil {
			s.protocol = *p // before the metaData it may come with
		}
	}
	for i := range acts {
		a := &acts[i]
		switch {
		case a.Metadata != nil:
			if err := s.checkSchema(v, a.Metadata); err != nil {
				return nil, err
			}
			changed = true
		case a.Protocol != nil:
			changed = true
		case a.Add != nil && a.Add.DataChange:
			c.adds = append(c.adds, a.Add)
			c.files++
			c.bytes += a.Add.Size
		case a.Remove != nil && a.Remove.DataChange:
			if removed == 0 {
				removedOne = a.Remove.Path
			}
			removed++
			c.files++
			if a.Remove.Size != nil {
				c.bytes += *a.Remove.Size
			}
		case a.CDC != nil:
			c.files++
			c.bytes += a.CDC.Size
		}
	}
	if changed && !s.opts.ReadChangeFeed {
		// Files from this version on are read as the table is here (its
		// protocol and column mapping), with the stream's columns: also
		// after a commit that changes only the metadata.
		snap, err := snapshot.Load(ctx, s.store, v)
		if err != nil {
			return nil, err
		}
		r, err := s.newReader(snap, s.cols)
		if err != nil {
			return nil, err
		}
		s.reader, c.reader = r, r
	}
	if s.opts.ReadChangeFeed {
		c.adds = nil
		c.skip = c.files == 0
		if c.skip {
			s.log.DebugContext(ctx, "stream: commit changes no data, passed over", "version", v)
		}
		return c, nil
	}
	if removed > 0 {
		switch {
		case s.opts.SkipChangeCommits:
			s.log.DebugContext(ctx, "stream: commit removes rows, passed over (SkipChangeCommits)", "version", v)
			c.skip = true
			return c, nil
		case len(c.adds) == 0 && s.opts.IgnoreDeletes:
			s.log.DebugContext(ctx, "stream: commit deletes rows, passed over (IgnoreDeletes)", "version", v)
			c.skip = true
			return c, nil
		}
		return nil, &ChangeCommitError{Version: v, Path: removedOne, DeleteOnly: len(c.adds) == 0}
	}
	c.skip = len(c.adds) == 0
	if c.skip {
		s.log.DebugContext(ctx, "stream: commit adds no data, passed over", "version", v)
	}
	return c, nil
}

// checkSchema refuses a metaData action the stream cannot carry: one whose
// schema lacks a column the stream reads, with the same type and physical
// name (a *SchemaChangeError), or that replaces the table (a
// *TableReplacedError).
func (s *Source) checkSchema(v int64, m *actions.Metadata) error {
	if m.ID != s.id {
		return &TableReplacedError{Was: s.id, Now: m.ID, Version: v}
	}
	cfg, err := tableconfig.New(s.protocol, *m)
	if err != nil {
		return fmt.Errorf("commit %d: %w", v, err)
	}
	mode := cfg.ColumnMappingMode()
	sch := cfg.Schema()
	for i := range s.base.Fields {
		old := &s.base.Fields[i]
		nf, ok := sch.Field(old.Name)
		if !ok {
			return &SchemaChangeError{Version: v, Column: old.Name, Reason: "was dropped or renamed"}
		}
		if old.PhysicalName(s.mode) != nf.PhysicalName(mode) {
			return &SchemaChangeError{Version: v, Column: old.Name, Reason: fmt.Sprintf("now names physical column %q, was %q",
				nf.PhysicalName(mode), old.PhysicalName(s.mode))}
		}
		if !carries(old.Type, nf.Type) {
			return &SchemaChangeError{Version: v, Column: old.Name, Reason: fmt.Sprintf("changed type from %s to %s", typeString(old.Type), typeString(nf.Type))}
		}
	}
	return nil
}

// carries reports whether data of type now can be read as type was: the
// same type, or a struct with the same fields and more.
func carries(was, now schema.DataType) bool {
	ws, ok1 := was.(*schema.StructType)
	ns, ok2 := now.(*schema.StructType)
	if ok1 && ok2 {
		for i := range ws.Fields {
			f, ok := ns.Field(ws.Fields[i].Name)
			if !ok || !carries(ws.Fields[i].Type, f.Type) {
				return false
			}
		}
		return true
	}
	return typeString(was) == typeString(now)
}

func typeString(t schema.DataType) string { return t.String() }
