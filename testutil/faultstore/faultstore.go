// Package faultstore wraps any logstore.Store and makes it misbehave the way
// real storage does, for tests of the layers above it: failures before and
// after an operation took effect, deadlines, delays, transient errors,
// listings that lag behind writes, and a crash of the writing process.
//
// # Design
//
// A Store passes every call to the store it wraps, unless a Rule fires. A
// Rule names the operations (an Op set) and keys (a path.Match glob and/or
// a predicate) it applies to, the fault it injects (a Kind), and when it
// fires: on the Nth matching call, with a probability drawn from the Store's
// seeded generator, or on every matching call, at most Times times. Rules
// are tried in order on each call and the first that fires wins; one call
// gets at most one fault.
//
// The kinds model what a client of a remote store can observe:
//
//   - Before: the call fails and nothing was done (a refused request).
//   - After: the call is done (a write landed), then fails: the caller
//     cannot tell it from Before. This is the ambiguous outcome that Delta
//     commits must settle by reading back.
//   - Deadline: as After, but the error is context.DeadlineExceeded.
//   - Transient: as Before, with an error marked ErrTransient (a 503).
//   - Delay: the call waits Rule.Delay (or until ctx ends), then runs.
//   - Lag: a write is done and succeeds, but the key is hidden from the
//     next Rule.Lag listings that would show it (a listing that lags).
//   - Crash: the process stops before this call: the call and every later
//     call on this Store fail with ErrCrashed and do nothing.
//   - CrashAfter: the call is done, then the process stops as for Crash.
//
// No injected error is ever logstore.ErrNotFound or ErrAlreadyExists, so a
// caller that treats those as answers never mistakes a fault for one. A
// write that was done and then failed matches logstore.ErrOutcomeUnknown. Every
// injected error is an *Error; errors.Is reports ErrInjected for all but
// crashes, and ErrTransient, context.DeadlineExceeded or ErrCrashed as the
// kind says.
//
// Crash lets a test stop a writer at a chosen point and then look at what
// it left, through the wrapped store (Unwrap), as a new process would. A
// crashed Store stays crashed.
//
// Counts reports how many faults of each kind were injected, so a test can
// check that the faults it asked for reached the code under test.
//
// With one goroutine, a seed and a list of rules give the same faults on
// every run. With several, which call gets which draw depends on the
// scheduler; tests print the seed, and the invariants they check must hold
// for any interleaving.
//
// A Store is safe for concurrent use; SetEnabled, Crash and AddRule may be
// called while other goroutines use it.
package faultstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/godelta/delta/logstore"
)

// Op is a set of Store operations.
type Op uint16

// The operations. Reads and Writes are the usual groups; AllOps is every
// operation.
const (
	OpGet Op = 1 << iota
	OpGetRange
	OpStat
	OpList
	OpPutIfAbsent
	OpPut
	OpDelete
	// OpWriterClose is the Close of a Writer from NewWriter: the point at
	// which a streamed write lands. A Before or Transient fault aborts the
	// inner writer; After, Deadline and CrashAfter fail the Close after the
	// object landed.
	OpWriterClose

	Reads  = OpGet | OpGetRange | OpStat | OpList
	Writes = OpPutIfAbsent | OpPut | OpDelete | OpWriterClose
	AllOps = Reads | Writes
)

var opNames = []string{"get", "get range", "stat", "list", "put if absent", "put", "delete", "writer close"}

