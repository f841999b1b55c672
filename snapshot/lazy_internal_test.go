package snapshot

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestLazy(t *testing.T) {
	errBoom := errors.New("boom")
	t.Run("a failure is not remembered", func(t *testing.T) {
		var l lazy[int]
		var calls int
		compute := func(context.Context) (int, error) {
			calls++
			if calls == 1 {
				return 0, errBoom
			}
			return 7, nil
		}
		if _, err := l.get(t.Context(), compute); !errors.Is(err, errBoom) {
			t.Fatalf("first get: %v", err)
		}
		for range 2 {
			if v, err := l.get(t.Context(), compute); v != 7 || err != nil {
				t.Fatalf("get = %d, %v", v, err)
			}
		}
		if calls != 2 {
			t.Errorf("compute ran %d times, want 2", calls)
		}
	})
	t.Run("concurrent callers share one computation", func(t *testing.T) {
		var l lazy[int]
		var calls atomic.Int32
		release := make(chan struct{})
		compute := func(context.Context) (int, error) {
			calls.Add(1)
			<-release
			return 42, nil
		}
		var wg sync.WaitGroup
		got := make([]int, 8)
		for i := range got {
			wg.Go(func() {
				v, err := l.get(t.Context(), compute)
				if err != nil {
					t.Error(err)
				}
				got[i] = v
			})
		}
		close(release)
		wg.Wait()
		for i, v := range got {
			if v != 42 {
				t.Errorf("caller %d got %d", i, v)
			}
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("compute ran %d times, want 1", n)
		}
	})
	t.Run("a waiter stops at its own context's end", func(t *testing.T) {
		var l lazy[int]
		started, release := make(chan struct{}), make(chan struct{})
		done := make(chan error)
		go func() {
			_, err := l.get(context.Background(), func(context.Context) (int, error) {
				close(started)
				<-release
				return 1, nil
			})
			done <- err
		}()
		<-started
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := l.get(ctx, func(context.Context) (int, error) {
			t.Error("a second computation started while one was running")
			return 0, nil
		}); !errors.Is(err, context.Canceled) {
			t.Errorf("waiter with a cancelled context: %v", err)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a failed attempt leaves the waiters to try again", func(t *testing.T) {
		var l lazy[int]
		started, release := make(chan struct{}), make(chan struct{})
		var calls atomic.Int32
		compute := func(ctx context.Context) (int, error) {
			if calls.Add(1) == 1 {
				close(started)
				<-release
				return 0, context.Canceled // the first caller's context ended
			}
			return 5, nil
		}
		first := make(chan error)
		go func() { _, err := l.get(context.Background(), compute); first <- err }()
		<-started
		second := make(chan int)
		go func() { v, _ := l.get(context.Background(), compute); second <- v }()
		close(release)
		if err := <-first; !errors.Is(err, context.Canceled) {
			t.Errorf("first caller: %v", err)
		}
		if v := <-second; v != 5 {
			t.Errorf("second caller got %d, want 5", v)
		}
	})
}
