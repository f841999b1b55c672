package iceberg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// The Iceberg metadata of a UniForm table follows every commit: the
// conversion is a post-commit hook, so every entry point that commits
// (the facade, streams, compaction, VACUUM, DML, ...) runs it once this
// package is linked.
func init() {
	txn.RegisterHook(txn.Hook{Name: "iceberg", Order: txn.OrderIceberg, Run: convertAfterCommit})
}

// convertAfterCommit converts the table at res.Version when UniForm
// Iceberg is on there. A failure is the hook's: the commit stands, and the
// next commit's conversion (or a sync) catches up from the last version
// converted.
func convertAfterCommit(ctx context.Context, res *txn.CommitResult) error {
	cfg := res.Config()
	if cfg == nil || !cfg.UniversalFormatIceberg() {
		return nil
	}
	snap, err := res.Snapshot(ctx)
	if err != nil {
		return err
	}
	if _, err := Convert(ctx, snap, Options{}); err != nil {
		return fmt.Errorf("iceberg: converting version %d: %w", res.Version, err)
	}
	return nil
}

// ErrNotEnabled is returned by Convert for a table whose configuration
// does not turn UniForm Iceberg on (delta.universalFormat.enabledFormats
// with iceberg, and icebergCompatV2 enabled). It matches
// deltaerr.ErrInvalidArgument.
var ErrNotEnabled = fmt.Errorf("iceberg: the table does not enable Iceberg (delta.universalFormat.enabledFormats): %w", deltaerr.ErrInvalidArgument)

// ErrNoMetadata is ReadMetadata's error for a table that has no Iceberg
// metadata (UniForm Iceberg never converted a version of it).
var ErrNoMetadata = errors.New("iceberg: the table has no Iceberg metadata (metadata/vN.metadata.json)")

// Options tune Convert. The zero value is usable.
type Options struct {
	// Logger receives a debug line per Iceberg snapshot written; nil means
	// slog.Default().
	Logger *slog.Logger
	// Now stands in for time.Now (last-updated-ms of the metadata, the
	// age of snapshots).
	Now func() time.Time
	// MaxSnapshots, when positive, caps the snapshots the metadata keeps:
	// the oldest beyond it are expired at each conversion. Snapshots older
	// than the Delta table's delta.logRetentionDuration (30 days by
	// default), the horizon of Delta's own time travel, are expired
	// whatever it says; the current snapshot never is. Expiring drops a
	// snapshot from the metadata and the snapshot log only: its files stay
	// (they are small, and other snapshots share the data files).
	MaxSnapshots int
}

// Result says what Convert did.
type Result struct {
	// FromVersion and ToVersion are the Delta versions converted, one
	// Iceberg snapshot each; FromVersion > ToVersion when the Iceberg
	// metadata was already up to date.
	FromVersion, ToVersion int64
	// Snapshots is the number of Iceberg snapshots written.
	Snapshots int
	// Full is true when a snapshot was built from the whole file list
	// (the first conversion, or commits already cleaned from the log)
	// rather than from the commits.
	Full bool
	// MetadataLocation is the URI of the latest vN.metadata.json.
	MetadataLocation string
}

// maxAttempts bounds the retries of Convert when another converter wrote
// the next metadata version first.
const maxAttempts = 4

