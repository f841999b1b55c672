package scan

import (
	"context"
	"iter"
	"sync"

	"github.com/godelta/delta/schema"
)

// Batch is a run of rows held column-wise: Columns[j][i] is the value of
// column j (in the scan's Schema order) in row i. It is schema.Batch, the
// form the writer takes too.
//
// A batch that Batches yields is valid until the loop body that received
// it returns: its memory is then reused for later batches (that is what
// keeps a scan's allocations flat). Clone a batch to keep it; the Values
// themselves, and rows from Row, may be kept.
type Batch = schema.Batch

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
	i := r.schema.Index(name)
	if i < 0 {
		return schema.Value{}, false
	}
	return r.values[i], true
}

// result is one batch or error of a task.
type result struct {
	b   *fileBatch
	err error
}

// runOrdered runs work on the tasks with up to conc at once and yields the
// batches in task order. Each task's batches queue in a small buffer, so
// memory stays bounded by conc tasks in flight. Stopping the iteration
// cancels the tasks still running and waits for them.
func runOrdered(ctx context.Context, conc int, tasks iter.Seq2[*fileRead, error],
	work func(context.Context, *fileRead, func(*fileBatch) error) error) iter.Seq2[*fileBatch, error] {
	return func(yield func(*fileBatch, error) bool) {
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
					err := work(ctx, t, func(b *fileBatch) error {
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
