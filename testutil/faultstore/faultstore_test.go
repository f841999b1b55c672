package faultstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/logstore/storetest"
	"github.com/godelta/delta/testutil/faultstore"
)

// With no rules the wrapper keeps the whole Store contract.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store { return faultstore.New(memory.New(), 1) })
}

func TestKinds(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		kind               faultstore.Kind
		wantLanded         bool
		is                 []error
		notIs              []error
		crashedAfterwards  bool
		errorFromTheFaulty bool
	}{
		{kind: faultstore.Before, is: []error{faultstore.ErrInjected}, notIs: []error{faultstore.ErrTransient}, errorFromTheFaulty: true},
		{kind: faultstore.Transient, is: []error{faultstore.ErrInjected, faultstore.ErrTransient}, errorFromTheFaulty: true},
		{kind: faultstore.After, wantLanded: true, is: []error{faultstore.ErrInjected}, errorFromTheFaulty: true},
		{kind: faultstore.Deadline, wantLanded: true, is: []error{faultstore.ErrInjected, context.DeadlineExceeded}, errorFromTheFaulty: true},
		{kind: faultstore.Delay, wantLanded: true},
		{kind: faultstore.Lag, wantLanded: true},
		{kind: faultstore.Crash, is: []error{faultstore.ErrCrashed}, notIs: []error{faultstore.ErrInjected}, crashedAfterwards: true, errorFromTheFaulty: true},
		{kind: faultstore.CrashAfter, wantLanded: true, is: []error{faultstore.ErrCrashed}, crashedAfterwards: true, errorFromTheFaulty: true},
	}
	for _, c := range cases {
		t.Run(c.kind.String(), func(t *testing.T) {
			inner := memory.New()
			s := faultstore.New(inner, 1, faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Key: "_delta_log/*.json", Kind: c.kind, Delay: time.Millisecond, Nth: 1})
			err := s.PutIfAbsent(ctx, "_delta_log/0.json", []byte("x"))
			if (err != nil) != c.errorFromTheFaulty {
				t.Fatalf("PutIfAbsent: %v", err)
			}
			for _, target := range c.is {
				if !errors.Is(err, target) {
					t.Errorf("error %v is not %v", err, target)
				}
			}
			for _, target := range append(c.notIs, logstore.ErrAlreadyExists, logstore.ErrNotFound) {
				if errors.Is(err, target) {
					t.Errorf("error %v is %v", err, target)
				}
			}
			_, gerr := inner.Get(ctx, "_delta_log/0.json")
			if landed := gerr == nil; landed != c.wantLanded {
				t.Errorf("landed = %v, want %v", landed, c.wantLanded)
			}
			if s.Crashed() != c.crashedAfterwards {
				t.Errorf("Crashed() = %v", s.Crashed())
			}
			// A second call: the rule fired once (Nth: 1), so it passes
			// unless the store crashed.
			err = s.Put(ctx, "other", []byte("y"))
			if c.crashedAfterwards != errors.Is(err, faultstore.ErrCrashed) {
				t.Errorf("second call: %v", err)
			}
			if c.crashedAfterwards {
				if _, err := inner.Get(ctx, "other"); !errors.Is(err, logstore.ErrNotFound) {
					t.Errorf("a call after the crash was done: %v", err)
				}
			}
			if got := s.Counts()[c.kind]; got != 1 {
				t.Errorf("Counts()[%v] = %d, want 1", c.kind, got)
			}
		})
	}
}

func TestLagHidesFromListing(t *testing.T) {
	ctx := context.Background()
	s := faultstore.New(memory.New(), 1, faultstore.Rule{Ops: faultstore.OpPut, Key: "d/b", Kind: faultstore.Lag, Lag: 2})
	for _, k := range []string{"d/a", "d/b", "d/c"} {
		if err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	list := func() (keys []string) {
		for info, err := range s.List(ctx, "d/", "") {
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, info.Key)
		}
		return keys
	}
	for i, want := range []int{2, 2, 3} {
		if got := list(); len(got) != want {
			t.Errorf("listing %d: %v, want %d keys", i, got, want)
		}
	}
	if _, err := s.Get(ctx, "d/b"); err != nil {
		t.Errorf("a lagging key must still be readable: %v", err)
	}
}

