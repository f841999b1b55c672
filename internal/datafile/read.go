package datafile

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/parquetio"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/schema/variant"
)

// DefaultBatchSize is the number of rows per batch when ReadOptions
// leaves BatchSize at zero.
const DefaultBatchSize = 8192

// ReadOptions tune Read.
type ReadOptions struct {
	// ByFieldID matches wanted fields to the file's columns, at every
	// nesting level, by Parquet field id: the field's
	// "delta.columnMapping.id" metadata. A field without that metadata is
	// matched by name. Without ByFieldID fields are matched by name,
	// exactly first, then ignoring case.
	ByFieldID bool
	// BatchSize is the most rows in one batch; 0 means DefaultBatchSize.
	BatchSize int
	// Fresh gives every batch newly allocated Columns that the reader
	// never touches again, so the callback may keep them without copying.
	Fresh bool
	// Alloc, with Fresh, provides the memory of each fresh batch: a slice
	// of at least n values, which the reader overwrites (a caller may
	// recycle batches it is done with this way). Nil means make.
	Alloc func(n int) []schema.Value
	// RowGroups, when Set, reads only the row groups From to To-1 (from
	// 0, in file order; To past the last is the last): a part of a file,
	// for readers that split files by row group. Batch.FirstRow still
	// counts over all the file's row groups, so positions stay those of
	// the whole file (deletion vectors remove rows by them).
	RowGroups RowGroupRange
}

// RowGroupRange is a range of row groups of a file, From to To-1; the
// zero value (Set false) is the whole file.
type RowGroupRange struct {
	Set      bool
	From, To int
}

// contains reports whether the range holds row group gi.
func (r RowGroupRange) contains(gi int) bool {
	return !r.Set || (gi >= r.From && gi < r.To)
}

// Batch is a run of consecutive rows of the file, column by column.
//
// Columns and its slices are reused for the next batch once the callback
// returns, unless ReadOptions.Fresh is set: copy what must outlive it. The Values themselves may be kept:
// strings and the element slices of nested values are never reused.
type Batch struct {
	// Len is the number of rows.
	Len int
	// FirstRow is the position in the file of the batch's first row,
	// counting from 0 over all row groups: deletion vectors remove rows
	// by this position.
	FirstRow int64
	// Columns holds one slice per field of the wanted schema, in its
	// order, each Len long.
	Columns [][]schema.Value
}

// Read reads the columns of want from every row of the file, in file
// order, and calls fn with each batch of rows. A batch never spans row
// groups, so it may be shorter than the batch size.
//
// want is a struct of physical fields: its names are the names in the
// file (the caller has applied column mapping) and, with
// opts.ByFieldID, its fields carry delta.columnMapping.id metadata. A
// field absent from the file, at any nesting level, reads as null, as
// does every value of a void field. A field present with a type that
// cannot be read as the wanted one gives a *ColumnError matching
// ErrTypeMismatch before any row is read.
//
// Bytes that cannot be decoded give an error matching deltaerr.ErrCorrupt;
// a cancelled ctx, its error; an error of fn stops the read and is
// returned as is.
func (f *File) Read(ctx context.Context, want *schema.StructType, opts ReadOptions, fn func(b *Batch) error) error {
	if want == nil {
		return fmt.Errorf("datafile: nil schema: %w", deltaerr.ErrInvalidArgument)
	}
	if g := opts.RowGroups; g.Set && (g.From < 0 || g.To < g.From) {
		return fmt.Errorf("datafile: row groups %d to %d: %w", g.From, g.To, deltaerr.ErrInvalidArgument)
	}
	bs := opts.BatchSize
	if bs <= 0 {
		bs = DefaultBatchSize
	}
	b := &binder{byID: opts.ByFieldID, file: f.obj.Name()}
	cols, err := b.bindTop(f.root, want)
	if err != nil {
		return err
	}
	r := &reader{cols: cols, leaves: b.leaves}
	defer r.close()
	if err := f.read(ctx, r, bs, opts, fn); err != nil {
		// A store error, or a decoding failure it caused, is reported as
		// the store's error.
		if ioErr := f.obj.StoreErr(); ioErr != nil && (errors.Is(err, ioErr) || errors.Is(err, deltaerr.ErrCorrupt)) {
			return fmt.Errorf("datafile: reading %s: %w", f.obj.Name(), ioErr)
		}
		return f.named(err)
	}
	return nil
}

// read is Read once the schema is bound.
func (f *File) read(ctx context.Context, r *reader, bs int, opts ReadOptions, fn func(b *Batch) error) error {
	cols := r.cols

	batch := &Batch{Columns: make([][]schema.Value, len(cols))}
	var first int64
	rgs := f.pf.RowGroups()
	for gi, rg := range rgs {
		meta := &f.pf.Metadata().RowGroups[gi]
		numRows := meta.NumRows
		if !opts.RowGroups.contains(gi) {
			first += numRows
			continue
		}
		if err := guard(func() error {
			f.openChunks(ctx, r, rg, meta, gi)
			return nil
		}); err != nil {
			return err
		}
		for done := int64(0); done < numRows; {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := int(min(int64(bs), numRows-done))
			batch.Len, batch.FirstRow = k, first+done
			if err := guard(func() error {
				r.slab = slab{} // values handed out before are the caller's
				if opts.Fresh {
					var all []schema.Value
					if opts.Alloc != nil {
						all = opts.Alloc(k * len(cols))[:k*len(cols)]
					} else {
						all = make([]schema.Value, k*len(cols))
					}
					batch = &Batch{Len: k, FirstRow: batch.FirstRow, Columns: make([][]schema.Value, len(cols))}
					for j := range cols {
						batch.Columns[j] = all[j*k : j*k : (j+1)*k]
					}
				}
				for j, c := range cols {
					if cap(batch.Columns[j]) < k {
						batch.Columns[j] = make([]schema.Value, bs)
					}
					r.fillColumn(c, batch.Columns[j][:k])
					batch.Columns[j] = batch.Columns[j][:k]
				}
				return nil
			}); err != nil {
				return err
			}
			// fn runs outside guard: its panics are its own.
			if err := fn(batch); err != nil {
				return err
			}
			done += int64(k)
		}
		if err := guard(func() error {
			for _, l := range r.leaves {
				if l.More() {
					l.Corruptf("has more values than its row group has rows")
				}
			}
			return nil
		}); err != nil {
			return err
		}
		first += numRows
	}
	return nil
}

