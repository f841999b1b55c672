package write

import (
	"context"
	"errors"
	"iter"
	"net/url"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

var errInjected = errors.New("injected")

// streamStore is a memory store that counts its writers and Puts, and
// whose writers fail when told to.
type streamStore struct {
	logstore.Store
	failWrite, failClose    bool
	opened, closed, aborted int
	dataPuts                int // Puts outside the log
}

func (s *streamStore) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	w, err := s.Store.NewWriter(ctx, key)
	if err != nil {
		return nil, err
	}
	s.opened++
	return &countingWriter{Writer: w, s: s}, nil
}

func (s *streamStore) Put(ctx context.Context, key string, data []byte) error {
	if !strings.HasPrefix(key, "_delta_log/") {
		s.dataPuts++
	}
	return s.Store.Put(ctx, key, data)
}

type countingWriter struct {
	logstore.Writer
	s       *streamStore
	aborted bool
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.s.failWrite {
		return 0, errInjected
	}
	return w.Writer.Write(p)
}

func (w *countingWriter) Close() error {
	if w.s.failClose {
		return errInjected
	}
	err := w.Writer.Close()
	if err == nil {
		w.s.closed++
	}
	return err
}

func (w *countingWriter) Abort() error {
	if !w.aborted {
		w.aborted = true
		w.s.aborted++
	}
	return w.Writer.Abort()
}

// snapshotOn creates a table from spec in store and loads it.
func snapshotOn(t *testing.T, store logstore.Store, spec TableSpec) *snapshot.Snapshot {
	t.Helper()
	ctx := context.Background()
	p, m, err := NewTable(spec)
	if err != nil {
		t.Fatal(err)
	}
	data, err := actions.EncodeCommit([]actions.Action{{Protocol: &p}, {Metadata: &m}})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(ctx, deltalog.CommitKey(0), data); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// partitionedBatches yields n batches of rows of two partitions, then err
// if it is not nil.
func partitionedBatches(n int, err error) iter.Seq2[Batch, error] {
	return func(yield func(Batch, error) bool) {
		for i := range n {
			b := Batch{Len: 4, Columns: [][]schema.Value{
				{l(int64(4 * i)), l(int64(4*i + 1)), l(int64(4*i + 2)), l(int64(4*i + 3))},
				{s("a"), s("b"), s("a"), s("b")},
			}}
			if !yield(b, nil) {
				return
			}
		}
		if err != nil {
			yield(Batch{}, err)
		}
	}
}

var partitionedSpec = TableSpec{
	Schema:           st(field("id", schema.Long), field("p", schema.String)),
	PartitionColumns: []string{"p"},
}

// TestRowsStream checks that data files go through the store's Writer,
// never a whole-file Put, and that each add's size is the size of the
// object in the store.
func TestRowsStream(t *testing.T) {
	ss := &streamStore{Store: memory.New()}
	snap := snapshotOn(t, ss, partitionedSpec)
	// A target of one byte closes every file after each batch: 3 batches
	// of 2 partitions are 6 files.
	adds, cdcs, err := RowsWithChanges(context.Background(), snap, partitionedBatches(3, nil), Options{TargetFileSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(adds) != 6 || len(cdcs) != 6 {
		t.Fatalf("%d adds, %d cdcs; want 6 of each", len(adds), len(cdcs))
	}
	sizes := map[string]int64{}
	for _, a := range adds {
		sizes[a.Path] = a.Size
	}
	for _, c := range cdcs {
		sizes[c.Path] = c.Size
	}
	for path, size := range sizes {
		key, err := url.PathUnescape(path)
		if err != nil {
			t.Fatal(err)
		}
		info, err := ss.Stat(context.Background(), key)
		if err != nil || info.Size != size || size == 0 {
			t.Errorf("%s: Stat = %+v, %v; the action says size %d", key, info, err, size)
		}
	}
	if ss.opened != 12 || ss.closed != 12 || ss.aborted != 0 || ss.dataPuts != 0 {
		t.Errorf("writers opened %d, closed %d, aborted %d, data Puts %d; want 12, 12, 0, 0", ss.opened, ss.closed, ss.aborted, ss.dataPuts)
	}
}

// TestRowsStreamFailures checks that on every failure the files being
// written are aborted and the finished ones deleted: nothing is left.
func TestRowsStreamFailures(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		failWrite, failClose bool
		batchErr             error
		want                 error
	}{
		{"write fails", true, false, nil, errInjected},
		{"close fails", false, true, nil, errInjected},
		{"batches fail with files open", false, false, errInjected, errInjected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := &streamStore{Store: memory.New()}
			snap := snapshotOn(t, ss, partitionedSpec)
			ss.failWrite, ss.failClose = tc.failWrite, tc.failClose
			// Files roll at 1 MiB, so the two files stay open across
			// batches until the end (or the failure).
			adds, err := Rows(context.Background(), snap, partitionedBatches(3, tc.batchErr), Options{TargetFileSize: 1 << 20})
			if !errors.Is(err, tc.want) || adds != nil {
				t.Fatalf("Rows = %d adds, %v; want none and %v", len(adds), err, tc.want)
			}
			if ss.opened == 0 || ss.aborted != ss.opened || ss.closed != 0 {
				t.Errorf("writers opened %d, aborted %d, closed %d; want every one aborted, none closed", ss.opened, ss.aborted, ss.closed)
			}
			if files := dataFiles(t, ss); len(files) != 0 {
				t.Errorf("data files left: %q", files)
			}
		})
	}
}
