package checkpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// State is the reconciled state of a table at one version, which Write
// turns into a checkpoint. *snapshot.Snapshot implements it (package
// snapshot reads checkpoints, so this package cannot name it). The
// iterators may read the state on first use: an error is yielded (with a
// zero action) and ends the sequence, and Write returns it.
type State interface {
	Version() int64
	Protocol() actions.Protocol
	Metadata() actions.Metadata
	Schema() *schema.StructType
	// Files yields the live add actions.
	Files(ctx context.Context) iter.Seq2[*actions.Add, error]
	// Tombstones yields the remove actions of the state, expired or not.
	Tombstones(ctx context.Context) iter.Seq2[*actions.Remove, error]
	// Txns yields the newest txn of every application, expired or not.
	Txns(ctx context.Context) iter.Seq2[actions.Txn, error]
	// Domains yields the domains present (not removed).
	Domains(ctx context.Context) iter.Seq2[actions.DomainMetadata, error]
	// Config is the checked configuration of Protocol and Metadata; the
	// table properties Write honours are read through it.
	Config() *tableconfig.Config
}

// ErrProtected refuses a checkpoint of a version below the table's
// delta.requireCheckpointProtectionBeforeVersion when the table has the
// checkpointProtection feature: versions below it may carry protocols this
// library does not support. It matches deltaerr.ErrInvalidArgument.
var ErrProtected = fmt.Errorf("checkpoint: the version is protected: %w", deltaerr.ErrInvalidArgument)

// WriteOptions tune Write. The zero value writes what the table's
// properties ask for, with the time taken from time.Now.
type WriteOptions struct {
	// Now is the clock by which tombstones and txns expire; nil means
	// time.Now.
	Now func() time.Time

	// V2Format is the format of a UUID-named V2 checkpoint: "parquet" (the
	// default) or "json". Ignored for V1 checkpoints.
	V2Format string
	// SidecarMinActions, when positive, puts the add and remove actions of
	// a V2 checkpoint into sidecar files once there are at least this many
	// of them; otherwise they are kept in the checkpoint itself.
	SidecarMinActions int
	// SidecarMaxActions, when positive, is the most add and remove actions
	// one sidecar file holds; otherwise all go into one sidecar.
	SidecarMaxActions int

	// WriteStatsAsJSON and WriteStatsAsStruct override the table
	// properties delta.checkpoint.writeStatsAsJson (default true) and
	// delta.checkpoint.writeStatsAsStruct (default false) when not nil.
	WriteStatsAsJSON   *bool
	WriteStatsAsStruct *bool

	// RowGroupRows is the most rows of one Parquet row group; zero means
	// 1<<17.
	RowGroupRows int
}

const defaultRowGroupRows = 1 << 17

// Keys of the tags of a checkpointMetadata action (PROTOCOL.md
// "Checkpoint Metadata Tags"). Part of the on-disk format.
const (
	tagSidecarNumActions  = "sidecarNumActions"
	tagSidecarSizeInBytes = "sidecarSizeInBytes"
	tagNumOfAddFiles      = "numOfAddFiles"
)

