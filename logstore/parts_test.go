package logstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/godelta/delta/logstore"
)

// fakeUploader is a PartUploader that records its calls, keeps the bytes
// of the parts, and counts the parts in flight: any other call made while
// a part is in flight, and any second part in flight, is an overlap.
type fakeUploader struct {
	fail  map[string]error      // by call name: "put", "begin", "part 2", "complete", "abort"
	block map[int]chan struct{} // part n waits for its channel to close

	mu       sync.Mutex
	calls    []string
	object   []byte         // what Put stored, or Complete assembled
	parts    map[int][]byte // copies of the parts, by number
	buffers  map[*byte]bool // the backing arrays the parts came in
	overlaps []string       // calls made while a part was in flight
	abortErr error          // the context's error when Abort ran
	inFlight atomic.Int32   // parts between the start and end of Part
	maxParts atomic.Int32   // the most parts in flight at once
}

func newFake() *fakeUploader {
	return &fakeUploader{fail: map[string]error{}, block: map[int]chan struct{}{},
		parts: map[int][]byte{}, buffers: map[*byte]bool{}}
}

// record notes a call and whether a part was in flight during it.
func (f *fakeUploader) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	if f.inFlight.Load() != 0 && !strings.HasPrefix(call, "part ") {
		f.overlaps = append(f.overlaps, call)
	}
	name, _, _ := strings.Cut(call, " ")
	if name == "part" {
		name = strings.Join(strings.Fields(call)[:2], " ")
	}
	return f.fail[name]
}

func (f *fakeUploader) Put(ctx context.Context, data []byte) error {
	if err := f.record(fmt.Sprintf("put %d", len(data))); err != nil {
		return err
	}
	f.mu.Lock()
	f.object = bytes.Clone(data)
	f.mu.Unlock()
	return nil
}

func (f *fakeUploader) Begin(ctx context.Context) error { return f.record("begin") }

func (f *fakeUploader) Part(ctx context.Context, n int, data []byte) (string, error) {
	if k := f.inFlight.Add(1); k > f.maxParts.Load() {
		f.maxParts.Store(k)
	}
	defer f.inFlight.Add(-1)
	err := f.record(fmt.Sprintf("part %d %d", n, len(data)))
	if ch := f.block[n]; ch != nil {
		<-ch
	}
	f.mu.Lock()
	f.parts[n] = bytes.Clone(data)
	if len(data) > 0 {
		f.buffers[&data[:1][0]] = true
	}
	f.mu.Unlock()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("id%d", n), nil
}

func (f *fakeUploader) Complete(ctx context.Context, ids []string) error {
	if err := f.record("complete " + strings.Join(ids, ",")); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.object = nil
	for i := range ids {
		f.object = append(f.object, f.parts[i+1]...)
	}
	return nil
}

func (f *fakeUploader) Abort(ctx context.Context) error {
	f.mu.Lock()
	f.abortErr = ctx.Err()
	f.mu.Unlock()
	return f.record("abort")
}

// check fails t on any overlap, more than one part in flight, or more
// than two part buffers.
func (f *fakeUploader) check(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.overlaps) > 0 {
		t.Errorf("calls while a part was in flight: %v", f.overlaps)
	}
	if n := f.maxParts.Load(); n > 1 {
		t.Errorf("%d parts in flight at once, want at most 1", n)
	}
	if len(f.buffers) > 2 {
		t.Errorf("parts came in %d buffers, want at most 2", len(f.buffers))
	}
}

func (f *fakeUploader) callList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

var (
	errClosed  = errors.New("test: closed")
	errAborted = errors.New("test: aborted")
	errBoom    = errors.New("test: boom")
)

// wrapped is the error PartConfig.Wrap makes in these tests.
type wrapped struct{ err error }

