package datafile_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta/datafile"
	"github.com/godelta/delta/deltaerr"
)

// FuzzReadDataFile: any bytes opened and read as a data file, with the
// schema inferred from the file, give rows or an error (ErrCorrupt for
// bad bytes, ErrUnsupportedType for a column with no Delta type), never a
// panic: the readers recover no panic of their own code.
func FuzzReadDataFile(f *testing.F) {
	var n int
	_ = filepath.WalkDir("../../shared/testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || n >= 30 {
			return filepath.SkipDir
		}
		if d.IsDir() || strings.Contains(filepath.Base(p), ".checkpoint") || !strings.HasSuffix(p, ".parquet") {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 8<<10 {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
			n++
		}
		return nil
	})
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
