package parquetio

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAnyAbove compares anyAbove with slices.Max on levels of every
// length, with every maximum, one level or none above it.
func TestAnyAbove(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 4))
	for range 50_000 {
		top := byte(rng.IntN(256))
		if rng.IntN(2) == 0 {
			top = byte(rng.IntN(8))
		}
		levels := make([]byte, rng.IntN(40))
		for i := range levels {
			levels[i] = byte(rng.IntN(int(top) + 1))
		}
		if len(levels) > 0 && rng.IntN(2) == 0 {
			levels[rng.IntN(len(levels))] = byte(rng.IntN(256))
		}
		want := len(levels) > 0 && slices.Max(levels) > top
		if got := anyAbove(levels, top); got != want {
			t.Fatalf("anyAbove(%v, %d) = %v, want %v", levels, top, got, want)
		}
	}
}
