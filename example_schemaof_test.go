package delta_test

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/scan"
)

// A Purchase is a row as the program holds it. Its table's schema comes from
// the struct itself: the tags name the columns (and give a decimal its
// precision and scale); non-pointer fields are NOT NULL, pointers and
// slices nullable.
type Purchase struct {
	ID     int64     `parquet:"id"`
	At     time.Time `parquet:"at"`
	Amount *big.Rat  `parquet:"amount,decimal(10,2)"`
	Tags   []string  `parquet:"tags"`
	Note   string    `parquet:"-"` // not a column
}

func ExampleSchemaFor() {
	ctx := context.Background()
	sch, err := delta.SchemaFor[Purchase]()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range sch.Fields {
		fmt.Println(f.Name, f.Type, "nullable:", f.Nullable)
	}

	tbl, err := delta.Create(ctx, "memory://example-schema-for", delta.TableSpec{Schema: sch})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	purchases := []Purchase{
		{ID: 1, At: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), Amount: big.NewRat(1999, 100), Tags: []string{"new"}},
		{ID: 2, At: time.Date(2026, 5, 2, 8, 30, 0, 0, time.UTC)},
	}
	if _, err := delta.AppendStructs(ctx, tbl, slices.Values(purchases), delta.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for p, err := range scan.All[Purchase](ctx, s) {
		if err != nil {
			fmt.Println(err)
			return
		}
		amount := "null"
		if p.Amount != nil {
			amount = p.Amount.FloatString(2)
		}
		fmt.Println(p.ID, p.At.Format(time.RFC3339), amount, p.Tags)
	}
	// Output:
	// id long nullable: false
	// at timestamp nullable: false
	// amount decimal(10,2) nullable: true
	// tags {"type":"array","elementType":"string","containsNull":false} nullable: true
	// 1 2026-05-01T12:00:00Z 19.99 [new]
	// 2 2026-05-02T08:30:00Z null []
}
