package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/parquetio"
	"github.com/godelta/delta/logstore"
)

// ActionSet selects the action kinds a [Read] yields. Columns of the kinds
// not selected are not read at all.
type ActionSet uint

// The action kinds a checkpoint can hold.
const (
	Protocol ActionSet = 1 << iota
	Metadata
	Add
	Remove
	Txn
	DomainMetadata
	Sidecar
	CheckpointMetadata

	// All selects every kind above.
	All = Protocol | Metadata | Add | Remove | Txn | DomainMetadata | Sidecar | CheckpointMetadata
)

// batchSize is the most actions handed to fn in one call.
const batchSize = 4096

// sidecarDir is the directory of V2 sidecar files, relative to the
// directory that holds the checkpoint (_delta_log).
const sidecarDir = "_sidecars"

// Read streams the actions of one checkpoint to fn.
//
// parts are store keys: the one file of a classic checkpoint
// (_delta_log/<v>.checkpoint.parquet), every part of a multi-part checkpoint
// in part order, or the one file of a UUID-named V2 checkpoint
// (_delta_log/<v>.checkpoint.<uuid>.json or .parquet). Keys ending in ".json"
// are read as newline-delimited JSON actions, all others as Parquet.
//
// Only the kinds in want are yielded, and only their columns read. When
// want holds Add or Remove, the sidecar files named by the checkpoint's
// sidecar actions are read after the checkpoint itself, and their adds and
// removes yielded too; the sidecar actions themselves are yielded only if
// want holds Sidecar.
//
// fn receives the actions in file order, in batches of at most a few
// thousand, at most one Parquet row group at a time. fn must not keep the
// batch slice, which Read reuses once fn returns; the actions' pointers
// (*actions.Add and so on) may be kept. Maps in the actions may be shared
// between actions and must not be modified. An error from fn stops the read
// and is returned as is.
//
// Bytes that cannot be decoded give a *deltaerr.CorruptError; a missing
// file gives the store's error, which wraps logstore.ErrNotFound. A sidecar
// path that leaves the sidecar directory is corrupt and also matches
// deltaerr.ErrPathEscapesRoot; an absolute sidecar URI, which this version
// does not follow, matches deltaerr.ErrPathEscapesRoot only.
func Read(ctx context.Context, store logstore.Store, parts []string, want ActionSet, fn func(batch []actions.Action) error) error {
	return read(ctx, store, parts, want, nil, withoutAux(fn), false)
}

// ReadTransient is [Read] for a caller that copies what it keeps of each
// batch before fn returns: the strings of the actions (paths, stats,
// partition values and every other string, in maps too) may alias the
// decoder's pages, and are valid only until fn returns. It saves a copy of
// every string column's pages (for a checkpoint of a million files, some
// 400 MB of copying and allocation). Maps are still shared between actions
// and read-only; a map returned for more than one batch has strings of its
// own. With GOMAXPROCS above one, fn is called on a goroutine of
// ReadTransient's, one batch at a time and in order, while the next batch
// is decoded (the package doc's "Concurrency" says how it stops).
func ReadTransient(ctx context.Context, store logstore.Store, parts []string, want ActionSet, fn func(batch []actions.Action) error) error {
	return read(ctx, store, parts, want, nil, withoutAux(fn), true)
}

// ReadTransientPrepared is [ReadTransient] with prep, which the decoding
// goroutine calls with each batch before it hands the batch, with what
// prep returned for it, to fn: work on a batch that needs nothing of fn's
// state is done there, while fn works on the batch before (with
// GOMAXPROCS at one, prep is called just before fn, on the caller's
// goroutine). The batch's strings are valid in prep as they are in fn.
// prep gets back, for reuse, what it returned for a batch that fn is done
// with (the zero P when there is none yet). An error of prep stops the
// read as a decoding error does, and is returned as is.
func ReadTransientPrepared[P any](ctx context.Context, store logstore.Store, parts []string, want ActionSet, prep func(batch []actions.Action, reuse P) (P, error), fn func(batch []actions.Action, prepared P) error) error {
	prepAny := func(batch []actions.Action, reuse any) (any, error) {
		r, _ := reuse.(P) // nil at first: the zero P
		return prep(batch, r)
	}
	fnAny := func(batch []actions.Action, prepared any) error {
		p, _ := prepared.(P)
		return fn(batch, p)
	}
	return read(ctx, store, parts, want, prepAny, fnAny, true)
}