// Convert brings the Iceberg metadata of the table up to snap's version:
// one Iceberg snapshot for each Delta version after the last one converted
// (recorded in the metadata's delta-version property), built from that
// version's commit: a new manifest for its adds, the manifests holding its
// removes rewritten with those entries marked deleted, every other
// manifest reused. Without earlier Iceberg metadata, or when a commit to
// convert is no longer in the log, one snapshot is built from the whole
// file list of snap instead.
//
// Convert is idempotent: a version already converted is never converted
// again, and a snapshot at or below the converted version does nothing.
// The files are written in an order that makes a crash harmless: the
// manifests and the manifest list first (unreferenced until the end), then
// vN.metadata.json with put-if-absent (the one atomic switch that
// publishes the snapshot), then the version hint. A crash before the
// switch leaves readers on the previous snapshot, and the next Convert
// starts from it again; one after it leaves at worst the hint behind,
// which readers and Convert check by looking for v(N+1). When another
// converter published the same metadata version first, Convert reads the
// new state and goes on from it.
func Convert(ctx context.Context, snap *snapshot.Snapshot, opts Options) (Result, error) {
	if !snap.Config().UniversalFormatIceberg() {
		return Result{}, ErrNotEnabled
	}
	if err := snap.Config().CheckIcebergCompat(); err != nil {
		return Result{}, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var lastErr error
	for range maxAttempts {
		res, err := convertOnce(ctx, snap, opts)
		if errors.Is(err, logstore.ErrAlreadyExists) {
			lastErr = err
			continue
		}
		return res, err
	}
	return Result{}, fmt.Errorf("iceberg: other converters kept publishing first: %w", lastErr)
}

func convertOnce(ctx context.Context, snap *snapshot.Snapshot, opts Options) (Result, error) {
	store := snap.Store()
	cur, err := readCurrent(ctx, store)
	if err != nil {
		return Result{}, err
	}
	c, err := newConv(ctx, snap, cur, opts)
	if err != nil {
		return Result{}, err
	}
	target := snap.Version()
	from := int64(0)
	if cur.meta != nil {
		if v, ok := cur.meta.convertedVersion(); ok {
			from = v + 1
		}
	}
	res := Result{FromVersion: from, ToVersion: target}
	if from > target {
		res.ToVersion = from - 1
		res.MetadataLocation = c.location(MetadataKey(cur.n))
		return res, nil
	}
	if cur.meta == nil {
		// The first conversion: the table as it is now.
		res.FromVersion, res.Full = target, true
		if err := c.full(ctx); err != nil {
			return Result{}, err
		}
		res.Snapshots = 1
		res.MetadataLocation = c.location(MetadataKey(c.n))
		return res, nil
	}
	for v := from; v <= target; v++ {
		data, err := store.Get(ctx, deltalog.CommitKey(v))
		if errors.Is(err, logstore.ErrNotFound) {
			// Cleaned from the log: the rest as one snapshot of the files.
			res.Full = true
			if err := c.full(ctx); err != nil {
				return Result{}, err
			}
			res.Snapshots++
			break
		}
		if err != nil {
			return Result{}, err
		}
		acts, err := actions.DecodeCommit(deltalog.CommitKey(v), data)
		if err != nil {
			return Result{}, err
		}
		if err := c.commit(ctx, v, acts); err != nil {
			return Result{}, err
		}
		res.Snapshots++
	}
	res.MetadataLocation = c.location(MetadataKey(c.n))
	return res, nil
}

// conv converts Delta versions to Iceberg snapshots, one after another,
// starting from the metadata found.
type conv struct {
	store  logstore.Store
	root   string // table root URI, without a final slash
	snap   *snapshot.Snapshot
	opts   Options
	n      int            // number of the latest vN.metadata.json; 0 for none
	meta   *tableMetadata // nil before the first snapshot
	stats  *expr.StatsDecoder
	mode   schema.ColumnMappingMode
	leaves []leaf // the columns with bounds and null counts

	// manifests is the manifest list of the current snapshot, decoded
	// (nil until needed).
	manifests []map[string]any
	loaded    bool
}

// leaf is a primitive column outside arrays and maps: its logical path
// (as expr.Stats names it), Iceberg id and type.
type leaf struct {
	path string
	id   int
	typ  schema.DataType
}

func newConv(ctx context.Context, snap *snapshot.Snapshot, cur current, opts Options) (*conv, error) {
	cfg := snap.Config()
	c := &conv{
		store: snap.Store(), root: strings.TrimSuffix(snap.Store().URI(), "/"), snap: snap, opts: opts,
		n: cur.n, meta: cur.meta, mode: cfg.ColumnMappingMode(),
		manifests: cur.manifests, loaded: cur.manifests != nil,
	}
	c.stats = expr.NewStatsDecoder(snap.Schema(), c.mode, nil)
	var walk func(st *schema.StructType, prefix string)
	walk = func(st *schema.StructType, prefix string) {
		for i := range st.Fields {
			f := &st.Fields[i]
			if sub, ok := f.Type.(*schema.StructType); ok {
				walk(sub, prefix+f.Name+".")
				continue
			}
			id, ok := f.ColumnMappingID()
			if _, prim := primitive(f.Type); ok && prim {
				c.leaves = append(c.leaves, leaf{path: prefix + f.Name, id: int(id), typ: f.Type})
			}
		}
	}
	walk(snap.Schema(), "")
	_ = ctx
	return c, nil
}

// location returns the URI of a key of the table's store.
func (c *conv) location(key string) string { return c.root + "/" + key }

// fileLocation returns the Iceberg file_path of a Delta add or remove
// path: a full URI, as the spec asks, percent-decoded as Spark's UniForm
// writes it (Hadoop's Path.toString). A path under the table root is
// resolved by the snapshot's Location, the one resolver, and joined to the
// root; an absolute one elsewhere (a clone's source) is written in its
// canonical form.
func (c *conv) fileLocation(p string) string {
	if key, err := c.snap.Location().Key(p); err == nil {
		return c.location(key)
	}
	return location.Canonical(p)
}

// sameFile is the key file locations are matched by: two spellings of one
// file (encoded or not, file:/, file:/// or file://localhost/) give the
// same key.
func sameFile(loc string) string { return location.Canonical(loc) }

// full publishes one snapshot that makes the Iceberg table hold exactly
// the files of the target Delta snapshot: the files Iceberg lacks added,
// those Delta no longer has removed.
func (c *conv) full(ctx context.Context) error {
	live := map[string]string{} // sameFile key -> file_path
	if err := c.loadManifests(ctx); err != nil {
		return err
	}
	for _, m := range c.manifests {
		entries, err := c.readManifest(ctx, m)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if st, _ := longOf(e, "status"); st != statusDeleted {
				path := strOf(dataFileOf(e), "file_path")
				live[sameFile(path)] = path
			}
		}
	}
	var adds []actions.Add
	want := map[string]bool{}
	for a, err := range c.snap.Files(ctx) {
		if err != nil {
			return err
		}
		loc := sameFile(c.fileLocation(a.Path))
		want[loc] = true
		if _, ok := live[loc]; !ok {
			adds = append(adds, *a)
		}
	}
	var removes []string
	for key, path := range live {
		if !want[key] {
			removes = append(removes, path)
		}
	}
	slices.Sort(removes)
	md := c.snap.Metadata()
	return c.publish(ctx, c.snap.Version(), c.snap.Timestamp().UnixMilli(), &md, adds, removes, true)
}

