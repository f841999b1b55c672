package write

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
)

// tracked is a row's stable identity: its row id and row commit version.
type tracked struct{ id, version int64 }

// rowIdentities scans the table snap shows and returns, by the value of
// its column v, each row's stable row id and row commit version.
func rowIdentities(t *testing.T, snap *snapshot.Snapshot) map[string]tracked {
	t.Helper()
	sc, err := scan.New(snap, scan.Options{Columns: []string{"v", scan.MetadataRowID, scan.MetadataRowCommitVersion}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]tracked{}
	for row, err := range sc.Rows(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		vals := row.Values()
		if vals[1].IsNull() || vals[2].IsNull() {
			t.Fatalf("row %s: row id %s, row commit version %s; want both", vals[0], vals[1], vals[2])
		}
		if _, dup := out[vals[0].String()]; dup {
			t.Fatalf("row %s twice", vals[0])
		}
		out[vals[0].String()] = tracked{vals[1].Int64(), vals[2].Int64()}
	}
	return out
}

// rowTrackingSpec is rewriteSpec with row tracking enabled.
func rowTrackingSpec() TableSpec {
	spec := rewriteSpec(false)
	spec.Properties[tableconfig.KeyEnableRowTracking] = "true"
	return spec
}

// appendRows appends ids from..to-1, with v "v<id>", in partition p, and
// returns the new snapshot.
func appendRows(t *testing.T, snap *snapshot.Snapshot, p string, from, to int64) *snapshot.Snapshot {
	t.Helper()
	var rows [][]schema.Value
	for id := from; id < to; id++ {
		rows = append(rows, []schema.Value{l(id), s(fmt.Sprint("v", id)), s(p)})
	}
	if _, err := Append(t.Context(), snap, batchOf(rows...), CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	return latest(t, snap)
}

func latest(t *testing.T, snap *snapshot.Snapshot) *snapshot.Snapshot {
	t.Helper()
	next, err := snapshot.Load(t.Context(), snap.Store(), deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// Issue 19 item 3: an overwrite with replaceWhere rewrites the files the
// predicate touches, and the rows it copies keep their row ids and row
// commit versions; the new rows get fresh ones.
func TestRowTrackingOverwriteKeepsIdentity(t *testing.T) {
	snap := newSnapshot(t, rowTrackingSpec())
	snap = appendRows(t, snap, "a", 0, 10)  // version 1: row ids 0-9
	snap = appendRows(t, snap, "a", 10, 20) // version 2: row ids 10-19
	// Expected from the protocol alone: the first row ids are 0, 1, ...
	// in append order (high-water mark -1), each append's version its own.
	want := map[string]tracked{}
	for id := range int64(20) {
		want[fmt.Sprint("v", id)] = tracked{id, 1 + id/10}
	}
	if got := rowIdentities(t, snap); !maps.Equal(got, want) {
		t.Fatalf("identities before:\n%v\nwant\n%v", got, want)
	}

	pred, err := expr.Parse("id >= 5 AND id < 15")
	if err != nil {
		t.Fatal(err)
	}
	rows := [][]schema.Value{{l(5), s("new5"), s("a")}, {l(6), s("new6"), s("a")}}
	res, err := Overwrite(t.Context(), snap, batchOf(rows...), CommitOptions{ReplaceWhere: pred})
	if err != nil {
		t.Fatal(err)
	}
	snap = latest(t, snap)
	for id := int64(5); id < 15; id++ {
		delete(want, fmt.Sprint("v", id))
	}
	got := rowIdentities(t, snap)
	fresh := map[int64]bool{}
	for _, v := range []string{"new5", "new6"} {
		g, ok := got[v]
		if !ok {
			t.Fatalf("new row %s missing", v)
		}
		if g.id < 20 || g.version != res.Version {
			t.Errorf("new row %s: %+v, want a fresh row id above 19 and version %d", v, g, res.Version)
		}
		fresh[g.id] = true
		delete(got, v)
	}
	if len(fresh) != 2 {
		t.Errorf("new rows share a row id")
	}
	if !maps.Equal(got, want) {
		t.Errorf("copied rows after the overwrite:\n%v\nwant them unchanged\n%v", got, want)
	}
	// The copied rows' identity is materialized in the new files' hidden
	// columns; the adds still carry fresh baseRowIds.
	for f, err := range snap.Files(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		if f.BaseRowID == nil || f.DefaultRowCommitVersion == nil {
			t.Errorf("add %s lacks baseRowId or defaultRowCommitVersion", f.Path)
		}
	}
}

// A Rewrite that updates a row keeps its row id and gives it the version
// of the commit that writes it; the rows it copies keep both.
func TestRowTrackingRewriteUpdate(t *testing.T) {
	snap := newSnapshot(t, rowTrackingSpec())
	snap = appendRows(t, snap, "a", 0, 6) // version 1
	before := rowIdentities(t, snap)
	var ptrFiles []*actions.Add
	for f, err := range snap.Files(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		ptrFiles = append(ptrFiles, f)
	}
	fn := func(_ *actions.Add, _ int64, row []schema.Value) (Verdict, []schema.Value, error) {
		switch row[0].Int64() {
		case 2:
			return Update, []schema.Value{row[0], s("u2"), row[2]}, nil
		case 4:
			return Drop, nil, nil
		}
		return Keep, nil, nil
	}
	r, err := Rewrite(t.Context(), snap, ptrFiles, fn, RewriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tx := txn.Begin(snap, txn.Options{Operation: "UPDATE"})
	tx.ReadFiles(r.Read...)
	tx.Remove(r.Removes...)
	tx.Add(r.Adds...)
	res, err := tx.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := rowIdentities(t, latest(t, snap))
	want := maps.Clone(before)
	delete(want, "v4")
	want["u2"] = tracked{before["v2"].id, res.Version}
	delete(want, "v2")
	if !maps.Equal(got, want) {
		t.Errorf("identities after the update:\n%v\nwant\n%v", got, want)
	}

	// What another engine sees in the new file: the hidden columns, LONG,
	// the updated row's version null; no statistics on them.
	cfg := snap.Config()
	idCol, _ := cfg.MaterializedRowIDColumn()
	verCol, _ := cfg.MaterializedRowCommitVersionColumn()
	if len(r.Adds) != 1 {
		t.Fatalf("%d adds, want 1", len(r.Adds))
	}
	data, err := snap.Store().Get(t.Context(), snapshot.CanonicalPath(r.Adds[0].Path))
	if err != nil {
		t.Fatal(err)
	}
	f, err := datafile.Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	hidden := &schema.StructType{Fields: []schema.StructField{field("v", schema.String), field(idCol, schema.Long), field(verCol, schema.Long)}}
	var seen []string
	err = f.Read(t.Context(), hidden, datafile.ReadOptions{}, func(b *datafile.Batch) error {
		for i := range b.Len {
			seen = append(seen, fmt.Sprintf("%s:%s:%s", b.Columns[0][i], b.Columns[1][i], b.Columns[2][i]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantSeen := []string{"v0:0:1", "v1:1:1", "u2:2:null", "v3:3:1", "v5:5:1"}
	if fmt.Sprint(seen) != fmt.Sprint(wantSeen) {
		t.Errorf("hidden columns %v, want %v", seen, wantSeen)
	}
	if bytes.Contains([]byte(r.Adds[0].Stats), []byte(idCol)) || bytes.Contains([]byte(r.Adds[0].Stats), []byte(verCol)) {
		t.Errorf("stats %s cover a hidden column", r.Adds[0].Stats)
	}
}

// The metadata columns need row tracking.
func TestRowTrackingColumnsNeedRowTracking(t *testing.T) {
	snap := newSnapshot(t, rewriteSpec(false))
	if _, err := scan.New(snap, scan.Options{Columns: []string{scan.MetadataRowID}}); err == nil {
		t.Error("row ids of a table without row tracking: no error")
	}
}

// A hidden column named like a table column would give the file two
// columns of one name: Rewrite refuses it.
func TestRowTrackingColumnClash(t *testing.T) {
	spec := rowTrackingSpec()
	spec.Properties[tableconfig.KeyMaterializedRowIDColumn] = "v"
	snap := newSnapshot(t, spec)
	snap = appendRows(t, snap, "a", 0, 3)
	var files []*actions.Add
	for f, err := range snap.Files(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	drop := func(*actions.Add, int64, []schema.Value) (Verdict, []schema.Value, error) { return Drop, nil, nil }
	if _, err := Rewrite(t.Context(), snap, files, drop, RewriteOptions{}); !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Errorf("Rewrite with a hidden column named v: %v, want ErrCorrupt", err)
	}
}
