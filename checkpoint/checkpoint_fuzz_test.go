package checkpoint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta/deltaerr"
)

// FuzzReadCheckpoint: any bytes read as a checkpoint give actions or a
// *deltaerr.CorruptError, never a panic or a runaway allocation.
func FuzzReadCheckpoint(f *testing.F) {
	var n int
	_ = filepath.WalkDir("../../shared/testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || n >= 30 {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.Contains(filepath.Base(p), ".checkpoint") || !strings.HasSuffix(p, ".parquet") {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 16<<10 {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
			n++
		}
		return nil
	})
	f.Add([]byte{})
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, err := range readBytes(t, data) {
			if err == nil {
				continue
			}
			var ce *deltaerr.CorruptError
			if !errors.Is(err, deltaerr.ErrCorrupt) || !errors.As(err, &ce) {
				t.Fatalf("error is not a CorruptError: %v", err)
			}
		}
	})
}
