package snapshot_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
)

// TestInCommitTimestampsEnabledLater: a table that had in-commit
// timestamps at creation, turned them off at version 1 and on again at
// version 3 (enablement version 3) is dated by file times before version 3
// and by in-commit timestamps from it, in History and in time travel, as
// PROTOCOL.md "In-Commit Timestamps" asks; version 0's own
// inCommitTimestamp is ignored.
func TestInCommitTimestampsEnabledLater(t *testing.T) {
	ctx := context.Background()
	d := memory.NewDriver()
	s := logstore.NewPortable(d)
	at := func(ms int64) { d.SetClock(func() time.Time { return time.UnixMilli(ms) }) }
	ictProto := `{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["inCommitTimestamp"]}}`
	withConf := func(conf string) string {
		return strings.Replace(meta, `"configuration":{}`, `"configuration":{`+conf+`}`, 1)
	}
	at(100)
	commit(t, s, 0, `{"commitInfo":{"inCommitTimestamp":9000}}`, ictProto, withConf(`"delta.enableInCommitTimestamps":"true"`))
	at(200)
	commit(t, s, 1, `{"commitInfo":{}}`, withConf(`"delta.enableInCommitTimestamps":"false"`))
	at(300)
	commit(t, s, 2, `{"commitInfo":{}}`, add("a"))
	at(400)
	commit(t, s, 3, `{"commitInfo":{"inCommitTimestamp":1000}}`, withConf(`"delta.enableInCommitTimestamps":"true","delta.inCommitTimestampEnablementVersion":"3","delta.inCommitTimestampEnablementTimestamp":"1000"`))
	at(50) // a file time out of order: ignored from version 3 on
	commit(t, s, 4, `{"commitInfo":{"inCommitTimestamp":2000}}`, add("b"))

	hist, err := snapshot.History(ctx, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]int64{0: 100, 1: 200, 2: 300, 3: 1000, 4: 2000}
	if len(hist) != len(want) {
		t.Fatalf("%d commits", len(hist))
	}
	for _, h := range hist {
		if got := h.Timestamp.UnixMilli(); got != want[h.Version] {
			t.Errorf("history: version %d at %d, want %d", h.Version, got, want[h.Version])
		}
	}

	snap, err := snapshot.Load(ctx, s, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ at, want int64 }{
		{100, 0}, {150, 0}, {250, 1}, {399, 2}, {999, 2}, {1000, 3}, {1999, 3}, {2000, 4},
	} {
		got, err := snapshot.VersionAtTimestamp(ctx, snap, time.UnixMilli(c.at))
		if err != nil || got != c.want {
			t.Errorf("version at %d: %d (%v), want %d", c.at, got, err, c.want)
		}
	}
	for _, bad := range []int64{99, 2001} {
		if _, err := snapshot.VersionAtTimestamp(ctx, snap, time.UnixMilli(bad)); !errors.Is(err, deltaerr.ErrTimestampOutOfRange) {
			t.Errorf("version at %d: %v, want ErrTimestampOutOfRange", bad, err)
		}
	}
}
