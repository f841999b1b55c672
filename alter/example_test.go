package alter_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/godelta/delta/alter"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// Columns are added to any table; renaming one needs column mapping, which
// EnableFeature turns on for a table that has data already.
func Example() {
	ctx := context.Background()
	store := memory.New()
	defer store.Close()
	sch, _ := schema.ParseDDL("id BIGINT, name STRING")
	p, m, _ := write.NewTable(write.TableSpec{Schema: sch})
	tx := txn.BeginCreate(store, txn.Options{})
	tx.SetProtocol(p)
	tx.SetMetadata(m)
	if _, err := tx.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	latest := func() *snapshot.Snapshot {
		s, err := snapshot.Load(ctx, store, deltalog.Latest)
		if err != nil {
			panic(err)
		}
		return s
	}

	res, err := alter.AddColumn(ctx, latest(), nil, schema.StructField{Name: "score", Type: schema.Double, Nullable: true}, alter.Options{})
	fmt.Println("add column: version", res.Version, err)

	_, err = alter.RenameColumn(ctx, latest(), []string{"name"}, "label", alter.Options{})
	fmt.Println("rename without column mapping:", errors.Is(err, alter.ErrColumnMappingRequired))

	res, err = alter.EnableFeature(ctx, latest(), "columnMapping", alter.Options{})
	pr := latest().Protocol()
	fmt.Println("column mapping: version", res.Version, err, "protocol", pr.MinReaderVersion, pr.MinWriterVersion)

	res, err = alter.RenameColumn(ctx, latest(), []string{"name"}, "label", alter.Options{})
	fmt.Println("rename: version", res.Version, err, latest().Schema().Fields[1].Name)
	// Output:
	// add column: version 1 <nil>
	// rename without column mapping: true
	// column mapping: version 2 <nil> protocol 2 5
	// rename: version 3 <nil> label
}
