package delta_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

// Event is a row of the tables the examples below create with
// exampleEvents: fields go to columns by tag, else by name ignoring case.
type Event struct {
	ID   int64 `parquet:"id"`
	Name string
	Year int32
}

// exampleEvents creates memory://name, a table of events partitioned by
// year with the given properties, and appends one commit per year:
// version 1 holds 2024 (ids 1, 2), version 2 holds 2025 (ids 3, 4), and
// version 3 holds 2026 (id 5). The caller closes the table.
func exampleEvents(ctx context.Context, name string, props map[string]string) (*delta.Table, error) {
	tbl, err := delta.Create(ctx, "memory://"+name, delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.Long},
			{Name: "name", Type: schema.String, Nullable: true},
			{Name: "year", Type: schema.Integer},
		}},
		PartitionColumns: []string{"year"},
		Properties:       props,
	})
	if err != nil {
		return nil, err
	}
	for _, rows := range [][]Event{
		{{1, "ada", 2024}, {2, "bob", 2024}},
		{{3, "cy", 2025}, {4, "di", 2025}},
		{{5, "ed", 2026}},
	} {
		if _, err := delta.AppendStructs(ctx, tbl, slices.Values(rows), delta.WriteOptions{}); err != nil {
			tbl.Close()
			return nil, err
		}
	}
	return tbl, nil
}

func ExampleTable_Snapshot() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-snapshot", nil)
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
	n, err := snap.NumFiles(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", snap.Version(), "files", n)
	fmt.Println("partitioned by", snap.Metadata().PartitionColumns)
	for _, f := range snap.Schema().Fields {
		fmt.Println(f.Name, f.Type)
	}
	// Output:
	// version 3 files 3
	// partitioned by [year]
	// id long
	// name string
	// year integer
}

// Time travel by version: an older snapshot shows the table as it was.
func ExampleTable_SnapshotAt() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-snapshot-at", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()

	for _, v := range []int64{0, 1, 2} {
		snap, err := tbl.SnapshotAt(ctx, v)
		if err != nil {
			fmt.Println(err)
			return
		}
		n, err := snap.NumFiles(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("version", snap.Version(), "files", n)
	}
	_, err = tbl.SnapshotAt(ctx, 9)
	fmt.Println("version 9:", errors.Is(err, delta.ErrVersionNotFound))
	// Output:
	// version 0 files 0
	// version 1 files 1
	// version 2 files 2
	// version 9: true
}

// Time travel by time. With in-commit timestamps
// (delta.enableInCommitTimestamps) each commit records its time in the log,
// the time its CommitResult returns; without them, the commit file's
// modification time counts.
func ExampleTable_SnapshotAtTimestamp() {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, "memory://example-snapshot-at-timestamp", delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{"delta.enableInCommitTimestamps": "true"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	var committed []time.Time // committed[i] is the time of version i+1
	for i := range int64(3) {
		res, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i)}}, delta.WriteOptions{})
		if err != nil {
			fmt.Println(err)
			return
		}
		committed = append(committed, res.Timestamp)
	}

	// The newest version committed at or before the time.
	for _, ts := range []time.Time{committed[0], committed[1].Add(-time.Millisecond), committed[2]} {
		snap, err := tbl.SnapshotAtTimestamp(ctx, ts)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("version", snap.Version())
	}
	// A time before the first commit or after the latest is out of range.
	_, err = tbl.SnapshotAtTimestamp(ctx, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println("before the first commit:", errors.Is(err, delta.ErrTimestampOutOfRange))
	_, err = tbl.SnapshotAtTimestamp(ctx, committed[2].Add(time.Hour))
	fmt.Println("after the latest:", errors.Is(err, delta.ErrTimestampOutOfRange))
	// Output:
	// version 1
	// version 1
	// version 3
	// before the first commit: true
	// after the latest: true
}

// A scan reads rows: the predicate skips files on their partition values
// and statistics, then filters rows; Metrics say what it read.
func ExampleTable_Scan() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-scan", nil)
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
	pred, err := delta.ParsePredicate("year >= 2025 AND id <> 4")
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{Columns: []string{"id", "name"}, Predicate: pred})
	if err != nil {
		fmt.Println(err)
		return
	}
	for row, err := range s.Rows(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(row.Values())
	}
	m := s.Metrics()
	fmt.Println("files", m.FilesTotal, "skipped", m.FilesSkippedPart, "read", m.FilesRead,
		"rows read", m.RowsRead, "returned", m.RowsReturned)

	// scan.All reads the rows into structs; columns the scan does not
	// return leave their fields zero.
	for e, err := range scan.All[Event](ctx, s) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%+v\n", e)
	}
	// Output:
	// [3 cy]
	// [5 ed]
	// files 3 skipped 1 read 2 rows read 3 returned 2
	// {ID:3 Name:cy Year:0}
	// {ID:5 Name:ed Year:0}
}

