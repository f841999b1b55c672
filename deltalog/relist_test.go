package deltalog_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

func TestRelist(t *testing.T) {
	hole := fmt.Errorf("commit 2 is missing: %w", deltaerr.ErrMissingLogFile)
	other := fmt.Errorf("version 9: %w", deltaerr.ErrVersionNotFound)
	tests := []struct {
		name      string
		errs      []error // of the calls in turn; past the end, nil
		wantCalls int
		wantErr   error
	}{
		{"first listing whole", nil, 1, nil},
		{"hole heals on the second listing", []error{hole}, 2, nil},
		{"hole heals on the last listing", []error{hole, hole, hole, hole}, deltalog.RelistAttempts, nil},
		{"hole that stays", []error{hole, hole, hole, hole, hole, hole, hole}, deltalog.RelistAttempts, deltaerr.ErrMissingLogFile},
		{"other errors are not retried", []error{other}, 1, deltaerr.ErrVersionNotFound},
		{"hole then another error", []error{hole, other}, 2, deltaerr.ErrVersionNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			v, err := deltalog.Relist(context.Background(), func() (int, error) {
				calls++
				if calls <= len(tt.errs) && tt.errs[calls-1] != nil {
					return -1, tt.errs[calls-1]
				}
				return calls, nil
			})
			if calls != tt.wantCalls {
				t.Errorf("%d calls, want %d", calls, tt.wantCalls)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || v != calls {
				t.Fatalf("got %d, %v; want %d, nil", v, err, calls)
			}
		})
	}
}

// A context that ends during the pause stops the re-listing at once, with
// both the hole and the context's error.
func TestRelistCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := deltalog.Relist(ctx, func() (int, error) {
		calls++
		cancel()
		return 0, fmt.Errorf("hole: %w", deltaerr.ErrMissingLogFile)
	})
	if calls != 1 || !errors.Is(err, context.Canceled) || !errors.Is(err, deltaerr.ErrMissingLogFile) {
		t.Fatalf("%d calls, err %v; want 1 call, canceled and missing log file", calls, err)
	}
}

func TestVanished(t *testing.T) {
	key := deltalog.CommitKey(3)
	notFound := fmt.Errorf("get: %w", logstore.ErrNotFound)
	if err := deltalog.Vanished(key, notFound); !errors.Is(err, deltaerr.ErrMissingLogFile) || !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("not found: %v, want missing log file and not found", err)
	}
	io := errors.New("connection reset")
	if err := deltalog.Vanished(key, io); err != io {
		t.Errorf("other error: %v, want it unchanged", err)
	}
	if err := deltalog.Vanished(key, nil); err != nil {
		t.Errorf("nil: %v", err)
	}
}