// withoutAux adapts a callback of Read to the emitter's, which also
// takes what prep made of the batch (nothing, without prep).
func withoutAux(fn func([]actions.Action) error) func([]actions.Action, any) error {
	return func(batch []actions.Action, _ any) error { return fn(batch) }
}

func read(ctx context.Context, store logstore.Store, parts []string, want ActionSet, prep func([]actions.Action, any) (any, error), fn func([]actions.Action, any) error, transient bool) (err error) {
	if len(parts) == 0 {
		return fmt.Errorf("checkpoint: no checkpoint files given: %w", deltaerr.ErrInvalidArgument)
	}
	if want&All == 0 {
		return nil
	}
	follow := want&(Add|Remove) != 0
	out := &emitter{ctx: ctx, prep: prep, fn: fn, transient: transient}
	if transient && runtime.GOMAXPROCS(0) > 1 {
		out.startPipe()
		defer func() { err = out.stopPipe(err) }()
	} else {
		out.batch = make([]actions.Action, 0, 256)
	}
	var sidecars []actions.Sidecar
	for _, key := range parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		var found []actions.Sidecar
		var err error
		if strings.HasSuffix(key, ".json") {
			found, err = readJSON(ctx, store, key, want, follow, out)
		} else {
			found, err = readParquet(ctx, store, key, want, follow, out)
		}
		if err != nil {
			return err
		}
		sidecars = append(sidecars, found...)
	}
	for i := range sidecars {
		if err := ctx.Err(); err != nil {
			return err
		}
		key, err := sidecarKey(parts[0], sidecars[i].Path)
		if err != nil {
			return err
		}
		if _, err := readParquet(ctx, store, key, want&(Add|Remove), false, out); err != nil {
			return err
		}
	}
	return nil
}

// emitter collects actions into batches for fn.
//
// A transient read (ReadTransient) on more than one core is a pipeline of
// two goroutines: the caller's decodes (and calls prep, if any), and a
// consumer started by startPipe calls fn, so that the next batch is
// decoded while fn works on the last. The pages a batch's strings alias go with it (pages) and
// are released by the consumer once fn has returned. Two batches exist,
// one with fn and one being filled: the decoder waits for fn to give one
// back before it fills another, so at most two batches' pages are held
// beyond the cursors' current ones. The pages the cursors still hold are
// released only when the consumer has caught up (drain).
type emitter struct {
	ctx context.Context // checked before each batch
	// prep, when set, is called on each batch by the decoder before fn
	// (ReadTransientPrepared); what it returns goes to fn with the batch.
	prep  func([]actions.Action, any) (any, error)
	fn    func([]actions.Action, any) error
	batch []actions.Action
	// aux is what prep returned for the last batch fn is done with, given
	// back to prep for reuse.
	aux any
	// pages are the pages the batch's strings alias (transient only):
	// released once fn is done with the batch.
	pages []parquet.Page
	// transient lets the actions' strings alias the decoder's pages,
	// which are then held until fn is done with the batch (ReadTransient).
	transient bool
	pipe      *pipe // nil when fn is called on the decoder's goroutine
}

// pipe is the consumer side of a pipelined emitter.
type pipe struct {
	full chan handoff // batches for the consumer, in order
	free chan handoff // batches the consumer is done with
	// failed is closed by the consumer once fn has failed; err (and
	// panicked, for a panic of fn) is set before.
	failed   chan struct{}
	err      error
	panicked any
	// quit, set by the decoder when it gives up, makes the consumer skip
	// fn for the batches still queued.
	quit atomic.Bool
	done chan struct{} // closed when the consumer has ended
	// out is the number of batches sent and not yet back (decoder side).
	out   int
	spare []handoff // batches back from the consumer (decoder side)
}

// handoff is a batch, the pages its strings alias, and what prep made of
// it.
type handoff struct {
	batch []actions.Action
	pages []parquet.Page
	aux   any
}

// pipeBatches is the number of batches of a pipelined emitter.
const pipeBatches = 2

// startPipe starts the consumer.
func (e *emitter) startPipe() {
	p := &pipe{
		full:   make(chan handoff, pipeBatches),
		free:   make(chan handoff, pipeBatches),
		failed: make(chan struct{}),
		done:   make(chan struct{}),
	}
	for range pipeBatches - 1 {
		p.spare = append(p.spare, handoff{batch: make([]actions.Action, 0, 256)})
	}
	e.batch = make([]actions.Action, 0, 256)
	e.pipe = p
	go p.consume(e.ctx, e.fn)
}

