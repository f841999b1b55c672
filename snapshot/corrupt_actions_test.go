package snapshot_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
)

// TestReplayRefusesForbiddenActions: a commit holding an action the
// protocol forbids makes the snapshot corrupt, with an error naming the
// commit file and the line; before issue 19 the add without a path counted
// as a live file. A remove of a file the table never held stays legal.
func TestReplayRefusesForbiddenActions(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		bad      []string // the lines of commit 1
		wantLine string   // "" when the commit is legal
	}{
		{"add without path", []string{add("b"), `{"add":{"partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`}, "line 2"},
		{"add with empty path", []string{`{"add":{"path":"","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`}, "line 1"},
		{"negative size", []string{`{"add":{"path":"n","partitionValues":{},"size":-100,"modificationTime":1,"dataChange":true}}`}, "line 1"},
		{"second metaData", []string{meta, add("b"), meta}, "line 3"},
		{"remove of a file never added", []string{add("b"), `{"remove":{"path":"ghost","deletionTimestamp":1,"dataChange":true}}`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := memory.New()
			commit(t, s, 0, proto1, meta, add("a"))
			commit(t, s, 1, tt.bad...)
			snap, err := snapshot.Load(ctx, s, deltalog.Latest)
			if tt.wantLine == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := paths(snap); !slices.Equal(got, []string{"a", "b"}) {
					t.Errorf("files = %v, want [a b]", got)
				}
				return
			}
			var ce *deltaerr.CorruptError
			if !errors.As(err, &ce) || ce.Path != deltalog.CommitKey(1) || ce.Reason != tt.wantLine {
				t.Fatalf("err = %v, want a CorruptError for %s %s", err, deltalog.CommitKey(1), tt.wantLine)
			}
			// Time travel to before the bad commit still reads.
			if snap, err := snapshot.Load(ctx, s, 0); err != nil || !slices.Equal(paths(snap), []string{"a"}) {
				t.Errorf("version 0: %v", err)
			}
		})
	}
}

// badState is a snapshot whose Files also yields an action the protocol
// forbids, as a checkpoint written by a faulty writer would hold it.
type badState struct {
	*snapshot.Snapshot
	bad actions.Add
}

func (b badState) Files(ctx context.Context) iter.Seq2[*actions.Add, error] {
	return func(yield func(*actions.Add, error) bool) {
		for f, err := range b.Snapshot.Files(ctx) {
			if !yield(f, err) || err != nil {
				return
			}
		}
		yield(&b.bad, nil)
	}
}

// TestCheckpointWithForbiddenAction: a Parquet checkpoint holding an add
// without a path or with a negative size is skipped like any unreadable
// checkpoint, and the state is rebuilt from the commits: the bad add is
// never a live file, so it is never copied into a later checkpoint.
func TestCheckpointWithForbiddenAction(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []actions.Add{
		{Path: "", PartitionValues: map[string]string{}, Size: 1, ModificationTime: 1, DataChange: true},
		{Path: "neg", PartitionValues: map[string]string{}, Size: -1, ModificationTime: 1, DataChange: true},
	} {
		s := memory.New()
		commit(t, s, 0, proto1, meta, add("a"))
		commit(t, s, 1, add("b"))
		snap, err := snapshot.Load(ctx, s, deltalog.Latest)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := checkpoint.Write(ctx, s, badState{snap, bad}, checkpoint.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		commit(t, s, 2, add("c"))
		snap, err = snapshot.Load(ctx, s, deltalog.Latest)
		if err != nil {
			t.Fatal(err)
		}
		if got := paths(snap); !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Errorf("%+v: files = %v, want [a b c] (the checkpoint's bad add dropped with it)", bad, got)
		}
		if n, err := snap.NumFiles(ctx); err != nil || n != 3 {
			t.Errorf("%+v: NumFiles = %d, %v", bad, n, err)
		}
		for _, f := range paths(snap) {
			if strings.HasPrefix(f, "error") {
				t.Error(f)
			}
		}
	}
}