// commit publishes the snapshot of one Delta commit.
func (c *conv) commit(ctx context.Context, version int64, acts []actions.Action) error {
	var adds []actions.Add
	var removes []string
	var md *actions.Metadata
	var ts int64
	dataChange := false
	for i := range acts {
		a := &acts[i]
		switch {
		case a.Add != nil:
			adds = append(adds, *a.Add)
			dataChange = dataChange || a.Add.DataChange
		case a.Remove != nil:
			removes = append(removes, c.fileLocation(a.Remove.Path))
			dataChange = dataChange || a.Remove.DataChange
		case a.Metadata != nil:
			md = a.Metadata
		case a.CommitInfo != nil:
			if a.CommitInfo.InCommitTimestamp != nil {
				ts = *a.CommitInfo.InCommitTimestamp
			} else if a.CommitInfo.Timestamp != nil && ts == 0 {
				ts = *a.CommitInfo.Timestamp
			}
		}
	}
	if ts == 0 {
		info, err := c.store.Stat(ctx, deltalog.CommitKey(version))
		if err != nil {
			return err
		}
		ts = info.ModTime.UnixMilli()
	}
	return c.publish(ctx, version, ts, md, adds, removes, dataChange)
}

func (c *conv) loadManifests(ctx context.Context) error {
	if c.loaded {
		return nil
	}
	c.loaded = true
	if c.meta == nil {
		return nil
	}
	s := c.meta.currentSnapshot()
	if s == nil {
		return nil
	}
	name := fmt.Sprintf("manifest list %s (snapshot %d)", s.ManifestList, s.SnapshotID)
	key, err := c.key(s.ManifestList)
	if err != nil {
		return err
	}
	data, err := readCapped(ctx, c.store, key, name, maxAvroSize)
	if err != nil {
		return err
	}
	recs, _, err := decodeOCF(name, data, checkManifestFile)
	if err != nil {
		return err
	}
	c.manifests = recs
	return nil
}

// key returns the store key of an Iceberg location under the table root:
// the inverse of location. Iceberg locations are URIs as written, not
// percent-encoded as Delta log paths are, so they do not go through the
// snapshot's Location; a manifest or manifest list outside the table root
// (Iceberg metadata written elsewhere, or hostile) is not read.
func (c *conv) key(loc string) (string, error) {
	rest, ok := strings.CutPrefix(loc, c.root+"/")
	if !ok || rest == "" {
		return "", fmt.Errorf("iceberg: %q is outside the table at %s: %w", loc, logstore.RedactURI(c.root), deltaerr.ErrPathEscapesRoot)
	}
	return rest, nil
}

func (c *conv) readManifest(ctx context.Context, m map[string]any) ([]map[string]any, error) {
	path := strOf(m, "manifest_path")
	key, err := c.key(path)
	if err != nil {
		return nil, err
	}
	data, err := readCapped(ctx, c.store, key, "manifest "+path, maxAvroSize)
	if err != nil {
		return nil, err
	}
	entries, _, err := decodeOCF("manifest "+path, data, checkEntry)
	if err != nil {
		return nil, err
	}
	// Entries that inherit their sequence numbers get them explicitly, so
	// that they survive a rewrite (spec: "Sequence Number Inheritance").
	seq, _ := longOf(m, "sequence_number")
	for _, e := range entries {
		if _, ok := longOf(e, "sequence_number"); !ok {
			e["sequence_number"] = unionLong(seq)
		}
		if _, ok := longOf(e, "file_sequence_number"); !ok {
			e["file_sequence_number"] = unionLong(seq)
		}
		if _, ok := longOf(e, "snapshot_id"); !ok {
			id, _ := longOf(m, "added_snapshot_id")
			e["snapshot_id"] = unionLong(id)
		}
	}
	return entries, nil
}

func dataFileOf(e map[string]any) map[string]any {
	df, _ := e["data_file"].(map[string]any)
	if df == nil {
		return map[string]any{}
	}
	return df
}

