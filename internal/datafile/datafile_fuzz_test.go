package datafile_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
)

// FuzzReadDataFile: any bytes opened and read as a data file, with the
// schema inferred from the file, give rows or an error (ErrCorrupt for
// bad bytes, ErrUnsupportedType for a column with no Delta type), never a
// panic: the readers recover no panic of their own code.
func FuzzReadDataFile(f *testing.F) {
	// Seeds: the small data files of the corpus, a table directory deep.
	paths, _ := filepath.Glob("../../shared/testdata/*/*/*.parquet")
	seeds := 0
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil && len(data) <= 8<<10 && seeds < 30 {
			f.Add(data)
			seeds++
		}
	}
	f.Add(shreddedSeed(f))
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := datafile.Open(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, deltaerr.ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
			return
		}
		want, err := file.Schema()
		if err != nil {
			if !errors.Is(err, deltaerr.ErrCorrupt) && !errors.Is(err, datafile.ErrUnsupportedType) {
				t.Fatalf("Schema: %v", err)
			}
			return
		}
		err = file.Read(context.Background(), want, datafile.ReadOptions{BatchSize: 7}, func(*datafile.Batch) error { return nil })
		if err != nil && !errors.Is(err, deltaerr.ErrCorrupt) && !errors.Is(err, datafile.ErrUnsupportedType) {
			t.Fatalf("Read: %v", err)
		}
	})
}