// consume calls fn on each batch sent, until full is closed, and gives
// the batches back with their pages released. After fn fails, or once ctx
// is cancelled, it only releases them.
func (p *pipe) consume(ctx context.Context, fn func([]actions.Action, any) error) {
	defer close(p.done)
	failed := false
	for h := range p.full {
		if !failed && !p.quit.Load() {
			err := ctx.Err() // fn sees no batch once the read is cancelled
			var v any
			if err == nil {
				v, err = callFn(fn, h.batch, h.aux)
			}
			if v != nil {
				err = errPanicked
			}
			if err != nil {
				p.err, p.panicked, failed = err, v, true
				close(p.failed)
			}
		}
		// The actions are not cleared: the decoder overwrites them as it
		// fills the batch again, at once, and clearing 4096 of them here,
		// with the collector's write barrier on for much of a large read,
		// cost the consumer, the longer side of the pipe, more than the
		// decoder's filling did.
		h.batch = h.batch[:0]
		h.pages = releasePages(h.pages)
		p.free <- h // never blocks: free holds every batch
	}
}

// errPanicked is the error of a pipe whose fn panicked; the panic itself
// is raised again on the caller's goroutine.
var errPanicked = errors.New("checkpoint: fn panicked")

// callFn calls fn, returning the value of its panic, if any, to be raised
// again on the caller's goroutine.
func callFn(fn func([]actions.Action, any) error, batch []actions.Action, aux any) (panicked any, err error) {
	defer func() {
		if v := recover(); v != nil {
			panicked = v
		}
	}()
	return nil, fn(batch, aux)
}

// stopPipe waits for the consumer to finish the batches sent and end, and
// returns the read's error: err, the decoder's, or else fn's. A panic of
// fn is raised again here.
func (e *emitter) stopPipe(err error) error {
	p := e.pipe
	if err != nil {
		p.quit.Store(true)
	}
	close(p.full)
	<-p.done
	e.pages = releasePages(e.pages)
	if p.panicked != nil {
		panic(p.panicked)
	}
	if err == nil {
		err = p.err
	}
	return err
}

// releasePages releases pages and returns the slice emptied.
func releasePages(pages []parquet.Page) []parquet.Page {
	for i, pg := range pages {
		parquet.Release(pg)
		pages[i] = nil
	}
	return pages[:0]
}

// add appends a to the batch, handing the batch to fn when it is full.
func (e *emitter) add(a actions.Action) error {
	e.batch = append(e.batch, a)
	if len(e.batch) >= batchSize {
		return e.flush()
	}
	return nil
}

// flush hands the pending actions, and the pages they alias, to fn. On a
// pipe, fn may still be working on them when flush returns; the error is
// then that of an earlier batch.
func (e *emitter) flush() error {
	if len(e.batch) == 0 {
		return nil
	}
	if err := e.ctx.Err(); err != nil {
		return err
	}
	p := e.pipe
	if p != nil {
		select {
		case <-p.failed:
			return p.err
		default:
		}
	}
	aux := e.aux
	if e.prep != nil {
		var err error
		if aux, err = e.prep(e.batch, e.aux); err != nil {
			if p == nil { // else stopPipe releases them
				e.pages = releasePages(e.pages)
			}
			return err
		}
	}
	if p == nil {
		err := e.fn(e.batch, aux)
		clear(e.batch) // let the actions go once fn is done with them
		e.batch, e.aux = e.batch[:0], aux
		e.pages = releasePages(e.pages)
		return err
	}
	p.full <- handoff{batch: e.batch, pages: e.pages, aux: aux} // never blocks: full holds every batch
	p.out++
	if len(p.spare) == 0 {
		if err := p.take(); err != nil {
			e.batch, e.pages = nil, nil // sent
			return err
		}
	}
	h := p.spare[len(p.spare)-1]
	p.spare = p.spare[:len(p.spare)-1]
	e.batch, e.pages, e.aux = h.batch, h.pages, h.aux
	return nil
}

