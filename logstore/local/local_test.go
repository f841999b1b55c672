package local_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store {
		s, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// A PutIfAbsent leaves no temporary file behind and none shows in List.
func TestNoTempFilesListed(t *testing.T) {
	dir := t.TempDir()
	s, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 3 {
		if err := s.PutIfAbsent(ctx, "_delta_log/k", []byte{byte(i)}); i > 0 && err == nil {
			t.Fatal("second PutIfAbsent succeeded")
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "k" {
		t.Errorf("directory holds %v, want only k", entries)
	}
}
