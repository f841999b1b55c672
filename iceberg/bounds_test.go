package iceberg_test

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// The inputs of these tests are built to kill a reader that trusts them:
// a 40 GB sparse file (no disk used) and a 3 MB Avro block that inflates
// to 3 GB. A reader that reads the first or inflates the second whole
// dies of a runtime out-of-memory (run such code under ulimit -v).
const (
	sparseSize   = 40 << 30
	bombInflated = 3 << 30
)

// allocated returns the bytes fn allocates on the heap (cumulative, so
// it catches a peak that is freed again).
func allocated(fn func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// deflateBomb returns a raw deflate stream that inflates to n zero bytes
// (n a multiple of 1 MiB): the compressed form of 1 MiB of zeros, sync
// flushed so that it ends on a byte boundary, repeated, then a final empty
// block. About 1 KiB per MiB.
func deflateBomb(t *testing.T, n int64) []byte {
	t.Helper()
	var seg bytes.Buffer
	w, err := flate.NewWriter(&seg, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out := bytes.Repeat(seg.Bytes(), int(n>>20))
	return append(out, 0x03, 0x00) // BFINAL, fixed Huffman, end of block
}

// avroLong appends the Avro (zig-zag varint) encoding of v.
func avroLong(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// bombOCF returns an Avro object container file with the given writer
// schema, codec deflate, and one block of count records whose data is
// block, a raw deflate stream.
func bombOCF(t *testing.T, schemaJSON string, count int64, block []byte) []byte {
	t.Helper()
	sync := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	head, err := avro.Marshal(ocf.HeaderSchema, ocf.Header{
		Magic: [4]byte{'O', 'b', 'j', 1},
		Meta:  map[string][]byte{"avro.schema": []byte(schemaJSON), "avro.codec": []byte("deflate")},
		Sync:  sync,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := avroLong(avroLong(head, count), int64(len(block)))
	out = append(out, block...)
	return append(out, sync[:]...)
}

// localTable creates a UniForm table on the local disk with one append,
// converted; it returns the table, its directory and the latest metadata.
func localTable(t *testing.T, ctx context.Context) (*delta.Table, string, iceberg.Status) {
	t.Helper()
	dir := t.TempDir()
	tbl, err := delta.Create(ctx, "file://"+dir, uniformSpec())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	if _, err := tbl.AppendRows(ctx, smallRows(0, 5), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := tbl.IcebergStatus(ctx)
	if err != nil || st.ConvertedVersion != 1 {
		t.Fatalf("status %+v, %v", st, err)
	}
	return tbl, dir, st
}

// currentManifestList returns the local path of the manifest list of the
// current snapshot of metadata file n.
func currentManifestList(t *testing.T, dir string, n int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(iceberg.MetadataKey(n))))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Current   int64 `json:"current-snapshot-id"`
		Snapshots []struct {
			ID   int64  `json:"snapshot-id"`
			List string `json:"manifest-list"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, s := range m.Snapshots {
		if s.ID == m.Current {
			return strings.TrimPrefix(s.List, "file://")
		}
	}
	t.Fatal("no current snapshot")
	return ""
}

// touch moves a file's modification time, so that a process that
// remembers the metadata it wrote (by size and time) reads it again.
func touch(t *testing.T, path string) {
	t.Helper()
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
}

// commitUnconverted commits a Delta version (a table property) without
// the post-commit conversion that Table's commits run.
func commitUnconverted(t *testing.T, ctx context.Context, tbl *delta.Table) {
	t.Helper()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = txn.Update(ctx, snap, txn.Options{Operation: "SET TBLPROPERTIES"}, func(tx *txn.Transaction) error {
		m := tx.Snapshot().Metadata()
		conf := map[string]string{}
		for k, v := range m.Configuration {
			conf[k] = v
		}
		conf["test.bounds"] = "1"
		m.Configuration = conf
		tx.SetMetadata(m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// wantCorrupt checks err is a corruption error that names file once.
func wantCorrupt(t *testing.T, what string, err error, file string) {
	t.Helper()
	if !errors.Is(err, deltaerr.ErrCorrupt) || !errors.Is(err, iceberg.ErrCorruptMetadata) {
		t.Fatalf("%s: want a corruption error, got %v", what, err)
	}
	if n := strings.Count(err.Error(), file); n != 1 {
		t.Fatalf("%s: the error names %s %d times, want once: %v", what, file, n, err)
	}
}

// TestSparseMetadataRefused: a 40 GB (sparse) vN.metadata.json is refused
// from its size, before it is read: status and conversion fail with a
// corruption error naming it, having allocated next to nothing.
func TestSparseMetadataRefused(t *testing.T) {
	ctx := context.Background()
	tbl, dir, st := localTable(t, ctx)
	key := iceberg.MetadataKey(st.MetadataVersion)
	if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(key)), sparseSize); err != nil {
		t.Fatal(err)
	}
	var err error
	if n := allocated(func() { _, err = tbl.IcebergStatus(ctx) }); n > 16<<20 {
		t.Fatalf("status allocated %d bytes", n)
	}
	wantCorrupt(t, "status", err, key)
	commitUnconverted(t, ctx, tbl)
	if n := allocated(func() { _, err = tbl.SyncIceberg(ctx) }); n > 16<<20 {
		t.Fatalf("sync allocated %d bytes", n)
	}
	wantCorrupt(t, "sync", err, key)
}

// TestSparseManifestListRefused: the same for a manifest list.
func TestSparseManifestListRefused(t *testing.T) {
	ctx := context.Background()
	tbl, dir, st := localTable(t, ctx)
	list := currentManifestList(t, dir, st.MetadataVersion)
	if err := os.Truncate(list, sparseSize); err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(dir, filepath.FromSlash(iceberg.MetadataKey(st.MetadataVersion))))
	commitUnconverted(t, ctx, tbl)
	var err error
	if n := allocated(func() { _, err = tbl.SyncIceberg(ctx) }); n > 16<<20 {
		t.Fatalf("sync allocated %d bytes", n)
	}
	wantCorrupt(t, "sync", err, filepath.Base(list))
}

// TestSparseVersionHintIgnored: the version hint is only a hint; a 40 GB
// one is not read but set aside, and the metadata found by listing.
func TestSparseVersionHintIgnored(t *testing.T) {
	ctx := context.Background()
	tbl, dir, st := localTable(t, ctx)
	if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(iceberg.VersionHintKey)), sparseSize); err != nil {
		t.Fatal(err)
	}
	var got iceberg.Status
	var err error
	if n := allocated(func() { got, err = tbl.IcebergStatus(ctx) }); n > 16<<20 {
		t.Fatalf("status allocated %d bytes", n)
	}
	if err != nil || got.MetadataVersion != st.MetadataVersion {
		t.Fatalf("status %+v, %v; want metadata version %d", got, err, st.MetadataVersion)
	}
}

// TestDeflateBombManifestListRefused: a manifest list of about 3 MB whose
// one deflate block inflates to 3 GB fails the conversion with a
// corruption error naming it, without inflating it all.
func TestDeflateBombManifestListRefused(t *testing.T) {
	ctx := context.Background()
	tbl, dir, st := localTable(t, ctx)
	list := currentManifestList(t, dir, st.MetadataVersion)
	good, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := ocf.NewDecoder(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	bomb := bombOCF(t, string(dec.Metadata()["avro.schema"]), 1, deflateBomb(t, bombInflated))
	if len(bomb) > 4<<20 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	if err := os.WriteFile(list, bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(dir, filepath.FromSlash(iceberg.MetadataKey(st.MetadataVersion))))
	commitUnconverted(t, ctx, tbl)
	if n := allocated(func() { _, err = tbl.SyncIceberg(ctx) }); n > 64<<20 {
		t.Fatalf("sync allocated %d bytes", n)
	}
	wantCorrupt(t, "sync", err, filepath.Base(list))
}

// TestVersionHintAhead: a version hint naming a metadata file that does
// not exist (metadata lost, a hint written by hand) does not stop the
// conversion for good: the newest vN.metadata.json is found by listing,
// and conversion goes on from it. A hint that is not a number is set
// aside the same way.
func TestVersionHintAhead(t *testing.T) {
	for _, hint := range []string{"99", "v3", "-1", "18446744073709551616", ""} {
		t.Run(hint, func(t *testing.T) {
			ctx := context.Background()
			store := memory.New()
			tbl, err := delta.CreateStore(ctx, "hint", store, uniformSpec())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tbl.AppendRows(ctx, smallRows(0, 5), delta.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			before, err := iceberg.ReadStatus(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Put(ctx, iceberg.VersionHintKey, []byte(hint)); err != nil {
				t.Fatal(err)
			}
			st, err := iceberg.ReadStatus(ctx, store)
			if err != nil || st.MetadataVersion != before.MetadataVersion || st.ConvertedVersion != 1 {
				t.Fatalf("status with hint %q: %+v, %v; want metadata version %d", hint, st, err, before.MetadataVersion)
			}
			if _, err := tbl.AppendRows(ctx, smallRows(5, 5), delta.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			snap, err := snapshot.Load(ctx, store, deltalog.Latest)
			if err != nil {
				t.Fatal(err)
			}
			res, err := iceberg.Convert(ctx, snap, iceberg.Options{})
			if err != nil || res.Snapshots != 0 {
				t.Fatalf("the append's conversion did not happen: %+v, %v", res, err)
			}
			st, err = iceberg.ReadStatus(ctx, store)
			if err != nil || st.ConvertedVersion != 2 || st.Records != 10 || st.MetadataVersion != before.MetadataVersion+1 {
				t.Fatalf("after an append: %+v, %v", st, err)
			}
		})
	}
}
