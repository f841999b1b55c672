package delta_test

import (
	"context"
	"errors"
	"fmt"
	"slices"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

// exampleIDs returns the ids of the table's latest rows, sorted.
func exampleIDs(ctx context.Context, tbl *delta.Table) ([]int64, error) {
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{Columns: []string{"id"}})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for e, err := range scan.All[Event](ctx, s) {
		if err != nil {
			return nil, err
		}
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	return ids, nil
}

func ExampleCreate() {
	ctx := context.Background()
	spec := delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long},
			{Name: "name", Type: schema.String, Nullable: true},
			{Name: "year", Type: schema.Integer},
		}},
		PartitionColumns: []string{"year"},
		Description:      "events by year",
		Properties:       map[string]string{"delta.appendOnly": "true"},
	}
	tbl, err := delta.Create(ctx, "memory://example-create", spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := snap.Protocol()
	fmt.Println("version", snap.Version(), "partitioned by", snap.Metadata().PartitionColumns)
	fmt.Println("protocol", p.MinReaderVersion, p.MinWriterVersion, "appendOnly", snap.Properties()["delta.appendOnly"])

	// A second Create at the same location fails: exactly one creator wins.
	_, err = delta.Create(ctx, "memory://example-create", spec)
	fmt.Println("again:", errors.Is(err, delta.ErrTableExists))
	// Output:
	// version 0 partitioned by [year]
	// protocol 1 2 appendOnly true
	// again: true
}

// Overwrite replaces the whole table when ReplaceWhere is nil.
func ExampleTable_Overwrite() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-overwrite", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	rows := delta.Rows([][]schema.Value{
		{schema.LongValue(10), schema.StringValue("new"), schema.IntegerValue(2030)},
	})
	res, err := tbl.Overwrite(ctx, rows, delta.OverwriteOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, err := exampleIDs(ctx, tbl)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", res.Version, "ids", ids)
	// Output: version 4 ids [10]
}

// With a ReplaceWhere only the rows it matches are replaced, and every new
// row must match it. On a data column (id here) the files that hold
// matching rows are rewritten without them.
func ExampleTable_OverwriteRows() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-overwrite-rows", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	where, err := delta.ParsePredicate("id >= 4")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := tbl.OverwriteRows(ctx, [][]schema.Value{
		{schema.LongValue(40), schema.StringValue("dan"), schema.IntegerValue(2025)},
	}, delta.OverwriteOptions{ReplaceWhere: where})
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, err := exampleIDs(ctx, tbl)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", res.Version, "ids", ids)

	// A new row outside the ReplaceWhere commits nothing.
	_, err = tbl.OverwriteRows(ctx, [][]schema.Value{
		{schema.LongValue(1), schema.StringValue("ada"), schema.IntegerValue(2024)},
	}, delta.OverwriteOptions{ReplaceWhere: where})
	var ce *delta.ConstraintError
	fmt.Println("outside:", errors.Is(err, delta.ErrConstraint), errors.As(err, &ce))
	// Output:
	// version 4 ids [1 2 3 40]
	// outside: true true
}

// OverwriteStructs takes the new rows as Go structs; here it replaces one
// partition.
func ExampleOverwriteStructs() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-overwrite-structs", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	where, err := delta.ParsePredicate("year = 2024")
	if err != nil {
		fmt.Println(err)
		return
	}
	rows := []Event{{ID: 11, Name: "ana", Year: 2024}, {ID: 12, Name: "ben", Year: 2024}}
	res, err := delta.OverwriteStructs(ctx, tbl, slices.Values(rows), delta.OverwriteOptions{ReplaceWhere: where})
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, err := exampleIDs(ctx, tbl)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", res.Version, "ids", ids)
	// Output: version 4 ids [3 4 5 11 12]
}

