package snapshot

import (
	"context"
	"sync"
)

// lazy is a value computed on first use, once, however many goroutines ask
// for it at the same time: one of them computes it while the others wait.
//
// A failed computation is not remembered. The error goes to the caller
// whose attempt failed (and to no one else); the goroutines that were
// waiting on it try again, each with its own context, and so does the next
// caller. A cancelled context or a transient store error therefore never
// poisons the snapshot; a log that is truly corrupt fails the same way on
// every call, at the cost of reading it again. A waiter whose own context
// ends stops waiting and returns its context's error.
type lazy[T any] struct {
	mu   sync.Mutex
	ok   bool
	val  T
	busy chan struct{} // closed when the running attempt ends; nil when none runs
}

// get returns the value, computing it with compute if no earlier call did.
func (l *lazy[T]) get(ctx context.Context, compute func(context.Context) (T, error)) (T, error) {
	for {
		l.mu.Lock()
		if l.ok {
			v := l.val
			l.mu.Unlock()
			return v, nil
		}
		if ch := l.busy; ch != nil {
			l.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				var zero T
				return zero, ctx.Err()
			}
		}
		ch := make(chan struct{})
		l.busy = ch
		l.mu.Unlock()
		return l.run(ctx, ch, compute)
	}
}

// run is one attempt; it always ends the attempt, even if compute panics
// (the waiters then try again).
func (l *lazy[T]) run(ctx context.Context, ch chan struct{}, compute func(context.Context) (T, error)) (T, error) {
	var v T
	ok := false
	defer func() {
		l.mu.Lock()
		if ok {
			l.val, l.ok = v, true
		}
		l.busy = nil
		close(ch)
		l.mu.Unlock()
	}()
	v, err := compute(ctx)
	ok = err == nil
	return v, err
}

// peek returns the value if it has been computed, without computing it.
func (l *lazy[T]) peek() (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.val, l.ok
}

// set stores v as the value, before anyone asked for it: for a value
// known from elsewhere (a version checksum, an older snapshot).
func (l *lazy[T]) set(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.val, l.ok = v, true
}
