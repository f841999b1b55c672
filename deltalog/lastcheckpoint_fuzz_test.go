package deltalog_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/memory"
)

// FuzzLastCheckpoint: any _last_checkpoint bytes give a hint or an
// ErrCorrupt, never a panic; VerifyLastCheckpoint agrees.
func FuzzLastCheckpoint(f *testing.F) {
	_ = filepath.WalkDir("../../shared/testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "_last_checkpoint" {
			if data, err := os.ReadFile(p); err == nil && len(data) < 64<<10 {
				f.Add(data)
			}
		}
		return nil
	})
	good, _ := deltalog.EncodeLastCheckpoint(deltalog.LastCheckpoint{Version: 10, Size: 3})
	f.Add(good)
	f.Add([]byte(`{"version":1,"size":1,"checksum":"x","checksum":"y"}`))
	f.Add([]byte(`{"version":-1,"parts":0}`))
	f.Add([]byte(`{"a":[[[[[[{"b":"\u0000"}]]]]]],"checksum":"00"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		store := memory.New()
		if err := store.Put(ctx, deltalog.LastCheckpointKey, data); err != nil {
			t.Fatal(err)
		}
		lc, err := deltalog.ReadLastCheckpoint(ctx, store)
		if err != nil && !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Fatalf("untyped error: %v", err)
		}
		if err == nil && (lc == nil || lc.Version < 0) {
			t.Fatalf("hint %+v", lc)
		}
		verr := deltalog.VerifyLastCheckpoint(data)
		if verr != nil && !errors.Is(verr, deltaerr.ErrCorrupt) {
			t.Fatalf("untyped error: %v", verr)
		}
		if err == nil && verr != nil {
			t.Fatalf("read accepted what Verify refuses: %v", verr)
		}
	})
}
