package gcs_test

import (
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/gcs"
	"github.com/godelta/delta/logstore/storetest"
)

// TestWriter runs the writer suite with 1 MiB chunks (the SDK's chunk is
// a multiple of 256 KiB), so that objects of several parts are resumable
// uploads of several chunks.
func TestWriter(t *testing.T) {
	const chunk = 1 << 20
	storetest.RunWriter(t, func(t *testing.T) logstore.Store {
		return newStore(t, gcs.Options{ChunkSize: chunk})
	}, storetest.WriterOptions{PartSize: chunk})
}
