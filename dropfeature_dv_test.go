package delta_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// DROP FEATURE deletionVectors, Spark's fast drop with checkpoint
// protection, rule by rule: the rows stay; the feature's traces are gone
// from the latest version; three barrier checkpoints of empty commits come
// before the drop commit, which removes the feature, adds
// checkpointProtection and names its own version in
// delta.requireCheckpointProtectionBeforeVersion; a checkpoint follows;
// the vector files the tombstones reference get tombstones of their own;
// time travel before the drop still reads the deleted rows as deleted.
func TestDropDeletionVectors(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}, {Name: "p", Type: schema.String}}}
	tbl, err := delta.Create(ctx, "memory://drop-dv", delta.TableSpec{Schema: sch, PartitionColumns: []string{"p"},
		Properties: map[string]string{"delta.enableDeletionVectors": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for p := range 3 {
		var rows [][]schema.Value
		for i := range 10 {
			rows = append(rows, []schema.Value{schema.LongValue(int64(p*10 + i)), schema.StringValue(strconv.Itoa(p))})
		}
		if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Vectors in files (not inline), as Spark writes them, so that the drop
	// has vector files to protect.
	if _, err := tbl.Delete(ctx, "id % 3 = 0", delta.DMLOptions{InlineDVMax: -1}); err != nil {
		t.Fatal(err)
	}
	beforeDrop, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := snapIDs(t, tbl, beforeDrop)
	var vectors int
	for a, err := range beforeDrop.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if a.DeletionVector != nil {
			vectors++
		}
	}
	if vectors == 0 {
		t.Fatal("the DELETE wrote no deletion vector: nothing to drop")
	}

	res, err := tbl.DropFeature(ctx, actions.FeatureDeletionVectors, delta.AlterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	drop := res.Version
	if after.Version() != drop {
		t.Fatalf("latest %d, drop at %d", after.Version(), drop)
	}
	// The rows stay.
	if got := snapIDs(t, tbl, after); !slices.Equal(got, wantIDs) {
		t.Fatalf("ids after the drop %v, want %v", got, wantIDs)
	}
	// The protocol: no deletion vectors, checkpointProtection, reader 1.
	p := after.Protocol()
	if slices.Contains(p.ReaderFeatures, actions.FeatureDeletionVectors) || slices.Contains(p.WriterFeatures, actions.FeatureDeletionVectors) ||
		!slices.Contains(p.WriterFeatures, actions.FeatureCheckpointProtection) || p.MinReaderVersion != 1 || p.MinWriterVersion != 7 {
		t.Fatalf("protocol after the drop %+v", p)
	}
	props := after.Properties()
	if props["delta.requireCheckpointProtectionBeforeVersion"] != strconv.FormatInt(drop, 10) {
		t.Errorf("requireCheckpointProtectionBeforeVersion %q, want %d", props["delta.requireCheckpointProtectionBeforeVersion"], drop)
	}
	if _, ok := props["delta.enableDeletionVectors"]; ok {
		t.Errorf("delta.enableDeletionVectors is still set")
	}
	for a, err := range after.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if a.DeletionVector != nil {
			t.Fatalf("file %s keeps a deletion vector", a.Path)
		}
	}
	// The log between the DELETE and the drop, in Spark's order.
	hist, err := tbl.History(ctx, int(drop-beforeDrop.Version()))
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, c := range slices.Backward(hist) {
		ops = append(ops, c.Info.Operation)
	}
	want := []string{"UNSET TBLPROPERTIES", "REORG", "Deletion Vector Tombstones", "Empty Commit", "Empty Commit", "Empty Commit", "DROP FEATURE"}
	if !slices.Equal(ops, want) {
		t.Errorf("operations %q, want %q", ops, want)
	}
	// Checkpoints: the three barriers and the one after the drop.
	store := tbl.Store()
	for _, v := range []int64{drop - 3, drop - 2, drop - 1, drop} {
		if _, err := store.Stat(ctx, fmt.Sprintf("_delta_log/%020d.checkpoint.parquet", v)); err != nil {
			t.Errorf("no checkpoint at version %d: %v", v, err)
		}
	}
	// A tombstone for each vector file: dataChange false, path a DV file.
	tombs, err := tbl.SnapshotAt(ctx, drop-4)
	if err != nil {
		t.Fatal(err)
	}
	data, err := store.Get(ctx, deltalog.CommitKey(tombs.Version()))
	if err != nil {
		t.Fatal(err)
	}
	acts, err := actions.DecodeCommit("tombstones", data)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range acts {
		if a.Remove != nil {
			n++
			if a.Remove.DataChange || a.Remove.DeletionVector != nil {
				t.Errorf("DV tombstone %+v", a.Remove)
			}
			if _, err := store.Stat(ctx, a.Remove.Path); err != nil {
				t.Errorf("DV tombstone %s names no file: %v", a.Remove.Path, err)
			}
		}
	}
	if n == 0 {
		t.Error("no DV tombstone committed")
	}
	// Time travel before the drop reads the deletions.
	if got := snapIDs(t, tbl, beforeDrop); !slices.Equal(got, wantIDs) {
		t.Errorf("ids at version %d %v", beforeDrop.Version(), got)
	}
	// A reader that starts at the latest checkpoint (as one that does not
	// know deletion vectors would) reads the same rows.
	cp, err := snapshot.Load(ctx, store, drop)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Segment().Checkpoint == nil || cp.Segment().Checkpoint[0].Version != drop {
		t.Errorf("the drop version loads from checkpoint %+v", cp.Segment().Checkpoint)
	}
	// Dropping it again: not in the protocol.
	if _, err := tbl.DropFeature(ctx, actions.FeatureDeletionVectors, delta.AlterOptions{}); !errors.Is(err, delta.ErrInvalidArgument) {
		t.Errorf("second drop: %v", err)
	}
}

func snapIDs(t *testing.T, tbl *delta.Table, snap *delta.Snapshot) []int64 {
	t.Helper()
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for r, err := range s.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Values()[0].Int64())
	}
	slices.Sort(ids)
	return ids
}