// A snapshot never changes; Update gives a newer one, reading only the
// commits made since.
func ExampleSnapshot_Update() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-snapshot-update", nil)
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
	if _, err := delta.AppendStructs(ctx, tbl, slices.Values([]Event{{6, "flo", 2026}}), delta.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	newer, err := snap.Update(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("old", snap.Version(), "new", newer.Version())
	same, err := newer.Update(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("nothing new, same snapshot:", same == newer)
	// Output:
	// old 3 new 4
	// nothing new, same snapshot: true
}

// History lists commits newest first, with what each did.
func ExampleTable_History() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-history", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	commits, err := tbl.History(ctx, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range commits {
		fmt.Println(c.Version, c.Info.Operation, c.Info.OperationParameters["mode"])
	}
	// Output:
	// 3 WRITE Append
	// 2 WRITE Append
	// 1 WRITE Append
}

// The change data feed of a table that records it
// (delta.enableChangeDataFeed): the rows each commit inserted, deleted or
// updated.
func ExampleTable_Changes() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-changes", map[string]string{"delta.enableChangeDataFeed": "true"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	// Version 4 replaces the 2024 rows.
	where, err := delta.ParsePredicate("year = 2024")
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := delta.OverwriteStructs(ctx, tbl, slices.Values([]Event{{7, "gus", 2024}}),
		delta.OverwriteOptions{ReplaceWhere: where}); err != nil {
		fmt.Println(err)
		return
	}

	// Every change from version 3 to the latest.
	changes, err := tbl.Changes(ctx, delta.ChangeOptions{Start: 3, Columns: []string{"id"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	var lines []string
	for row, err := range changes.Rows(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		id, _ := row.Get("id")
		typ, _ := row.Get(scan.ChangeTypeColumn)
		v, _ := row.Get(scan.CommitVersionColumn)
		lines = append(lines, fmt.Sprint("version ", v, " ", typ, " id ", id))
	}
	slices.Sort(lines) // the order within a commit is not specified
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// version 3 insert id 5
	// version 4 delete id 1
	// version 4 delete id 2
	// version 4 insert id 7
}

// The changes committed at or after a time, here the time of version 2 as
// its in-commit timestamp records it.
func ExampleTable_ChangesSince() {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, "memory://example-changes-since", delta.TableSpec{
		Schema: &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long}}},
		Properties: map[string]string{
			"delta.enableChangeDataFeed":     "true",
			"delta.enableInCommitTimestamps": "true",
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	var since time.Time
	for i := range int64(3) {
		res, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(10 * i)}}, delta.WriteOptions{})
		if err != nil {
			fmt.Println(err)
			return
		}
		if res.Version == 2 {
			since = res.Timestamp
		}
	}

	changes, err := tbl.ChangesSince(ctx, since, delta.ChangeOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	start, end := changes.Range()
	fmt.Println("versions", start, "to", end)
	for row, err := range changes.Rows(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		id, _ := row.Get("id")
		typ, _ := row.Get(scan.ChangeTypeColumn)
		fmt.Println(typ, id)
	}
	// Output:
	// versions 2 to 3
	// insert 10
	// insert 20
}

// UpTo ends a range of versions; the zero ChangeOptions.End is the latest.
func ExampleUpTo() {
	ctx := context.Background()
	tbl, err := exampleEvents(ctx, "example-up-to", map[string]string{"delta.enableChangeDataFeed": "true"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()
	for _, opts := range []delta.ChangeOptions{
		{Start: 1, End: delta.UpTo(2)},
		{Start: 2},
	} {
		changes, err := tbl.Changes(ctx, opts)
		if err != nil {
			fmt.Println(err)
			return
		}
		start, end := changes.Range()
		n := 0
		for _, err := range changes.Rows(ctx) {
			if err != nil {
				fmt.Println(err)
				return
			}
			n++
		}
		fmt.Println("end", opts.End, "versions", start, "to", end, "rows", n)
	}
	// Output:
	// end 2 versions 1 to 2 rows 4
	// end latest versions 2 to 3 rows 3
}
