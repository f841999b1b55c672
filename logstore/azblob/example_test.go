package azblob_test

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/azblob"
)

// Importing the package registers the Azure schemes with logstore.Open.
func Example_schemes() {
	for _, scheme := range []string{"az", "azure", "abfs", "abfss"} {
		fmt.Println(scheme, slices.Contains(logstore.Schemes(), scheme))
	}
	// Output:
	// az true
	// azure true
	// abfs true
	// abfss true
}

// New opens a container, here on Azurite with a shared-key credential; a
// missing container is logstore.ErrRootNotFound. The caller closes the store.
func ExampleNew() {
	ctx := context.Background()
	store, err := azblob.New(ctx, "lake", "tables/events", azblob.Options{
		ServiceURL:  "http://127.0.0.1:10000/devstoreaccount1",
		AccountName: "devstoreaccount1",
		AccountKey:  os.Getenv("AZURE_STORAGE_KEY"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	fmt.Println(store.URI())
}
