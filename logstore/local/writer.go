package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/godelta/delta/logstore"
)

// NewWriter returns a logstore.Writer that streams the object at key into
// a new temporary file in the key's directory (named as every temporary
// file of this package, so hidden from List and refused as a key). Close
// syncs the file, renames it over the key (an atomic replace, as Put does)
// and syncs the directory; Abort, or a failure anywhere, removes the
// temporary file. ctx is checked at every Write and at Close: once it is
// cancelled, the next call removes the temporary file and returns its
// error.
//
// The key's directory is reached as for every write, without going through
// a symbolic link (see the package doc), and held open until the writer is
// done; Close refuses a symbolic link at the key instead of renaming over
// it.
func (s *Store) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	d, name, f, err := s.tempIn(key)
	if err != nil {
		return nil, wrap("new writer", key, err)
	}
	return &writer{s: s, ctx: ctx, key: key, d: d, name: name, f: f}, nil
}

// writer is the Writer of NewWriter. It keeps the key's directory open
// (d), as the walk beneath the root found it, until it is done, so that
// the rename at Close is made there. f is nil once the writer is done:
// closed, aborted or failed.
type writer struct {
	s    *Store
	ctx  context.Context
	key  string
	d    *dir
	name string // the key's last name, in d
	f    *os.File
	err  error // the error that ended the writer, returned again
}

var errWriterClosed = errors.New("logstore/local: writer is closed")

// Write implements io.Writer.
func (w *writer) Write(b []byte) (int, error) {
	if w.f == nil {
		return 0, w.doneErr()
	}
	if err := w.ctx.Err(); err != nil {
		return 0, w.fail(err)
	}
	n, err := w.f.Write(b)
	if err != nil {
		return n, w.fail(err)
	}
	return n, nil
}

// Close makes the object visible at the key, replacing any object there.
func (w *writer) Close() error {
	if w.f == nil {
		return w.doneErr()
	}
	if err := w.ctx.Err(); err != nil {
		return w.fail(err)
	}
	f, tmp := w.f, filepath.Base(w.f.Name())
	var err error
	if w.s.sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	defer w.d.close()
	if err == nil {
		err = checkNotLink(w.d, w.name)
	}
	if err == nil {
		err = w.d.rename(tmp, w.name)
	}
	if err != nil {
		w.d.remove(tmp)
		w.err = wrap("write", w.key, err)
		return w.err
	}
	w.err = errWriterClosed
	if err := w.s.syncD(w.d); err != nil {
		// The object is in place but may not be durable.
		return wrap("write", w.key, err)
	}
	return nil
}

// Abort removes the temporary file. It may be called at any time, any
// number of times; after a successful Close it does nothing.
func (w *writer) Abort() error {
	if w.f == nil {
		return nil
	}
	w.f.Close()
	err := w.d.remove(filepath.Base(w.f.Name()))
	w.d.close()
	w.f = nil
	w.err = fmt.Errorf("logstore/local: write %q: aborted", w.key)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrap("abort", w.key, err)
	}
	return nil
}

// fail ends the writer with err, removing the temporary file.
func (w *writer) fail(err error) error {
	w.Abort()
	w.err = wrap("write", w.key, err)
	return w.err
}

func (w *writer) doneErr() error {
	if w.err == nil {
		return errWriterClosed
	}
	return w.err
}
