package local_test

import (
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/storetest"
)

// TestWriter runs the writer suite; an unfinished write must leave no
// temporary file anywhere under the root.
func TestWriter(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []local.Option
	}{{"Sync", nil}, {"WithoutSync", []local.Option{local.WithoutSync()}}} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.RunWriter(t, func(t *testing.T) logstore.Store {
				s, _ := newStore(t, tc.opts...)
				return s
			}, storetest.WriterOptions{Leftovers: func(t *testing.T, s logstore.Store) []string {
				d, _ := logstore.DriverOf[*local.Store](s)
				return tempFiles(t, d.Root())
			}})
		})
	}
}
