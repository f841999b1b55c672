package dv_test

import (
	"context"
	"fmt"

	"github.com/godelta/delta/internal/dv"
	"github.com/godelta/delta/logstore/memory"
)

// A writer builds the set of deleted rows, lays it out as a DV file, stores
// the file, and commits the descriptor; a reader loads it back.
func Example() {
	ctx := context.Background()
	store := memory.New()

	deleted := dv.New(0, 9, 1<<32)
	id := [16]byte{0x61, 0xd1, 0x6c, 0x75, 0x69, 0x94, 0x46, 0xb7, 0xa1, 0x5b, 0x8b, 0x53, 0x88, 0x52, 0xe5, 0x0e}
	f, err := dv.EncodeFile("", id, deleted)
	if err != nil {
		panic(err)
	}
	if err := store.PutIfAbsent(ctx, f.Key, f.Data); err != nil {
		panic(err)
	}
	d := f.Descriptors[0]
	fmt.Println(f.Key)
	fmt.Println(d.StorageType, d.PathOrInlineDv, *d.Offset, d.SizeInBytes, d.Cardinality)

	b, err := dv.Load(ctx, store, d, nil)
	if err != nil {
		panic(err)
	}
	for row := range b.All() {
		fmt.Print(row, " ")
	}
	fmt.Println()
	// Output:
	// deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin
	// u vBn[lx{q8@P<9BNH/isA 1 58 3
	// 0 9 4294967296
}