// Update commits what a function stages, running it again on the newer
// version after a conflict. An application id (SetTransaction) makes a
// write idempotent: the function stages nothing when the table already
// records this batch of the application, so a retried job does not
// commit it twice.
func ExampleTable_Update() {
	ctx := context.Background()
	exampleTable(ctx, "example-update") // records txn "ingest" at 41
	tbl, err := delta.Open(ctx, "memory://example-update")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	errDone := errors.New("already committed")
	ingest := func(batch int64, add actions.Add) (delta.CommitResult, error) {
		return tbl.Update(ctx, delta.TxnOptions{Operation: "STREAMING UPDATE"}, func(tx *delta.Transaction) error {
			last, ok, err := tx.TxnVersion(ctx, "ingest")
			if err != nil {
				return err
			}
			if ok && last >= batch {
				return errDone
			}
			tx.Add(add)
			tx.SetTransaction("ingest", batch)
			return nil
		})
	}
	add := actions.Add{Path: "year=2026/c.parquet", PartitionValues: map[string]string{"year": "2026"},
		Size: 300, ModificationTime: 3, DataChange: true}
	for range 2 { // the second run of batch 42 is a retry
		res, err := ingest(42, add)
		switch {
		case errors.Is(err, errDone):
			fmt.Println("batch 42 already committed")
		case err != nil:
			fmt.Println(err)
			return
		default:
			fmt.Println("batch 42 committed at version", res.Version)
		}
	}
	// Output:
	// batch 42 committed at version 1
	// batch 42 already committed
}

// PostCommit runs the maintenance a commit of Begin made due: here a
// checkpoint, due at every version of a table with
// delta.checkpointInterval=1.
func ExampleTable_PostCommit() {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, "memory://example-post-commit", delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{"delta.checkpointInterval": "1"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	tx, err := tbl.Begin(ctx, delta.TxnOptions{Operation: "WRITE"})
	if err != nil {
		fmt.Println(err)
		return
	}
	tx.Add(actions.Add{Path: "part-0001.parquet", Size: 100, ModificationTime: 1, DataChange: true})
	res, err := tx.Commit(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", res.Version, "checkpoint due", res.PostCommit.Checkpoint)
	tbl.PostCommit(ctx, &res)
	if res.PostCommit.Err != nil {
		fmt.Println(res.PostCommit.Err) // the commit stands all the same
	}
	fmt.Println("ran", res.PostCommit.Ran, "checkpointed", res.PostCommit.Checkpointed)
	// Output:
	// version 1 checkpoint due true
	// ran true checkpointed true
}

// Rows turns rows given row by row, in table schema order, into the batches
// Append and Overwrite take.
func ExampleRows() {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, "memory://example-rows", delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long},
			{Name: "name", Type: schema.String, Nullable: true},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	rows := [][]schema.Value{
		{schema.LongValue(1), schema.StringValue("ada")},
		{schema.LongValue(2), schema.Value{}}, // the zero Value is null
	}
	for b, err := range delta.Rows(rows) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("batch of", b.Len, "rows, columns", b.Columns)
	}
	res, err := tbl.Append(ctx, delta.Rows(rows), delta.WriteOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", res.Version)
	// Output:
	// batch of 2 rows, columns [[1 2] [ada null]]
	// version 1
}

// Append streams batches: each is written as it comes, and the whole is
// one commit. Here 3 batches of 1000 generated rows.
func ExampleTable_Append() {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, "memory://example-append-batches", delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	batches := func(yield func(delta.RowBatch, error) bool) {
		for b := range int64(3) {
			ids := make([]schema.Value, 1000)
			for i := range ids {
				ids[i] = schema.LongValue(b*1000 + int64(i))
			}
			if !yield(delta.RowBatch{Len: len(ids), Columns: [][]schema.Value{ids}}, nil) {
				return
			}
		}
	}
	res, err := tbl.Append(ctx, batches, delta.WriteOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, err := exampleIDs(ctx, tbl)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", res.Version, "rows", len(ids), "ids", ids[0], "to", ids[len(ids)-1])
	// Output: version 1 rows 3000 ids 0 to 2999
}