// take waits for the consumer to give a batch back. It fails only if the
// consumer has ended before the read did: fn called runtime.Goexit (as
// t.FailNow does).
func (p *pipe) take() error {
	select {
	case h := <-p.free:
		p.spare = append(p.spare, h)
		p.out--
		return nil
	case <-p.done:
		select {
		case h := <-p.free: // given back just before it ended
			p.spare = append(p.spare, h)
			p.out--
			return nil
		default:
			return errConsumerExited
		}
	}
}

// errConsumerExited is the error of a pipe whose fn ended its goroutine.
var errConsumerExited = errors.New("checkpoint: the goroutine calling fn exited")

// drain waits until fn is done with every batch sent, so that the pages
// the cursors still hold may be released, and returns fn's error.
func (e *emitter) drain() error {
	p := e.pipe
	if p == nil {
		return nil
	}
	for p.out > 0 {
		if err := p.take(); err != nil {
			return err
		}
	}
	select {
	case <-p.failed:
		return p.err
	default:
		return nil
	}
}

// sidecarKey returns the store key of the sidecar file named p in a sidecar
// action of the checkpoint at key from: p, percent-decoded, under the
// _sidecars directory next to the checkpoint.
func sidecarKey(from, p string) (string, error) {
	u, err := url.Parse(p)
	if err != nil || p == "" {
		return "", &deltaerr.CorruptError{Path: from, Reason: fmt.Sprintf("sidecar path %q is not a valid URI", p), Err: err}
	}
	if u.Scheme != "" || u.Host != "" || strings.HasPrefix(u.Path, "/") {
		// An absolute URI may well point into this table's _sidecars
		// directory, but nothing here knows the table's own URI to tell.
		return "", fmt.Errorf("checkpoint: %s: sidecar path %q is absolute, which is not supported: %w", from, p, deltaerr.ErrPathEscapesRoot)
	}
	for seg := range strings.SplitSeq(u.Path, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", &deltaerr.CorruptError{
				Path:   from,
				Reason: fmt.Sprintf("sidecar path %q leaves the sidecar directory", p),
				Err:    deltaerr.ErrPathEscapesRoot,
			}
		}
	}
	return path.Join(path.Dir(from), sidecarDir, u.Path), nil
}

// readJSON reads a V2 checkpoint in its JSON form, returning the sidecar
// actions found when follow is set.
func readJSON(ctx context.Context, store logstore.Store, key string, want ActionSet, follow bool, out *emitter) ([]actions.Sidecar, error) {
	var sidecars []actions.Sidecar
	err := actions.ReadActions(key, logstore.NewWindowReader(ctx, store, key, 0), func(a *actions.Action) error {
		if follow && a.Sidecar != nil {
			sidecars = append(sidecars, *a.Sidecar)
		}
		if f := filter(a, want); !f.IsEmpty() {
			return out.add(f)
		}
		return nil
	})
	if err == nil {
		err = out.flush()
	}
	if err != nil {
		return nil, err
	}
	return sidecars, nil
}

// filter returns a with only the kinds in want set.
func filter(a *actions.Action, want ActionSet) actions.Action {
	var f actions.Action
	if want&Protocol != 0 {
		f.Protocol = a.Protocol
	}
	if want&Metadata != 0 {
		f.Metadata = a.Metadata
	}
	if want&Add != 0 {
		f.Add = a.Add
	}
	if want&Remove != 0 {
		f.Remove = a.Remove
	}
	if want&Txn != 0 {
		f.Txn = a.Txn
	}
	if want&DomainMetadata != 0 {
		f.DomainMetadata = a.DomainMetadata
	}
	if want&Sidecar != 0 {
		f.Sidecar = a.Sidecar
	}
	if want&CheckpointMetadata != 0 {
		f.CheckpointMetadata = a.CheckpointMetadata
	}
	return f
}

// corruptf aborts decoding because the bytes break a rule; the file is
// named when the abort becomes an error (object.failed).
func corruptf(format string, args ...any) {
	parquetio.Fail(fmt.Errorf(format, args...))
}

// check aborts decoding with err unless it is nil.
func check(err error) { parquetio.Check(err) }

// guard runs f, turning an abort of the decoder (corruptf, check, the
// page cursor's checks) into its error. It recovers nothing else: the
// calls of parquet-go on file bytes are wrapped by parquetio.Decode
// where they are made, and any other panic is a bug.
func guard(f func() error) error { return parquetio.Catch(f) }