// Write writes the checkpoint of st's version to store, then points
// _delta_log/_last_checkpoint at it, and returns what it wrote there.
//
// # Kind and layout
//
// A table gets a classic V1 checkpoint, _delta_log/<v>.checkpoint.parquet,
// unless it has the v2Checkpoint feature and delta.checkpointPolicy is v2
// (the policy, not the feature, decides, as in Spark: a table that keeps
// the feature under the classic policy, as the drop of the feature leaves
// it first, gets V1 checkpoints, which the protocol always allows). Under
// the v2 policy it gets a UUID-named V2 checkpoint, _delta_log/<v>.checkpoint.<uuid>.parquet (or .json, see
// WriteOptions.V2Format), whose first action is checkpointMetadata; its add
// and remove actions are either all in the checkpoint or all in sidecar
// files _delta_log/_sidecars/<uuid>.parquet, which it names in sidecar
// actions (see WriteOptions.SidecarMinActions). Multi-part checkpoints,
// deprecated by the protocol, are never written.
//
// The checkpoint holds the protocol, the metaData, every txn (but those
// older than delta.setTransactionRetentionDuration, when it is set), the
// domains that are not removed, the live files, and the tombstones whose
// deletionTimestamp is within delta.deletedFileRetentionDuration (default
// one week) of Now; a tombstone without one has expired. The Parquet
// schema is Spark's (see write_schema.go): add carries stats as a JSON
// string unless delta.checkpoint.writeStatsAsJson is false, and
// stats_parsed and (for a partitioned table) partitionValues_parsed, typed
// by the table's physical schema, when delta.checkpoint.writeStatsAsStruct
// is true (minValues and maxValues without booleans and binaries, which
// have no bounds). remove carries no stats and no tags. The Parquet files
// are encoded as Spark's are, by the data file writer: DATA_PAGE (v1)
// pages with CRCs, PLAIN_DICTIONARY where a dictionary pays, else PLAIN.
// _last_checkpoint records, as Spark's LastCheckpointInfo, the version,
// the number of actions, the bytes, the number of adds, the Delta schema
// of the Parquet checkpoint (checkpointSchema; none for a JSON one), the
// V2 checkpoint and a checksum.
//
// # Order and atomicity
//
// Sidecars are written first, then the checkpoint, each with one Put: a
// checkpoint is not a commit, and writing the same classic checkpoint
// again is harmless because its content is the same. Only once the
// checkpoint is complete is _last_checkpoint replaced, and not when it
// already names a newer checkpoint. A failure before that leaves at worst
// files no reader looks at (an orphan sidecar or V2 checkpoint is found
// only through a listing, and is then complete) and which metadata cleanup
// deletes later.
//
// Errors: deltaerr.ErrInvalidArgument for bad options or a negative
// version; the store's errors as they are.
func Write(ctx context.Context, store logstore.Store, st State, opts WriteOptions) (deltalog.LastCheckpoint, error) {
	w, err := newWriter(st, opts)
	if err != nil {
		return deltalog.LastCheckpoint{}, err
	}
	if err := protectedNow(ctx, st); err != nil {
		return deltalog.LastCheckpoint{}, err
	}
	var lc deltalog.LastCheckpoint
	switch {
	case !w.v2:
		lc, err = w.writeV1(ctx, store)
	default:
		lc, err = w.writeV2(ctx, store)
	}
	if err != nil {
		return deltalog.LastCheckpoint{}, err
	}
	if err := ctx.Err(); err != nil {
		return deltalog.LastCheckpoint{}, err
	}
	prev, err := deltalog.ReadLastCheckpoint(ctx, store)
	if err != nil && !errors.Is(err, deltaerr.ErrCorrupt) {
		return deltalog.LastCheckpoint{}, err
	}
	if prev != nil && prev.Version > lc.Version {
		return lc, nil // the hint already names a newer checkpoint
	}
	if err := deltalog.WriteLastCheckpoint(ctx, store, lc); err != nil {
		return deltalog.LastCheckpoint{}, err
	}
	return lc, nil
}

// writer holds what one Write decided from the state and the options.
type writer struct {
	st       State
	version  int64
	protocol actions.Protocol
	metadata actions.Metadata
	v2       bool
	v2JSON   bool
	opts     WriteOptions

	statsJSON bool
	addNode   *wnode
	partCols  []partitionCol
	statsN    *wnode // stats_parsed, or nil
	partsN    *wnode // partitionValues_parsed, or nil

	tombstoneCutoff int64 // ms; tombstones deleted before it have expired
	txnCutoff       int64 // ms; txns last updated before it have expired; 0 for none
}

// LatestConfigurer is a State that can say the table's configuration
// now, at its newest version: *snapshot.Snapshot implements it.
type LatestConfigurer interface {
	LatestConfig(ctx context.Context) (*tableconfig.Config, error)
}

