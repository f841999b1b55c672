package memory_test

import (
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/logstore/storetest"
)

func TestWriter(t *testing.T) {
	storetest.RunWriter(t, func(t *testing.T) logstore.Store { return memory.New() }, storetest.WriterOptions{})
}