// DROP FEATURE vacuumProtocolCheck: no traces to remove, the same barrier
// checkpoints and protected drop commit.
func TestDropVacuumProtocolCheck(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}}
	tbl, err := delta.Create(ctx, "memory://drop-vpc", delta.TableSpec{Schema: sch,
		Properties: map[string]string{"delta.feature.vacuumProtocolCheck": "supported"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := tbl.DropFeature(ctx, actions.FeatureVacuumProtocolCheck, delta.AlterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Protocol()
	if slices.Contains(p.ReaderFeatures, actions.FeatureVacuumProtocolCheck) || slices.Contains(p.WriterFeatures, actions.FeatureVacuumProtocolCheck) ||
		!slices.Contains(p.WriterFeatures, actions.FeatureCheckpointProtection) || p.MinReaderVersion != 1 {
		t.Fatalf("protocol %+v", p)
	}
	if res.Version != 5 || snap.Properties()["delta.requireCheckpointProtectionBeforeVersion"] != "5" {
		t.Fatalf("drop at %d, property %q; want 5 (three empty commits after version 1)", res.Version, snap.Properties()["delta.requireCheckpointProtectionBeforeVersion"])
	}
	if got := snapIDs(t, tbl, snap); !slices.Equal(got, []int64{1}) {
		t.Fatalf("ids %v", got)
	}
}

// DROP FEATURE v2Checkpoint, as Spark's V2CheckpointPreDowngradeCommand
// and the fast drop do it: delta.checkpointPolicy set to classic, three
// barrier checkpoints of empty commits, each a classic checkpoint of the
// V1 spec (no checkpointMetadata), then the drop commit (protocol without
// the feature, with checkpointProtection) and a V1 checkpoint of it, which
// a reader that does not know v2Checkpoint can start from. Time travel to
// a version resting on the V2 checkpoint still reads.
func TestDropV2Checkpoint(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}}
	tbl, err := delta.Create(ctx, "memory://drop-v2cp", delta.TableSpec{Schema: sch,
		Properties: map[string]string{"delta.checkpointPolicy": "v2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for i := range 2 {
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(int64(i))}}, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(2)}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	before, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cp := before.Segment().Checkpoint; len(cp) != 1 || cp[0].Kind != deltalog.UUIDCheckpoint {
		t.Fatalf("the table before the drop rests on %+v, want a UUID-named V2 checkpoint", cp)
	}

	res, err := tbl.DropFeature(ctx, actions.FeatureV2Checkpoint, delta.AlterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	drop := res.Version
	after, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := after.Protocol()
	if slices.Contains(p.ReaderFeatures, actions.FeatureV2Checkpoint) || slices.Contains(p.WriterFeatures, actions.FeatureV2Checkpoint) ||
		!slices.Contains(p.WriterFeatures, actions.FeatureCheckpointProtection) || p.MinReaderVersion != 1 {
		t.Fatalf("protocol after the drop %+v", p)
	}
	props := after.Properties()
	if props["delta.checkpointPolicy"] != "classic" || props["delta.requireCheckpointProtectionBeforeVersion"] != strconv.FormatInt(drop, 10) {
		t.Fatalf("properties after the drop %v", props)
	}
	hist, err := tbl.History(ctx, int(drop-before.Version()))
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, c := range slices.Backward(hist) {
		ops = append(ops, c.Info.Operation)
	}
	if want := []string{"SET TBLPROPERTIES", "Empty Commit", "Empty Commit", "Empty Commit", "DROP FEATURE"}; !slices.Equal(ops, want) {
		t.Errorf("operations %q, want %q", ops, want)
	}
	// The barriers and the drop's checkpoint: classic-named, V1 spec.
	store := tbl.Store()
	for _, v := range []int64{drop - 3, drop - 2, drop - 1, drop} {
		key := fmt.Sprintf("_delta_log/%020d.checkpoint.parquet", v)
		var v2 bool
		err := checkpoint.Read(ctx, store, []string{key}, checkpoint.CheckpointMetadata|checkpoint.Sidecar, func(b []actions.Action) error {
			v2 = v2 || len(b) > 0
			return nil
		})
		if err != nil {
			t.Fatalf("checkpoint at version %d: %v", v, err)
		}
		if v2 {
			t.Errorf("checkpoint at version %d is of the V2 spec", v)
		}
	}
	// A reader that does not know v2Checkpoint starts from the drop's
	// checkpoint: its protocol names no feature such a reader lacks.
	var cpProto *actions.Protocol
	if err := checkpoint.Read(ctx, store, []string{fmt.Sprintf("_delta_log/%020d.checkpoint.parquet", drop)}, checkpoint.Protocol, func(b []actions.Action) error {
		for _, a := range b {
			cpProto = a.Protocol
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if cpProto == nil || slices.Contains(cpProto.ReaderFeatures, actions.FeatureV2Checkpoint) || cpProto.MinReaderVersion != 1 {
		t.Fatalf("the drop's checkpoint holds protocol %+v", cpProto)
	}
	if got := snapIDs(t, tbl, after); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Fatalf("ids after the drop %v", got)
	}
	if got := snapIDs(t, tbl, before); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Fatalf("ids at version %d (V2 checkpoint) %v", before.Version(), got)
	}
	// Later checkpoints are V1 too, and a new drop finds nothing.
	if _, err := tbl.DropFeature(ctx, actions.FeatureV2Checkpoint, delta.AlterOptions{}); !errors.Is(err, delta.ErrInvalidArgument) {
		t.Errorf("second drop: %v", err)
	}
}
