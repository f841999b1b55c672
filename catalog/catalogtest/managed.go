package catalogtest

import (
	"context"
	"testing"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/schema"
)

// ManagedTable registers id in st at the local directory dir and creates
// there a catalog-managed Delta table of one column, id BIGINT, committed
// through st's ratification (version 0 staged, ratified and published):
// the fixture of the tests and benchmarks of multi-table and
// catalog-managed commits.
func ManagedTable(tb testing.TB, st *catalog.SQLStore, id catalog.TableIdent, dir string) catalog.Table {
	tb.Helper()
	ctx := context.Background()
	reg, err := st.RegisterTable(ctx, catalog.Table{Ident: id, Location: "file://" + dir})
	if err != nil {
		tb.Fatal(err)
	}
	storage, err := local.New(dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer storage.Close()
	if _, err := delta.CreateStore(ctx, id.Name, catalogmanaged.New(storage, st.ManagedClient(reg.ID)), delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{"delta.feature.catalogManaged": "supported", "delta.enableInCommitTimestamps": "true"},
	}); err != nil {
		tb.Fatal(err)
	}
	return reg
}
