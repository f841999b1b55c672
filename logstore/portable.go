package logstore

import (
	"context"
	"errors"
	"iter"
	"sync/atomic"
)

// Portable is the one implementation of Store, over a Driver. It makes the
// checks every backend needs (keys, dirs, ranges, a done context, use after
// Close) once, before the driver is called, and wraps every error in an
// *OpError that names the operation and key and carries the portable kind
// the driver's ErrorKind gives. See the package doc.
//
// A Portable is safe for concurrent use by multiple goroutines.
type Portable struct {
	d      Driver
	keys   KeyChecker // d's own key check, or nil
	closed atomic.Bool
}

var _ Store = (*Portable)(nil)

// NewPortable returns the Store over d. Backend constructors call it; d is
// owned by the Portable from then on (its Close closes d).
func NewPortable(d Driver) *Portable {
	p := &Portable{d: d}
	p.keys, _ = d.(KeyChecker)
	return p
}

// Driver returns the driver under p. Prefer DriverOf, which also looks
// through wrappers.
func (p *Portable) Driver() Driver { return p.d }

// OpError is the error of every Portable method: the operation, the key
// (the dir for List), the portable kind (nil when none applies) and the
// driver's error. errors.Is matches the kind; errors.As reaches the driver's
// error.
type OpError struct {
	Op   string // "get", "get range", "stat", "list", "put if absent", "put", "delete", "new writer", "write", "close"
	Key  string
	Kind error
	Err  error
}

func (e *OpError) Error() string {
	s := "logstore: " + e.Op
	if e.Key != "" {
		s += " " + quote(e.Key)
	}
	if e.Kind != nil && !errors.Is(e.Err, e.Kind) {
		s += ": " + e.Kind.Error()
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the kind and the driver's error.
func (e *OpError) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// writes are the operations that change the store, for which an error may
// leave the outcome unknown.
var writes = map[string]bool{"put if absent": true, "put": true, "delete": true, "write": true, "close": true}

// wrap turns an error of the driver into an *OpError with its kind.
func (p *Portable) wrap(ctx context.Context, op, key string, err error) error {
	if err == nil {
		return nil
	}
	kind := p.d.ErrorKind(err)
	if kind == nil {
		kind = KindOf(err)
	}
	switch {
	case kind == ErrOutcomeUnknown && !writes[op] && !errors.Is(err, ErrOutcomeUnknown):
		kind = nil // a read changes nothing: its outcome is just an error
	case kind == nil && writes[op] && ctx.Err() != nil:
		kind = ErrOutcomeUnknown // cancelled midway: it may have landed
	}
	return &OpError{Op: op, Key: key, Kind: kind, Err: err}
}

// check makes the shared checks of an operation on key: open store, valid
// key, live ctx, in that order.
func (p *Portable) check(ctx context.Context, op, key string) error {
	if p == nil || p.d == nil {
		return &OpError{Op: op, Key: key, Kind: ErrClosed, Err: errors.New("nil store")}
	}
	if p.closed.Load() {
		return &OpError{Op: op, Key: key, Kind: ErrClosed}
	}
	if err := CheckKey(key); err != nil {
		return &OpError{Op: op, Err: err}
	}
	if p.keys != nil {
		if err := p.keys.CheckKey(key); err != nil {
			return &OpError{Op: op, Err: err}
		}
	}
	if err := ctx.Err(); err != nil {
		return &OpError{Op: op, Key: key, Err: err}
	}
	return nil
}

// Get implements Store.
func (p *Portable) Get(ctx context.Context, key string) ([]byte, error) {
	if err := p.check(ctx, "get", key); err != nil {
		return nil, err
	}
	b, err := p.d.Get(ctx, key)
	if err != nil {
		return nil, p.wrap(ctx, "get", key, err)
	}
	return b, nil
}

// GetRange implements Store.
func (p *Portable) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if err := p.check(ctx, "get range", key); err != nil {
		return nil, err
	}
	if err := CheckRange(offset, length); err != nil {
		return nil, &OpError{Op: "get range", Key: key, Err: err}
	}
	b, err := p.d.GetRange(ctx, key, offset, length)
	if err != nil {
		return nil, p.wrap(ctx, "get range", key, err)
	}
	if int64(len(b)) > length {
		b = b[:length] // a driver that over-read; the contract is exact
	}
	return b, nil
}

// Stat implements Store.
func (p *Portable) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if err := p.check(ctx, "stat", key); err != nil {
		return ObjectInfo{}, err
	}
	info, err := p.d.Stat(ctx, key)
	if err != nil {
		return ObjectInfo{}, p.wrap(ctx, "stat", key, err)
	}
	return info, nil
}

