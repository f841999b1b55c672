package azblob_test

import (
	"bytes"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/azblob"
	"github.com/godelta/delta/logstore/storetest"
)

// TestWriter runs the writer suite with the Writer's block size, so that
// objects of several parts are several staged blocks. Uncommitted blocks
// are not observable as objects, so there is no leftover check beyond the
// suite's: nothing visible.
func TestWriter(t *testing.T) {
	storetest.RunWriter(t, func(t *testing.T) logstore.Store {
		return newStore(t, azblob.Options{})
	}, storetest.WriterOptions{PartSize: azblob.WriterBlockSize})
}

// Put above 256 MiB stages blocks and commits them with one Put Block
// List; here with blocks of 1 KiB, over a blob that exists already.
func TestPutBlocks(t *testing.T) {
	s := newStore(t, azblob.Options{})
	ctx := t.Context()
	if err := s.Put(ctx, "big", []byte("old")); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 10*1024+17)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := driver(s).PutBlocks(ctx, "big", data, 1024); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "big")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get after PutBlocks = %d bytes, %v; want the %d bytes put", len(got), err, len(data))
	}
}
