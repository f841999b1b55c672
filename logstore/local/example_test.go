package local_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
)

// Key "a/b" is the file root/a/b; directories appear as writes need them.
// Importing the package lets logstore.Open take file:// URIs and plain paths.
func ExampleNew() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "local-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	store, err := local.New(filepath.Join(dir, "table"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	fmt.Println(strings.HasPrefix(store.URI(), "file://"))

	key := "_delta_log/00000000000000000000.json"
	fmt.Println(store.PutIfAbsent(ctx, key, []byte("{}\n")))
	fmt.Println(errors.Is(store.PutIfAbsent(ctx, key, []byte("{}\n")), logstore.ErrAlreadyExists))

	_, err = os.Stat(filepath.Join(dir, "table", "_delta_log", "00000000000000000000.json"))
	fmt.Println(err)

	again, err := logstore.Open(ctx, filepath.Join(dir, "table"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer again.Close()
	for info, err := range again.List(ctx, "_delta_log/", "") {
		fmt.Println(info.Key, info.Size, err)
	}
	// Output:
	// true
	// <nil>
	// true
	// <nil>
	// _delta_log/00000000000000000000.json 3 <nil>
}
