package countstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/logstore/storetest"
	"github.com/godelta/delta/testutil/countstore"
)

// The wrapper keeps the whole Store contract.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store { return countstore.New(memory.New(), nil) })
}

func TestCounts(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	for key, data := range map[string]string{"a/x.checkpoint.parquet": "0123456789", "a/y.json": "abc"} {
		if err := mem.Put(ctx, key, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	s := countstore.New(mem, func(key string) bool { return strings.HasSuffix(key, ".parquet") })
	if _, err := s.Get(ctx, "a/x.checkpoint.parquet"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRange(ctx, "a/x.checkpoint.parquet", 2, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "a/y.json"); err != nil { // not matched: not counted
		t.Fatal(err)
	}
	for range s.List(ctx, "a", "") {
	}
	want := countstore.Counts{Lists: 1, Gets: 1, Ranges: 1, Bytes: 13}
	if got := s.Counts(); got != want {
		t.Errorf("Counts = %+v, want %+v", got, want)
	}
	s.Reset()
	if got := s.Counts(); got != (countstore.Counts{}) {
		t.Errorf("after Reset: %+v", got)
	}
}