// publish writes the snapshot of Delta version: the manifest of adds, the
// manifests rewritten for removes (locations), the manifest list and the
// metadata file, then the hint. md is the commit's metaData, nil when it
// has none.
func (c *conv) publish(ctx context.Context, version, tsMs int64, md *actions.Metadata, adds []actions.Add, removes []string, dataChange bool) error {
	if err := c.loadManifests(ctx); err != nil {
		return err
	}
	next, err := c.nextMetadata(md)
	if err != nil {
		return err
	}
	prev := next.currentSnapshot() // still the parent here
	seq := next.LastSequenceNumber + 1
	snapID := c.snapshotID(next, version, seq)
	if prev != nil && tsMs < prev.TimestampMs {
		tsMs = prev.TimestampMs // snapshot times never go back
	}
	spec := next.PartitionSpecs[len(next.PartitionSpecs)-1]
	schemaJ := next.Schemas[len(next.Schemas)-1]
	for _, s := range next.Schemas {
		if s.SchemaID == next.CurrentSchemaID {
			schemaJ = s
		}
	}
	mw, err := c.manifestWriter(spec, schemaJ)
	if err != nil {
		return err
	}

	var manifests []map[string]any
	var deletedFiles, deletedRecords, deletedSize int64
	if len(removes) > 0 {
		gone := make(map[string]bool, len(removes))
		for _, r := range removes {
			gone[sameFile(r)] = true
		}
		for _, m := range c.manifests {
			if len(gone) == 0 {
				manifests = append(manifests, m)
				continue
			}
			entries, err := c.readManifest(ctx, m)
			if err != nil {
				return err
			}
			hit := false
			for _, e := range entries {
				st, _ := longOf(e, "status")
				if st != statusDeleted && gone[sameFile(strOf(dataFileOf(e), "file_path"))] {
					hit = true
					break
				}
			}
			if !hit {
				manifests = append(manifests, m)
				continue
			}
			var kept []map[string]any
			for _, e := range entries {
				st, _ := longOf(e, "status")
				if st == statusDeleted {
					continue // deletes of earlier snapshots are theirs only
				}
				df := dataFileOf(e)
				path := sameFile(strOf(df, "file_path"))
				if gone[path] {
					delete(gone, path)
					e["status"] = int32(statusDeleted)
					e["snapshot_id"] = unionLong(snapID)
					deletedFiles++
					n, _ := longOf(df, "record_count")
					deletedRecords += n
					sz, _ := longOf(df, "file_size_in_bytes")
					deletedSize += sz
				} else {
					e["status"] = int32(statusExisting)
				}
				kept = append(kept, e)
			}
			nm, err := mw.write(ctx, c, kept, snapID, seq)
			if err != nil {
				return err
			}
			if nm != nil {
				manifests = append(manifests, nm)
			}
		}
	} else {
		manifests = append(manifests, c.manifests...)
	}
	if manifests, err = c.merge(ctx, mw, spec.SpecID, manifests, snapID, seq); err != nil {
		return err
	}
	var addedRecords, addedSize int64
	if len(adds) > 0 {
		entries := make([]map[string]any, 0, len(adds))
		for i := range adds {
			e, n, err := c.entry(&adds[i], spec, snapID, seq)
			if err != nil {
				return err
			}
			addedRecords += n
			addedSize += adds[i].Size
			entries = append(entries, e)
		}
		nm, err := mw.write(ctx, c, entries, snapID, seq)
		if err != nil {
			return err
		}
		manifests = append([]map[string]any{nm}, manifests...)
	}

	// The manifest list.
	listKey := fmt.Sprintf("%ssnap-%d-%s.avro", MetadataDir, snapID, uuid.NewString())
	listMeta := map[string]string{
		"snapshot-id": itoa(snapID), "sequence-number": itoa(seq), "format-version": "2",
		"parent-snapshot-id": "null",
	}
	if prev != nil {
		listMeta["parent-snapshot-id"] = itoa(prev.SnapshotID)
	}
	recs := make([]any, len(manifests))
	for i := range manifests {
		recs[i] = manifests[i]
	}
	listData, err := encodeOCF(manifestListSchema(), listMeta, recs)
	if err != nil {
		return fmt.Errorf("iceberg: encoding the manifest list: %w", err)
	}
	if err := c.store.Put(ctx, listKey, listData); err != nil {
		return err
	}

	// The snapshot and the metadata that publishes it.
	summary := c.summary(prev, len(adds), addedRecords, addedSize, deletedFiles, deletedRecords, deletedSize, dataChange, version, tsMs)
	s := snapshotJSON{
		SnapshotID: snapID, SequenceNumber: seq, TimestampMs: tsMs,
		ManifestList: c.location(listKey), Summary: summary, SchemaID: next.CurrentSchemaID,
	}
	if prev != nil {
		id := prev.SnapshotID
		s.ParentSnapshotID = &id
	}
	now := c.opts.Now().UnixMilli()
	if c.n > 0 {
		next.MetadataLog = append(next.MetadataLog, metadataLog{TimestampMs: next.LastUpdatedMs, MetadataFile: c.location(MetadataKey(c.n))})
		if over := len(next.MetadataLog) - maxMetadataLog; over > 0 {
			next.MetadataLog = slices.Clone(next.MetadataLog[over:])
		}
	}
	next.Snapshots = append(next.Snapshots, s)
	next.SnapshotLog = append(next.SnapshotLog, snapshotLog{TimestampMs: tsMs, SnapshotID: snapID})
	c.expire(next, now)
	next.CurrentSnapshotID = &snapID
	next.Refs = map[string]ref{"main": {SnapshotID: snapID, Type: "branch"}}
	next.LastSequenceNumber = seq
	next.LastUpdatedMs = max(now, tsMs)
	next.Properties[PropDeltaVersion] = itoa(version)
	next.Properties[PropDeltaTimestamp] = itoa(tsMs)
	if next.Properties[PropNameMapping], err = c.nameMapping(schemaJ, md); err != nil {
		return err
	}
	out, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("iceberg: encoding the table metadata: %w", err)
	}
	n := c.n + 1
	if err := c.store.PutIfAbsent(ctx, MetadataKey(n), out); err != nil {
		return err // ErrAlreadyExists: another converter published n
	}
	c.n, c.meta, c.manifests = n, next, manifests
	if info, err := c.store.Stat(ctx, MetadataKey(n)); err == nil {
		remember(c.store.URI(), current{n: n, meta: next, manifests: manifests, info: info})
	}
	c.opts.Logger.DebugContext(ctx, "iceberg: snapshot published", "deltaVersion", version, "metadata", MetadataKey(n), "snapshot", snapID)
	// The hint last: a hint that lags is corrected by looking for v(N+1).
	if err := c.store.Put(ctx, VersionHintKey, []byte(strconv.Itoa(n))); err != nil {
		c.opts.Logger.WarnContext(ctx, "iceberg: writing the version hint failed; readers probing for newer metadata still find it", "metadata", MetadataKey(n), "err", err)
	}
	return nil
}