// protectedNow refuses a checkpoint of st when the table's newest version
// protects it: Spark's DROP FEATURE sets
// delta.requireCheckpointProtectionBeforeVersion in a commit after the
// versions it protects, so a snapshot of an older version does not carry
// it (newWriter checks the snapshot's own configuration).
func protectedNow(ctx context.Context, st State) error {
	l, ok := st.(LatestConfigurer)
	if !ok {
		return nil
	}
	cfg, err := l.LatestConfig(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: the table's newest configuration, for checkpointProtection: %w", err)
	}
	if p := cfg.CheckpointProtectedBefore(); st.Version() < p {
		return fmt.Errorf("checkpoint: version %d is below delta.requireCheckpointProtectionBeforeVersion %d of the newest version (checkpointProtection): %w",
			st.Version(), p, ErrProtected)
	}
	return nil
}

func newWriter(st State, opts WriteOptions) (*writer, error) {
	w := &writer{st: st, version: st.Version(), protocol: st.Protocol(), metadata: st.Metadata(), opts: opts}
	if w.version < 0 {
		return nil, fmt.Errorf("checkpoint: version %d: %w", w.version, deltaerr.ErrInvalidArgument)
	}
	// checkpointProtection: a checkpoint below the protected version could
	// stand for a version whose protocol this writer does not support (a
	// feature dropped since), and hide the protected checkpoints' barrier.
	if p := st.Config().CheckpointProtectedBefore(); w.version < p {
		return nil, fmt.Errorf("checkpoint: version %d is below delta.requireCheckpointProtectionBeforeVersion %d (checkpointProtection): %w",
			w.version, p, ErrProtected)
	}
	if opts.SidecarMinActions < 0 || opts.SidecarMaxActions < 0 || opts.RowGroupRows < 0 {
		return nil, fmt.Errorf("checkpoint: negative sidecar or row group size: %w", deltaerr.ErrInvalidArgument)
	}
	switch opts.V2Format {
	case "", "parquet":
	case "json":
		w.v2JSON = true
	default:
		return nil, fmt.Errorf("checkpoint: V2 format %q is neither parquet nor json: %w", opts.V2Format, deltaerr.ErrInvalidArgument)
	}
	if w.opts.Now == nil {
		w.opts.Now = time.Now
	}
	if w.opts.RowGroupRows == 0 {
		w.opts.RowGroupRows = defaultRowGroupRows
	}
	cfg := st.Config()
	// The V2 spec under the v2 policy only, as Spark decides: a table
	// that supports the feature with the classic policy (the one a drop of
	// the feature sets first) gets classic checkpoints of the V1 spec,
	// which the protocol always allows.
	w.v2 = tableconfig.HasReaderFeature(&w.protocol, actions.FeatureV2Checkpoint) && cfg.CheckpointPolicy() == tableconfig.CheckpointV2
	now := w.opts.Now()
	w.tombstoneCutoff = now.Add(-cfg.DeletedFileRetention()).UnixMilli()
	if d, ok := cfg.SetTransactionRetention(); ok {
		w.txnCutoff = now.Add(-d).UnixMilli()
	}

	w.statsJSON = cfg.WriteStatsAsJSON()
	if opts.WriteStatsAsJSON != nil {
		w.statsJSON = *opts.WriteStatsAsJSON
	}
	statsStruct := cfg.WriteStatsAsStruct()
	if opts.WriteStatsAsStruct != nil {
		statsStruct = *opts.WriteStatsAsStruct
	}
	if statsStruct {
		w.typedColumns(st.Schema(), cfg.ColumnMappingMode())
	}
	w.addNode = addNode(w.statsJSON, w.partsN, w.statsN)
	return w, nil
}

