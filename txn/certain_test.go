package txn_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/txn"
)

// refusingStore fails PutIfAbsent of commit files with errs[n] (the n-th
// such put; the last one for later puts), as a backend that classified its
// error would, and counts the puts and the reads of commit files.
type refusingStore struct {
	logstore.Store
	errs        []error
	puts, reads atomic.Int32
}

func (s *refusingStore) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if !strings.HasSuffix(key, ".json") {
		return s.Store.PutIfAbsent(ctx, key, data)
	}
	n := int(s.puts.Add(1)) - 1
	return s.errs[min(n, len(s.errs)-1)]
}

func (s *refusingStore) Get(ctx context.Context, key string) ([]byte, error) {
	if strings.HasSuffix(key, ".json") {
		s.reads.Add(1)
	}
	return s.Store.Get(ctx, key)
}

func opErr(kind, cause error) error {
	return &logstore.OpError{Op: "put if absent", Key: "k", Kind: kind, Err: cause}
}

// TestCertainPutFailure: a commit whose put certainly failed is reported at
// once, with its cause and storage kind, and not as ErrCommitUnknown; before
// issue 19 it was read back and retried 101 times (about 3 s) and reported
// as "outcome unknown" without the cause. Only an earlier put that may have
// landed keeps the outcome unknown.
func TestCertainPutFailure(t *testing.T) {
	perm := opErr(logstore.ErrPermission, syscall.EACCES)
	full := opErr(logstore.ErrNotWritten, syscall.ENOSPC)
	noRoot := opErr(logstore.ErrRootNotFound, errors.New("NoSuchBucket"))
	maybe := opErr(logstore.ErrOutcomeUnknown, errors.New("connection reset"))
	tests := []struct {
		name      string
		errs      []error
		wantKind  error
		wantCause error
		wantPuts  int32
		unknown   bool
	}{
		{"permission", []error{perm}, logstore.ErrPermission, syscall.EACCES, 1, false},
		{"disk full", []error{full}, logstore.ErrNotWritten, syscall.ENOSPC, 1, false},
		{"root missing", []error{noRoot}, logstore.ErrRootNotFound, nil, 1, false},
		{"ambiguous, then disk full", []error{maybe, full}, logstore.ErrNotWritten, syscall.ENOSPC, 2, true},
	}
	for _, b := range stores {
		for _, tt := range tests {
			for _, create := range []bool{false, true} {
				name := b.name + "/" + tt.name
				if create {
					name += "/create"
				}
				t.Run(name, func(t *testing.T) {
					inner := b.new(t)
					var tx *txn.Transaction
					rs := &refusingStore{Store: inner, errs: tt.errs}
					if create {
						tx = txn.BeginCreate(rs, txn.Options{NoCheckpoint: true})
						for _, a := range (tableSpec{}).actions() {
							if a.Protocol != nil {
								tx.SetProtocol(*a.Protocol)
							}
							if a.Metadata != nil {
								tx.SetMetadata(*a.Metadata)
							}
						}
					} else {
						createTable(t, inner, tableSpec{})
						tx = txn.Begin(load(t, rs), txn.Options{NoCheckpoint: true})
					}
					tx.Add(addFile("mine", "a", 1))
					readsBefore := rs.reads.Load()
					_, err := tx.Commit(context.Background())
					if !errors.Is(err, tt.wantKind) {
						t.Fatalf("err = %v, want %v", err, tt.wantKind)
					}
					if tt.wantCause != nil && !errors.Is(err, tt.wantCause) {
						t.Errorf("err = %v: the cause %v is lost", err, tt.wantCause)
					}
					if got := errors.Is(err, txn.ErrCommitUnknown); got != tt.unknown {
						t.Errorf("errors.Is(err, ErrCommitUnknown) = %v, want %v: %v", got, tt.unknown, err)
					}
					if got := rs.puts.Load(); got != tt.wantPuts {
						t.Errorf("%d puts, want %d", got, tt.wantPuts)
					}
					if !tt.unknown && rs.reads.Load() != readsBefore {
						t.Errorf("%d commit reads after a certain failure, want none", rs.reads.Load()-readsBefore)
					}
					checkCommitOutcome(t, inner, tx.ID(), 0, err)
				})
			}
		}
	}
}
