package delta

import (
	"bytes"
	"context"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/buildinfo"
	"github.com/godelta/delta/schema"
)

// Data files and checkpoints carry one well-formed created_by, "godelta
// version X.Y.Z (build ID)", instead of "godelta version (build )" and
// "godelta version 0(build checkpoint)". (Issue 19, item 4.)
func TestCreatedBy(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}}
	tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	v, err := tbl.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{deltalog.ClassicCheckpointKey(v)}
	for a, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		k, _ := url.PathUnescape(a.Path)
		keys = append(keys, k)
	}
	for _, key := range keys {
		data, err := tbl.Store().Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Metadata().CreatedBy; got != buildinfo.CreatedBy() {
			t.Errorf("%s: created_by %q, want %q", key, got, buildinfo.CreatedBy())
		}
	}
}
