package deltaarrow

import (
	"context"
	"iter"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
)

// Scan plans a scan of snap, a snapshot of t, with opts (columns,
// predicate) and returns its rows as Arrow records: NewReader of t.Scan.
// mem may be nil, as for NewReader.
func Scan(ctx context.Context, t *delta.Table, snap *delta.Snapshot, opts delta.ScanOptions, mem memory.Allocator) (array.RecordReader, error) {
	s, err := t.Scan(snap, opts)
	if err != nil {
		return nil, err
	}
	return NewReader(ctx, s, mem)
}

// NewReader returns the rows of s as an array.RecordReader, one record per
// scan batch, with the schema Schema(s.Schema()). The scan runs as the
// reader is read; Release stops it. mem may be nil for the package's
// allocator, which recycles the buffers of released records (release each
// record when done with it, as arrow-go's readers expect).
func NewReader(ctx context.Context, s *scan.Scan, mem memory.Allocator) (array.RecordReader, error) {
	if mem == nil {
		mem = defaultPool
	}
	sch := s.Schema()
	as, err := Schema(sch)
	if err != nil {
		return nil, err
	}
	types := make([]schema.DataType, len(sch.Fields))
	for i, f := range sch.Fields {
		types[i] = f.Type
	}
	next, stop := iter.Pull2(s.Batches(ctx))
	r := &reader{schema: as, types: types, next: next, stop: stop, mem: mem,
		bld: array.NewRecordBuilder(mem, as)}
	r.refs.Store(1)
	return r, nil
}

type reader struct {
	refs   atomic.Int64
	schema *arrow.Schema
	types  []schema.DataType
	next   func() (*schema.Batch, error, bool)
	stop   func()
	mem    memory.Allocator
	// bld builds the nested columns; column writes the others itself.
	bld  *array.RecordBuilder
	cur  arrow.RecordBatch
	err  error
	done bool
}

func (r *reader) Retain() { r.refs.Add(1) }

func (r *reader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.stop()
	r.bld.Release()
}

func (r *reader) Schema() *arrow.Schema { return r.schema }

func (r *reader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for !r.done {
		b, err, ok := r.next()
		if !ok {
			r.done = true
			break
		}
		if err != nil {
			r.err, r.done = err, true
			r.stop()
			break
		}
		if b.Len == 0 {
			continue
		}
		cols := make([]arrow.Array, len(r.types))
		for j, t := range r.types {
			col, err := column(r.mem, t, r.schema.Field(j).Type, r.bld.Field(j), b.Columns[j][:b.Len])
			if err != nil {
				r.err, r.done = err, true
				r.stop()
				for _, c := range cols[:j] {
					c.Release()
				}
				return false
			}
			cols[j] = col
		}
		r.cur = array.NewRecordBatch(r.schema, cols, int64(b.Len))
		for _, c := range cols {
			c.Release()
		}
		return true
	}
	return false
}

func (r *reader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch, for arrow-go's deprecated name.
func (r *reader) Record() arrow.RecordBatch { return r.cur }

func (r *reader) Err() error { return r.err }
