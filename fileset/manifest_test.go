package fileset_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/fileset"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil"
)

// manifests reads every manifest under dir: relative key -> sorted lines.
func manifests(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	root := filepath.Join(dir, fileset.ManifestDir)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(b) == 0 {
			lines = nil
		}
		slices.Sort(lines)
		out[filepath.ToSlash(rel)] = lines
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// expected computes the manifests from the table's files: each file's
// directory (its key without the name) and its absolute local path.
func expected(t *testing.T, tbl *delta.Table, dir string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		key := snapshot.CanonicalPath(a.Path)
		d := ""
		if i := strings.LastIndexByte(key, '/'); i >= 0 {
			d = key[:i+1]
		}
		m := fileset.ManifestDir + "/" + d + fileset.ManifestFile
		out[m] = append(out[m], "file:"+filepath.ToSlash(filepath.Join(dir, key)))
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

func TestGenerateManifest(t *testing.T) {
	ctx := context.Background()
	tbl, dir := newTable(t)
	rs := append(append(rows("a", 1, 2), rows("x/y z", 3)...), []schema.Value{schema.LongValue(4), {}})
	if _, err := tbl.AppendRows(ctx, rs, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.AppendRows(ctx, rows("a", 5), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, _ := tbl.Snapshot(ctx)
	res, err := fileset.GenerateManifest(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	got, want := manifests(t, dir), expected(t, tbl, dir)
	if len(got) != 3 || !equalLines(got, want) {
		t.Fatalf("manifests\n%v\nwant\n%v", got, want)
	}
	if _, ok := got[fileset.ManifestDir+"/p=__HIVE_DEFAULT_PARTITION__/manifest"]; !ok {
		t.Errorf("no manifest for the null partition: %v", got)
	}
	if res.Files != 5-1 || len(res.Written) != 3 || len(res.Deleted) != 0 {
		t.Errorf("result %+v", res)
	}
	// Overwrite to one partition: the others' manifests go.
	if _, err := tbl.OverwriteRows(ctx, rows("b", 9), delta.OverwriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, _ = tbl.Snapshot(ctx)
	res, err = fileset.GenerateManifest(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	got, want = manifests(t, dir), expected(t, tbl, dir)
	if len(got) != 1 || !equalLines(got, want) || len(res.Deleted) != 3 {
		t.Fatalf("after overwrite: manifests %v, want %v; result %+v", got, want, res)
	}
}

func equalLines(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func TestGenerateManifestUnpartitionedAndRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tbl, err := delta.Create(ctx, dir, delta.TableSpec{Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	snap, _ := tbl.Snapshot(ctx)
	if _, err := fileset.GenerateManifest(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if got := manifests(t, dir); len(got) != 1 || got[fileset.ManifestDir+"/manifest"] != nil {
		t.Fatalf("empty table manifests %v", got)
	}
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}}, delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, _ = tbl.Snapshot(ctx)
	if _, err := fileset.GenerateManifest(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if got, want := manifests(t, dir), expected(t, tbl, dir); !equalLines(got, want) {
		t.Fatalf("manifests %v, want %v", got, want)
	}

	// Spark-written tables it must refuse: deletion vectors, column mapping.
	for _, name := range []string{"kernel-rs/table-with-dv-small", "golden/table-with-columnmapping-mode-name/delta"} {
		src := filepath.Join(testutil.CorpusDir(t), filepath.FromSlash(name))
		d := t.TempDir()
		if err := testutil.CopyTree(src, d); err != nil {
			t.Fatal(err)
		}
		tb, err := delta.Open(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		s, err := tb.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fileset.GenerateManifest(ctx, s); !errors.Is(err, fileset.ErrManifestUnsupported) {
			t.Errorf("%s: err = %v, want ErrManifestUnsupported", name, err)
		}
		if _, err := os.Stat(filepath.Join(d, fileset.ManifestDir)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a refused manifest wrote something", name)
		}
		tb.Close()
	}
}
