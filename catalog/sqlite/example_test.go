package sqlite_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/sqlite"
)

// A catalog in memory: a namespace, a table registered in it, and the
// error of a second registration of the same name.
func ExampleOpen() {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, ":memory:") // or a file path
	if err != nil {
		panic(err)
	}
	defer store.Close()
	if err := store.CreateNamespace(ctx, catalog.Namespace{"sales"}, nil); err != nil {
		panic(err)
	}
	id, _ := catalog.ParseTableIdent("sales.orders")
	if _, err := store.RegisterTable(ctx, catalog.Table{Ident: id, Location: "s3://bucket/sales/orders"}); err != nil {
		panic(err)
	}
	_, err = store.RegisterTable(ctx, catalog.Table{Ident: id, Location: "s3://bucket/elsewhere"})
	fmt.Println(errors.Is(err, catalog.ErrAlreadyExists))
	t, _ := store.Table(ctx, id)
	fmt.Println(t.Ident, t.Location)
	// Output:
	// true
	// sales.orders s3://bucket/sales/orders
}