func (o Op) String() string {
	var names []string
	for i, n := range opNames {
		if o&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// Kind is a kind of fault. See the package doc.
type Kind uint8

// The fault kinds. Their order is that of Counts.
const (
	None Kind = iota
	Before
	After
	Deadline
	Transient
	Delay
	Lag
	Crash
	CrashAfter
	numKinds
)

var kindNames = [numKinds]string{"none", "before", "after", "deadline", "transient", "delay", "lag", "crash", "crash-after"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Kinds lists every fault kind, for reports.
func Kinds() []Kind {
	return []Kind{Before, After, Deadline, Transient, Delay, Lag, Crash, CrashAfter}
}

// Errors injected faults wrap.
var (
	// ErrInjected marks every injected failure but a crash.
	ErrInjected = errors.New("faultstore: injected fault")
	// ErrTransient marks a Transient fault: nothing was done, and trying
	// again may succeed.
	ErrTransient = errors.New("faultstore: transient error")
	// ErrCrashed is returned by every call from a crash on.
	ErrCrashed = errors.New("faultstore: process crashed")
)

// Error is an injected fault as a caller sees it.
type Error struct {
	Op   Op
	Key  string // the key, or the directory for List
	Kind Kind
	// Done reports whether the operation took effect.
	Done bool
}

func (e *Error) Error() string {
	done := "not done"
	if e.Done {
		done = "done"
	}
	return fmt.Sprintf("faultstore: %s %q: injected %s fault (%s)", e.Op, e.Key, e.Kind, done)
}

// Unwrap returns the sentinels the fault matches. A write that was done and
// then failed (After, Deadline, CrashAfter on a write) also matches
// logstore.ErrOutcomeUnknown, as a real store's lost answer does.
func (e *Error) Unwrap() []error {
	var errs []error
	switch e.Kind {
	case Crash, CrashAfter:
		errs = []error{ErrCrashed}
	case Transient:
		errs = []error{ErrInjected, ErrTransient}
	case Deadline:
		errs = []error{ErrInjected, context.DeadlineExceeded}
	default:
		errs = []error{ErrInjected}
	}
	if e.Done && e.Op&Writes != 0 {
		errs = append(errs, logstore.ErrOutcomeUnknown)
	}
	return errs
}

// Rule says which calls get which fault. The zero Ops means AllOps; an
// empty Key and nil Match match every key.
type Rule struct {
	Ops   Op
	Key   string            // a path.Match glob on the whole key (or List dir); "" matches all
	Match func(string) bool // further filter on the key, if not nil
	Kind  Kind

	// When it fires, among the calls it matches: the Nth (1-based) when Nth
	// > 0; else each with probability Prob when Prob > 0; else every one.
	// Times > 0 caps how often it fires.
	Nth   int
	Prob  float64
	Times int

	Delay time.Duration // for Delay
	Lag   int           // for Lag: how many listings hide the key; 0 means 1
}

type rule struct {
	Rule
	matched, fired int
}

func (r *rule) matches(op Op, key string) bool {
	ops := r.Ops
	if ops == 0 {
		ops = AllOps
	}
	if ops&op == 0 {
		return false
	}
	if r.Key != "" {
		if ok, _ := path.Match(r.Key, key); !ok {
			return false
		}
	}
	return r.Match == nil || r.Match(key)
}

// Store is a fault-injecting logstore.Store. See the package doc.
type Store struct {
	inner logstore.Store

	mu      sync.Mutex
	rng     *rand.Rand
	rules   []*rule
	enabled bool
	crashed bool
	hidden  map[string]int // key -> listings left that hide it
	counts  [numKinds]int64
	calls   int64
}

var _ logstore.Store = (*Store)(nil)

// New wraps inner. seed drives the probabilistic rules.
func New(inner logstore.Store, seed uint64, rules ...Rule) *Store {
	s := &Store{inner: inner, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), enabled: true, hidden: map[string]int{}}
	for _, r := range rules {
		s.AddRule(r)
	}
	return s
}

// AddRule appends a rule.
func (s *Store) AddRule(r Rule) {
	s.mu.Lock()
	s.rules = append(s.rules, &rule{Rule: r})
	s.mu.Unlock()
}

// SetEnabled turns fault injection on or off. A crashed Store stays
// crashed, and keys hidden from listings stay hidden until their lag ends.
func (s *Store) SetEnabled(on bool) {
	s.mu.Lock()
	s.enabled = on
	s.mu.Unlock()
}

// Crash stops the process now: every later call fails with ErrCrashed.
func (s *Store) Crash() {
	s.mu.Lock()
	if !s.crashed {
		s.crashed = true
		s.counts[Crash]++
	}
	s.mu.Unlock()
}

// Crashed reports whether the Store has crashed.
func (s *Store) Crashed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.crashed
}

// Counts returns how many faults of each kind were injected.
func (s *Store) Counts() map[Kind]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[Kind]int64{}
	for k, n := range s.counts {
		if n > 0 {
			out[Kind(k)] = n
		}
	}
	return out
}