// nameMapping returns the name mapping of the Iceberg schema sch, with the
// physical names of the target snapshot's schema and of md's (the
// commit's metaData, nil when it has none). A column's physical name
// never changes, so a later schema gives the right one for every column
// it still has.
func (c *conv) nameMapping(sch schemaJSON, md *actions.Metadata) (string, error) {
	physical := map[int]string{}
	physicalNames(physical, c.snap.Schema())
	if md != nil {
		if s, err := schema.Parse(md.SchemaString); err == nil {
			physicalNames(physical, s)
		}
	}
	return nameMapping(sch.Fields, physical)
}

// Manifest merging, as Iceberg's commit.manifest.min-count-to-merge (100)
// and commit.manifest.target-size-bytes (8 MiB) defaults: once a snapshot
// would carry minManifestsToMerge manifests smaller than the target, they
// are merged into one, so that the manifest list, and the manifests an
// Iceberg reader opens, stay few however many commits append.
const (
	minManifestsToMerge = 100
	targetManifestSize  = 8 << 20
)

// merge returns manifests with its small manifests of the current spec
// merged into one when there are minManifestsToMerge of them: their live
// entries become EXISTING, keeping their snapshot ids and sequence
// numbers; DELETED entries, which belong to earlier snapshots, are dropped.
func (c *conv) merge(ctx context.Context, mw *manifestWriter, specID int, manifests []map[string]any, snapID, seq int64) ([]map[string]any, error) {
	var small, keep []map[string]any
	for _, m := range manifests {
		length, _ := longOf(m, "manifest_length")
		sid, _ := longOf(m, "partition_spec_id")
		if length < targetManifestSize && int(sid) == specID {
			small = append(small, m)
		} else {
			keep = append(keep, m)
		}
	}
	if len(small) < minManifestsToMerge {
		return manifests, nil
	}
	var entries []map[string]any
	for _, m := range small {
		es, err := c.readManifest(ctx, m)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if st, _ := longOf(e, "status"); st == statusDeleted {
				continue
			}
			e["status"] = int32(statusExisting)
			entries = append(entries, e)
		}
	}
	nm, err := mw.write(ctx, c, entries, snapID, seq)
	if err != nil {
		return nil, err
	}
	if nm != nil {
		keep = append([]map[string]any{nm}, keep...)
	}
	return keep, nil
}

// expire drops from m the snapshots older than the table's log retention,
// and the oldest beyond Options.MaxSnapshots, never the last one (the
// current), with their snapshot log entries.
func (c *conv) expire(m *tableMetadata, nowMs int64) {
	cut := nowMs - c.snap.Config().LogRetention().Milliseconds()
	drop := 0
	for drop < len(m.Snapshots)-1 && m.Snapshots[drop].TimestampMs < cut {
		drop++
	}
	if c.opts.MaxSnapshots > 0 {
		drop = max(drop, len(m.Snapshots)-c.opts.MaxSnapshots)
	}
	if drop <= 0 {
		return
	}
	gone := map[int64]bool{}
	for _, s := range m.Snapshots[:drop] {
		gone[s.SnapshotID] = true
	}
	m.Snapshots = slices.Clone(m.Snapshots[drop:])
	// The oldest kept snapshot has no parent in the metadata any more;
	// its parent-snapshot-id still names it, as Iceberg leaves it.
	m.SnapshotLog = slices.DeleteFunc(m.SnapshotLog, func(l snapshotLog) bool { return gone[l.SnapshotID] })
}

