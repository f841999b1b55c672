package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/deltaerr"
)

// Bad bytes must give a *deltaerr.CorruptError, never a panic, a hang or
// a store error.

const corruptKey = "_delta_log/00000000000000000001.checkpoint.parquet"

// readBytes reads data as a checkpoint, with every kind and with protocol
// and metaData only, and returns the errors.
func readBytes(t *testing.T, data []byte) []error {
	t.Helper()
	store := newMemStore(map[string][]byte{corruptKey: data})
	var errs []error
	for _, want := range []ActionSet{All, Protocol | Metadata} {
		_, err := collect(t, store, []string{corruptKey}, want)
		errs = append(errs, err)
	}
	return errs
}

func wantCorrupt(t *testing.T, what string, data []byte) {
	t.Helper()
	for _, err := range readBytes(t, data) {
		var ce *deltaerr.CorruptError
		if !errors.Is(err, deltaerr.ErrCorrupt) || !errors.As(err, &ce) {
			t.Errorf("%s: got %v (%T), want a *deltaerr.CorruptError", what, err, err)
		} else if ce.Path != corruptKey {
			t.Errorf("%s: error names %q", what, ce.Path)
		}
	}
}

// wantNoPanic accepts success or a CorruptError: damage to the data
// pages may or may not be detectable.
func wantNoPanic(t *testing.T, what string, data []byte) {
	t.Helper()
	for _, err := range readBytes(t, data) {
		if err != nil && !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("%s: got %v, want nil or a CorruptError", what, err)
		}
	}
}

// corruptInputs returns valid checkpoints to damage: a synthetic one with
// dictionary and plain pages of both versions, and one of the corpus.
func corruptInputs(t *testing.T) map[string][]byte {
	head, _ := roundTrip()
	head = head[:len(head)-1] // no sidecar to follow
	files, _ := manyFiles(300)
	rows := append(head, files...)
	in := map[string][]byte{
		"synthetic-v1": writeRows(t, rows, parquet.PageBufferSize(1024)),
		"synthetic-v2": writeRows(t, rows, parquet.PageBufferSize(1024), parquet.DataPageVersion(2)),
	}
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "testdata")
	}
	{
		if b, err := os.ReadFile(filepath.Join(dir, "golden", "checkpoint", "delta", "_delta_log", "00000000000000000010.checkpoint.parquet")); err == nil {
			in["spark"] = b
		}
		if b, err := os.ReadFile(filepath.Join(dir, "delta-rs", "delta-1.2.1-only-struct-stats", "_delta_log", "00000000000000000010.checkpoint.parquet")); err == nil {
			in["databricks-struct-stats"] = b
		}
	}
	return in
}

func TestCorrupt(t *testing.T) {
	for name, data := range corruptInputs(t) {
		t.Run(name, func(t *testing.T) {
			if errs := readBytes(t, data); errs[0] != nil || errs[1] != nil {
				t.Fatalf("the intact file does not read: %v", errs)
			}
			n := len(data)
			wantCorrupt(t, "empty", nil)
			for _, l := range []int{1, 3, 4, 7, 8, 12, n / 4, n / 3, n / 2, 2 * n / 3, 3 * n / 4, n - 12, n - 9, n - 8, n - 5, n - 4, n - 1} {
				wantCorrupt(t, fmt.Sprintf("cut to %d of %d bytes", l, n), data[:l])
			}
			bad := slices.Clone(data)
			copy(bad, "PAR2")
			wantCorrupt(t, "bad header magic", bad)
			bad = slices.Clone(data)
			copy(bad[n-4:], "PARX")
			wantCorrupt(t, "bad footer magic", bad)
			for _, size := range []uint32{0, 1, uint32(n), uint32(n - 8), 1 << 31, math32} {
				bad = slices.Clone(data)
				binary.LittleEndian.PutUint32(bad[n-8:], size)
				wantCorrupt(t, fmt.Sprintf("footer length %d", size), bad)
			}
			// The footer's thrift replaced by noise.
			footer := int(binary.LittleEndian.Uint32(data[n-8:]))
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			for i := range 20 {
				bad = slices.Clone(data)
				for j := n - 8 - footer; j < n-8; j++ {
					if rng.IntN(4) == 0 {
						bad[j] = byte(rng.Uint32())
					}
				}
				wantNoPanic(t, fmt.Sprintf("footer noise %d", i), bad)
			}
			// The column data replaced by noise.
			for i := range 20 {
				bad = slices.Clone(data)
				for j := 4; j < n-8-footer; j++ {
					if rng.IntN(8) == 0 {
						bad[j] = byte(rng.Uint32())
					}
				}
				wantNoPanic(t, fmt.Sprintf("data noise %d", i), bad)
			}
			// Single bit flips anywhere.
			for i := range 300 {
				bad = slices.Clone(data)
				for range 1 + rng.IntN(3) {
					bad[rng.IntN(n)] ^= 1 << rng.IntN(8)
				}
				wantNoPanic(t, fmt.Sprintf("bit flips %d", i), bad)
			}
		})
	}
}

const math32 = 1<<32 - 1

func TestRandomBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 50 {
		b := make([]byte, 1+rng.IntN(8192))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		wantCorrupt(t, fmt.Sprintf("random %d bytes", len(b)), b)
		wantCorrupt(t, fmt.Sprintf("random %d bytes between magic numbers", len(b)), slices.Concat([]byte("PAR1"), b, []byte("PAR1")))
		if i < 5 {
			wantCorrupt(t, "magic numbers only", []byte("PAR1PAR1"))
		}
	}
}

func TestSchemaMismatch(t *testing.T) {
	type badAdd struct {
		Path *string `parquet:"path,optional"`
		Size *string `parquet:"size,optional"`
	}
	type badRow struct {
		Add *badAdd `parquet:"add,optional"`
	}
	// Only when add is read: projection does not look at its columns.
	wantAddCorrupt := func(what string, data []byte) {
		t.Helper()
		store := newMemStore(map[string][]byte{corruptKey: data})
		if _, err := collect(t, store, []string{corruptKey}, Add); !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("%s: got %v, want a CorruptError", what, err)
		}
		if _, err := collect(t, store, []string{corruptKey}, Protocol|Metadata); err != nil {
			t.Errorf("%s, reading protocol and metaData: %v", what, err)
		}
	}
	wantAddCorrupt("add.size is a string", writeRows(t, []badRow{{Add: &badAdd{Path: ptr("a"), Size: ptr("1")}}}))

	type listAdd struct {
		Path []string `parquet:"path,optional,list"`
	}
	type listRow struct {
		Add *listAdd `parquet:"add,optional"`
	}
	wantAddCorrupt("add.path is a list", writeRows(t, []listRow{{Add: &listAdd{Path: []string{"a"}}}}))

	// Unknown columns are ignored, and known ones may be missing.
	type futureAdd struct {
		Path   *string `parquet:"path,optional"`
		Future *struct {
			X *int64 `parquet:"x,optional"`
		} `parquet:"futureField,optional"`
	}
	type futureRow struct {
		Future *string    `parquet:"someFutureAction,optional"`
		Add    *futureAdd `parquet:"add,optional"`
	}
	data := writeRows(t, []futureRow{{Future: ptr("x")}, {Add: &futureAdd{Path: ptr("a")}}})
	got, err := collect(t, newMemStore(map[string][]byte{corruptKey: data}), []string{corruptKey}, All)
	if err != nil || len(got) != 1 || got[0].Add == nil || got[0].Add.Path != "a" {
		t.Errorf("got %v, %v", got, err)
	}
}