// typedColumns sets the stats_parsed and partitionValues_parsed nodes for
// the table schema. A schema whose physical form cannot be worked out
// (column mapping without physical names) gets neither.
func (w *writer) typedColumns(logical *schema.StructType, mode schema.ColumnMappingMode) {
	if logical == nil {
		return
	}
	physical, err := logical.PhysicalSchema(mode)
	if err != nil {
		return
	}
	var dataCols []schema.StructField
	for _, name := range w.metadata.PartitionColumns {
		f, ok := logical.Field(name)
		if !ok {
			continue
		}
		c := partitionCol{physical: f.PhysicalName(mode), typ: f.Type}
		if n, ok := typedNode(c.physical, f.Type); ok {
			c.node = n
		}
		w.partCols = append(w.partCols, c)
	}
	for i := range logical.Fields {
		if !slices.Contains(w.metadata.PartitionColumns, logical.Fields[i].Name) {
			dataCols = append(dataCols, physical.Fields[i])
		}
	}
	if len(w.partCols) > 0 {
		w.partsN = partitionsNode(w.partCols)
	}
	w.statsN = statsNode(&schema.StructType{Fields: dataCols}, tableconfig.HasReaderFeature(&w.protocol, actions.FeatureDeletionVectors))
}

// nonFile returns the actions of the checkpoint other than adds and
// removes, in the order they are written: protocol, metaData, txns,
// domains.
func (w *writer) nonFile(ctx context.Context) ([]actions.Action, error) {
	p, m := w.protocol, w.metadata
	out := []actions.Action{{Protocol: &p}, {Metadata: &m}}
	for t, err := range w.st.Txns(ctx) {
		if err != nil {
			return nil, err
		}
		if w.txnCutoff != 0 && t.LastUpdated != nil && *t.LastUpdated < w.txnCutoff {
			continue
		}
		out = append(out, actions.Action{Txn: &t})
	}
	for d, err := range w.st.Domains(ctx) {
		if err != nil {
			return nil, err
		}
		if d.Removed {
			continue
		}
		out = append(out, actions.Action{DomainMetadata: &d})
	}
	return out, nil
}

// tombstones yields the removes that have not expired.
func (w *writer) tombstones(ctx context.Context) iter.Seq2[*actions.Remove, error] {
	return func(yield func(*actions.Remove, error) bool) {
		for r, err := range w.st.Tombstones(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			if r.DeletionTimestamp == nil || *r.DeletionTimestamp <= w.tombstoneCutoff {
				continue
			}
			if !yield(r, nil) {
				return
			}
		}
	}
}

// fileCounts counts the adds and the unexpired tombstones.
func (w *writer) fileCounts(ctx context.Context) (adds, removes int64, err error) {
	for _, err := range w.st.Files(ctx) {
		if err != nil {
			return 0, 0, err
		}
		adds++
	}
	for _, err := range w.tombstones(ctx) {
		if err != nil {
			return 0, 0, err
		}
		removes++
	}
	return adds, removes, nil
}

// writeV1 writes a classic V1 checkpoint.
func (w *writer) writeV1(ctx context.Context, store logstore.Store) (deltalog.LastCheckpoint, error) {
	pw, err := w.newParquet(false, true)
	if err != nil {
		return deltalog.LastCheckpoint{}, err
	}
	var adds int64
	err = func() error {
		head, err := w.nonFile(ctx)
		if err != nil {
			return err
		}
		for _, a := range head {
			if err := pw.action(&a); err != nil {
				return err
			}
		}
		adds, err = w.fileActions(ctx, pw, nil)
		return err
	}()
	if err != nil {
		return deltalog.LastCheckpoint{}, pw.failed(err)
	}
	data, err := pw.close()
	if err != nil {
		return deltalog.LastCheckpoint{}, err
	}
	key := deltalog.ClassicCheckpointKey(w.version)
	if err := store.Put(ctx, key, data); err != nil {
		return deltalog.LastCheckpoint{}, fmt.Errorf("checkpoint: writing %s: %w", key, err)
	}
	size := int64(len(data))
	return deltalog.LastCheckpoint{Version: w.version, Size: pw.rows, SizeInBytes: &size, NumOfAddFiles: &adds,
		CheckpointSchema: schemaJSON(pw.root)}, nil
}

