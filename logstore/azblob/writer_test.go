package azblob_test

import (
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
