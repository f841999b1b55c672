package gcs_test

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/gcs"
)

// Open takes gs://BUCKET[/PREFIX]; anything else is ErrInvalidURI, found
// before any request is made.
func ExampleOpen() {
	ctx := context.Background()
	for _, uri := range []string{"gs://", "gs://bucket/t?x=1", "s3://bucket/t"} {
		_, err := gcs.Open(ctx, uri)
		fmt.Println(uri, errors.Is(err, gcs.ErrInvalidURI))
	}
	// Importing the package registers gs:// with logstore.Open.
	fmt.Println(slices.Contains(logstore.Schemes(), "gs"))
	// Output:
	// gs:// true
	// gs://bucket/t?x=1 true
	// s3://bucket/t true
	// true
}

// New opens a bucket, here on an emulator reached without credentials; a
// missing bucket is logstore.ErrRootNotFound. The caller closes the store.
func ExampleNew() {
	ctx := context.Background()
	store, err := gcs.New(ctx, "lake", "tables/events", gcs.Options{Endpoint: "http://127.0.0.1:4443/storage/v1/"})
	if errors.Is(err, logstore.ErrRootNotFound) {
		fmt.Println("no such bucket")
		return
	} else if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	fmt.Println(store.URI())
}