// fileActions writes the adds and unexpired removes to pw, or, when split
// is set, to a new writer from split every SidecarMaxActions actions. It
// returns the number of adds.
func (w *writer) fileActions(ctx context.Context, pw *parquetWriter, split func() (*parquetWriter, error)) (int64, error) {
	var adds, n int64
	next := func() error {
		n++
		if split != nil && w.opts.SidecarMaxActions > 0 && n > 1 && (n-1)%int64(w.opts.SidecarMaxActions) == 0 {
			var err error
			pw, err = split()
			return err
		}
		return ctx.Err()
	}
	for a, err := range w.st.Files(ctx) {
		if err != nil {
			return 0, err
		}
		if err := next(); err != nil {
			return 0, err
		}
		if err := pw.action(&actions.Action{Add: a}); err != nil {
			return 0, err
		}
		adds++
	}
	for r, err := range w.tombstones(ctx) {
		if err != nil {
			return 0, err
		}
		if err := next(); err != nil {
			return 0, err
		}
		if err := pw.action(&actions.Action{Remove: r}); err != nil {
			return 0, err
		}
	}
	return adds, nil
}

// v2LastCheckpoint is the v2Checkpoint object of _last_checkpoint, as
// Spark writes it (without the optional nonFileActions).
type v2LastCheckpoint struct {
	Path             string            `json:"path"`
	SizeInBytes      int64             `json:"sizeInBytes"`
	ModificationTime int64             `json:"modificationTime"`
	SidecarFiles     []actions.Sidecar `json:"sidecarFiles"`
}

// writeV2 writes a UUID-named V2 checkpoint and its sidecars.
func (w *writer) writeV2(ctx context.Context, store logstore.Store) (deltalog.LastCheckpoint, error) {
	nAdds, nRemoves, err := w.fileCounts(ctx)
	if err != nil {
		return deltalog.LastCheckpoint{}, err
	}
	useSidecars := w.opts.SidecarMinActions > 0 && nAdds+nRemoves >= int64(w.opts.SidecarMinActions)
	cm := actions.CheckpointMetadata{Version: w.version, Tags: map[string]string{tagNumOfAddFiles: strconv.FormatInt(nAdds, 10)}}
	var sidecars []actions.Sidecar
	var total, sidecarBytes, sidecarRows int64
	if useSidecars {
		var err error
		sidecars, sidecarRows, err = w.writeSidecars(ctx, store)
		if err != nil {
			return deltalog.LastCheckpoint{}, err
		}
		for _, s := range sidecars {
			sidecarBytes += s.SizeInBytes
		}
		cm.Tags[tagSidecarNumActions] = strconv.FormatInt(sidecarRows, 10)
		cm.Tags[tagSidecarSizeInBytes] = strconv.FormatInt(sidecarBytes, 10)
	}

	nonFile, err := w.nonFile(ctx)
	if err != nil {
		return deltalog.LastCheckpoint{}, err
	}
	head := append([]actions.Action{{CheckpointMetadata: &cm}}, nonFile...)
	for i := range sidecars {
		head = append(head, actions.Action{Sidecar: &sidecars[i]})
	}
	id, err := newUUID()
	if err != nil {
		return deltalog.LastCheckpoint{}, err
	}
	var data []byte
	var rows int64
	var fileSchema json.RawMessage // Spark records none for a JSON V2 checkpoint
	if w.v2JSON {
		data, rows, err = w.jsonCheckpoint(ctx, head, !useSidecars)
	} else {
		data, rows, fileSchema, err = w.parquetCheckpoint(ctx, head, !useSidecars)
	}
	if err != nil {
		return deltalog.LastCheckpoint{}, err
	}
	ext := "parquet"
	if w.v2JSON {
		ext = "json"
	}
	key := deltalog.UUIDCheckpointKey(w.version, id, ext)
	if err := store.Put(ctx, key, data); err != nil {
		return deltalog.LastCheckpoint{}, fmt.Errorf("checkpoint: writing %s: %w", key, err)
	}
	info, err := store.Stat(ctx, key)
	if err != nil {
		return deltalog.LastCheckpoint{}, fmt.Errorf("checkpoint: %s: %w", key, err)
	}
	if sidecars == nil {
		sidecars = []actions.Sidecar{}
	}
	v2, err := json.Marshal(v2LastCheckpoint{
		Path:             key[strings.LastIndexByte(key, '/')+1:],
		SizeInBytes:      int64(len(data)),
		ModificationTime: info.ModTime.UnixMilli(),
		SidecarFiles:     sidecars,
	})
	if err != nil {
		return deltalog.LastCheckpoint{}, fmt.Errorf("checkpoint: encoding v2Checkpoint: %w", err)
	}
	total = int64(len(data)) + sidecarBytes
	size := rows + sidecarRows
	return deltalog.LastCheckpoint{Version: w.version, Size: size, SizeInBytes: &total, NumOfAddFiles: &nAdds,
		CheckpointSchema: fileSchema, V2Checkpoint: v2}, nil
}

