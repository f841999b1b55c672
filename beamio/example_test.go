package beamio_test

import (
	"context"
	"log"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/godelta/delta/beamio"
)

// Read a table at a version, with a predicate, and write the rows that
// match into another table exactly once, on the Prism runner.
func Example() {
	p, s := beam.NewPipelineWithRoot()
	rows := beamio.Read(s, "/data/events", beamio.ReadOptions{
		AtVersion: true, Version: 12,
		Predicate: "amount > 10",
	})
	// The target table has the source's schema; WriteID and Version make
	// the write exactly once: a run again after the commit landed commits
	// nothing.
	beamio.Write(s, "/data/big_events", rows, beamio.WriteOptions{
		WriteID: "big-events-from-12", Version: 12,
	})
	if _, err := prism.Execute(context.Background(), p); err != nil {
		log.Fatal(err)
	}
}

// Z-order a table on two columns, and read its change data feed from
// version 3, on the Prism runner.
func ExampleOptimize() {
	p, s := beam.NewPipelineWithRoot()
	beamio.Optimize(s, "/data/events", beamio.OptimizeOptions{ZOrderBy: []string{"user", "ts"}})
	changes := beamio.ReadChanges(s, "/data/events", 3, -1, beamio.ChangesOptions{})
	_ = changes // a PCollection of beamio.Row: columns, _change_type, _commit_version, _commit_timestamp
	if _, err := prism.Execute(context.Background(), p); err != nil {
		log.Fatal(err)
	}
}

// Upsert the rows of a PCollection (here, a table's rows changed by the
// pipeline) into a table, on the Prism runner: MERGE INTO ... USING the
// rows, their columns named by the schema they are given with.
func ExampleMergeRows() {
	p, s := beam.NewPipelineWithRoot()
	updates := beamio.Read(s, "/data/corrections", beamio.ReadOptions{Columns: []string{"id", "amount"}})
	beamio.MergeRows(s, "/data/events", updates, beamio.MergeOptions{
		SourceSchema: "id BIGINT NOT NULL, amount DOUBLE", // the rows' columns, in order
		On:           "t.id = s.id",
		Matched:      []beamio.MergeClause{{Set: "amount = s.amount"}},
		NotMatched:   []beamio.MergeClause{{All: true}},
	})
	if _, err := prism.Execute(context.Background(), p); err != nil {
		log.Fatal(err)
	}
}
