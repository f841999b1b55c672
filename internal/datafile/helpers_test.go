package datafile_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil"
)

func corpusDir(t *testing.T) string { return testutil.CorpusDir(t) }

// openBytes opens a Parquet file held in memory.
func openBytes(t *testing.T, b []byte) *datafile.File {
	t.Helper()
	f, err := datafile.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return f
}

// readRows reads want from f and returns each row formatted as
// "[v1, v2, ...]" with Value.String.
func readRows(t *testing.T, f *datafile.File, want *schema.StructType, opts datafile.ReadOptions) []string {
	t.Helper()
	rows, err := tryReadRows(f, want, opts)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return rows
}

func tryReadRows(f *datafile.File, want *schema.StructType, opts datafile.ReadOptions) ([]string, error) {
	var rows []string
	next := int64(0)
	err := f.Read(context.Background(), want, opts, func(b *datafile.Batch) error {
		if b.FirstRow != next {
			return errFirstRow
		}
		next += int64(b.Len)
		for i := range b.Len {
			rows = append(rows, formatRow(b, i))
		}
		return nil
	})
	return rows, err
}

type testErr string

func (e testErr) Error() string { return string(e) }

const errFirstRow = testErr("batches do not follow each other")

func formatRow(b *datafile.Batch, i int) string {
	parts := make([]string, len(b.Columns))
	for j, c := range b.Columns {
		parts[j] = c[i].String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// sameMultiset reports whether a and b hold the same rows, in any order.
func sameMultiset(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