// writeSidecars writes the file actions into sidecar files and returns
// their sidecar actions and the number of actions they hold.
func (w *writer) writeSidecars(ctx context.Context, store logstore.Store) ([]actions.Sidecar, int64, error) {
	var done []*parquetWriter
	pw, err := w.newParquet(true, false)
	if err != nil {
		return nil, 0, err
	}
	err = func() error {
		_, err := w.fileActions(ctx, pw, func() (*parquetWriter, error) {
			done = append(done, pw)
			var err error
			pw, err = w.newParquet(true, false)
			return pw, err
		})
		return err
	}()
	if err != nil {
		return nil, 0, pw.failed(err)
	}
	done = append(done, pw)
	var out []actions.Sidecar
	var rows int64
	for _, p := range done {
		data, err := p.close()
		if err != nil {
			return nil, 0, err
		}
		id, err := newUUID()
		if err != nil {
			return nil, 0, err
		}
		name := id + ".parquet"
		key := deltalog.SidecarDir + name
		if err := store.Put(ctx, key, data); err != nil {
			return nil, 0, fmt.Errorf("checkpoint: writing %s: %w", key, err)
		}
		info, err := store.Stat(ctx, key)
		if err != nil {
			return nil, 0, fmt.Errorf("checkpoint: %s: %w", key, err)
		}
		out = append(out, actions.Sidecar{Path: name, SizeInBytes: int64(len(data)), ModificationTime: info.ModTime.UnixMilli()})
		rows += p.rows
	}
	return out, rows, nil
}

// parquetCheckpoint encodes a V2 checkpoint as Parquet: head, then the
// file actions when inline is set. It returns the file, its rows and its
// schema for _last_checkpoint.
func (w *writer) parquetCheckpoint(ctx context.Context, head []actions.Action, inline bool) ([]byte, int64, json.RawMessage, error) {
	pw, err := w.newParquet(false, true)
	if err != nil {
		return nil, 0, nil, err
	}
	err = func() error {
		for i := range head {
			if err := pw.action(&head[i]); err != nil {
				return err
			}
		}
		if inline {
			_, err := w.fileActions(ctx, pw, nil)
			return err
		}
		return nil
	}()
	if err != nil {
		return nil, 0, nil, pw.failed(err)
	}
	data, err := pw.close()
	return data, pw.rows, schemaJSON(pw.root), err
}

// jsonCheckpoint encodes a V2 checkpoint as newline-delimited JSON: head,
// then the file actions when inline is set. Removes lose their stats and
// tags, as in Parquet checkpoints.
func (w *writer) jsonCheckpoint(ctx context.Context, head []actions.Action, inline bool) ([]byte, int64, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var rows int64
	put := func(a *actions.Action) error {
		rows++
		if err := enc.Encode(a); err != nil {
			return fmt.Errorf("checkpoint: encoding an action: %w", err)
		}
		return nil
	}
	for i := range head {
		if err := put(&head[i]); err != nil {
			return nil, 0, err
		}
	}
	if inline {
		for a, err := range w.st.Files(ctx) {
			if err != nil {
				return nil, 0, err
			}
			if err := put(&actions.Action{Add: a}); err != nil {
				return nil, 0, err
			}
		}
		for r, err := range w.tombstones(ctx) {
			if err != nil {
				return nil, 0, err
			}
			c := *r
			c.Stats, c.Tags = "", nil
			if err := put(&actions.Action{Remove: &c}); err != nil {
				return nil, 0, err
			}
		}
	}
	return buf.Bytes(), rows, nil
}

