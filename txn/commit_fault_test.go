package txn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/testutil/faultstore"
	"github.com/godelta/delta/txn"
)

// The commit path under storage faults, with faultstore over the memory
// and local backends. Every case ends with checkCommitOutcome, which holds
// the transaction to its word:
//
//   - success: its txnId is in the log exactly once, at the version it
//     returned;
//   - ErrCommitUnknown: its txnId is in the log at most once;
//   - any other error: its txnId is not in the log (the caller may drop
//     the data files and try again);
//
// and the log's versions are contiguous from 0.

// commitKeys matches the commit files.
const commitKeys = "_delta_log/*.json"

func TestCommitFault(t *testing.T) {
	put := faultstore.OpPutIfAbsent
	get := faultstore.OpGet | faultstore.OpGetRange // commits are read in windows
	cases := []struct {
		name  string
		rules []faultstore.Rule
		// otherFirst: another writer commits version 1 after the
		// snapshot was read and before Commit.
		otherFirst bool
		maxRetries int
		wantErr    error // nil: success
		wantV      int64
	}{
		{name: "refused put", rules: []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.Before, Nth: 1}}, wantV: 1},
		{name: "transient put", rules: []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.Transient, Times: 3}}, wantV: 1},
		{name: "put landed, error", rules: []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.After, Nth: 1}}, wantV: 1},
		{name: "put landed, deadline", rules: []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.Deadline, Nth: 1}}, wantV: 1},
		{name: "every put lands with an error", rules: []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.After}}, wantV: 1},
		{name: "put landed, read-back flaky", rules: []faultstore.Rule{
			{Ops: put, Key: commitKeys, Kind: faultstore.After, Nth: 1},
			{Ops: get, Key: commitKeys, Kind: faultstore.Transient, Times: 2},
		}, wantV: 1},
		{name: "put landed, read-back fails", rules: []faultstore.Rule{
			{Ops: put, Key: commitKeys, Kind: faultstore.After, Nth: 1},
			{Ops: get, Key: commitKeys, Kind: faultstore.Before},
		}, wantErr: txn.ErrCommitUnknown},
		{name: "put refused, read-back fails", rules: []faultstore.Rule{
			{Ops: put, Key: commitKeys, Kind: faultstore.Before, Nth: 1},
			{Ops: get, Key: commitKeys, Kind: faultstore.Before},
		}, wantErr: txn.ErrCommitUnknown},
		{name: "transient forever", rules: []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.Transient}},
			maxRetries: 3, wantErr: txn.ErrCommitUnknown},
		{name: "lost race, then put landed with an error", otherFirst: true,
			rules: []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.After, Nth: 2}}, wantV: 2},
		{name: "lost race seen through a refused put", otherFirst: true,
			rules: []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.Transient, Nth: 1}}, wantV: 2},
		{name: "lost race, winner unreadable once", otherFirst: true,
			rules:   []faultstore.Rule{{Ops: get, Key: "_delta_log/00000000000000000001.json", Kind: faultstore.Transient, Nth: 1}},
			wantErr: errAny},
		{name: "crash before the put", rules: []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.Crash, Nth: 1}},
			wantErr: txn.ErrCommitUnknown},
		{name: "crash after the put", rules: []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.CrashAfter, Nth: 1}},
			wantErr: txn.ErrCommitUnknown},
		{name: "slow put", rules: []faultstore.Rule{{Ops: put, Key: commitKeys, Kind: faultstore.Delay, Delay: 2e6, Nth: 1}}, wantV: 1},
	}
	for _, b := range stores {
		for _, c := range cases {
			t.Run(b.name+"/"+c.name, func(t *testing.T) {
				ctx := context.Background()
				inner := b.new(t)
				createTable(t, inner, tableSpec{})
				fs := faultstore.New(inner, 1)
				tx := txn.Begin(load(t, fs), txn.Options{MaxRetries: c.maxRetries, NoCheckpoint: true})
				tx.Add(addFile("mine", "a", 1))
				if c.otherFirst {
					other := addFile("other", "b", 1)
					writeCommit(t, inner, 1, actions.Action{CommitInfo: &actions.CommitInfo{Operation: "WRITE", TxnID: "someone-else", IsBlindAppend: ptr(true)}},
						actions.Action{Add: &other})
				}
				for _, r := range c.rules {
					fs.AddRule(r)
				}
				res, err := tx.Commit(ctx)
				v := res.Version
				switch {
				case c.wantErr == nil && err != nil:
					t.Fatalf("Commit: %v", err)
				case c.wantErr == nil && v != c.wantV:
					t.Fatalf("Commit: version %d, want %d", v, c.wantV)
				case c.wantErr == errAny && err == nil:
					t.Fatalf("Commit succeeded at %d; want an error", v)
				case c.wantErr != nil && c.wantErr != errAny && !errors.Is(err, c.wantErr):
					t.Fatalf("Commit: %v, want %v", err, c.wantErr)
				}
				if err != nil && errors.Is(err, logstore.ErrAlreadyExists) {
					t.Errorf("an injected fault surfaced as ErrAlreadyExists: %v", err)
				}
				if len(fs.Counts()) == 0 {
					t.Errorf("no fault was injected")
				}
				checkCommitOutcome(t, inner, tx.ID(), v, err)
			})
		}
	}
}

// errAny: the case wants an error, of any kind.
var errAny = errors.New("any error")

// checkCommitOutcome checks the log in store against what Commit of the
// transaction id returned.
func checkCommitOutcome(t *testing.T, store logstore.Store, id string, v int64, err error) {
	t.Helper()
	versions := commitVersions(t, store)
	for i, got := range versions {
		if got != int64(i) {
			t.Fatalf("log versions %v are not contiguous from 0", versions)
		}
	}
	var at []int64
	for _, ver := range versions {
		data, gerr := store.Get(context.Background(), deltalog.CommitKey(ver))
		if gerr != nil {
			t.Fatal(gerr)
		}
		acts, derr := actions.DecodeCommit(deltalog.CommitKey(ver), data)
		if derr != nil {
			t.Fatal(derr)
		}
		for _, a := range acts {
			if a.CommitInfo != nil && a.CommitInfo.TxnID == id {
				at = append(at, ver)
			}
		}
	}
	switch {
	case err == nil && (len(at) != 1 || at[0] != v):
		t.Errorf("Commit returned version %d, but the transaction is in the log at %v", v, at)
	case err != nil && errors.Is(err, txn.ErrCommitUnknown) && len(at) > 1:
		t.Errorf("Commit's outcome is unknown (%v), and the transaction is in the log %d times: %v", err, len(at), at)
	case err != nil && !errors.Is(err, txn.ErrCommitUnknown) && len(at) > 0:
		t.Errorf("Commit failed for sure (%v), but the transaction is in the log at %v", err, at)
	}
}
