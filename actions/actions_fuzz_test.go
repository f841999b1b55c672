package actions_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
)

// sharedLogFiles returns up to max files of the shared corpus (read at
// test time, never copied) whose path inside a _delta_log ends in suffix.
func sharedLogFiles(suffix string, max int, maxSize int64) [][]byte {
	var out [][]byte
	_ = filepath.WalkDir("../../shared/testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(out) >= max {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.Contains(p, "_delta_log") || !strings.HasSuffix(p, suffix) {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > maxSize {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil {
			out = append(out, data)
		}
		return nil
	})
	return out
}

// FuzzDecodeCommit: any bytes decode to actions or to an ErrCorrupt (or,
// for an unknown feature, ErrUnsupportedFeature), never a panic.
func FuzzDecodeCommit(f *testing.F) {
	for _, s := range []string{
		`{"commitInfo":{"timestamp":1}}`,
		`{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`,
		`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":[]}}`,
		"{\"remove\":{\"path\":\"%2e%2e/x\"}}\n\n{}",
		`{"add":{"path":"a","deletionVector":{"storageType":"u","pathOrInlineDv":"ab","sizeInBytes":-1,"cardinality":-5}}}`,
	} {
		f.Add([]byte(s))
	}
	for _, data := range sharedLogFiles(".json", 300, 64<<10) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		acts, err := actions.DecodeCommit("_delta_log/00000000000000000001.json", data)
		if err != nil {
			if !errors.Is(err, deltaerr.ErrCorrupt) && !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if _, err := actions.EncodeCommit(acts); err != nil {
			t.Logf("decoded actions do not encode again: %v", err)
		}
	})
}
