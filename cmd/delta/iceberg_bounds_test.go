package main

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"
	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta"
)

// The inputs of the tests of iceberg's limits would kill a process that
// trusted them (run such code under ulimit -v): a 40 GB sparse file, which
// takes no disk, and a manifest list of about 3 MB whose deflate block
// inflates to 3 GB.

// uniformTable creates a UniForm Iceberg table under dir with one append
// of three rows (Delta version 1, converted: metadata/v2.metadata.json).
func uniformTable(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Join(dir, "uni")
	mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, name STRING", "--property", "delta.universalFormat.enabledFormats=iceberg")
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.csv"), "id,name\n1,a\n2,b\n3,\n"))
	return root
}

// heapAllocated returns the bytes fn allocates (cumulative: a peak that
// is freed again counts).
func heapAllocated(fn func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// wantRefused checks a run failed (exit 1, no panic) naming file once as
// corrupt.
func wantRefused(t *testing.T, what string, r result, file string) {
	t.Helper()
	if r.panicked != "" || r.code != exitFailure {
		t.Fatalf("%s: exit %d, panic %q, stderr %q", what, r.code, r.panicked, r.stderr)
	}
	if !strings.Contains(r.stderr, "corrupt") || strings.Count(r.stderr, file) != 1 {
		t.Fatalf("%s: want a corruption error naming %s once, got %q", what, file, r.stderr)
	}
}

// TestIcebergRefusesHugeMetadata: a 40 GB sparse vN.metadata.json fails
// iceberg and iceberg --sync at once, with the file named, and the post-
// commit conversion of an append never brings the process down.
func TestIcebergRefusesHugeMetadata(t *testing.T) {
	root := uniformTable(t, t.TempDir())
	meta := filepath.Join(root, "metadata", "v2.metadata.json")
	if err := os.Truncate(meta, 40<<30); err != nil {
		t.Fatal(err)
	}
	var r result
	if n := heapAllocated(func() { r = runDelta("iceberg", root) }); n > 64<<20 {
		t.Fatalf("iceberg allocated %d bytes", n)
	}
	wantRefused(t, "iceberg", r, "metadata/v2.metadata.json")
	// The commit stands; its conversion fails and is retried later.
	mustRun(t, "append", root, writeFile(t, filepath.Join(t.TempDir(), "b.csv"), "id,name\n4,d\n"))
	if n := heapAllocated(func() { r = runDelta("iceberg", root, "--sync") }); n > 64<<20 {
		t.Fatalf("iceberg --sync allocated %d bytes", n)
	}
	wantRefused(t, "iceberg --sync", r, "metadata/v2.metadata.json")
}

// TestIcebergRefusesDeflateBomb: a manifest list whose deflate block
// inflates to 3 GB fails iceberg --sync with the file named, without the
// gigabytes; the status, which does not read it, still shows the table
// one version behind.
func TestIcebergRefusesDeflateBomb(t *testing.T) {
	root := uniformTable(t, t.TempDir())
	meta := filepath.Join(root, "metadata", "v2.metadata.json")
	list := manifestListOf(t, meta)
	good, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := ocf.NewDecoder(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(list, deflateBombOCF(t, dec.Metadata()["avro.schema"], 3<<30), 0o644); err != nil {
		t.Fatal(err)
	}
	// A process that wrote the metadata remembers its manifest list until
	// the file changes.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(meta, later, later); err != nil {
		t.Fatal(err)
	}
	// Warnings go where main sends them: stderr, through warnHandler.
	var warned bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(newWarnHandler(&warned)))
	var r result
	if n := heapAllocated(func() {
		r = runDelta("append", root, writeFile(t, filepath.Join(t.TempDir(), "b.csv"), "id,name\n4,d\n"))
	}); n > 256<<20 {
		t.Fatalf("append allocated %d bytes", n)
	}
	if r.code != 0 || r.panicked != "" {
		t.Fatalf("append: the commit must stand: exit %d, %q %s", r.code, r.stderr, r.panicked)
	}
	// It says so once, as a warning, and a caller that sees exit 0 does
	// not retry: the rows are there once.
	if w := warned.String(); strings.Count(w, "delta: warning: ") != 1 || !strings.Contains(w, "post-commit work failed; the commit stands") {
		t.Errorf("append's warnings: want one, that the post-commit work failed and the commit stands; got %q", w)
	}
	if out := mustRun(t, "scan", root, "--format", "csv").stdout; strings.Count(out, "\n") != 5 || strings.Count(out, "4,d") != 1 {
		t.Errorf("after the append:\n%s", out)
	}
	if n := heapAllocated(func() { r = runDelta("iceberg", root, "--sync") }); n > 64<<20 {
		t.Fatalf("iceberg --sync allocated %d bytes", n)
	}
	wantRefused(t, "iceberg --sync", r, filepath.Base(list))
	var doc map[string]any
	r = mustRun(t, "iceberg", root, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["behind"] != float64(1) {
		t.Fatalf("status: %v, %v", doc, err)
	}
}

// TestIcebergVersionHintAhead: a version hint naming a metadata file that
// does not exist is set aside; the table's status and conversion go on.
func TestIcebergVersionHintAhead(t *testing.T) {
	dir := t.TempDir()
	root := uniformTable(t, dir)
	writeFile(t, filepath.Join(root, "metadata", "version-hint.text"), "57")
	var doc map[string]any
	r := mustRun(t, "iceberg", root, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["metadataVersion"] != float64(2) || doc["behind"] != float64(0) {
		t.Fatalf("status with a hint ahead: %v, %v", doc, err)
	}
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "b.csv"), "id,name\n4,d\n"))
	doc = nil
	r = mustRun(t, "iceberg", root, "--sync", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["metadataVersion"] != float64(3) || doc["behind"] != float64(0) || doc["records"] != float64(4) {
		t.Fatalf("after an append: %v, %v", doc, err)
	}
}

