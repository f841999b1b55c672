package storetest_test

import (
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/logstore/storetest"
)

// A backend runs the suite from its own tests, with a function that makes a
// new, empty store for each subtest. The memory backend does exactly this.
// (The suite needs a *testing.T, so this example only compiles; the memory
// backend's tests run it.)
func Example() {
	_ = func(t *testing.T) { // func TestStore(t *testing.T)
		storetest.Run(t, func(t *testing.T) logstore.Store { return memory.New() })
	}
	_ = func(t *testing.T) { // func TestWriter(t *testing.T)
		storetest.RunWriter(t, func(t *testing.T) logstore.Store { return memory.New() }, storetest.WriterOptions{})
	}
}
