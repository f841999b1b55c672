package write

import (
	"bytes"
	"errors"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/godelta/delta/schema"
)

// ColumnObserver is a SortKey whose Observe reads only the values of some
// top-level columns of a row. A sorted rewrite may then call Observe on a
// goroutine of its own, while the next rows are read and staged: one row
// at a time and in read order as always, with every other value of the
// row null. The values observed are the sorter's own copies: Observe may
// keep them (a sample, say) once it returns.
type ColumnObserver interface {
	SortKey
	// ObservedColumns returns the indexes in the row of the columns
	// Observe reads.
	ObservedColumns() []int
}

// observeBatch is how many full chunks the staging goroutine gathers
// before it sends them to the observer.
const observeBatch = 32

// observer calls SortKey.Observe for the sorter (see ColumnObserver) on a
// goroutine of its own: a curve's sampling then runs on the other core
// while the files are read and staged (with the sample taken on the
// reading goroutine, it was a quarter of the staging pass).
//
// The staging goroutine sends it the chunks it has filled, in order; a
// chunk once sent is never written again until a sync (which the sorter
// calls before it spills, reuses or drops chunks) has returned: sync
// sends every chunk not yet sent, the last one too, and waits until each
// has been observed. The observer decodes each record's values up to the
// last column observed, nulls the others, and copies what may alias the
// chunk's page (strings, binaries, nested values) before Observe sees it,
// since pages are reused. The first error of Observe (or its panic,
// raised again by sync on the staging goroutine) ends the observing;
// later chunks are passed over, and sync reports it.
type observer struct {
	key      SortKey
	observed []bool // by column index, up to the last observed
	work     chan []*recChunk
	synced   chan struct{} // a sync's answer
	done     chan struct{} // closed when the goroutine has ended
	failed   atomic.Bool   // err or panicked is set (seen by the stager early)
	err      error         // the first error of Observe (observer side, read after a sync)
	panicked any           // a panic of Observe, likewise

	sent    int  // chunks of the sorter's sent (staging side)
	stopped bool // work is closed (staging side)
}

// newObserver returns a running observer for key, when key reads known
// columns within the first kw of a row and another core can run it; nil
// otherwise (the sorter then observes on its own goroutine).
func newObserver(key SortKey, kw int) *observer {
	co, ok := key.(ColumnObserver)
	if !ok || runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	cols := co.ObservedColumns()
	if len(cols) == 0 || slices.Min(cols) < 0 || slices.Max(cols) >= kw {
		return nil
	}
	o := &observer{
		key:      key,
		observed: make([]bool, slices.Max(cols)+1),
		work:     make(chan []*recChunk, 4),
		synced:   make(chan struct{}),
		done:     make(chan struct{}),
	}
	for _, j := range cols {
		o.observed[j] = true
	}
	go o.run()
	return o
}

// run observes the rows of the chunks sent until work is closed. A nil
// batch is a sync: it is answered once every earlier chunk is observed.
func (o *observer) run() {
	defer close(o.done)
	row := make([]schema.Value, len(o.observed))
	for batch := range o.work {
		if batch == nil {
			o.synced <- struct{}{}
			continue
		}
		if !o.failed.Load() {
			o.observeChunks(batch, row)
		}
	}
}

// observeChunks observes the rows of batch; a failure is kept in err or
// panicked.
func (o *observer) observeChunks(batch []*recChunk, row []schema.Value) {
	defer func() {
		if r := recover(); r != nil {
			o.panicked = r
			o.failed.Store(true)
		}
	}()
	for _, c := range batch {
		off := 0
		var rec []byte
		for range c.n {
			rec, off = c.next(off)
			if err := o.observe(rec, row); err != nil {
				o.err = err
				o.failed.Store(true)
				return
			}
		}
	}
}

// observe calls Observe with the observed values of the record rec.
func (o *observer) observe(rec []byte, row []schema.Value) error {
	n, err := decodeRecord(rec, row)
	if err != nil {
		return errRun
	}
	owned := false
	for j := range row {
		switch {
		case !o.observed[j]:
			row[j] = schema.Value{}
		case !owned && mayAlias(row[j].Kind()):
			// Decode again from a copy of the record's bytes, which the
			// values may keep.
			if _, err := decodeRecord(bytes.Clone(rec[:n]), row); err != nil {
				return errRun
			}
			owned = true
			for i := range j {
				if !o.observed[i] {
					row[i] = schema.Value{}
				}
			}
		}
	}
	return o.key.Observe(row)
}

// mayAlias reports whether a decoded value of kind k may share the bytes
// it was decoded from.
func mayAlias(k schema.Kind) bool {
	switch k {
	case schema.KindNull, schema.KindBoolean, schema.KindByte, schema.KindShort, schema.KindInteger, schema.KindLong,
		schema.KindFloat, schema.KindDouble, schema.KindDate, schema.KindTimestamp, schema.KindTimestampNTZ:
		return false
	}
	return true
}

// staged is called by the sorter after it staged a row in chunks: the full
// chunks not yet sent go to the observer once there are observeBatch of
// them. It returns the observer's failure, when it has failed.
func (o *observer) staged(chunks []*recChunk) error {
	if o.failed.Load() {
		return o.sync(chunks)
	}
	if full := len(chunks) - 1; full-o.sent >= observeBatch {
		o.work <- slices.Clone(chunks[o.sent:full])
		o.sent = full
	}
	return nil
}

// sync sends every chunk not yet sent, the last one too, and waits until
// all are observed: the chunks can then be spilled, reused or dropped (and
// sent counts from 0 again). It returns the observer's failure, raising
// again a panic of Observe.
func (o *observer) sync(chunks []*recChunk) error {
	if o.stopped {
		return errors.New("write: sort: rows staged after the observer stopped")
	}
	if o.sent < len(chunks) {
		o.work <- slices.Clone(chunks[o.sent:])
	}
	o.work <- nil
	<-o.synced
	o.sent = 0
	if o.panicked != nil {
		o.stop()
		panic(o.panicked)
	}
	return o.err
}

// stop ends the observer's goroutine and waits for it. Idempotent.
func (o *observer) stop() {
	if o.stopped {
		return
	}
	o.stopped = true
	close(o.work)
	<-o.done
}