// manifestListOf returns the local path of the manifest list of the
// current snapshot of a metadata file.
func manifestListOf(t *testing.T, meta string) string {
	t.Helper()
	data, err := os.ReadFile(meta)
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
	t.Fatalf("%s: no current snapshot", meta)
	return ""
}

// deflateBombOCF returns an Avro container file of the writer schema with
// one deflate block of one record that inflates to n zero bytes (n a
// multiple of 1 MiB): 1 MiB of zeros compressed and sync flushed (so that
// it ends on a byte boundary), repeated, then a final empty block.
func deflateBombOCF(t *testing.T, schemaJSON []byte, n int64) []byte {
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
	block := append(bytes.Repeat(seg.Bytes(), int(n>>20)), 0x03, 0x00)
	sync := [16]byte{7, 7, 7, 7, 1, 2, 3, 4, 7, 7, 7, 7, 5, 6, 7, 8}
	out, err := avro.Marshal(ocf.HeaderSchema, ocf.Header{
		Magic: [4]byte{'O', 'b', 'j', 1},
		Meta:  map[string][]byte{"avro.schema": schemaJSON, "avro.codec": []byte("deflate")},
		Sync:  sync,
	})
	if err != nil {
		t.Fatal(err)
	}
	out = avroVarint(avroVarint(out, 1), int64(len(block)))
	out = append(out, block...)
	return append(out, sync[:]...)
}

// avroVarint appends the Avro (zig-zag varint) encoding of v.
func avroVarint(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// TestIcebergEnableRewrite: iceberg --enable on a partitioned table whose
// files were written without the partition column (before Iceberg was
// on) is refused, naming --rewrite, and commits nothing; --enable
// --rewrite turns Iceberg on and rewrites them in the same commit, and
// every data file then holds the partition column, under its field id.
func TestIcebergEnableRewrite(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT NOT NULL, name STRING, p STRING", "--partition-by", "p",
		"--property", "delta.columnMapping.mode=name")
	mustRun(t, "append", root, writeFile(t, filepath.Join(dir, "a.csv"), "id,name,p\n1,a,x\n2,b,y\n3,,x\n"))
	if r := runDelta("iceberg", root, "--rewrite"); r.code != exitUsage {
		t.Fatalf("--rewrite without --enable: exit %d, %q", r.code, r.stderr)
	}
	r := runDelta("iceberg", root, "--enable")
	if r.code != exitFailure || !strings.Contains(r.stderr, "--rewrite") || !strings.Contains(r.stderr, "partition column p") {
		t.Fatalf("--enable on files without the partition column: exit %d, %q", r.code, r.stderr)
	}
	var doc map[string]any
	r = mustRun(t, "iceberg", root, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["enabled"] != false || doc["deltaVersion"] != float64(1) {
		t.Fatalf("after a refused --enable: %v, %v", doc, err)
	}
	doc = nil
	r = mustRun(t, "iceberg", root, "--enable", "--rewrite", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["enabled"] != true || doc["deltaVersion"] != float64(2) ||
		doc["convertedVersion"] != float64(2) || doc["records"] != float64(3) {
		t.Fatalf("--enable --rewrite: %v, %v", doc, err)
	}

	ctx := context.Background()
	tbl, err := delta.Open(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := snap.Schema().Field("p")
	pid, _ := p.ColumnMappingID()
	n := 0
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		f, err := os.Open(filepath.Join(root, filepath.FromSlash(a.Path)))
		if err != nil {
			t.Fatal(err)
		}
		info, _ := f.Stat()
		pf, err := parquet.OpenFile(f, info.Size())
		if err != nil {
			t.Fatal(err)
		}
		var ids []int
		for _, c := range pf.Schema().Fields() {
			ids = append(ids, c.ID())
		}
		f.Close()
		if !slices.Contains(ids, int(pid)) {
			t.Errorf("data file %s has field ids %v, not the partition column's %d", a.Path, ids, pid)
		}
	}
	if n != 2 {
		t.Fatalf("%d data files, want 2", n)
	}
}
