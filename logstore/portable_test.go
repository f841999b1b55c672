package logstore_test

import (
	"context"
	"errors"
	"io/fs"
	"iter"
	"strings"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
)

// spyDriver is a Driver that records its calls and fails each with err,
// which its ErrorKind classifies as kind.
type spyDriver struct {
	calls     []string
	err, kind error
	closed    int
}

func (d *spyDriver) call(op string) error { d.calls = append(d.calls, op); return d.err }

func (d *spyDriver) Get(ctx context.Context, key string) ([]byte, error) {
	return nil, d.call("get")
}

func (d *spyDriver) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	return nil, d.call("get range")
}

func (d *spyDriver) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	return logstore.ObjectInfo{}, d.call("stat")
}

func (d *spyDriver) List(ctx context.Context, dir, after string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		if err := d.call("list"); err != nil {
			yield(logstore.ObjectInfo{}, err)
		}
	}
}

func (d *spyDriver) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	return d.call("put if absent")
}

func (d *spyDriver) Put(ctx context.Context, key string, data []byte) error {
	return d.call("put")
}

func (d *spyDriver) Delete(ctx context.Context, key string) error { return d.call("delete") }
func (d *spyDriver) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	return nil, d.call("new writer")
}
func (d *spyDriver) URI() string               { return "spy://root" }
func (d *spyDriver) Close() error              { d.closed++; return nil }
func (d *spyDriver) ErrorKind(err error) error { return d.kind }

// ops calls every Store method once on key and returns the errors by
// operation.
func ops(ctx context.Context, s logstore.Store, key string) map[string]error {
	errs := map[string]error{}
	_, errs["get"] = s.Get(ctx, key)
	_, errs["get range"] = s.GetRange(ctx, key, 0, 1)
	_, errs["stat"] = s.Stat(ctx, key)
	for _, err := range s.List(ctx, key+"/", "") {
		errs["list"] = err
	}
	errs["put if absent"] = s.PutIfAbsent(ctx, key, nil)
	errs["put"] = s.Put(ctx, key, nil)
	errs["delete"] = s.Delete(ctx, key)
	_, errs["new writer"] = s.NewWriter(ctx, key)
	return errs
}

// TestPortableChecks checks that refused calls never reach the driver.
func TestPortableChecks(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		key   string
		close bool
		want  error
	}{
		{"invalid key", t.Context(), "a/../b", false, logstore.ErrInvalidKey},
		{"cancelled", cancelled, "a", false, context.Canceled},
		{"closed", t.Context(), "a", true, logstore.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &spyDriver{}
			p := logstore.NewPortable(d)
			if tc.close {
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
			}
			for op, err := range ops(tc.ctx, p, tc.key) {
				var oe *logstore.OpError
				if !errors.Is(err, tc.want) || !errors.As(err, &oe) || oe.Op != op {
					t.Errorf("%s = %v, want an *OpError for %q matching %v", op, err, op, tc.want)
				}
				if errors.Is(err, logstore.ErrOutcomeUnknown) {
					t.Errorf("%s = %v: a refused call is not of unknown outcome", op, err)
				}
			}
			if len(d.calls) != 0 {
				t.Errorf("driver called for %v", d.calls)
			}
		})
	}
	d := &spyDriver{}
	p := logstore.NewPortable(d)
	if _, err := p.GetRange(t.Context(), "a", -1, 1); !errors.Is(err, logstore.ErrInvalidRange) || len(d.calls) != 0 {
		t.Errorf("GetRange(-1) = %v, driver calls %v; want ErrInvalidRange and no call", err, d.calls)
	}
	p.Close()
	p.Close()
	if d.closed != 1 {
		t.Errorf("driver closed %d times, want once", d.closed)
	}
	if p.URI() != "spy://root" {
		t.Errorf("URI = %q", p.URI())
	}
}

// TestPortableKinds checks that driver errors get the kind ErrorKind gives,
// keep the driver's error reachable, and that ErrOutcomeUnknown is kept for
// writes only.
func TestPortableKinds(t *testing.T) {
	driverErr := &fs.PathError{Op: "open", Path: "x", Err: errors.New("boom")}
	writes := map[string]bool{"put if absent": true, "put": true, "delete": true}
	for _, kind := range []error{logstore.ErrNotFound, logstore.ErrRootNotFound, logstore.ErrPermission, logstore.ErrOutcomeUnknown, nil} {
		d := &spyDriver{err: driverErr, kind: kind}
		p := logstore.NewPortable(d)
		for op, err := range ops(t.Context(), p, "k") {
			var pe *fs.PathError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), `"k`) {
				t.Errorf("%s = %v, want the driver's error and the key", op, err)
			}
			want := kind
			if kind == logstore.ErrOutcomeUnknown && !writes[op] {
				want = nil
			}
			if got := logstore.KindOf(err); got != want {
				t.Errorf("kind %v: %s = %v, of kind %v; want %v", kind, op, err, got, want)
			}
		}
	}
}

// TestPortableCancelledWrite checks that a write whose ctx ends while the
// driver runs may have landed.
func TestPortableCancelledWrite(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	d := &cancellingDriver{spyDriver: spyDriver{err: context.Canceled}, cancel: cancel}
	p := logstore.NewPortable(d)
	err := p.PutIfAbsent(ctx, "k", nil)
	if !errors.Is(err, logstore.ErrOutcomeUnknown) || !errors.Is(err, context.Canceled) || errors.Is(err, logstore.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent cancelled midway = %v, want ErrOutcomeUnknown and context.Canceled", err)
	}
}

type cancellingDriver struct {
	spyDriver
	cancel func()
}

func (d *cancellingDriver) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	d.cancel()
	return d.call("put if absent")
}

// TestOpen checks dispatch by scheme and the unknown-scheme error.
func TestOpen(t *testing.T) {
	ctx := t.Context()
	s, err := logstore.Open(ctx, "mem://TestOpen")
	if err != nil || s.URI() != "memory://TestOpen" {
		t.Fatalf("Open(mem://TestOpen) = %v, %v", s, err)
	}
	for _, tc := range []struct{ uri, hint string }{
		{"s3://b/p?secret=x", `import _ "github.com/godelta/delta/logstore/s3"`},
		{"abfss://c@a.dfs.core.windows.net/p", `import _ "github.com/godelta/delta/logstore/azblob"`},
		{"gs://b", `logstore/gcs"`},
		{"ftp://h/p", "(registered: mem, memory)"},
	} {
		_, err := logstore.Open(ctx, tc.uri)
		var se *logstore.SchemeError
		if !errors.Is(err, logstore.ErrUnknownScheme) || !errors.As(err, &se) || !strings.Contains(err.Error(), tc.hint) || strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) = %v, want ErrUnknownScheme saying %s, without the query", tc.uri, err, tc.hint)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Register of memory did not panic")
		}
	}()
	logstore.Register("MEMORY", memory.Open)
}

// TestDriverOf checks that DriverOf looks through the portable layer and
// wrappers.
func TestDriverOf(t *testing.T) {
	d := memory.NewDriver()
	p := logstore.NewPortable(d)
	for _, s := range []logstore.Store{p, wrapper{p}, wrapper{wrapper{p}}} {
		if got, ok := logstore.DriverOf[*memory.Store](s); !ok || got != d {
			t.Errorf("DriverOf(%T) = %v, %v", s, got, ok)
		}
	}
	if _, ok := logstore.DriverOf[*spyDriver](p); ok {
		t.Error("DriverOf found a driver of the wrong type")
	}
}

type wrapper struct{ logstore.Store }

func (w wrapper) Unwrap() logstore.Store { return w.Store }
