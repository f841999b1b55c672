package invariants

import (
	"errors"
	"testing"
)

func TestAssert(t *testing.T) {
	Assertf(true, "never")
	panicked := func(f func()) (p any) {
		defer func() { p = recover() }()
		f()
		return nil
	}
	p := panicked(func() { Assertf(1+1 == 3, "arithmetic: %d", 2) })
	if Enabled != (p != nil) {
		t.Errorf("Assertf of false: panic %v with Enabled %v", p, Enabled)
	}
	var err error
	p = panicked(func() { err = AssertionFailedf("state %q", "x") })
	switch {
	case Enabled && p == nil:
		t.Error("AssertionFailedf did not panic with Enabled")
	case !Enabled && (p != nil || !errors.Is(err, ErrAssertionFailed) || err.Error() != `internal assertion failed: state "x"`):
		t.Errorf("AssertionFailedf: panic %v, error %v", p, err)
	}
}
