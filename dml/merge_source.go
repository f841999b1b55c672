package dml

import (
	"context"
	"fmt"
	"iter"

	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/write"
)

// TableSource is a merge source reading the table snap shows, at its
// version (load the snapshot at the version wanted: time travel), with
// the scan options opts (Columns to read a subset, Predicate to read
// some rows). The rows are read when the merge runs.
func TableSource(ctx context.Context, snap *snapshot.Snapshot, opts scan.Options) (Source, error) {
	s, err := scan.New(snap, opts)
	if err != nil {
		return Source{}, err
	}
	return Source{Schema: s.Schema(), Batches: func(yield func(schema.Batch, error) bool) {
		for b, err := range s.Batches(ctx) {
			if err != nil {
				yield(schema.Batch{}, err)
				return
			}
			if !yield(*b, nil) { // Merge copies the values it keeps
				return
			}
		}
	}}, nil
}

// RowsSource is a merge source of rows held as Go slices, each a value per
// field of sch, in order; a row of another length is write.ErrBatch.
func RowsSource(sch *schema.StructType, rows [][]schema.Value) Source {
	return Source{Schema: sch, Batches: func(yield func(schema.Batch, error) bool) {
		if len(rows) == 0 {
			return
		}
		b := schema.Batch{Len: len(rows), Columns: make([][]schema.Value, len(sch.Fields))}
		for j := range b.Columns {
			b.Columns[j] = make([]schema.Value, len(rows))
		}
		for i, r := range rows {
			if len(r) != len(sch.Fields) {
				yield(schema.Batch{}, fmt.Errorf("%w: source row %d has %d values for %d columns", write.ErrBatch, i, len(r), len(sch.Fields)))
				return
			}
			for j, v := range r {
				b.Columns[j][i] = v
			}
		}
		yield(b, nil)
	}}
}

// StructSource is a merge source of Go structs, bound to the columns of
// sch by package govalue as write.StructBatches binds them (a
// `parquet:"name"` tag, else the field's name ignoring case).
func StructSource[T any](sch *schema.StructType, rows iter.Seq[T]) Source {
	return Source{Schema: sch, Batches: write.StructBatches(sch, rows, insertBatchRows)}
}