// maxMetadataLog is how many earlier metadata files the metadata log
// lists, Iceberg's write.metadata.previous-versions-max default.
const maxMetadataLog = 100

// snapshotID returns a positive id for the snapshot of a Delta version,
// derived from the table and the version so that a retry picks the same
// one, and different from every id the metadata holds.
func (c *conv) snapshotID(m *tableMetadata, version, seq int64) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", m.TableUUID, version, seq)
	id := int64(h.Sum64() & math.MaxInt64)
	for id == 0 || slices.ContainsFunc(m.Snapshots, func(s snapshotJSON) bool { return s.SnapshotID == id }) {
		id = (id + 1) & math.MaxInt64
	}
	return id
}

// summary returns the snapshot summary (spec: "Snapshot Summary"), with
// totals carried from the parent, and the Delta version converted.
func (c *conv) summary(prev *snapshotJSON, addedFiles int, addedRecords, addedSize, deletedFiles, deletedRecords, deletedSize int64, dataChange bool, version, tsMs int64) map[string]string {
	var totFiles, totRecords, totSize int64
	if prev != nil {
		totFiles, _ = strconv.ParseInt(prev.Summary["total-data-files"], 10, 64)
		totRecords, _ = strconv.ParseInt(prev.Summary["total-records"], 10, 64)
		totSize, _ = strconv.ParseInt(prev.Summary["total-files-size"], 10, 64)
	}
	op := "append"
	switch {
	case !dataChange:
		op = "replace"
	case addedFiles > 0 && deletedFiles > 0:
		op = "overwrite"
	case deletedFiles > 0:
		op = "delete"
	case addedFiles == 0:
		op = "replace"
	}
	s := map[string]string{
		"operation":              op,
		PropDeltaVersion:         itoa(version),
		PropDeltaTimestamp:       itoa(tsMs),
		"total-data-files":       itoa(totFiles + int64(addedFiles) - deletedFiles),
		"total-records":          itoa(totRecords + addedRecords - deletedRecords),
		"total-files-size":       itoa(totSize + addedSize - deletedSize),
		"total-delete-files":     "0",
		"total-position-deletes": "0",
		"total-equality-deletes": "0",
	}
	if addedFiles > 0 {
		s["added-data-files"] = itoa(int64(addedFiles))
		s["added-records"] = itoa(addedRecords)
		s["added-files-size"] = itoa(addedSize)
	}
	if deletedFiles > 0 {
		s["deleted-data-files"] = itoa(deletedFiles)
		s["deleted-records"] = itoa(deletedRecords)
		s["removed-files-size"] = itoa(deletedSize)
	}
	return s
}