// Calls returns how many calls the Store has received.
func (s *Store) Calls() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Unwrap returns the wrapped store.
func (s *Store) Unwrap() logstore.Store { return s.inner }

// URI implements logstore.Store: the wrapped store's URI.
func (s *Store) URI() string { return s.inner.URI() }

// Close implements logstore.Store: it closes the wrapped store, with no
// fault injected.
func (s *Store) Close() error { return s.inner.Close() }

// NewWriter implements logstore.Store. Opening the writer and its Writes
// pass through (a crashed Store refuses them); its Close is an operation
// OpWriterClose, which rules may fail as any write. Abort always passes
// through.
func (s *Store) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	if s.Crashed() {
		return nil, &Error{Op: OpWriterClose, Key: key, Kind: Crash}
	}
	w, err := s.inner.NewWriter(ctx, key)
	if err != nil {
		return nil, err
	}
	return &writer{s: s, ctx: ctx, key: key, w: w}, nil
}

// writer is a Writer of the inner store whose Close may get a fault.
type writer struct {
	s   *Store
	ctx context.Context
	key string
	w   logstore.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	if w.s.Crashed() {
		_ = w.w.Abort()
		return 0, &Error{Op: OpWriterClose, Key: w.key, Kind: Crash}
	}
	return w.w.Write(p)
}

func (w *writer) Close() error {
	closed := false
	err := w.s.run(w.ctx, OpWriterClose, w.key, func() error {
		closed = true
		return w.w.Close()
	})
	if !closed {
		_ = w.w.Abort() // the fault came first: nothing lands
	}
	return err
}

func (w *writer) Abort() error { return w.w.Abort() }

// decide picks the fault for one call, or returns a crash error.
func (s *Store) decide(op Op, key string) (*rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.crashed {
		return nil, &Error{Op: op, Key: key, Kind: Crash}
	}
	if !s.enabled {
		return nil, nil
	}
	for _, r := range s.rules {
		if !r.matches(op, key) {
			continue
		}
		r.matched++
		if r.Times > 0 && r.fired >= r.Times {
			continue
		}
		var fire bool
		switch {
		case r.Nth > 0:
			fire = r.matched == r.Nth
		case r.Prob > 0:
			fire = s.rng.Float64() < r.Prob
		default:
			fire = true
		}
		if !fire {
			continue
		}
		r.fired++
		s.counts[r.Kind]++
		if r.Kind == Crash {
			s.crashed = true
			return nil, &Error{Op: op, Key: key, Kind: Crash}
		}
		return r, nil
	}
	return nil, nil
}

// run performs one call of op on key: do is the call on the inner store.
func (s *Store) run(ctx context.Context, op Op, key string, do func() error) error {
	r, err := s.decide(op, key)
	if err != nil {
		return err
	}
	if r == nil {
		return do()
	}
	switch r.Kind {
	case Before, Transient:
		return &Error{Op: op, Key: key, Kind: r.Kind}
	case Delay:
		if err := wait(ctx, r.Delay); err != nil {
			return fmt.Errorf("faultstore: %s %q: %w", op, key, err)
		}
		return do()
	case After, Deadline:
		if err := do(); err != nil {
			return err
		}
		return &Error{Op: op, Key: key, Kind: r.Kind, Done: true}
	case Lag:
		if err := do(); err != nil || op&(OpPut|OpPutIfAbsent|OpWriterClose) == 0 {
			return err
		}
		s.mu.Lock()
		s.hidden[key] = max(r.Lag, 1)
		s.mu.Unlock()
		return nil
	case CrashAfter:
		err := do()
		s.mu.Lock()
		s.crashed = true
		s.mu.Unlock()
		if err != nil {
			return err
		}
		return &Error{Op: op, Key: key, Kind: CrashAfter, Done: true}
	}
	return do()
}

