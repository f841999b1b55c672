package txn_test

import (
	"context"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
)

// TestICTEnablementStamped: the commit that turns in-commit timestamps on
// for a table with commits carries an inCommitTimestamp and records its
// own version and that timestamp as the enablement properties, computed
// for the version it lands at: after a lost race, one later, and later in
// time than the winner's file. A commit 0 that turns them on records no
// enablement, as Spark's does not.
func TestICTEnablementStamped(t *testing.T) {
	ictProto := actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{actions.FeatureInCommitTimestamp}}
	for _, c := range []struct {
		name        string
		winners     int   // commits landing after the snapshot read
		winnerAhead int64 // ms the winners' file times are ahead of the clock
		protoOnly   bool  // the property is already set; the protocol upgrade turns ICT on
	}{
		{"no race", 0, 0, false},
		{"two winners", 2, 0, false},
		{"winner file time ahead", 1, 60_000, false},
		{"protocol turns it on", 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			d := memory.NewDriver()
			store := logstore.NewPortable(d)
			now := time.UnixMilli(1_700_000_000_000)
			d.SetClock(func() time.Time { return now })
			spec := tableSpec{}
			if c.protoOnly {
				spec.config = map[string]string{tableconfig.KeyEnableInCommitTimestamps: "true"}
			}
			createTable(t, store, spec)
			writeCommit(t, store, 1, actions.Action{CommitInfo: &actions.CommitInfo{}})
			snap := load(t, store)
			if snap.Config().InCommitTimestamps() {
				t.Fatal("table starts with in-commit timestamps")
			}
			d.SetClock(func() time.Time { return now.Add(time.Duration(c.winnerAhead) * time.Millisecond) })
			for i := range c.winners {
				a := addFile("w"+strconv.Itoa(i), "a", 1)
				writeCommit(t, store, int64(2+i), actions.Action{CommitInfo: &actions.CommitInfo{}}, actions.Action{Add: &a})
			}
			d.SetClock(func() time.Time { return now })

			tx := txn.Begin(snap, txn.Options{Clock: func() time.Time { return now }, Operation: "SET TBLPROPERTIES"})
			if c.protoOnly {
				tx.SetProtocol(ictProto)
			} else {
				m := snap.Metadata()
				m.Configuration = maps.Clone(m.Configuration)
				m.Configuration[tableconfig.KeyEnableInCommitTimestamps] = "true"
				tx.SetProtocol(ictProto)
				tx.SetMetadata(m)
			}
			res, err := tx.Commit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wantV := int64(2 + c.winners)
			// Later than the file time of the commit before it: the clock
			// stands still, so that is what decides.
			wantTS := now.UnixMilli() + 1
			if c.winners > 0 {
				wantTS += c.winnerAhead
			}
			if res.Version != wantV {
				t.Fatalf("landed at %d, want %d", res.Version, wantV)
			}
			ci := commitInfo(t, store, wantV)
			if ci == nil || ci.InCommitTimestamp == nil || *ci.InCommitTimestamp != wantTS || res.Timestamp.UnixMilli() != wantTS {
				t.Fatalf("commitInfo %+v, result %v: want inCommitTimestamp %d", ci, res.Timestamp, wantTS)
			}
			cfg := load(t, store).Config()
			ev, ok1 := cfg.InCommitTimestampEnablementVersion()
			et, ok2 := cfg.InCommitTimestampEnablementTimestamp()
			if !cfg.InCommitTimestamps() || !ok1 || !ok2 || ev != wantV || et != wantTS {
				t.Fatalf("enablement %d (%v) at %d (%v), want %d at %d", ev, ok1, et, ok2, wantV, wantTS)
			}
			// The next commit is ICT-dated and says nothing of enablement.
			a := addFile("next", "a", 1)
			tx = txn.Begin(load(t, store), txn.Options{Clock: func() time.Time { return now }})
			tx.Add(a)
			if _, err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			ci = commitInfo(t, store, wantV+1)
			if ci == nil || ci.InCommitTimestamp == nil || *ci.InCommitTimestamp != wantTS+1 {
				t.Fatalf("next commit %+v, want inCommitTimestamp %d", ci, wantTS+1)
			}
			for _, act := range readCommit(t, store, wantV+1) {
				if act.Metadata != nil {
					t.Fatal("the next commit restates the metadata")
				}
			}
		})
	}
}
