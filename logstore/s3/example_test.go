package s3_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/s3"
)

// ParseURI splits an s3:// URI into New's arguments; a misspelt option is an
// error, and credentials never come from a URI.
func ExampleParseURI() {
	bucket, prefix, opts, err := s3.ParseURI("s3://lake/tables/events?endpoint=http://127.0.0.1:9000&region=eu-west-1&path_style=true")
	fmt.Println(bucket, prefix, opts.Endpoint, opts.Region, opts.PathStyle, err)

	_, _, _, err = s3.ParseURI("s3://lake/t?regoin=eu-west-1")
	fmt.Println(err != nil)

	// Importing the package registers its schemes with logstore.Open.
	fmt.Println(slices.Contains(logstore.Schemes(), "s3"), slices.Contains(logstore.Schemes(), "s3a"))
	// Output:
	// lake tables/events http://127.0.0.1:9000 eu-west-1 true <nil>
	// true
	// true true
}

// New opens a bucket on an S3-compatible server; it checks the bucket and the
// credentials with one listing. The caller closes the store.
func ExampleNew() {
	ctx := context.Background()
	store, err := s3.New(ctx, "lake", "tables/events", s3.Options{
		Endpoint:  "http://127.0.0.1:9000",
		Region:    "us-east-1",
		PathStyle: true,
		AccessKey: "user", SecretKey: "password",
	})
	if err != nil {
		fmt.Println(err) // a missing bucket matches logstore.ErrRootNotFound
		return
	}
	defer store.Close()
	fmt.Println(store.URI())
}
