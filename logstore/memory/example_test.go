package memory_test

import (
	"context"
	"fmt"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
)

// Every Open of one memory:// name sees the same objects, for the life of
// the process; closing one handle leaves the others and the objects alone.
func ExampleOpen() {
	ctx := context.Background()
	a, err := logstore.Open(ctx, "memory://example-shared")
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := logstore.Open(ctx, "mem://example-shared")
	fmt.Println(a.URI(), b.URI())

	a.Put(ctx, "k", []byte("v"))
	a.Close()
	data, err := b.Get(ctx, "k")
	fmt.Printf("%s %v\n", data, err)
	b.Close()

	fmt.Println(memory.New().URI())
	// Output:
	// memory://example-shared memory://example-shared
	// v <nil>
	// memory://
}