// newUUID returns a random (version 4) UUID in canonical form.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("checkpoint: random UUID: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// parquetWriter writes actions as the rows of one Parquet file held in
// memory. The file is encoded by the data file writer (internal/datafile),
// as Spark's checkpoints are by the Parquet writer of its data files:
// DATA_PAGE (v1) pages, PLAIN_DICTIONARY where a dictionary pays, else
// PLAIN, booleans PLAIN, RLE levels, snappy.
type parquetWriter struct {
	w     *writer
	buf   bytes.Buffer
	dw    *datafile.Writer
	root  *wnode
	rows  int64            // rows written
	cols  [][]schema.Value // the rows not yet handed to dw, per top-level column
	npend int              // rows in cols

	add, remove, txn, metadata, protocol, domain, cpMeta, sidecar *wnode
}

// pendingRows is how many rows are gathered before they are encoded.
const pendingRows = 1024

// newParquet starts a Parquet file: a sidecar (add and remove only) or a
// checkpoint, with the V2 columns when w.v2 is set.
func (w *writer) newParquet(sidecar, nonFile bool) (*parquetWriter, error) {
	p := &parquetWriter{w: w, add: w.addNode, remove: removeNode()}
	root := wstruct("spark_schema")
	if !sidecar && nonFile {
		p.txn = txnNode()
		root.kids = append(root.kids, p.txn)
	}
	root.kids = append(root.kids, p.add, p.remove)
	if !sidecar && nonFile {
		p.metadata, p.protocol, p.domain = metadataNode(), protocolNode(), domainMetadataNode()
		root.kids = append(root.kids, p.metadata, p.protocol, p.domain)
		if w.v2 {
			p.cpMeta, p.sidecar = checkpointMetadataNode(), sidecarNode()
			root.kids = append(root.kids, p.cpMeta, p.sidecar)
		}
	}
	p.root = root
	p.cols = make([][]schema.Value, len(root.kids))
	sch, _ := root.deltaType().(*schema.StructType)
	dw, err := datafile.NewWriter(&p.buf, sch, datafile.WriteOptions{
		Compression: "snappy",
		// No Delta statistics: the footer's column chunk statistics only.
		Stats: datafile.StatsOptions{StatsColumns: []string{}},
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: internal: the checkpoint schema: %w", err)
	}
	p.dw = dw
	return p, nil
}

// action adds a as one row.
func (p *parquetWriter) action(a *actions.Action) error {
	var col *wnode
	var v any
	switch {
	case a.Add != nil:
		col, v = p.add, p.w.addValue(a.Add)
	case a.Remove != nil:
		col, v = p.remove, removeValue(a.Remove)
	case a.Txn != nil:
		col, v = p.txn, []any{a.Txn.AppID, a.Txn.Version, opt(a.Txn.LastUpdated)}
	case a.Metadata != nil:
		m := a.Metadata
		col, v = p.metadata, []any{m.ID, nullIfEmpty(m.Name), nullIfEmpty(m.Description),
			[]any{m.Format.Provider, m.Format.Options}, m.SchemaString, m.PartitionColumns, m.Configuration, opt(m.CreatedTime)}
	case a.Protocol != nil:
		pr := a.Protocol
		// Feature lists are present exactly when the versions call for them.
		var rf, wf any
		if pr.MinReaderVersion >= 3 {
			rf = orEmpty(pr.ReaderFeatures)
		}
		if pr.MinWriterVersion >= 7 {
			wf = orEmpty(pr.WriterFeatures)
		}
		col, v = p.protocol, []any{pr.MinReaderVersion, pr.MinWriterVersion, rf, wf}
	case a.DomainMetadata != nil:
		d := a.DomainMetadata
		col, v = p.domain, []any{d.Domain, d.Configuration, d.Removed}
	case a.CheckpointMetadata != nil:
		col, v = p.cpMeta, []any{a.CheckpointMetadata.Version, nilIfEmpty(a.CheckpointMetadata.Tags)}
	case a.Sidecar != nil:
		s := a.Sidecar
		col, v = p.sidecar, []any{s.Path, s.SizeInBytes, s.ModificationTime, nilIfEmpty(s.Tags)}
	}
	if col == nil {
		return fmt.Errorf("checkpoint: internal: no column for action %+v in this file", a)
	}
	for i, k := range p.root.kids {
		var cv schema.Value // null
		if k == col {
			cv = k.value(v)
		}
		p.cols[i] = append(p.cols[i], cv)
	}
	p.npend++
	p.rows++
	if p.npend >= pendingRows {
		if err := p.flushRows(); err != nil {
			return err
		}
	}
	if p.rows%int64(p.w.opts.RowGroupRows) == 0 {
		if err := p.flushRows(); err != nil {
			return err
		}
		if err := p.dw.Flush(); err != nil {
			return fmt.Errorf("checkpoint: encoding Parquet: %w", err)
		}
	}
	return nil
}

// flushRows encodes the rows gathered so far.
func (p *parquetWriter) flushRows() error {
	if p.npend == 0 {
		return nil
	}
	if err := p.dw.Write(p.cols, p.npend); err != nil {
		return fmt.Errorf("checkpoint: encoding Parquet: %w", err)
	}
	for i := range p.cols {
		clear(p.cols[i]) // let go of the values
		p.cols[i] = p.cols[i][:0]
	}
	p.npend = 0
	return nil
}

// close finishes the file and returns its bytes.
func (p *parquetWriter) close() ([]byte, error) {
	err := func() error {
		if err := p.flushRows(); err != nil {
			return err
		}
		_, err := p.dw.Close()
		return err
	}()
	if err != nil {
		return nil, p.failed(err)
	}
	return p.buf.Bytes(), nil
}

// failed reports an error met while encoding: the context's and store's
// errors as they are, others (parquet-go failures, which are bugs of this
// package or of parquet-go) wrapped.
func (p *parquetWriter) failed(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || strings.HasPrefix(err.Error(), "checkpoint:") {
		return err
	}
	return fmt.Errorf("checkpoint: encoding Parquet: %w", err)
}

// addValue is the add struct of a, in the order of addNode.
func (w *writer) addValue(a *actions.Add) []any {
	v := []any{a.Path, a.PartitionValues, a.Size, a.ModificationTime, a.DataChange, nilIfEmpty(a.Tags),
		dvValue(a.DeletionVector), opt(a.BaseRowID), opt(a.DefaultRowCommitVersion), nullIfEmpty(a.ClusteringProvider)}
	if w.statsJSON {
		v = append(v, nullIfEmpty(a.Stats))
	}
	if w.partsN != nil {
		v = append(v, partitionsValue(w.partsN, w.partCols, a.PartitionValues))
	}
	if w.statsN != nil {
		v = append(v, parsedStatsValue(w.statsN, a.Stats))
	}
	return v
}

// removeValue is the remove struct of r, in the order of removeNode.
func removeValue(r *actions.Remove) []any {
	return []any{r.Path, opt(r.DeletionTimestamp), r.DataChange, opt(r.ExtendedFileMetadata), r.PartitionValues,
		opt(r.Size), dvValue(r.DeletionVector), opt(r.BaseRowID), opt(r.DefaultRowCommitVersion)}
}

func dvValue(dv *actions.DeletionVector) any {
	if dv == nil {
		return nil
	}
	return []any{dv.StorageType, dv.PathOrInlineDv, opt(dv.Offset), dv.SizeInBytes, dv.Cardinality, opt(dv.MaxRowIndex)}
}

// opt returns *p, or nil (a null) for a nil pointer.
func opt[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// nullIfEmpty writes "" as null: the optional string fields of actions
// decode an absent field as "".
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nilIfEmpty writes an empty tags map as null, as Spark does.
func nilIfEmpty(m map[string]string) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