func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Get implements logstore.Store.
func (s *Store) Get(ctx context.Context, key string) (data []byte, err error) {
	err = s.run(ctx, OpGet, key, func() error {
		data, err = s.inner.Get(ctx, key)
		return err
	})
	if err != nil {
		return nil, err
	}
	return data, nil
}

// GetRange implements logstore.Store.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) (data []byte, err error) {
	err = s.run(ctx, OpGetRange, key, func() error {
		data, err = s.inner.GetRange(ctx, key, offset, length)
		return err
	})
	if err != nil {
		return nil, err
	}
	return data, nil
}

// Stat implements logstore.Store.
func (s *Store) Stat(ctx context.Context, key string) (info logstore.ObjectInfo, err error) {
	err = s.run(ctx, OpStat, key, func() error {
		info, err = s.inner.Stat(ctx, key)
		return err
	})
	if err != nil {
		return logstore.ObjectInfo{}, err
	}
	return info, nil
}

// PutIfAbsent implements logstore.Store.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	return s.run(ctx, OpPutIfAbsent, key, func() error { return s.inner.PutIfAbsent(ctx, key, data) })
}

// Put implements logstore.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	return s.run(ctx, OpPut, key, func() error { return s.inner.Put(ctx, key, data) })
}

// Delete implements logstore.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	return s.run(ctx, OpDelete, key, func() error { return s.inner.Delete(ctx, key) })
}

// List implements logstore.Store. Before and Transient faults fail the
// listing at its start; After and Deadline fail it after the objects were
// yielded; a crash while the loop runs stops it with ErrCrashed. Keys
// hidden by a Lag fault are left out, and each listing of a hidden key
// counts down its lag.
func (s *Store) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		r, err := s.decide(OpList, dir)
		if err != nil {
			yield(logstore.ObjectInfo{}, err)
			return
		}
		kind := None
		if r != nil {
			kind = r.Kind
		}
		switch kind {
		case Before, Transient:
			yield(logstore.ObjectInfo{}, &Error{Op: OpList, Key: dir, Kind: kind})
			return
		case Delay:
			if err := wait(ctx, r.Delay); err != nil {
				yield(logstore.ObjectInfo{}, fmt.Errorf("faultstore: list %q: %w", dir, err))
				return
			}
		}
		for info, err := range s.inner.List(ctx, dir, startAfter) {
			if err != nil {
				yield(info, err)
				return
			}
			if s.Crashed() {
				yield(logstore.ObjectInfo{}, &Error{Op: OpList, Key: dir, Kind: Crash})
				return
			}
			if s.hide(info.Key) {
				continue
			}
			if !yield(info, nil) {
				return
			}
		}
		switch kind {
		case After, Deadline:
			yield(logstore.ObjectInfo{}, &Error{Op: OpList, Key: dir, Kind: kind, Done: true})
		case CrashAfter:
			s.mu.Lock()
			s.crashed = true
			s.mu.Unlock()
			yield(logstore.ObjectInfo{}, &Error{Op: OpList, Key: dir, Kind: CrashAfter, Done: true})
		}
	}
}

// hide reports whether a listing must leave key out, counting down its lag.
func (s *Store) hide(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.hidden[key]
	if !ok {
		return false
	}
	if n <= 1 {
		delete(s.hidden, key)
	} else {
		s.hidden[key] = n - 1
	}
	return true
}
