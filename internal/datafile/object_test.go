package datafile_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/internal/parquetio"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
)

// countingStore counts the GetRange calls made to a store, and fails them
// all with fail when it is set.
type countingStore struct {
	logstore.Store
	ranges atomic.Int64
	fail   error
}

func (s *countingStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	s.ranges.Add(1)
	if s.fail != nil {
		return nil, s.fail
	}
	return s.Store.GetRange(ctx, key, off, n)
}

// multiColumnFile writes a file of cols long columns, rows rows, in row
// groups of rowsPerGroup.
func multiColumnFile(t *testing.T, cols, rows, rowsPerGroup int) ([]byte, *schema.StructType) {
	t.Helper()
	g := parquet.Group{}
	want := st()
	for c := range cols {
		name := fmt.Sprintf("c%02d", c)
		g[name] = parquet.Int(64)
		want.Fields = append(want.Fields, fld(name, schema.Long))
	}
	var rs []any
	for r := range rows {
		m := map[string]any{}
		for c := range cols {
			m[fmt.Sprintf("c%02d", c)] = int64(r*cols + c)
		}
		rs = append(rs, m)
	}
	b := writeFile(t, g, rs, nil, parquet.PageBufferSize(4<<10), parquet.MaxRowsPerRowGroup(int64(rowsPerGroup)))
	return b, want
}

// TestOpenObjectRequests checks that a scan of a stored multi-column file
// fetches its column chunks in a few coalesced requests, where reading
// through logstore.ReaderAt makes one request per parquet-go read, and
// that both read the same rows.
func TestOpenObjectRequests(t *testing.T) {
	const cols, rows, groups = 16, 20_000, 2
	b, want := multiColumnFile(t, cols, rows, rows/groups)
	ctx := context.Background()
	store := &countingStore{Store: memory.New()}
	const key = "part-0.parquet"
	if err := store.PutIfAbsent(ctx, key, b); err != nil {
		t.Fatal(err)
	}
	size := int64(len(b))

	read := func(f *datafile.File) []string {
		t.Helper()
		got, err := tryReadRows(f, want, datafile.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	store.ranges.Store(0)
	f, err := datafile.Open(logstore.ReaderAt(ctx, store, key, size), size)
	if err != nil {
		t.Fatal(err)
	}
	before := read(f)
	perRead := store.ranges.Load()

	store.ranges.Store(0)
	f, err = datafile.OpenObject(ctx, store, key, size)
	if err != nil {
		t.Fatal(err)
	}
	after := read(f)
	coalesced := store.ranges.Load()

	if !slices.Equal(before, after) || len(after) != rows {
		t.Fatalf("the two reads differ: %d and %d rows", len(before), len(after))
	}
	// The footer in one request (plus the magic at the start), then one
	// request per row group: its chunks are adjacent and small.
	if coalesced > 2+groups {
		t.Errorf("OpenObject and Read made %d GetRange calls, want at most %d", coalesced, 2+groups)
	}
	// Through ReaderAt: at least one request per column chunk.
	if perRead < cols*groups {
		t.Errorf("through ReaderAt, %d GetRange calls for %d column chunks", perRead, cols*groups)
	}
	t.Logf("GetRange calls for %d columns, %d row groups: %d through logstore.ReaderAt, %d with OpenObject", cols, groups, perRead, coalesced)
}

// TestOpenObjectStoreError checks that a store error met while reading
// chunks comes back as itself, not as corruption, and that errors name
// the key.
func TestOpenObjectStoreError(t *testing.T) {
	// Larger than parquetio.Whole, so that the chunks are fetched after
	// the footer, not with it.
	b, want := multiColumnFile(t, 4, 20000, 10000)
	if len(b) <= parquetio.Whole {
		t.Fatalf("the file is %d bytes, want more than %d", len(b), parquetio.Whole)
	}
	ctx := context.Background()
	store := &countingStore{Store: memory.New()}
	const key = "part-1.parquet"
	if err := store.PutIfAbsent(ctx, key, b); err != nil {
		t.Fatal(err)
	}
	f, err := datafile.OpenObject(ctx, store, key, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	errDown := errors.New("store down")
	store.fail = errDown
	_, err = tryReadRows(f, want, datafile.ReadOptions{})
	if !errors.Is(err, errDown) || errors.Is(err, deltaerr.ErrCorrupt) {
		t.Fatalf("Read: %v, want the store's error", err)
	}
	store.fail = nil

	// A footer that is not one names the key.
	bad := memory.New()
	if err := bad.PutIfAbsent(ctx, key, make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	_, err = datafile.OpenObject(ctx, bad, key, 64)
	var ce *deltaerr.CorruptError
	if !errors.As(err, &ce) || ce.Path != key {
		t.Fatalf("OpenObject of garbage: %v, want a CorruptError naming %s", err, key)
	}
}