// nextMetadata returns a copy of the current metadata to build the next
// version on, with the schema and partition spec of md (the commit's
// metaData; nil keeps them) added when they changed. Without current
// metadata it starts a new table from the target snapshot.
func (c *conv) nextMetadata(md *actions.Metadata) (*tableMetadata, error) {
	var next tableMetadata
	if c.meta != nil {
		// A copy whose slices and maps the next version may change: the
		// entries themselves are never changed once written.
		next = *c.meta
		next.Schemas = slices.Clone(c.meta.Schemas)
		next.PartitionSpecs = slices.Clone(c.meta.PartitionSpecs)
		next.Snapshots = slices.Clone(c.meta.Snapshots)
		next.SnapshotLog = slices.Clone(c.meta.SnapshotLog)
		next.MetadataLog = slices.Clone(c.meta.MetadataLog)
		next.SortOrders = slices.Clone(c.meta.SortOrders)
		next.Properties = maps.Clone(c.meta.Properties)
		next.Refs = maps.Clone(c.meta.Refs)
	} else {
		m := c.snap.Metadata()
		md = &m
		next = tableMetadata{
			FormatVersion: 2, TableUUID: m.ID, Location: c.root,
			SortOrders: []sortOrder{{OrderID: 0, Fields: []any{}}}, DefaultSortOrderID: 0,
			Properties: map[string]string{}, LastPartitionID: 999,
			CurrentSchemaID: -1, DefaultSpecID: -1,
			Snapshots: []snapshotJSON{}, SnapshotLog: []snapshotLog{}, MetadataLog: []metadataLog{},
		}
		if _, err := uuid.Parse(m.ID); err != nil {
			next.TableUUID = uuid.NewString()
		}
	}
	if next.Properties == nil {
		next.Properties = map[string]string{}
	}
	if md == nil {
		return &next, nil
	}
	sch, err := schema.Parse(md.SchemaString)
	if err != nil {
		return nil, &deltaerr.CorruptError{Path: "metaData.schemaString", Reason: "cannot parse the schema", Err: err}
	}
	fields, maxID, err := icebergFields(sch)
	if err != nil {
		return nil, err
	}
	fj := fieldsJSON(fields)
	same := false
	for _, s := range next.Schemas {
		if s.SchemaID == next.CurrentSchemaID && bytes.Equal(s.Fields, fj) {
			same = true
		}
	}
	if !same {
		id := 0
		for _, s := range next.Schemas {
			id = max(id, s.SchemaID+1)
		}
		next.Schemas = append(next.Schemas, schemaJSON{Type: "struct", SchemaID: id, Fields: fj})
		next.CurrentSchemaID = id
	}
	next.LastColumnID = max(next.LastColumnID, maxID)

	// The partition spec: identity transforms of the partition columns.
	var pf []partitionField
	for _, col := range md.PartitionColumns {
		f, ok := sch.Field(col)
		if !ok {
			return nil, fmt.Errorf("%w: partition column %s is not in the schema", ErrNotConvertible, col)
		}
		id, _ := f.ColumnMappingID()
		pf = append(pf, partitionField{SourceID: int(id), Name: f.Name, Transform: "identity"})
	}
	var cur *partitionSpec
	for i := range next.PartitionSpecs {
		if next.PartitionSpecs[i].SpecID == next.DefaultSpecID {
			cur = &next.PartitionSpecs[i]
		}
	}
	if cur == nil || !sameSpec(cur.Fields, pf) {
		specID := 0
		for _, s := range next.PartitionSpecs {
			specID = max(specID, s.SpecID+1)
		}
		for i := range pf {
			next.LastPartitionID++
			pf[i].FieldID = next.LastPartitionID
		}
		if pf == nil {
			pf = []partitionField{}
		}
		next.PartitionSpecs = append(next.PartitionSpecs, partitionSpec{SpecID: specID, Fields: pf})
		next.DefaultSpecID = specID
	}
	// The spec in force goes last, where publish looks for it.
	for i, s := range next.PartitionSpecs {
		if s.SpecID == next.DefaultSpecID && i != len(next.PartitionSpecs)-1 {
			next.PartitionSpecs = append(slices.Delete(slices.Clone(next.PartitionSpecs), i, i+1), s)
			break
		}
	}
	return &next, nil
}

func sameSpec(a, b []partitionField) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].SourceID != b[i].SourceID || a[i].Name != b[i].Name || a[i].Transform != b[i].Transform {
			return false
		}
	}
	return true
}

// entry returns the manifest entry of a Delta add, and its record count.
func (c *conv) entry(a *actions.Add, spec partitionSpec, snapID, seq int64) (map[string]any, int64, error) {
	st, err := c.stats.Decode(a.Stats)
	if err != nil {
		return nil, 0, err
	}
	n, ok := st.NumRecords()
	if !ok {
		return nil, 0, fmt.Errorf("%w: file %s has no numRecords statistic (icebergCompatV2 requires it)", ErrNotConvertible, a.Path)
	}
	part := map[string]any{}
	sch := c.snap.Schema()
	for _, pfld := range spec.Fields {
		f, ok := fieldByID(sch, pfld.SourceID)
		if !ok {
			return nil, 0, fmt.Errorf("%w: partition source column %d is not in the schema", ErrNotConvertible, pfld.SourceID)
		}
		raw, present := a.PartitionValues[f.PhysicalName(c.mode)]
		v := schema.Value{}
		if present {
			if v, err = schema.ParsePartitionValue(f.Type, raw); err != nil {
				return nil, 0, fmt.Errorf("iceberg: file %s: %w", a.Path, err)
			}
		}
		_, branch, err := partitionAvro(pfld.Name, pfld.FieldID, f.Type)
		if err != nil {
			return nil, 0, err
		}
		part[pfld.Name] = partitionDatum(branch, f.Type, v)
	}
	var nulls, counts, lower, upper []any
	for _, l := range c.leaves {
		counts = append(counts, map[string]any{"key": int32(l.id), "value": n})
		if k, ok := st.NullCount(l.path); ok {
			nulls = append(nulls, map[string]any{"key": int32(l.id), "value": k})
		}
		if v, ok := st.Min(l.path); ok && !isNaN(v, l.typ) {
			if b, ok := singleValue(l.typ, v); ok {
				lower = append(lower, map[string]any{"key": int32(l.id), "value": b})
			}
		}
		if v, ok := st.Max(l.path); ok && !isNaN(v, l.typ) && exactMax(v, l.typ) {
			if b, ok := singleValue(l.typ, v); ok {
				upper = append(upper, map[string]any{"key": int32(l.id), "value": b})
			}
		}
	}
	df := map[string]any{
		"content": int32(contentData), "file_path": c.fileLocation(a.Path), "file_format": "PARQUET",
		"partition": part, "record_count": n, "file_size_in_bytes": a.Size,
		"column_sizes": nil, "value_counts": arrayOrNil(counts), "null_value_counts": arrayOrNil(nulls),
		"nan_value_counts": nil, "lower_bounds": arrayOrNil(lower), "upper_bounds": arrayOrNil(upper),
		"key_metadata": nil, "split_offsets": nil, "equality_ids": nil, "sort_order_id": nil,
	}
	return map[string]any{
		"status": int32(statusAdded), "snapshot_id": unionLong(snapID),
		"sequence_number": unionLong(seq), "file_sequence_number": unionLong(seq),
		"data_file": df,
	}, n, nil
}

