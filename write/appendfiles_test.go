package write

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// TestAppendFiles commits files Rows wrote elsewhere, exactly once per
// application version, and never deletes a file on any outcome.
func TestAppendFiles(t *testing.T) {
	ctx := context.Background()
	snap := newSnapshot(t, rewriteSpec(false))
	a := writeFile(t, snap, "a", 0, 10)
	b := writeFile(t, snap, "b", 10, 15)
	adds := []actions.Add{*a, *b}
	app := AppTransaction{ID: "pipeline-1", Version: 3}

	tests := []struct {
		name    string
		adds    []actions.Add
		opts    CommitOptions
		wantErr error
		wantVer int64 // the latest version after the call
	}{
		{"commits once", adds, CommitOptions{App: app}, nil, 1},
		{"the same version again commits nothing", adds, CommitOptions{App: app}, ErrAppVersionCommitted, 1},
		{"an older version commits nothing", adds, CommitOptions{App: AppTransaction{ID: app.ID, Version: 2}}, ErrAppVersionCommitted, 1},
		{"no adds", nil, CommitOptions{App: AppTransaction{ID: app.ID, Version: 4}}, ErrNoRows, 1},
		{"a negative version", adds, CommitOptions{App: AppTransaction{ID: app.ID, Version: -1}}, deltaerr.ErrInvalidArgument, 1},
		{"a merged schema", adds, CommitOptions{MergeSchema: snap.Schema()}, deltaerr.ErrInvalidArgument, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Every call commits on top of the snapshot the files were
			// written for, as a committer that runs again would.
			res, err := AppendFiles(ctx, snap, tc.adds, tc.opts)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("AppendFiles: %v, want %v", err, tc.wantErr)
			}
			if err == nil && res.Version != 1 {
				t.Errorf("committed at version %d, want 1", res.Version)
			}
			latest, err := snapshot.Load(ctx, snap.Store(), deltalog.Latest)
			if err != nil {
				t.Fatal(err)
			}
			if latest.Version() != tc.wantVer {
				t.Errorf("latest version %d, want %d", latest.Version(), tc.wantVer)
			}
			if v, ok, err := latest.TxnVersion(ctx, app.ID); err != nil || !ok || v != app.Version {
				t.Errorf("txn version of %s: %d %v %v, want %d", app.ID, v, ok, err, app.Version)
			}
			files := tableFiles(t, snap.Store())
			for _, add := range adds {
				if !slices.ContainsFunc(files, func(k string) bool { return k == add.Path }) {
					t.Errorf("data file %s was deleted", add.Path)
				}
			}
			sc, err := scan.New(latest, scan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, err := range sc.Rows(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != 15 {
				t.Errorf("%d rows in the table, want 15", n)
			}
		})
	}
}

// Files written by separate writers of a table with an identity column
// would hold values allocated from the same mark: AppendFiles refuses
// them before committing anything.
func TestAppendFilesIdentity(t *testing.T) {
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT GENERATED ALWAYS AS IDENTITY, v STRING")
	if err != nil {
		t.Fatal(err)
	}
	snap := newSnapshot(t, TableSpec{Schema: sch})
	one := func(yield func(Batch, error) bool) {
		yield(Batch{Columns: [][]schema.Value{{{}}, {schema.StringValue("a")}}, Len: 1}, nil)
	}
	adds, err := Rows(ctx, snap, one, Options{})
	if err != nil {
		t.Skipf("writing a row to an identity table here: %v", err)
	}
	if _, err := AppendFiles(ctx, snap, adds, CommitOptions{}); !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
		t.Fatalf("AppendFiles on an identity table: %v, want ErrUnsupportedFeature", err)
	}
	if latest, err := snapshot.Load(ctx, snap.Store(), deltalog.Latest); err != nil || latest.Version() != 0 {
		t.Fatalf("something was committed: %v", err)
	}
}