// List implements Store. The checks run when iteration starts; ctx is
// checked again before each object is yielded, so a cancelled listing stops
// with ctx's error.
func (p *Portable) List(ctx context.Context, dir, startAfter string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		if err := p.checkDir(ctx, dir); err != nil {
			yield(ObjectInfo{}, err)
			return
		}
		for info, err := range p.d.List(ctx, dir, startAfter) {
			if err != nil {
				yield(ObjectInfo{}, p.wrap(ctx, "list", dir, err))
				return
			}
			if err := ctx.Err(); err != nil {
				yield(ObjectInfo{}, &OpError{Op: "list", Key: dir, Err: err})
				return
			}
			if !yield(info, nil) {
				return
			}
		}
	}
}

func (p *Portable) checkDir(ctx context.Context, dir string) error {
	if p == nil || p.d == nil {
		return &OpError{Op: "list", Key: dir, Kind: ErrClosed, Err: errors.New("nil store")}
	}
	if p.closed.Load() {
		return &OpError{Op: "list", Key: dir, Kind: ErrClosed}
	}
	if err := CheckDir(dir); err != nil {
		return &OpError{Op: "list", Err: err}
	}
	if p.keys != nil && dir != "" {
		if err := p.keys.CheckKey(dir[:len(dir)-1]); err != nil {
			return &OpError{Op: "list", Err: err}
		}
	}
	if err := ctx.Err(); err != nil {
		return &OpError{Op: "list", Key: dir, Err: err}
	}
	return nil
}

// PutIfAbsent implements Store.
func (p *Portable) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := p.check(ctx, "put if absent", key); err != nil {
		return err
	}
	return p.wrap(ctx, "put if absent", key, p.d.PutIfAbsent(ctx, key, data))
}

// Put implements Store.
func (p *Portable) Put(ctx context.Context, key string, data []byte) error {
	if err := p.check(ctx, "put", key); err != nil {
		return err
	}
	return p.wrap(ctx, "put", key, p.d.Put(ctx, key, data))
}

// Delete implements Store.
func (p *Portable) Delete(ctx context.Context, key string) error {
	if err := p.check(ctx, "delete", key); err != nil {
		return err
	}
	return p.wrap(ctx, "delete", key, p.d.Delete(ctx, key))
}

// NewWriter implements Store: the driver's own streaming Writer, behind the
// portable checks.
func (p *Portable) NewWriter(ctx context.Context, key string) (Writer, error) {
	if err := p.check(ctx, "new writer", key); err != nil {
		return nil, err
	}
	w, err := p.d.NewWriter(ctx, key)
	if err != nil {
		return nil, p.wrap(ctx, "new writer", key, err)
	}
	return &portableWriter{p: p, ctx: ctx, key: key, w: w}, nil
}

// URI implements Store: the driver's URI, even after Close.
func (p *Portable) URI() string {
	if p == nil || p.d == nil {
		return ""
	}
	return p.d.URI()
}

// Close implements Store: it closes the driver, once.
func (p *Portable) Close() error {
	if p == nil || p.d == nil || p.closed.Swap(true) {
		return nil
	}
	if err := p.d.Close(); err != nil {
		return &OpError{Op: "close", Kind: p.d.ErrorKind(err), Err: err}
	}
	return nil
}

// portableWriter wraps a driver's Writer: it checks for a closed store and
// wraps errors as the other methods do.
type portableWriter struct {
	p   *Portable
	ctx context.Context
	key string
	w   Writer
}

func (w *portableWriter) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	return n, w.p.wrap(w.ctx, "write", w.key, err)
}

func (w *portableWriter) Close() error {
	if w.p.closed.Load() {
		_ = w.w.Abort()
		return &OpError{Op: "close", Key: w.key, Kind: ErrClosed}
	}
	return w.p.wrap(w.ctx, "close", w.key, w.w.Close())
}

func (w *portableWriter) Abort() error { return w.p.wrap(w.ctx, "abort", w.key, w.w.Abort()) }