func (w *wrapped) Error() string { return "wrapped: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

func testConfig(size, maxParts int) logstore.PartConfig {
	return logstore.PartConfig{Size: size, MaxParts: maxParts, Unit: "blocks",
		Wrap:   func(err error) error { return &wrapped{err} },
		Closed: errClosed, Aborted: errAborted}
}

// seq returns n bytes 0, 1, 2, ...
func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// TestPartWriterCalls checks the requests a Writer makes for objects of
// no, one and several parts, written in pieces of every size, and that
// the object assembled from them is the bytes written.
func TestPartWriterCalls(t *testing.T) {
	tests := []struct {
		name   string
		size   int // of the object
		pieces int // of the Writes; 0 writes the object at once
		want   []string
	}{
		{"Empty", 0, 0, []string{"put 0"}},
		{"LessThanOnePart", 3, 1, []string{"put 3"}},
		{"OnePart", 4, 0, []string{"put 4"}},
		{"OnePartAndAByte", 5, 0, []string{"begin", "part 1 4", "part 2 1", "complete id1,id2"}},
		{"TwoParts", 8, 3, []string{"begin", "part 1 4", "part 2 4", "complete id1,id2"}},
		{"ManyParts", 18, 1, []string{"begin", "part 1 4", "part 2 4", "part 3 4", "part 4 4", "part 5 2",
			"complete id1,id2,id3,id4,id5"}},
		{"ManyPartsBigPieces", 18, 7, []string{"begin", "part 1 4", "part 2 4", "part 3 4", "part 4 4", "part 5 2",
			"complete id1,id2,id3,id4,id5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			w := logstore.NewPartWriter(t.Context(), testConfig(4, 0), f)
			data := seq(tc.size)
			step := tc.pieces
			if step == 0 {
				step = max(1, len(data))
			}
			for rest := data; len(rest) > 0; {
				k := min(step, len(rest))
				if n, err := w.Write(rest[:k]); n != k || err != nil {
					t.Fatalf("Write(%d bytes) = %d, %v", k, n, err)
				}
				rest = rest[k:]
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if got := f.callList(); !slices.Equal(got, tc.want) {
				t.Errorf("calls = %q, want %q", got, tc.want)
			}
			if !bytes.Equal(f.object, data) {
				t.Errorf("object = %v, want %v", f.object, data)
			}
			f.check(t)
			// Done: Write and Close return Closed, Abort does nothing.
			if _, err := w.Write([]byte("x")); err != errClosed {
				t.Errorf("Write after Close = %v, want %v", err, errClosed)
			}
			if err := w.Close(); err != errClosed {
				t.Errorf("second Close = %v, want %v", err, errClosed)
			}
			if err := w.Abort(); err != nil {
				t.Errorf("Abort after Close = %v", err)
			}
			if got := f.callList(); len(got) != len(tc.want) {
				t.Errorf("calls after Close: %q", got[len(tc.want):])
			}
		})
	}
}

// TestPartWriterFailures checks that a failed request, or too many parts,
// ends the writer with the wrapped cause, and aborts an upload that was
// begun (and only one that was).
func TestPartWriterFailures(t *testing.T) {
	tests := []struct {
		name     string
		fail     map[string]error
		maxParts int
		size     int  // bytes written in one Write before Close
		inWrite  bool // the failure is Write's, not Close's
		wantN    int  // what that Write returns
		want     []string
		msg      string // in the error
	}{
		{name: "Put", fail: map[string]error{"put": errBoom}, size: 3,
			want: []string{"put 3"}},
		{name: "Begin", fail: map[string]error{"begin": errBoom}, size: 9, inWrite: true, wantN: 4,
			want: []string{"begin"}},
		{name: "FirstPart", fail: map[string]error{"part 1": errBoom}, size: 9, inWrite: true, wantN: 8,
			want: []string{"begin", "part 1 4", "abort"}},
		{name: "LastPart", fail: map[string]error{"part 2": errBoom}, size: 5,
			want: []string{"begin", "part 1 4", "part 2 1", "abort"}},
		{name: "Complete", fail: map[string]error{"complete": errBoom}, size: 5,
			want: []string{"begin", "part 1 4", "part 2 1", "complete id1,id2", "abort"}},
		{name: "TooManyParts", maxParts: 2, size: 13, inWrite: true, wantN: 12,
			want: []string{"begin", "part 1 4", "part 2 4", "abort"}, msg: "more than 2 blocks of 4 bytes"},
		{name: "AbortToo", fail: map[string]error{"part 1": errBoom, "abort": errAborted}, size: 9,
			inWrite: true, wantN: 8, want: []string{"begin", "part 1 4", "abort"},
			msg: "(and aborting the upload: test: aborted)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.fail = tc.fail
			w := logstore.NewPartWriter(t.Context(), testConfig(4, tc.maxParts), f)
			n, werr := w.Write(seq(tc.size))
			cerr := w.Close()
			err := cerr
			if tc.inWrite {
				if werr == nil || n != tc.wantN {
					t.Fatalf("Write = %d, %v, want %d and an error", n, werr, tc.wantN)
				}
				if cerr != werr {
					t.Errorf("Close after a failed Write = %v, want %v", cerr, werr)
				}
				err = werr
			} else if werr != nil || n != tc.size {
				t.Fatalf("Write = %d, %v", n, werr)
			}
			var wr *wrapped
			if !errors.As(err, &wr) {
				t.Errorf("error %v is not the config's Wrap of the cause", err)
			}
			if tc.msg == "" && !errors.Is(err, errBoom) {
				t.Errorf("error %v is not the request's", err)
			}
			if !strings.Contains(fmt.Sprint(err), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			if tc.fail["abort"] != nil && !errors.Is(err, tc.fail["abort"]) {
				t.Errorf("error %v is not also Abort's", err)
			}
			if err := w.Abort(); err != nil {
				t.Errorf("Abort after a failure = %v", err)
			}
			if _, err2 := w.Write([]byte("x")); err2 != err {
				t.Errorf("Write after the failure = %v, want %v", err2, err)
			}
			if got := f.callList(); !slices.Equal(got, tc.want) {
				t.Errorf("calls = %q, want %q", got, tc.want)
			}
			f.check(t)
		})
	}
}

// TestPartWriterAbort checks Abort before anything was sent, after parts,
// and twice, and that Write and Close after it return the Aborted error.
func TestPartWriterAbort(t *testing.T) {
	tests := []struct {
		name string
		size int
		want []string
	}{
		{"NothingSent", 3, nil},
		{"FullBufferNotSent", 4, nil},
		{"AfterParts", 9, []string{"begin", "part 1 4", "part 2 4", "abort"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			w := logstore.NewPartWriter(t.Context(), testConfig(4, 0), f)
			if _, err := w.Write(seq(tc.size)); err != nil {
				t.Fatal(err)
			}
			if err := w.Abort(); err != nil {
				t.Fatalf("Abort: %v", err)
			}
			if err := w.Abort(); err != nil {
				t.Fatalf("second Abort: %v", err)
			}
			if err := w.Close(); err != errAborted {
				t.Errorf("Close after Abort = %v, want %v", err, errAborted)
			}
			if _, err := w.Write([]byte("x")); err != errAborted {
				t.Errorf("Write after Abort = %v, want %v", err, errAborted)
			}
			if got := f.callList(); !slices.Equal(got, tc.want) {
				t.Errorf("calls = %q, want %q", got, tc.want)
			}
			if f.abortErr != nil {
				t.Errorf("Abort ran on a done context: %v", f.abortErr)
			}
			f.check(t)
		})
	}
}

// TestPartWriterAbortWaitsForPartInFlight blocks part 1 and checks that
// neither Abort nor the abort of a failure reaches the uploader before the
// part has ended. synctest.Wait returns once every goroutine of the test
// is blocked, so no timing is involved.
func TestPartWriterAbortWaitsForPartInFlight(t *testing.T) {
	tests := []struct {
		name string
		stop func(w logstore.Writer, cancel context.CancelFunc) error
		want error // of stop
	}{
		{"Abort", func(w logstore.Writer, _ context.CancelFunc) error { return w.Abort() }, nil},
		{"CancelledWrite", func(w logstore.Writer, cancel context.CancelFunc) error {
			cancel()
			_, err := w.Write([]byte("x"))
			return err
		}, context.Canceled},
		{"CancelledClose", func(w logstore.Writer, cancel context.CancelFunc) error {
			cancel()
			return w.Close()
		}, context.Canceled},
		{"FailedPart", func(w logstore.Writer, _ context.CancelFunc) error { return w.Close() }, errBoom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake()
				release := make(chan struct{})
				f.block[1] = release
				if tc.want == errBoom {
					f.fail["part 1"] = errBoom
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				w := logstore.NewPartWriter(ctx, testConfig(4, 0), f)
				if _, err := w.Write(seq(5)); err != nil { // part 1 in flight
					t.Fatal(err)
				}
				stopped := make(chan error, 1)
				go func() { stopped <- tc.stop(w, cancel) }()
				synctest.Wait()
				if got, want := f.callList(), []string{"begin", "part 1 4"}; !slices.Equal(got, want) {
					t.Errorf("calls while part 1 is in flight = %q, want %q", got, want)
				}
				close(release)
				err := <-stopped
				if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
					t.Errorf("stop = %v, want %v", err, tc.want)
				}
				if got, want := f.callList(), []string{"begin", "part 1 4", "abort"}; !slices.Equal(got, want) {
					t.Errorf("calls = %q, want %q", got, want)
				}
				if f.abortErr != nil {
					t.Errorf("Abort ran on a done context: %v", f.abortErr)
				}
				f.check(t)
			})
		})
	}
}

