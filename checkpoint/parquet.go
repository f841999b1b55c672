package checkpoint

import (
	"context"
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/parquetio"
	"github.com/godelta/delta/logstore"
)

// pageBuffer is the buffer size of parquet-go's page readers, and the
// number of bytes read from the end of a file to find its footer.
const pageBuffer = 64 << 10

// readParquet reads one Parquet file of a checkpoint (a classic checkpoint,
// a part, a V2 checkpoint or a sidecar), handing the kinds in want to out.
// When follow is set, it returns the sidecar actions found.
func readParquet(ctx context.Context, store logstore.Store, key string, want ActionSet, follow bool, out *emitter) ([]actions.Sidecar, error) {
	info, err := store.Stat(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading %s: %w", key, err)
	}
	obj := parquetio.NewObject(ctx, store, key, info.Size)

	var file *parquet.File
	err = parquetio.Decode(key, "", func() error {
		var err error
		file, err = parquet.OpenFile(obj, info.Size,
			parquet.SkipPageIndex(true),
			parquet.SkipBloomFilters(true),
			parquet.OptimisticRead(true),
			parquet.ReadBufferSize(pageBuffer),
		)
		return err
	})
	if err != nil {
		return nil, obj.Failed(ctx, err, "checkpoint", "not a valid Parquet file")
	}

	src := &source{ctx: ctx, obj: obj}
	defer src.close()
	// fn may still be using the pages of the open groups (a pipelined
	// ReadTransient): wait for it before close releases them, whatever
	// stops the read.
	defer out.drain()
	var tops []*top
	if err := guard(func() error {
		tops = bindTops(src, file.Root(), want, follow)
		return nil
	}); err != nil {
		return nil, obj.Failed(ctx, err, "checkpoint", "not a checkpoint")
	}
	if len(tops) == 0 {
		return nil, nil
	}
	if out.transient {
		// The strings of the actions alias the pages, which the leaves
		// hold until the batch is handed over with them (takeHeld).
		for _, t := range tops {
			for _, l := range t.g.leaves {
				l.Hold, l.raw.Alias = true, true
			}
		}
	}

	metas := file.Metadata().RowGroups
	rgs := file.RowGroups()
	if len(metas) != len(rgs) {
		return nil, &deltaerr.CorruptError{Path: key, Reason: "row groups do not match the footer"}
	}
	var sidecars []actions.Sidecar
	for i, rg := range rgs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		err := guard(func() error {
			src.start(rg, &metas[i])
			for _, t := range tops {
				t.ready = false
				if src.allNull(t.g) {
					t.next, t.ready = -1, true
					continue
				}
				src.openGroup(t.g)
			}
			return nil
		})
		for done := false; err == nil && !done; {
			err = guard(func() error {
				done = fill(tops, out, follow, &sidecars)
				return nil
			})
			if err != nil {
				break
			}
			// fn is called outside guard: its panics are its own.
			if len(out.batch) >= batchSize || done {
				if out.transient {
					out.pages = src.takeHeld(out.pages)
				}
				if ferr := out.flush(); ferr != nil {
					return nil, ferr
				}
			}
		}
		if err != nil {
			return nil, obj.Failed(ctx, err, "checkpoint", fmt.Sprintf("row group %d", i))
		}
		if err := out.drain(); err != nil {
			return nil, err
		}
		src.close()
	}
	return sidecars, nil
}

// fill decodes actions of the current row group into out's batch, in row
// order, until the batch is full or the row group is done; it reports
// which. Sidecar actions are also added to sidecars when follow is set.
func fill(tops []*top, out *emitter, follow bool, sidecars *[]actions.Sidecar) (done bool) {
	for len(out.batch) < batchSize {
		var best *top
		for _, t := range tops {
			if !t.ready {
				t.advance()
			}
			if t.next >= 0 && (best == nil || t.next < best.next) {
				best = t
			}
		}
		if best == nil {
			return true
		}
		// Decode in place: an action on the stack would escape.
		a := &best.scratch
		if best.yield {
			out.batch = append(out.batch, actions.Action{})
			a = &out.batch[len(out.batch)-1]
		}
		*a = actions.Action{}
		best.decode(a)
		best.g.row++
		best.ready = false
		if follow && a.Sidecar != nil {
			// Kept past the batch: its strings must not alias a page.
			sc := *a.Sidecar
			sc.Path = strings.Clone(sc.Path)
			if sc.Tags != nil {
				tags := make(map[string]string, len(sc.Tags))
				for k, v := range sc.Tags {
					tags[strings.Clone(k)] = strings.Clone(v)
				}
				sc.Tags = tags
			}
			*sidecars = append(*sidecars, sc)
		}
	}
	return false
}

