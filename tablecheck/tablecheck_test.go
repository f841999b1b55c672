package tablecheck_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tablecheck"
)

// build makes a table in a temp dir through the facade: two appends
// (versions 1 and 2), a DELETE that writes a file of deletion vectors (3),
// a checkpoint at 3, then one more append (4), so that the latest version has files in the checkpoint and after
// it, a file-backed deletion vector and commits before the checkpoint.
// It returns the table's directory.
func build(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, name STRING, score DOUBLE")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := delta.Create(ctx, dir, delta.TableSpec{
		Schema:     sch,
		Properties: map[string]string{"delta.enableDeletionVectors": "true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for batch := range int64(2) {
		var rows [][]schema.Value
		for i := batch * 10; i < batch*10+10; i++ {
			name := schema.StringValue(fmt.Sprint("n", i))
			if i%4 == 0 {
				name = schema.Value{} // some nulls for the stats
			}
			rows = append(rows, []schema.Value{schema.LongValue(i), name, schema.DoubleValue(float64(i) / 2)})
		}
		if _, err := tbl.AppendRows(ctx, rows, delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Deletion vectors in a file, not inline.
	if _, err := tbl.Delete(ctx, "id % 3 = 0", delta.DMLOptions{InlineDVMax: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(100), schema.StringValue("x"), schema.DoubleValue(1)}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// check runs the check of the table at dir, with the roots trusted.
func check(t *testing.T, dir string, deep bool, trust ...string) *tablecheck.Report {
	t.Helper()
	ctx := context.Background()
	tbl, err := delta.OpenWith(ctx, dir, delta.OpenOptions{TrustRoots: trust})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	rep, err := tablecheck.Check(ctx, tbl.Store(), tablecheck.Options{Deep: deep})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return rep
}

// only fails the test unless every problem of rep is of kind, and there is
// at least one; it returns them.
func only(t *testing.T, rep *tablecheck.Report, kind tablecheck.Kind) []tablecheck.Problem {
	t.Helper()
	if len(rep.Problems) == 0 {
		t.Fatalf("no problem found, want %s", kind)
	}
	for _, p := range rep.Problems {
		if p.Kind != kind {
			t.Errorf("problem %v, want only %s problems", p, kind)
		}
	}
	return rep.Problems
}

func clean(t *testing.T, rep *tablecheck.Report) {
	t.Helper()
	for _, p := range rep.Problems {
		t.Errorf("problem in a sound table: %v", p)
	}
}

// files returns the paths under dir whose base name matches pattern.
func files(t *testing.T, dir, pattern string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ok, _ := filepath.Match(pattern, d.Name()); ok && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCheckCleanTable(t *testing.T) {
	dir := build(t)
	rep := check(t, dir, true)
	clean(t, rep)
	if rep.Version != 4 {
		t.Errorf("version %d, want 4", rep.Version)
	}
	for _, k := range []string{"commits", "checkpoints", "checksums", "files", "deletionVectors", "footers"} {
		if rep.Checked[k] == 0 {
			t.Errorf("checked %v: nothing counted as %s", rep.Checked, k)
		}
	}
	if len(rep.Skipped) != 0 {
		t.Errorf("skipped %v", rep.Skipped)
	}

	// A shallow clone of it, whose files lie in the source root.
	ctx := context.Background()
	src, err := delta.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	snap, err := src.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cloneDir := filepath.Join(t.TempDir(), "clone")
	clone, _, err := src.CloneTo(ctx, snap, cloneDir, delta.TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clone.Close()
	rep = check(t, cloneDir, true)
	clean(t, rep)
	if rep.Checked["cloneRoots"] != 1 || rep.Checked["files"] == 0 {
		t.Errorf("clone: checked %v, want 1 clone root and its files", rep.Checked)
	}

	// The clone's source gone: its root and every file it named are
	// reported.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	rep = check(t, cloneDir, false)
	kinds := map[tablecheck.Kind]int{}
	for _, p := range rep.Problems {
		kinds[p.Kind]++
	}
	if kinds[tablecheck.KindCloneRoot] != 1 || kinds[tablecheck.KindMissingFile] == 0 {
		t.Errorf("clone of a deleted source: problems %v, want one clone-root and missing files", rep.Problems)
	}
}

func TestCheckMissingDataFile(t *testing.T) {
	dir := build(t)
	parquet := files(t, dir, "part-*.parquet")
	if len(parquet) == 0 {
		t.Fatal("no data file")
	}
	if err := os.Remove(parquet[len(parquet)-1]); err != nil {
		t.Fatal(err)
	}
	ps := only(t, check(t, dir, false), tablecheck.KindMissingFile)
	if len(ps) != 1 || ps[0].Version != 4 || !strings.HasSuffix(parquet[len(parquet)-1], ps[0].Path) {
		t.Errorf("problems %v, want one missing file %s at version 4", ps, parquet[len(parquet)-1])
	}
}

func TestCheckFileSize(t *testing.T) {
	dir := build(t)
	parquet := files(t, dir, "part-*.parquet")
	f, err := os.OpenFile(parquet[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("junk"))
	f.Close()
	only(t, check(t, dir, false), tablecheck.KindFileSize)
}

func TestCheckDeletionVectorChecksum(t *testing.T) {
	dir := build(t)
	dvs := files(t, dir, "deletion_vector_*.bin")
	if len(dvs) != 1 {
		t.Fatalf("deletion vector files %v, want 1", dvs)
	}
	data, err := os.ReadFile(dvs[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff // the CRC-32 of the last vector
	if err := os.WriteFile(dvs[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	ps := only(t, check(t, dir, false), tablecheck.KindDeletionVector)
	if len(ps) != 1 || !strings.Contains(ps[0].Message, "does not match") {
		t.Errorf("problems %v", ps)
	}

	// Cut short: a wrong size is reported the same way.
	if err := os.WriteFile(dvs[0], data[:len(data)-6], 0o644); err != nil {
		t.Fatal(err)
	}
	only(t, check(t, dir, false), tablecheck.KindDeletionVector)

	if err := os.Remove(dvs[0]); err != nil {
		t.Fatal(err)
	}
	// Gone: both files' vectors were in it.
	ps = only(t, check(t, dir, false), tablecheck.KindDeletionVector)
	if len(ps) != 2 || !strings.Contains(ps[0].Message, "missing") || !strings.Contains(ps[1].Message, "missing") {
		t.Errorf("problems %v", ps)
	}
}

// editCommit rewrites the actions of one commit of the table at dir. The
// version checksums of that version and later would then disagree with the
// log, which is TestCheckWrongChecksum's subject, not that of the tests that
// edit commits: editCommit removes them.
func editCommit(t *testing.T, dir string, version int64, edit func(action map[string]any) bool) {
	t.Helper()
	for _, crc := range files(t, filepath.Join(dir, "_delta_log"), "*.crc") {
		var v int64
		if _, err := fmt.Sscanf(filepath.Base(crc), "%d.crc", &v); err == nil && v >= version {
			if err := os.Remove(crc); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(dir, filepath.FromSlash(deltalog.CommitKey(version)))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var a map[string]any
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatal(err)
		}
		if !edit(a) {
			continue
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckCheckpointDisagrees(t *testing.T) {
	dir := build(t)
	// The checkpoint is at version 3; make commit 3 say its files are
	// larger than the checkpoint (and the disk) say.
	editCommit(t, dir, 3, func(a map[string]any) bool {
		if add, ok := a["add"].(map[string]any); ok {
			add["size"] = add["size"].(float64) + 1
		}
		return true
	})
	ps := only(t, check(t, dir, false), tablecheck.KindCheckpoint)
	if len(ps) != 2 || ps[0].Version != 3 || !strings.Contains(ps[0].Message, "the commits give") {
		t.Errorf("problems %v", ps)
	}

	// A domain and a txn the commits have and the checkpoint does not.
	dir = build(t)
	editCommit(t, dir, 2, func(a map[string]any) bool {
		if _, ok := a["commitInfo"]; ok {
			a["txn"] = map[string]any{"appId": "app", "version": 7}
			delete(a, "commitInfo")
		}
		return true
	})
	ps = only(t, check(t, dir, false), tablecheck.KindCheckpoint)
	if len(ps) != 1 || !strings.Contains(ps[0].Message, `"app"`) {
		t.Errorf("problems %v", ps)
	}
}

// A version checksum that says the table is one byte larger than it is, and
// one that is not JSON: each is a KindCRC problem at its version, and
// nothing else is reported (a reader does not trust either: it reads the
// log instead).
func TestCheckWrongChecksum(t *testing.T) {
	dir := build(t)
	crc := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.crc", 4))
	data, err := os.ReadFile(crc)
	if err != nil {
		t.Fatalf("the facade wrote no checksum of version 4: %v", err)
	}
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	c["tableSizeBytes"] = c["tableSizeBytes"].(float64) + 1
	// Else Read refuses it as inconsistent in itself.
	delete(c, "allFiles")
	delete(c, "fileSizeHistogram")
	data, err = json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crc, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ps := only(t, check(t, dir, false), tablecheck.KindCRC)
	if len(ps) != 1 || ps[0].Version != 4 || !strings.Contains(ps[0].Message, "differs from the log: tableSizeBytes") {
		t.Errorf("problems %v", ps)
	}

	crc = filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.crc", 2))
	if err := os.WriteFile(crc, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	ps = only(t, check(t, dir, false), tablecheck.KindCRC)
	if len(ps) != 2 || ps[1].Version != 2 || !strings.Contains(ps[1].Message, "cannot be read") {
		t.Errorf("problems %v", ps)
	}

	// Compared newest first, at most MaxChecksums of them: the rest are
	// skipped, and said to be.
	ctx := context.Background()
	store, err := logstore.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rep, err := tablecheck.Check(ctx, store, tablecheck.Options{MaxChecksums: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || rep.Checked["checksums"] != 1 || len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0], "versions 3 and older") {
		t.Errorf("MaxChecksums 1: problems %v, checked %v, skipped %v", rep.Problems, rep.Checked, rep.Skipped)
	}
}

func TestCheckLogHole(t *testing.T) {
	dir := build(t)
	commit := func(v int64) string { return filepath.Join(dir, filepath.FromSlash(deltalog.CommitKey(v))) }
	// Version 4 is after the checkpoint at 3: copy it to 5 and 6, then
	// remove it.
	data, err := os.ReadFile(commit(4))
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(5); v <= 6; v++ {
		if err := os.WriteFile(commit(v), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Commits 1 and 2 are before the checkpoint: a hole there is a hole
	// too, as long as commit 0 is kept.
	for _, v := range []int64{1, 2, 4} {
		if err := os.Remove(commit(v)); err != nil {
			t.Fatal(err)
		}
	}
	rep := check(t, dir, false)
	ps := only(t, rep, tablecheck.KindLog)
	var got []string
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%d %s", p.Version, p.Path))
	}
	want := []string{"1 " + deltalog.CommitKey(1), "4 " + deltalog.CommitKey(4)}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("holes %v, want %v (%v)", got, want, ps)
	}
	if rep.Version != 6 {
		t.Errorf("version %d, want 6", rep.Version)
	}

	// Without commit 0, the log from the checkpoint on is whole but for 4.
	if err := os.Remove(commit(0)); err != nil {
		t.Fatal(err)
	}
	ps = only(t, check(t, dir, false), tablecheck.KindLog)
	if len(ps) != 1 || ps[0].Version != 4 {
		t.Errorf("problems %v, want the hole at 4 only", ps)
	}
}

func TestCheckPathEscapesRoot(t *testing.T) {
	dir := build(t)
	outside := filepath.Join(t.TempDir(), "outside.parquet")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	editCommit(t, dir, 4, func(a map[string]any) bool {
		if add, ok := a["add"].(map[string]any); ok {
			add["path"] = "file://" + filepath.ToSlash(outside)
			add["size"] = 1
		}
		return true
	})
	// A relative path that climbs out, too.
	commit5 := `{"add":{"path":"../escape.parquet","partitionValues":{},"size":1,"modificationTime":0,"dataChange":true}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(deltalog.CommitKey(5))), []byte(commit5), 0o644); err != nil {
		t.Fatal(err)
	}
	ps := only(t, check(t, dir, false), tablecheck.KindPathEscapes)
	if len(ps) != 2 {
		t.Errorf("problems %v, want 2", ps)
	}
}

func TestCheckUnreadableCheckpoint(t *testing.T) {
	dir := build(t)
	cp := filepath.Join(dir, filepath.FromSlash(deltalog.ClassicCheckpointKey(3)))
	if err := os.WriteFile(cp, []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	ps := only(t, check(t, dir, false), tablecheck.KindCheckpoint)
	if len(ps) != 1 || ps[0].Path != deltalog.ClassicCheckpointKey(3) {
		t.Errorf("problems %v", ps)
	}
}

func TestCheckDeepFooter(t *testing.T) {
	dir := build(t)
	editCommit(t, dir, 4, func(a map[string]any) bool {
		if add, ok := a["add"].(map[string]any); ok {
			add["stats"] = `{"numRecords":2,"minValues":{"id":101,"score":0.5},"maxValues":{"id":100,"score":0.5},"nullCount":{"id":0,"name":1}}`
		}
		return true
	})
	rep := check(t, dir, true)
	kinds := map[tablecheck.Kind]int{}
	for _, p := range rep.Problems {
		kinds[p.Kind]++
	}
	// numRecords; min id above, max score below; nullCount of name.
	if kinds[tablecheck.KindFooter] != 1 || kinds[tablecheck.KindStats] != 3 || len(rep.Problems) != 4 {
		t.Errorf("problems %v", rep.Problems)
	}
	clean(t, check(t, dir, false)) // the shallow check does not read footers
}

func TestCheckCannotRun(t *testing.T) {
	ctx := context.Background()
	store, err := logstore.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := tablecheck.Check(ctx, store, tablecheck.Options{}); !errors.Is(err, deltaerr.ErrTableNotFound) {
		t.Errorf("empty dir: %v, want ErrTableNotFound", err)
	}
}

// The corpus tables check clean, but for the findings listed here: tables
// shipped without their data files, and tables damaged on purpose to test
// readers.
func TestCheckCorpus(t *testing.T) {
	root := filepath.Join("..", "..", "shared", "testdata")
	if d := os.Getenv("GODELTA_TESTDATA"); d != "" {
		root = d
	}
	if _, err := os.Stat(filepath.Join(root, "index.json")); err != nil {
		t.Skipf("corpus not found at %s", root)
	}
	known := map[string]tablecheck.Kind{
		// Data files not shipped with the table.
		"delta-rs/checkpoint_with_partitions":                         tablecheck.KindMissingFile,
		"delta-rs/checkpoints":                                        tablecheck.KindMissingFile,
		"delta-rs/latest_not_checkpointed":                            tablecheck.KindMissingFile,
		"delta-rs/spark-variant-stable-feature-checkpoint":            tablecheck.KindMissingFile,
		"golden/checkpoint/delta":                                     tablecheck.KindMissingFile,
		"golden/delete-re-add-same-file-different-transactions/delta": tablecheck.KindMissingFile,
		"golden/deltalog-commit-info/delta":                           tablecheck.KindMissingFile,
		"golden/log-replay-special-characters-b/delta":                tablecheck.KindMissingFile,
		"golden/update-deleted-directory/delta":                       tablecheck.KindMissingFile,
		"kernel-rs/app-txn-with-last-updated":                         tablecheck.KindMissingFile,
		"kernel-rs/with_checkpoint_no_last_checkpoint":                tablecheck.KindMissingFile,
		// Logs damaged on purpose: no protocol or metaData.
		"golden/data-reader-absolute-paths-escaped-chars/delta":                       tablecheck.KindLog,
		"golden/deltalog-state-reconstruction-without-metadata/delta":                 tablecheck.KindLog,
		"golden/deltalog-state-reconstruction-without-protocol/delta":                 tablecheck.KindLog,
		"golden/deltalog-state-reconstruction-from-checkpoint-missing-protocol/delta": "",
		// A checkpoint of another table (its metaData id differs from the
		// commits'): a real finding in a test fixture.
		"kernel-rs/parquet_row_group_skipping": tablecheck.KindCheckpoint,
		// Version checksums the log does not back: an in-commit timestamp
		// 10^11 ms off the commit's, and a .crc of version 0 written by
		// hand for a reader test (files, txns and domains commit 0 lacks).
		"delta-rs/cdc_ict_table": tablecheck.KindCRC,
		"kernel-rs/crc-full":     tablecheck.KindCRC,
	}
	cannotRun := map[string]bool{
		"golden/deltalog-invalid-protocol-version/delta": true, // minReaderVersion 99
		"kernel-rs/catalog_managed_0":                    true, // catalogManaged
		"kernel-rs/crc-malformed":                        true, // a .crc and no commit
	}
	var tables []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_delta_log" {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			tables = append(tables, filepath.ToSlash(rel))
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range tables {
		t.Run(name, func(t *testing.T) {
			store, err := logstore.Open(ctx, filepath.Join(root, filepath.FromSlash(name)))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			rep, err := tablecheck.Check(ctx, store, tablecheck.Options{Deep: true})
			if cannotRun[name] {
				if err == nil {
					t.Errorf("check ran, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			kind, isKnown := known[name]
			for _, p := range rep.Problems {
				if !isKnown || (kind != "" && p.Kind != kind) {
					t.Errorf("problem: %v", p)
				}
			}
			if isKnown && rep.OK() {
				t.Errorf("no problem found; the finding listed for it is gone")
			}
		})
	}
}