// TestPartWriterCancelledBeforeSending checks that a ctx cancelled before
// anything was sent fails Write and Close with its error and sends nothing.
func TestPartWriterCancelledBeforeSending(t *testing.T) {
	for _, op := range []string{"Write", "Close"} {
		t.Run(op, func(t *testing.T) {
			f := newFake()
			ctx, cancel := context.WithCancel(t.Context())
			w := logstore.NewPartWriter(ctx, testConfig(4, 0), f)
			if _, err := w.Write(seq(3)); err != nil {
				t.Fatal(err)
			}
			cancel()
			var err error
			if op == "Write" {
				_, err = w.Write(seq(1))
			} else {
				err = w.Close()
			}
			var wr *wrapped
			if !errors.Is(err, context.Canceled) || !errors.As(err, &wr) {
				t.Errorf("%s = %v, want the wrapped %v", op, err, context.Canceled)
			}
			if err2 := w.Close(); err2 != err {
				t.Errorf("Close after = %v, want %v", err2, err)
			}
			if got := f.callList(); len(got) != 0 {
				t.Errorf("calls = %q, want none", got)
			}
		})
	}
}

// TestPartWriterOnePartInFlight blocks parts 1 and 2 and checks that the
// Write that fills the second buffer does not send part 2 before part 1
// has ended, and then Write goes on while part 2 is in flight.
func TestPartWriterOnePartInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		release1, release2 := make(chan struct{}), make(chan struct{})
		f.block[1], f.block[2] = release1, release2
		w := logstore.NewPartWriter(t.Context(), testConfig(4, 0), f)
		wrote := make(chan error, 1)
		go func() {
			_, err := w.Write(seq(10)) // parts 1 and 2, and 2 bytes
			wrote <- err
		}()
		synctest.Wait()
		if got, want := f.callList(), []string{"begin", "part 1 4"}; !slices.Equal(got, want) {
			t.Errorf("calls while part 1 is in flight = %q, want %q", got, want)
		}
		if n := f.inFlight.Load(); n != 1 {
			t.Errorf("%d parts in flight, want 1", n)
		}
		close(release1)
		if err := <-wrote; err != nil { // returns with part 2 in flight
			t.Fatal(err)
		}
		synctest.Wait()
		if got, want := f.callList(), []string{"begin", "part 1 4", "part 2 4"}; !slices.Equal(got, want) {
			t.Errorf("calls while part 2 is in flight = %q, want %q", got, want)
		}
		close(release2)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.object, seq(10)) {
			t.Errorf("object = %v, want %v", f.object, seq(10))
		}
		f.check(t)
	})
}