// advance finds the next row of the row group that holds an action of t's
// kind and moves t's leaves to it.
func (t *top) advance() {
	g := t.g
	numRows := g.src.numRows
	skipped, ok := g.probe.SkipAbsent(g.def)
	if !ok {
		// No action of this kind is left: every leaf must end with the
		// row group.
		if g.row+skipped != numRows {
			corruptf("column %s has %d rows, its row group %d", g.probe.Name, g.row+skipped, numRows)
		}
		for _, l := range g.leaves {
			if l != g.probe {
				l.SkipRows(numRows - g.row)
				if !l.AtEnd() {
					corruptf("column %s has more rows than its row group", l.Name)
				}
			}
		}
		g.row = numRows
		t.next, t.ready = -1, true
		return
	}
	if skipped > 0 {
		for _, l := range g.leaves {
			if l != g.probe {
				l.SkipRows(skipped)
			}
		}
	}
	g.row += skipped
	if g.row >= numRows {
		corruptf("column %s has more rows than its row group", g.probe.Name)
	}
	t.next, t.ready = g.row, true
}

// start makes rg, with footer entry meta, the current row group.
func (s *source) start(rg parquet.RowGroup, meta *format.RowGroup) {
	s.close()
	n := rg.NumRows()
	if n < 0 || n > 1<<31-1 {
		corruptf("row group of %d rows", n)
	}
	s.rg, s.meta, s.numRows = rg, meta, int(n)
}

// openGroup opens the leaves of g on the current row group, fetching their
// column chunks, and puts g at its first row.
func (s *source) openGroup(g *group) {
	s.opened = append(s.opened, g) // closed by close, even if this fails
	g.row, g.open = 0, true
	chunks := s.rg.ColumnChunks()
	readers := make([]*parquetio.ChunkReader, 0, len(g.leaves))
	for _, l := range g.leaves {
		i := l.col.Index()
		if i < 0 || i >= len(chunks) || i >= len(s.meta.Columns) {
			corruptf("row group has no chunk for column %s", l.Name)
		}
		fc, ok := chunks[i].(*parquet.FileColumnChunk)
		if !ok {
			corruptf("column %s: unexpected chunk type %T", l.Name, chunks[i])
		}
		r, err := s.obj.Chunk(s.ctx, &s.meta.Columns[i], l.Name)
		check(err)
		readers = append(readers, r)
		l.open(parquetio.NewPageAhead(fc.PagesFrom(r), l.File, l.Name))
	}
	check(parquetio.Prefetch(readers))
}

// allNull reports whether the footer's statistics say that no leaf of g
// has a value in the current row group, so that g need not be read: the
// top-level columns of the kinds a checkpoint has few of are null in
// almost every row.
func (s *source) allNull(g *group) bool {
	for _, l := range g.leaves {
		i := l.col.Index()
		if i < 0 || i >= len(s.meta.Columns) {
			return false
		}
		md := &s.meta.Columns[i].MetaData
		// A footer without statistics has a null count of 0.
		if md.NumValues <= 0 || md.Statistics.NullCount != md.NumValues {
			return false
		}
	}
	return true
}

// takeHeld appends to dst the pages the leaves of the open groups have
// left and hold (ReadTransient), for the batch of actions that alias them
// to take along; the emitter releases them once fn is done with it.
func (s *source) takeHeld(dst []parquet.Page) []parquet.Page {
	for _, g := range s.opened {
		for _, l := range g.leaves {
			dst = l.TakeHeld(dst)
		}
	}
	return dst
}

// close closes every group opened on the current row group.
func (s *source) close() {
	for _, g := range s.opened {
		for _, l := range g.leaves {
			l.close()
		}
		g.open = false
	}
	s.opened = s.opened[:0]
}

// seek moves the leaves of g, which is opened on first use, to row.
func (g *group) seek(row int) {
	if !g.open {
		g.src.openGroup(g)
	}
	if row < g.row {
		panic(fmt.Sprintf("checkpoint: internal: %s moved back from row %d to %d", g.name, g.row, row))
	}
	if n := row - g.row; n > 0 {
		for _, l := range g.leaves {
			l.SkipRows(n)
		}
	}
	g.row = row
}