// A seed gives the same faults on every run.
func TestSeedReproducible(t *testing.T) {
	run := func(seed uint64) []bool {
		s := faultstore.New(memory.New(), seed, faultstore.Rule{Kind: faultstore.Transient, Prob: 0.3})
		var out []bool
		for range 64 {
			_, err := s.Stat(context.Background(), "k")
			out = append(out, errors.Is(err, faultstore.ErrTransient))
		}
		return out
	}
	a, b := run(7), run(7)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 7: call %d differs between runs", i)
		}
	}
}

func TestListFaults(t *testing.T) {
	ctx := context.Background()
	inner := memory.New()
	_ = inner.Put(ctx, "d/a", nil)
	_ = inner.Put(ctx, "d/b", nil)
	for _, k := range []faultstore.Kind{faultstore.Before, faultstore.After, faultstore.CrashAfter} {
		s := faultstore.New(inner, 1, faultstore.Rule{Ops: faultstore.OpList, Kind: k, Nth: 1})
		n, failed := 0, false
		for _, err := range s.List(ctx, "d/", "") {
			if err != nil {
				failed = true
				break
			}
			n++
		}
		if !failed {
			t.Errorf("%v: listing did not fail", k)
		}
		if k != faultstore.Before && n != 2 {
			t.Errorf("%v: %d keys before the error, want 2", k, n)
		}
	}
}

// TestWriterClose checks that a writer's Close is a write rules can fail:
// Before leaves nothing, After lands the object and fails, and no rule
// lets it through.
func TestWriterClose(t *testing.T) {
	for _, tc := range []struct {
		kind    faultstore.Kind
		landed  bool
		failure bool
	}{
		{faultstore.None, true, false},
		{faultstore.Before, false, true},
		{faultstore.Transient, false, true},
		{faultstore.After, true, true},
		{faultstore.CrashAfter, true, true},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			ctx := t.Context()
			inner := memory.New()
			var rules []faultstore.Rule
			if tc.kind != faultstore.None {
				rules = append(rules, faultstore.Rule{Ops: faultstore.OpWriterClose, Kind: tc.kind})
			}
			s := faultstore.New(inner, 1, rules...)
			w, err := s.NewWriter(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte("data")); err != nil {
				t.Fatal(err)
			}
			err = w.Close()
			if (err != nil) != tc.failure {
				t.Errorf("Close = %v, want failure %v", err, tc.failure)
			}
			if err != nil && !errors.Is(err, faultstore.ErrInjected) && !errors.Is(err, faultstore.ErrCrashed) {
				t.Errorf("Close = %v, want an injected fault", err)
			}
			if unknown := errors.Is(err, logstore.ErrOutcomeUnknown); unknown != (tc.failure && tc.landed) {
				t.Errorf("Close = %v: ErrOutcomeUnknown %v, want it exactly for a write that landed and failed", err, unknown)
			}
			_, err = inner.Stat(ctx, "k")
			if landed := err == nil; landed != tc.landed {
				t.Errorf("object landed = %v (%v), want %v", landed, err, tc.landed)
			}
			if got := s.Counts()[tc.kind]; tc.kind != faultstore.None && got != 1 {
				t.Errorf("Counts()[%v] = %d, want 1", tc.kind, got)
			}
		})
	}
	// Close and URI pass through.
	inner := memory.New()
	s := faultstore.New(inner, 1)
	if s.URI() != inner.URI() {
		t.Errorf("URI = %q, want %q", s.URI(), inner.URI())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := inner.Get(t.Context(), "k"); !errors.Is(err, logstore.ErrClosed) {
		t.Errorf("inner Get after Close = %v, want ErrClosed", err)
	}
}