// exactMax reports whether a Delta max statistic is a valid Iceberg upper
// bound: Delta truncates long strings to a prefix (Spark keeps 32
// characters), which is below values that extend it, so string and
// binary maxima are used only when shorter than that.
func exactMax(v schema.Value, t schema.DataType) bool {
	switch t {
	case schema.String:
		return utf8.RuneCountInString(v.String()) < 32
	case schema.Binary:
		return len(v.Bytes()) < 32
	}
	return true
}

func isNaN(v schema.Value, t schema.DataType) bool {
	return (t == schema.Float || t == schema.Double) && math.IsNaN(v.Float64())
}

func arrayOrNil(xs []any) any {
	if len(xs) == 0 {
		return nil
	}
	return map[string]any{"array": xs}
}

// fieldByID finds the top-level field with a column mapping id.
func fieldByID(sch *schema.StructType, id int) (*schema.StructField, bool) {
	for i := range sch.Fields {
		if fid, ok := sch.Fields[i].ColumnMappingID(); ok && int(fid) == id {
			return &sch.Fields[i], true
		}
	}
	return nil, false
}

// manifestWriter writes manifests of one partition spec and schema.
type manifestWriter struct {
	schemaJSON string
	meta       map[string]string
}

func (c *conv) manifestWriter(spec partitionSpec, sch schemaJSON) (*manifestWriter, error) {
	var fields []map[string]any
	for _, pfld := range spec.Fields {
		f, ok := fieldByID(c.snap.Schema(), pfld.SourceID)
		if !ok {
			return nil, fmt.Errorf("%w: partition source column %d is not in the schema", ErrNotConvertible, pfld.SourceID)
		}
		af, _, err := partitionAvro(pfld.Name, pfld.FieldID, f.Type)
		if err != nil {
			return nil, err
		}
		fields = append(fields, af)
	}
	_, sj, err := manifestSchema(fields)
	if err != nil {
		return nil, fmt.Errorf("iceberg: manifest schema: %w", err)
	}
	schemaBytes, _ := json.Marshal(sch)
	specBytes, _ := json.Marshal(spec.Fields)
	return &manifestWriter{schemaJSON: sj, meta: map[string]string{
		"schema": string(schemaBytes), "schema-id": strconv.Itoa(sch.SchemaID),
		"partition-spec": string(specBytes), "partition-spec-id": strconv.Itoa(spec.SpecID),
		"format-version": "2", "content": "data",
	}}, nil
}

// write writes a manifest of entries and returns its manifest list
// record, or nil when no entry is left.
func (w *manifestWriter) write(ctx context.Context, c *conv, entries []map[string]any, snapID, seq int64) (map[string]any, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	var added, existing, deleted int32
	var addedRows, existingRows, deletedRows int64
	minSeq := seq
	recs := make([]any, len(entries))
	for i, e := range entries {
		recs[i] = e
		st, _ := longOf(e, "status")
		n, _ := longOf(dataFileOf(e), "record_count")
		switch st {
		case statusAdded:
			added++
			addedRows += n
		case statusExisting:
			existing++
			existingRows += n
		case statusDeleted:
			deleted++
			deletedRows += n
		}
		if st != statusDeleted {
			if s, ok := longOf(e, "sequence_number"); ok {
				minSeq = min(minSeq, s)
			}
		}
	}
	if added+existing == 0 && deleted == 0 {
		return nil, nil
	}
	data, err := encodeOCF(w.schemaJSON, w.meta, recs)
	if err != nil {
		return nil, fmt.Errorf("iceberg: encoding a manifest: %w", err)
	}
	key := fmt.Sprintf("%s%s-m0.avro", MetadataDir, uuid.NewString())
	if err := c.store.Put(ctx, key, data); err != nil {
		return nil, err
	}
	specID, _ := strconv.Atoi(w.meta["partition-spec-id"])
	return map[string]any{
		"manifest_path": c.location(key), "manifest_length": int64(len(data)),
		"partition_spec_id": int32(specID), "content": int32(contentData),
		"sequence_number": seq, "min_sequence_number": minSeq, "added_snapshot_id": snapID,
		"added_files_count": added, "existing_files_count": existing, "deleted_files_count": deleted,
		"added_rows_count": addedRows, "existing_rows_count": existingRows, "deleted_rows_count": deletedRows,
		"partitions": nil, "key_metadata": nil,
	}, nil
}
