package dml_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// tracking reads each row's row id and row commit version, by id.
func tracking(t *testing.T, snap *snapshot.Snapshot) map[int64][2]int64 {
	t.Helper()
	s, err := scan.New(snap, scan.Options{Columns: []string{"id", scan.MetadataRowID, scan.MetadataRowCommitVersion}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64][2]int64{}
	for r, err := range s.Rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		v := r.Values()
		out[v[0].Int64()] = [2]int64{v[1].Int64(), v[2].Int64()}
	}
	return out
}

// On a table with row tracking, rows that DELETE and UPDATE leave keep
// their row ids; updated rows get the commit's version, the others keep
// theirs. Both strategies.
func TestRowTracking(t *testing.T) {
	for _, dvs := range []bool{false, true} {
		t.Run(fmt.Sprint("dv=", dvs), func(t *testing.T) {
			ctx := context.Background()
			store := memory.New()
			snap := newTable(t, store, tableOpts{dvs: dvs, props: map[string]string{tableconfig.KeyEnableRowTracking: "true"}})
			before := tracking(t, snap)
			del, err := dml.Delete(ctx, snap, mustParse(t, "n = 0"), dml.Options{})
			if err != nil {
				t.Fatal(err)
			}
			set, _ := dml.ParseAssignments("v = 'u'")
			upd, err := dml.Update(ctx, load(t, store), set, mustParse(t, "n = 1"), dml.Options{})
			if err != nil {
				t.Fatal(err)
			}
			after := tracking(t, load(t, store))
			for id, b := range before {
				a, ok := after[id]
				switch {
				case id%10 == 0:
					if ok {
						t.Errorf("row %d deleted at version %d is still there", id, del.Commit.Version)
					}
				case !ok:
					t.Errorf("row %d is gone", id)
				case a[0] != b[0]:
					t.Errorf("row %d: row id %d, was %d", id, a[0], b[0])
				case id%10 == 1 && a[1] != upd.Commit.Version:
					t.Errorf("updated row %d: row commit version %d, want %d", id, a[1], upd.Commit.Version)
				case id%10 != 1 && a[1] != b[1]:
					t.Errorf("row %d: row commit version %d, was %d", id, a[1], b[1])
				}
			}
			// Both commits say so (PROTOCOL.md "Row Tracking").
			for _, v := range []int64{del.Commit.Version, upd.Commit.Version} {
				data, err := store.Get(ctx, deltalog.CommitKey(v))
				if err != nil {
					t.Fatal(err)
				}
				acts, err := actions.DecodeCommit(deltalog.CommitKey(v), data)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range acts {
					if a.CommitInfo != nil && a.CommitInfo.Tags[actions.TagRowTrackingPreserved] != "true" {
						t.Errorf("version %d: commitInfo tags %v, want %s true", v, a.CommitInfo.Tags, actions.TagRowTrackingPreserved)
					}
				}
			}
		})
	}
}
