// Package invariants turns on assertions of internal invariants in tests.
//
// Build or test with the invariants tag (go test -tags invariants ./...),
// or with -race, and Enabled is true: Assertf panics when its condition
// does not hold, and AssertionFailedf panics too. In every other build
// Enabled is a false constant, the compiler drops the code it guards, and
// AssertionFailedf only returns its error: an assertion never changes what
// a production build does.
//
// Assert only what this library's own code guarantees: a replay that yields
// a file the tail superseded, a commit that landed at a version other than
// the one it was built for. Data read from disk or the network is never
// asserted on: a damaged log is an error (deltaerr.ErrCorrupt) in every
// build, never a panic.
//
// Guard an assertion whose arguments cost anything with Enabled:
//
//	if invariants.Enabled {
//		invariants.Assertf(len(order) == len(tail), "replay: %d ordered of %d", len(order), len(tail))
//	}
package invariants

import (
	"errors"
	"fmt"
)

// ErrAssertionFailed marks the error AssertionFailedf returns.
var ErrAssertionFailed = errors.New("internal assertion failed")

// Assertf panics, when Enabled, if cond is false, with the message
// format and args make. It does nothing otherwise.
func Assertf(cond bool, format string, args ...any) {
	if Enabled && !cond {
		panic(fmt.Errorf("%w: "+format, append([]any{ErrAssertionFailed}, args...)...))
	}
}

// AssertionFailedf reports a state this library's code should never
// reach: it panics when Enabled, and otherwise returns an error matching
// ErrAssertionFailed, for the caller to return.
func AssertionFailedf(format string, args ...any) error {
	err := fmt.Errorf("%w: "+format, append([]any{ErrAssertionFailed}, args...)...)
	if Enabled {
		panic(err)
	}
	return err
}
