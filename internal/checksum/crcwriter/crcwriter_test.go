package crcwriter_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/checksum"
	"github.com/godelta/delta/internal/checksum/crcwriter"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil"
	"github.com/godelta/delta/txn"
)

const testSchema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`

func add(path string, size int64, dv int64) actions.Add {
	a := actions.Add{Path: path, PartitionValues: map[string]string{}, Size: size, ModificationTime: 1, DataChange: true}
	if dv > 0 {
		a.DeletionVector = &actions.DeletionVector{StorageType: "u", PathOrInlineDv: fmt.Sprintf("ab^-aqEH.-t@S}K{vb[*k%d", dv), SizeInBytes: 34, Cardinality: dv, Offset: new(int32(1))}
	}
	return a
}

func remove(a actions.Add) actions.Remove {
	return actions.RemoveOf(&a, 2, true)
}

// step is one commit of the sequence.
type step struct {
	name string
	do   func(tx *txn.Transaction)
}

// TestIncrementalEqualsReplay commits a sequence of varied commits
// through txn (whose checksum hook writes each <v>.crc, incrementally
// where it can) and checks after each that the .crc, a Builder carried
// over the commits, and the checksum computed from a replay of the
// version agree byte for byte (but for what the replay cannot know).
func TestIncrementalEqualsReplay(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	dvProto := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{actions.FeatureDeletionVectors},
		WriterFeatures: []string{actions.FeatureDeletionVectors, actions.FeatureDomainMetadata}}
	meta := actions.Metadata{ID: "crc", Format: actions.Format{Provider: "parquet", Options: map[string]string{}}, SchemaString: testSchema,
		PartitionColumns: []string{}, Configuration: map[string]string{"delta.enableDeletionVectors": "true", "delta.checkpointInterval": "4"}}
	f1, f2, f3 := add("f1", 100, 0), add("f2", 20_000, 0), add("f3", 5<<20, 0)
	f1dv := add("f1", 100, 7)
	f1dv2 := add("f1", 100, 12)
	big := add("big", 300<<20, 0)
	steps := []step{
		{"append", func(tx *txn.Transaction) { tx.Add(f1, f2) }},
		{"append with a txn", func(tx *txn.Transaction) { tx.Add(f3); tx.SetTransaction("app", 1) }},
		{"delete rows: a deletion vector", func(tx *txn.Transaction) { tx.Remove(remove(f1)); tx.Add(f1dv) }},
		{"delete more rows", func(tx *txn.Transaction) { tx.Remove(remove(f1dv)); tx.Add(f1dv2) }},
		{"domain metadata", func(tx *txn.Transaction) {
			tx.SetDomainMetadata(actions.DomainMetadata{Domain: "my.domain", Configuration: `{"a":1}`})
		}},
		{"optimize", func(tx *txn.Transaction) {
			r1, r2 := remove(f2), remove(f3)
			r1.DataChange, r2.DataChange = false, false
			b := big
			b.DataChange = false
			tx.Remove(r1, r2)
			tx.Add(b)
		}},
		{"metadata change", func(tx *txn.Transaction) {
			m := meta
			m.Configuration = map[string]string{"delta.enableDeletionVectors": "true", "delta.checkpointInterval": "4", "x": "y"}
			tx.SetMetadata(m)
		}},
		{"remove without a size: from replay", func(tx *txn.Transaction) {
			tx.Remove(actions.Remove{Path: "big", DataChange: true, DeletionTimestamp: new(int64(3))})
		}},
		{"txn again, domain removed", func(tx *txn.Transaction) {
			tx.SetTransaction("app", 2)
			tx.SetTransaction("other", 9)
			tx.SetDomainMetadata(actions.DomainMetadata{Domain: "my.domain", Removed: true})
			tx.Add(add("f4", 1, 0))
		}},
		{"delete the file with its deletion vector", func(tx *txn.Transaction) { tx.Remove(remove(f1dv2)) }},
	}

	create := txn.BeginCreate(store, txn.Options{})
	create.SetProtocol(dvProto)
	create.SetMetadata(meta)
	res, err := create.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	txn.PostCommit(ctx, &res)
	b := checksum.NewBuilder(nil)
	check(t, store, b, 0, "create")
	for i, s := range steps {
		snap, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			t.Fatal(err)
		}
		tx := txn.Begin(snap, txn.Options{})
		s.do(tx)
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		txn.PostCommit(ctx, &res)
		if res.PostCommit.Err != nil {
			t.Fatalf("%s: %v", s.name, res.PostCommit.Err)
		}
		check(t, store, b, int64(i+1), s.name)
	}
}

// check compares, at version v, the .crc the hook wrote, b advanced over
// commit v, and the replay.
func check(t *testing.T, store logstore.Store, b *checksum.Builder, v int64, name string) {
	t.Helper()
	ctx := context.Background()
	written, err := checksum.Read(ctx, store, v)
	if err != nil {
		t.Fatalf("%s: version %d: %v", name, v, err)
	}
	snap, err := snapshot.Load(ctx, store, v)
	if err != nil {
		t.Fatal(err)
	}
	replayed, err := crcwriter.Compute(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	if d := checksum.Compare(written, replayed); len(d) > 0 {
		t.Errorf("%s: version %d: the .crc differs from the replay: %v", name, v, d)
	}
	data, err := store.Get(ctx, deltalog.CommitKey(v))
	if err != nil {
		t.Fatal(err)
	}
	acts, err := actions.DecodeCommit(deltalog.CommitKey(v), data)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(acts); errors.Is(err, checksum.ErrNotIncremental) {
		t.Logf("%s: version %d: %v", name, v, err)
		*b = *checksum.NewBuilder(replayed) // start again from the replay
		return
	} else if err != nil {
		t.Fatal(err)
	}
	built, _ := b.Checksum()
	// The txn id is the transaction's, which a replay from a checkpoint
	// does not know; the rest must be the same to the byte.
	encode := func(c *checksum.VersionChecksum) []byte {
		cc := *c
		cc.TxnID = ""
		data, err := checksum.Encode(&cc)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	want, got := encode(replayed), encode(built)
	if !bytes.Equal(got, want) {
		t.Errorf("%s: version %d: incremental differs from replay:\n got %s\nwant %s", name, v, got, want)
	}
	if w := encode(written); !bytes.Equal(w, want) {
		t.Errorf("%s: version %d: written differs from replay:\n got %s\nwant %s", name, v, w, want)
	}
}

// TestCorpusMatchesSpark: the checksum Compute derives from the replay
// of each version of the corpus that has a Spark-written .crc agrees with
// that file, field by field (Compare). kernel-rs's crc-full and
// crc-malformed are made up to disagree with their log, or to be
// unreadable, and are left out.
func TestCorpusMatchesSpark(t *testing.T) {
	// Commits edited after Spark wrote their .crc: delta-rs moved the
	// in-commit timestamp of cdc_ict_table's version 1 back a few years
	// (to test a timestamp that goes backwards), and Compare must say so.
	edited := map[string]string{
		"/delta-rs/cdc_ict_table/_delta_log/00000000000000000001.crc": "inCommitTimestampOpt",
	}
	ctx := context.Background()
	root := testutil.CorpusDir(t)
	compared := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(path)) != "_delta_log" {
			return err
		}
		f, ok := deltalog.ParseName(d.Name())
		table := filepath.Dir(filepath.Dir(path))
		if !ok || f.Kind != deltalog.CRC || strings.Contains(table, "crc-full") || strings.Contains(table, "crc-malformed") {
			return nil
		}
		name := strings.TrimPrefix(path, root)
		store, err := local.New(table)
		if err != nil {
			return err
		}
		spark, err := checksum.Read(ctx, store, f.Version)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return nil
		}
		snap, err := snapshot.Load(ctx, store, f.Version)
		if err != nil {
			return nil // a table the corpus says cannot be read
		}
		ours, err := crcwriter.Compute(ctx, snap)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return nil
		}
		compared++
		diffs := checksum.Compare(spark, ours)
		if want, ok := edited[filepath.ToSlash(name)]; ok {
			if len(diffs) != 1 || !strings.HasPrefix(diffs[0], want) {
				t.Errorf("%s: Compare = %v, want only a difference in %s", name, diffs, want)
			}
			return nil
		}
		if len(diffs) > 0 {
			t.Errorf("%s: Spark's .crc differs from the replay: %v", name, diffs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d Spark checksums compared", compared)
}

// A commit that adds a file the table already has, without removing it
// (legal: it updates the file's metadata), looks to the actions alone
// like one more file. When the transaction has read the table's files,
// the writer sees the totals disagree and computes the checksum from the
// replay instead.
func TestReaddCaughtByFileTotals(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	create := txn.BeginCreate(store, txn.Options{})
	create.SetProtocol(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2})
	create.SetMetadata(actions.Metadata{ID: "readd", Format: actions.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString: testSchema, PartitionColumns: []string{}, Configuration: map[string]string{"delta.checkpointInterval": "1"}})
	create.Add(add("f1", 10, 0))
	res, err := create.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	txn.PostCommit(ctx, &res)
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	tx := txn.Begin(snap, txn.Options{})
	tx.Add(add("f2", 20, 0))
	if res, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	txn.PostCommit(ctx, &res) // and the checkpoint of version 1
	if snap, err = snapshot.Load(ctx, store, deltalog.Latest); err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Segment().CheckpointVersion(); !ok {
		t.Fatal("no checkpoint: the test needs one")
	}
	if _, err := snap.NumFiles(ctx); err != nil { // as DML reads the files
		t.Fatal(err)
	}
	tx = txn.Begin(snap, txn.Options{})
	again := add("f1", 10, 0)
	again.Tags = map[string]string{"k": "v"}
	tx.Add(again)
	if res, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	txn.PostCommit(ctx, &res)
	got, err := checksum.Read(ctx, store, res.Version)
	if err != nil {
		t.Fatal(err)
	}
	if got.NumFiles != 2 || got.TableSizeBytes != 30 {
		t.Fatalf("%d files of %d bytes, want 2 of 30", got.NumFiles, got.TableSizeBytes)
	}
}