// openChunks opens the leaves of r on row group gi, rg with footer entry
// meta, and fetches the column chunks they read: in few requests, before
// any page is decoded.
func (f *File) openChunks(ctx context.Context, r *reader, rg parquet.RowGroup, meta *format.RowGroup, gi int) {
	chunks := rg.ColumnChunks()
	readers := make([]*parquetio.ChunkReader, 0, len(r.leaves))
	for _, l := range r.leaves {
		i := l.node.column
		if i >= len(chunks) || i >= len(meta.Columns) {
			failf("row group %d has no chunk for column %s", gi, l.Name)
		}
		fc, ok := chunks[i].(*parquet.FileColumnChunk)
		if !ok {
			failf("column %s: unexpected chunk type %T", l.Name, chunks[i])
		}
		cr, err := f.obj.Chunk(ctx, &meta.Columns[i], l.Name)
		if err != nil {
			fail(err)
		}
		readers = append(readers, cr)
		l.open(fc.PagesFrom(cr))
	}
	if err := parquetio.Prefetch(readers); err != nil {
		fail(err)
	}
}

// reader is the state of one Read.
type reader struct {
	cols   []*col
	leaves []*leaf
	slab   slab
	// Shredded variants: the buffer a value is built in, and the last
	// metadata parsed with its bytes.
	vbuf     []byte
	vmeta    variant.Metadata
	vmetaRaw string
	vmetaOK  bool
}

func (r *reader) close() {
	for _, l := range r.leaves {
		l.Close()
		putVals(l.vals)
		l.vals = nil
	}
}

// valsPool recycles the page-sized buffers of converted values between
// reads: one read's leaves hand theirs to the next file's. Values left in
// a pooled buffer are only overwritten, never read.
var valsPool sync.Pool

func getVals() []schema.Value {
	if p, ok := valsPool.Get().(*[]schema.Value); ok {
		return (*p)[:0]
	}
	return nil
}

func putVals(v []schema.Value) {
	if cap(v) > 0 {
		v = v[:0]
		valsPool.Put(&v)
	}
}

// fillColumn reads the next len(dst) rows of top-level col c into dst.
func (r *reader) fillColumn(c *col, dst []schema.Value) {
	switch {
	case c.kind == colNull:
		clear(dst)
	case c.kind == colLeaf && c.leaf.MaxRep == 0:
		c.leaf.fill(dst)
	default:
		for i := range dst {
			dst[i] = r.value(c)
		}
	}
}

// value reads one value of c: see col for the invariant.
func (r *reader) value(c *col) schema.Value {
	switch c.kind {
	case colNull:
		return schema.Value{}
	case colLeaf:
		return c.leaf.value()
	}
	d := int(c.probe.Def())
	if d < c.def {
		r.skipAll(c)
		return schema.Value{}
	}
	switch c.kind {
	case colStruct, colVariant:
		fields := r.slab.take(len(c.children))
		for i, cc := range c.children {
			fields[i] = r.value(cc)
		}
		if c.extra != nil {
			c.extra.SkipValue(c.rep)
		}
		if c.kind == colVariant {
			return r.variantValue(c, fields)
		}
		return schema.StructValue(fields)
	case colList, colMap:
		if d < c.repDef {
			r.skipAll(c)
			if c.kind == colList {
				return schema.ArrayValue(r.slab.take(0))
			}
			return schema.MapValue(r.slab.take(0))
		}
		// Elements are gathered in scratch, then moved to the slab: the
		// count is known only at the end. No other value of c runs
		// meanwhile, so scratch is free.
		buf := c.scratch[:0]
		for {
			for _, cc := range c.children {
				buf = append(buf, r.value(cc))
			}
			if c.extra != nil {
				c.extra.SkipValue(c.rep)
			}
			if !c.probe.More() || int(c.probe.Rep()) != c.rep {
				break
			}
		}
		c.scratch = buf
		out := r.slab.take(len(buf))
		copy(out, buf)
		clear(buf)
		if c.kind == colList {
			return schema.ArrayValue(out)
		}
		if c.children[0].kind == colNull {
			failf("map with a null key")
		}
		for i := 0; i < len(out); i += 2 {
			if out[i].IsNull() {
				failf("map with a null key")
			}
		}
		return schema.MapValue(out)
	}
	return schema.Value{}
}

// skipAll moves every leaf of c past the entry of a null or empty value.
func (r *reader) skipAll(c *col) {
	for _, l := range c.leaves {
		l.SkipValue(c.rep)
	}
}

// slab hands out value slices carved from larger blocks, so that nested
// values cost one allocation per block rather than one per value. Blocks
// are never reused: values handed out may be kept.
type slab struct{ free []schema.Value }

const slabBlock = 4096

func (s *slab) take(n int) []schema.Value {
	if n == 0 {
		return []schema.Value{}
	}
	if n > len(s.free) {
		if n >= slabBlock/4 {
			return make([]schema.Value, n)
		}
		s.free = make([]schema.Value, slabBlock)
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	return out
}
