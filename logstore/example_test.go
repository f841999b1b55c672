package logstore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
)

// PutIfAbsent is the one atomic switch a Delta commit needs: of two writers
// of one key, the second gets ErrAlreadyExists and changes nothing.
func ExampleStore_putIfAbsent() {
	ctx := context.Background()
	var store logstore.Store = memory.New()
	defer store.Close()

	fmt.Println(store.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("first")))
	err := store.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("second"))
	fmt.Println(errors.Is(err, logstore.ErrAlreadyExists))

	data, _ := store.Get(ctx, "_delta_log/00000000000000000000.json")
	fmt.Printf("%s\n", data)

	_, err = store.Get(ctx, "_delta_log/00000000000000000001.json")
	fmt.Println(errors.Is(err, logstore.ErrNotFound))
	// Output:
	// <nil>
	// true
	// first
	// true
}

// List yields the objects directly under a directory in byte order of key,
// starting after a given key; sub-directories are not descended into.
func ExampleStore_list() {
	ctx := context.Background()
	store := memory.New()
	defer store.Close()
	for _, key := range []string{
		"_delta_log/00000000000000000002.json",
		"_delta_log/00000000000000000000.json",
		"_delta_log/00000000000000000001.json",
		"_delta_log/_sidecars/a.parquet",
		"part-0.parquet",
	} {
		if err := store.Put(ctx, key, []byte("{}")); err != nil {
			fmt.Println(err)
			return
		}
	}
	for info, err := range store.List(ctx, "_delta_log/", "_delta_log/00000000000000000000.json") {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(info.Key, info.Size)
	}
	// Output:
	// _delta_log/00000000000000000001.json 2
	// _delta_log/00000000000000000002.json 2
}

// A Writer streams an object; nothing is visible until Close returns nil,
// and Abort leaves nothing behind.
func ExampleStore_newWriter() {
	ctx := context.Background()
	store := memory.New()
	defer store.Close()

	w, err := store.NewWriter(ctx, "data/part-0.parquet")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Fprint(w, "row group 1;")
	fmt.Fprint(w, "row group 2")
	_, err = store.Stat(ctx, "data/part-0.parquet")
	fmt.Println("before Close:", errors.Is(err, logstore.ErrNotFound))
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	info, _ := store.Stat(ctx, "data/part-0.parquet")
	fmt.Println("after Close:", info.Size)

	w, _ = store.NewWriter(ctx, "data/part-1.parquet")
	fmt.Fprint(w, "half")
	w.Abort()
	_, err = store.Stat(ctx, "data/part-1.parquet")
	fmt.Println("after Abort:", errors.Is(err, logstore.ErrNotFound))
	// Output:
	// before Close: true
	// after Close: 23
	// after Abort: true
}

// Every call after Close gives ErrClosed, and bad keys are refused above
// every backend.
func ExamplePortable_errors() {
	ctx := context.Background()
	store := memory.New()

	err := store.Put(ctx, "../outside", []byte("x"))
	fmt.Println(errors.Is(err, logstore.ErrInvalidKey))

	store.Close()
	_, err = store.Get(ctx, "any")
	fmt.Println(errors.Is(err, logstore.ErrClosed))
	// Output:
	// true
	// true
}
