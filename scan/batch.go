package scan

import (
	"context"
	"iter"
	"sync"

	"github.com/godelta/delta/schema"
)

// Batch is a run of rows held column-wise: Columns[j][i] is the value of
// column j (in Schema order) in row i.
//
// A batch that Batches yields is valid until the loop body that received
// it returns: its memory is then reused for later batches (that is what
// keeps a scan's allocations flat). Clone a batch to keep it; the Values
// themselves, and rows from Row, may be kept.
type Batch struct {
	Len     int
	Columns [][]schema.Value
	schema  *schema.StructType
	backing [][]schema.Value // pooled memory of Columns, see recycle
}

// Clone returns a copy of b that stays valid.
func (b *Batch) Clone() *Batch {
	all := make([]schema.Value, b.Len*len(b.Columns))
	cols := make([][]schema.Value, len(b.Columns))
	for j, c := range b.Columns {
		cols[j] = all[j*b.Len : (j+1)*b.Len : (j+1)*b.Len]
		copy(cols[j], c)
	}
	return &Batch{Len: b.Len, Columns: cols, schema: b.schema}
}

// release returns the batch's memory to the pool.
func (b *Batch) release() {
	recycle(b.backing...)
	b.backing, b.Columns, b.Len = nil, nil, 0
}

// Schema returns the logical schema of the batch's columns.
func (b *Batch) Schema() *schema.StructType { return b.schema }

// Row returns row i of the batch.
func (b *Batch) Row(i int) Row {
	vals := make([]schema.Value, len(b.Columns))
	for j, c := range b.Columns {
		vals[j] = c[i]
	}
	return Row{schema: b.schema, values: vals}
}

// Row is one row of a scan: values in the order of its schema's fields.
type Row struct {
	schema *schema.StructType
	values []schema.Value
}

// NewRow returns a row of values for the fields of s, in order.
func NewRow(s *schema.StructType, values []schema.Value) Row { return Row{schema: s, values: values} }

// Schema returns the row's schema.
func (r Row) Schema() *schema.StructType { return r.schema }

// Values returns the row's values in schema order. The caller must not
// change the slice.
func (r Row) Values() []schema.Value { return r.values }

// Get returns the value of the column with the given logical name (exact,
// then ignoring case), and false if the row has no such column.
func (r Row) Get(name string) (schema.Value, bool) {
	if r.schema == nil {
		return schema.Value{}, false
	}
	i := fieldIndex(r.schema, name)
	if i < 0 {
		return schema.Value{}, false
	}
	return r.values[i], true
}

// result is one batch or error of a task.
type result struct {
	b   *Batch
	err error
}

// runOrdered runs work on the tasks with up to conc at once and yields the
// batches in task order. Each task's batches queue in a small buffer, so
// memory stays bounded by conc tasks in flight. Stopping the iteration
// cancels the tasks still running and waits for them.
func runOrdered(ctx context.Context, conc int, tasks iter.Seq2[*fileRead, error],
	work func(context.Context, *fileRead, func(*Batch) error) error) iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer func() {
			cancel()
			wg.Wait()
		}()
		queue := make(chan chan result, conc)
		sem := make(chan struct{}, conc)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(queue)
			for t, err := range tasks {
				out := make(chan result, 4)
				if err != nil {
					out <- result{err: err}
					close(out)
					select {
					case queue <- out:
					case <-ctx.Done():
					}
					return
				}
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				select {
				case queue <- out:
				case <-ctx.Done():
					<-sem
					return
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					defer close(out)
					err := work(ctx, t, func(b *Batch) error {
						select {
						case out <- result{b: b}:
							return nil
						case <-ctx.Done():
							return ctx.Err()
						}
					})
					if err != nil {
						select {
						case out <- result{err: err}:
						case <-ctx.Done():
						}
					}
				}()
			}
		}()
		for out := range queue {
			for r := range out {
				if r.err != nil {
					yield(nil, r.err)
					return
				}
				if !yield(r.b, nil) {
					return
				}
			}
		}
		if err := ctx.Err(); err != nil {
			yield(nil, err)
		}
	}
}
