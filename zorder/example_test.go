package zorder_test

import (
	"fmt"

	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/zorder"
)

// Each column is cut into ranges from a sample of its values, then the
// range ids are combined along a curve; the keys sort as bytes.
func ExampleKeyer() {
	sample := func(xs ...int64) *zorder.Ranges {
		var vals []schema.Value
		for _, x := range xs {
			vals = append(vals, schema.LongValue(x))
		}
		r, err := zorder.NewRanges(vals, 0)
		if err != nil {
			panic(err)
		}
		return r
	}
	// Two columns of three distinct values: ids 1 to 3 (0 is null), 2 bits.
	// (20, 7) has ids (2, 3): Morton interleaves 10 and 11 as 1101; Hilbert
	// puts cell (2, 3) ninth (1001) on the 4x4 curve.
	a, b := sample(10, 20, 30), sample(5, 6, 7)
	for _, curve := range []zorder.Curve{zorder.Morton, zorder.Hilbert} {
		k, err := zorder.NewKeyer(curve, []*zorder.Ranges{a, b})
		if err != nil {
			panic(err)
		}
		key, err := k.Key(nil, []schema.Value{schema.LongValue(20), schema.LongValue(7)})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s key of (20, 7): %08b\n", curve, key[0])
	}
	// Output:
	// zorder key of (20, 7): 11010000
	// hilbert key of (20, 7): 10010000
}
