package datafile

import (
	"bytes"
	"testing"
)

// TestChunkData appends runs of many sizes and checks that the blocks
// hold the bytes in order, that no block but the last is partly filled,
// and that a reset keeps the blocks for reuse.
func TestChunkData(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
	}{
		{"empty", nil},
		{"one byte", []int{1}},
		{"first block exactly", []int{minChunkBlock}},
		{"straddles", []int{minChunkBlock - 1, 2, 3*minChunkBlock + 5}},
		{"past the largest block", []int{maxChunkBlock, 3 * maxChunkBlock, 17}},
		{"many small", manySmall()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d chunkData
			for round := range 2 {
				var want []byte
				for i, n := range tc.sizes {
					b := bytes.Repeat([]byte{byte(i + 7*round)}, n)
					d.append(b)
					want = append(want, b...)
				}
				var got []byte
				for i, b := range d.blocks[:d.used] {
					if i < d.used-1 && len(b) != cap(b) {
						t.Fatalf("round %d: block %d of %d holds %d of %d bytes", round, i, d.used, len(b), cap(b))
					}
					if cap(b) > maxChunkBlock {
						t.Fatalf("block %d has cap %d, over %d", i, cap(b), maxChunkBlock)
					}
					got = append(got, b...)
				}
				if !bytes.Equal(got, want) || d.n != int64(len(want)) {
					t.Fatalf("round %d: blocks hold %d bytes (n %d), want %d, equal %v", round, len(got), d.n, len(want), bytes.Equal(got, want))
				}
				blocks := len(d.blocks)
				d.reset()
				if d.used != 0 || d.n != 0 || len(d.blocks) != blocks {
					t.Fatalf("reset: used %d, n %d, %d blocks kept of %d", d.used, d.n, len(d.blocks), blocks)
				}
			}
		})
	}
}

func manySmall() []int {
	sizes := make([]int, 3000)
	for i := range sizes {
		sizes[i] = 1 + i%1000
	}
	return sizes
}
