package memory_test

import (
	"context"
	"slices"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
)

func TestListDirs(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	for _, k := range []string{"a=1/f", "a=1/g", "a=2/b=x/f", "top", "_delta_log/0.json"} {
		if err := s.Put(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for d, err := range logstore.ListDirs(ctx, s, "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if want := []string{"_delta_log/", "a=1/", "a=2/"}; !slices.Equal(got, want) {
		t.Errorf("dirs = %q, want %q", got, want)
	}
}
