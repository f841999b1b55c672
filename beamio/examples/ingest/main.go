// Command ingest writes generated rows into a Delta table with a Beam
// pipeline, exactly once, then reads the table back with another and
// counts its rows. It runs on any Beam runner; locally on Prism:
//
//	go run ./examples/ingest --table /tmp/events --rows 100000 --runner prism
//
// The table is created (partitioned by day) when it does not exist. Run it
// again with the same --write-id and --write-version and nothing is
// written twice; give the next --write-version to append more.
//
// With --upsert n, a pipeline then merges n generated rows into the table
// (beamio.MergeRows: MERGE INTO ... USING a PCollection): the first half
// changes the amounts of the table's last ids, the rest are new ids.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/godelta/delta"
	"github.com/godelta/delta/beamio"
	"github.com/godelta/delta/schema"
)

var (
	table        = flag.String("table", "", "the Delta table's path or URI (every worker must reach it)")
	rows         = flag.Int64("rows", 100_000, "rows to generate")
	writeID      = flag.String("write-id", "ingest-example", "the txn application id of the write")
	writeVersion = flag.Int64("write-version", 0, "the txn version of the write")
	count        = flag.Bool("count", true, "read the table back with a second pipeline and print its row count")
	upsert       = flag.Int64("upsert", 0, "after the write, MERGE this many generated rows into the table (beamio.MergeRows): half update existing ids, half insert new ones")
	inProcess    = flag.Bool("in-process", false, "write the same rows with the library in this process (delta.Table.Append), no Beam: for comparison")
)

// span is a range of ids one worker generates.
type span struct{ From, To int64 }

// genFn emits the event rows of the ids of a span: id, day, amount; with
// Amend, amounts corrected by 1000.
type genFn struct{ Amend bool }

func (f genFn) ProcessElement(s span, emit func(beamio.Row)) {
	for id := s.From; id < s.To; id++ {
		row := event(id)
		if f.Amend {
			row[2] = schema.DoubleValue(row[2].Float64() + 1000)
		}
		emit(beamio.Row{Values: row})
	}
}

// event is the row of id.
func event(id int64) []schema.Value {
	return []schema.Value{
		schema.LongValue(id),
		schema.DateValue(int32(20_000 + id%7)),
		schema.DoubleValue(float64(id%1000) / 10),
	}
}

// appendInProcess writes the rows the pipeline writes, with the library's
// Append in this process, exactly once by the same txn.
func appendInProcess(ctx context.Context, uri string, n int64) error {
	t, err := delta.Open(ctx, uri)
	if err != nil {
		return err
	}
	defer t.Close()
	batches := func(yield func(delta.RowBatch, error) bool) {
		const size = 4096
		for from := int64(0); from < n; from += size {
			b := delta.RowBatch{Len: int(min(size, n-from)), Columns: make([][]schema.Value, 3)}
			for id := from; id < from+int64(b.Len); id++ {
				for j, v := range event(id) {
					b.Columns[j] = append(b.Columns[j], v)
				}
			}
			if !yield(b, nil) {
				return
			}
		}
	}
	res, err := t.Append(ctx, batches, delta.WriteOptions{AppID: *writeID, AppVersion: *writeVersion})
	if err != nil {
		return err
	}
	fmt.Println("committed version", res.Version)
	return nil
}

// one maps a row to 1, for counting.
func one(beamio.Row) int64 { return 1 }

// printCount prints the row count.
func printCount(n int64) { fmt.Println("rows in the table:", n) }

// printMerge prints what the merge did.
func printMerge(r beamio.MergeResult) {
	fmt.Printf("merged: committed %v at version %d, %d rows updated, %d inserted\n",
		r.Committed, r.Version, r.Metrics.NumTargetRowsUpdated, r.Metrics.NumTargetRowsInserted)
}

func init() {
	beam.RegisterType(reflect.TypeFor[span]())
	register.DoFn2x0[span, func(beamio.Row)](&genFn{})
	register.Function1x1(one)
	register.Function1x0(printCount)
	register.Function1x0(printMerge)
	register.Emitter1[beamio.Row]()
}

func main() {
	flag.Parse()
	beam.Init()
	ctx := context.Background()
	if *table == "" {
		log.Fatal("--table is required")
	}
	if err := ensureTable(ctx, *table); err != nil {
		log.Fatal(err)
	}

	if *inProcess {
		if err := appendInProcess(ctx, *table, *rows); err != nil {
			log.Fatal(err)
		}
		return
	}

	p, s := beam.NewPipelineWithRoot()
	var spans []span
	for from := int64(0); from < *rows; from += 10_000 {
		spans = append(spans, span{From: from, To: min(from+10_000, *rows)})
	}
	gen := beam.ParDo(s, &genFn{}, beam.Reshuffle(s, beam.CreateList(s, spans)))
	beamio.Write(s, *table, gen, beamio.WriteOptions{WriteID: *writeID, Version: *writeVersion})
	if err := beamx.Run(ctx, p); err != nil {
		log.Fatalf("write pipeline: %v", err)
	}
	if *upsert > 0 {
		// The rows of a PCollection merged in: their schema is the
		// table's, as text (it travels to the workers with the step).
		p, s := beam.NewPipelineWithRoot()
		from := max(*rows-*upsert/2, 0)
		updates := beam.ParDo(s, &genFn{Amend: true}, beam.CreateList(s, []span{{From: from, To: from + *upsert}}))
		res := beamio.MergeRows(s, *table, updates, beamio.MergeOptions{
			SourceSchema: "id BIGINT NOT NULL, day DATE, amount DOUBLE",
			On:           "t.id = s.id AND t.day = s.day",
			Matched:      []beamio.MergeClause{{Set: "amount = s.amount"}},
			NotMatched:   []beamio.MergeClause{{All: true}},
		})
		beam.ParDo0(s, printMerge, res)
		if err := beamx.Run(ctx, p); err != nil {
			log.Fatalf("merge pipeline: %v", err)
		}
	}
	if !*count {
		return
	}

	p, s = beam.NewPipelineWithRoot()
	n := stats.Sum(s, beam.ParDo(s, one, beamio.Read(s, *table, beamio.ReadOptions{})))
	beam.ParDo0(s, printCount, n)
	if err := beamx.Run(ctx, p); err != nil {
		log.Fatalf("read pipeline: %v", err)
	}
}

// ensureTable creates the example's table at uri unless one is there.
func ensureTable(ctx context.Context, uri string) error {
	t, err := delta.Open(ctx, uri)
	if err == nil {
		return t.Close()
	}
	if !errors.Is(err, delta.ErrTableNotFound) {
		return err
	}
	sch, err := schema.ParseDDL("id BIGINT NOT NULL, day DATE, amount DOUBLE")
	if err != nil {
		return err
	}
	t, err = delta.Create(ctx, uri, delta.TableSpec{Schema: sch, PartitionColumns: []string{"day"}})
	if err != nil {
		return err
	}
	return t.Close()
}
