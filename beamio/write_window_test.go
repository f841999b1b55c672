package beamio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window/trigger"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/write"
)

// The windowed tests give row id the event time windowBase + id ms, so
// that window k of width windowRows ms holds ids k*windowRows to
// (k+1)*windowRows-1.
const (
	windowBase = int64(1_700_000_000_000) // ms since the epoch, 2023-11-14
	windowRows = int64(5_000)
)

// stampFn gives each row its event time, windowBase + id ms.
type stampFn struct{}

func (stampFn) ProcessElement(r Row, emit func(beam.EventTime, Row)) {
	emit(mtime.FromMilliseconds(windowBase+r.Values[0].Int64()), r)
}

// chunkFn expands the first id of a chunk into the chunk's rows, which
// keep the chunk's event time.
type chunkFn struct{ Size int64 }

func (f *chunkFn) ProcessElement(from int64, emit func(Row)) {
	for id := from; id < from+f.Size; id++ {
		emit(Row{Values: testRow(id)})
	}
}

func init() {
	register.DoFn2x0[Row, func(beam.EventTime, Row)](&stampFn{})
	register.DoFn2x0[int64, func(Row)](&chunkFn{})
	register.Emitter2[beam.EventTime, Row]()
}

// windowedPipeline writes ids from to to-1, with their event times, in
// fixed windows of windowRows ms, and records the WriteResults under key.
func windowedPipeline(table string, from, to int64, key string, opts WriteOptions) *beam.Pipeline {
	p, s := beam.NewPipelineWithRoot()
	var ranges []genRange
	const chunk = 2_500
	for lo := from; lo < to; lo += chunk {
		ranges = append(ranges, genRange{From: lo, To: min(lo+chunk, to)})
	}
	rows := beam.ParDo(s, genFn{}, beam.Reshuffle(s, beam.CreateList(s, ranges)))
	stamped := beam.ParDo(s, stampFn{}, rows)
	windowed := beam.WindowInto(s, window.NewFixedWindows(time.Duration(windowRows)*time.Millisecond), stamped)
	beam.ParDo0(s, &resultFn{Key: key}, Write(s, table, windowed, opts))
	return p
}

// windowEnd is the txn version of window k: its end in ms.
func windowEnd(k int64) int64 { return windowBase + (k+1)*windowRows }

// checkWindowCommits checks that table versions 1 to len(windows) are one
// commit per window, in the order of windows, each with the txn
// (appID, the window's end) and the window's rows: numRecords sums to
// windowRows and every file's ids lie in the window.
func checkWindowCommits(t *testing.T, table, appID string, windows []int64) {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != int64(len(windows)) {
		t.Fatalf("table at version %d, want one commit for each of %d windows", snap.Version(), len(windows))
	}
	for i, k := range windows {
		v := int64(i + 1)
		data, err := tb.Store().Get(ctx, fmt.Sprintf("_delta_log/%020d.json", v))
		if err != nil {
			t.Fatal(err)
		}
		acts, err := actions.DecodeCommit("commit", data)
		if err != nil {
			t.Fatal(err)
		}
		var txns []string
		var rows int64
		for _, a := range acts {
			if a.Txn != nil {
				txns = append(txns, fmt.Sprint(a.Txn.AppID, "@", a.Txn.Version))
			}
			if a.Add == nil {
				continue
			}
			var st struct {
				NumRecords int64 `json:"numRecords"`
				Min        struct {
					ID int64 `json:"id"`
				} `json:"minValues"`
				Max struct {
					ID int64 `json:"id"`
				} `json:"maxValues"`
			}
			if err := json.Unmarshal([]byte(a.Add.Stats), &st); err != nil {
				t.Fatal(err)
			}
			if st.Min.ID < k*windowRows || st.Max.ID >= (k+1)*windowRows {
				t.Errorf("commit %d (window %d) adds a file of ids %d to %d", v, k, st.Min.ID, st.Max.ID)
			}
			rows += st.NumRecords
		}
		if want := fmt.Sprint(appID, "@", windowEnd(k)); len(txns) != 1 || txns[0] != want {
			t.Errorf("commit %d: txns %v, want [%s]", v, txns, want)
		}
		if rows != windowRows {
			t.Errorf("commit %d (window %d): %d rows, want %d", v, k, rows, windowRows)
		}
	}
}

// TestWriteWindowed writes rows spread over four fixed windows: four
// commits, one per window in window order, each with its window's rows
// and txn version; the same pipeline run again writes and commits
// nothing.
func TestWriteWindowed(t *testing.T) {
	const windows = 4
	table := newTable(t)
	opts := WriteOptions{WriteID: "windowed", Shards: 3}
	key := resultKey(t, "")
	if err := run(t, windowedPipeline(table, 0, windows*windowRows, key, opts)); err != nil {
		t.Fatal(err)
	}
	res := collectedResults(key)
	if len(res) != windows {
		t.Fatalf("results %+v, want %d", res, windows)
	}
	for _, r := range res {
		if !r.Committed || r.Rows != windowRows || r.TxnVersion != windowEnd(r.Version-1) {
			t.Errorf("result %+v: want committed, %d rows, txn version the end of window %d", r, windowRows, r.Version-1)
		}
	}
	checkWindowCommits(t, table, opts.WriteID, []int64{0, 1, 2, 3})
	_, onDisk := checkTable(t, table, windows*windowRows)

	again := resultKey(t, "again")
	if err := run(t, windowedPipeline(table, 0, windows*windowRows, again, opts)); err != nil {
		t.Fatal(err)
	}
	res = collectedResults(again)
	if len(res) != windows {
		t.Fatalf("rerun: results %+v, want %d", res, windows)
	}
	for _, r := range res {
		if r.Committed || r.Files != 0 {
			t.Errorf("rerun: %+v, want nothing written or committed", r)
		}
	}
	checkWindowCommits(t, table, opts.WriteID, []int64{0, 1, 2, 3})
	if _, onDisk2 := checkTable(t, table, windows*windowRows); onDisk2 != onDisk {
		t.Errorf("the rerun wrote %d files", onDisk2-onDisk)
	}
}

// TestWriteWindowedFailure fails the committer after some windows'
// commits landed, then runs the same pipeline again: the windows already
// committed are skipped, the others commit, every row lands once.
func TestWriteWindowedFailure(t *testing.T) {
	const windows = 4
	tests := []struct {
		name  string
		hooks func(attempts map[string]int, mu *sync.Mutex) testHooks
		// landed is how many windows the failed run committed.
		landed int
	}{
		{"the committer dies after the second window's commit", func(attempts map[string]int, mu *sync.Mutex) testHooks {
			return testHooks{afterCommit: func(id string, version int) error {
				mu.Lock()
				defer mu.Unlock()
				k := fmt.Sprint(id, "@", version)
				attempts[k]++
				if version == 2 && attempts[k] == 1 {
					return fmt.Errorf("committer after version %d: %w", version, errInjected)
				}
				return nil
			}}
		}, 2},
		{"a writer fails after writing its files", func(attempts map[string]int, mu *sync.Mutex) testHooks {
			return testHooks{afterFiles: func(id string, shard int) error {
				mu.Lock()
				defer mu.Unlock()
				k := fmt.Sprint(id, "/", shard)
				attempts[k]++
				if shard == 1 && attempts[k] == 3 {
					return fmt.Errorf("writer of shard %d: %w", shard, errInjected)
				}
				return nil
			}}
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table := newTable(t)
			var mu sync.Mutex
			setHooks(t, tc.hooks(map[string]int{}, &mu))
			opts := WriteOptions{WriteID: "windowed-failure", Shards: 2}
			failed, key := 0, ""
			for round := 0; ; round++ {
				if round == 4 {
					t.Fatalf("no run succeeded in %d rounds", round)
				}
				key = resultKey(t, fmt.Sprint(round))
				err := run(t, windowedPipeline(table, 0, windows*windowRows, key, opts))
				if err == nil {
					break
				}
				if !strings.Contains(err.Error(), errInjected.Error()) {
					t.Fatalf("run %d: %v, want the injected failure", round, err)
				}
				if failed++; failed == 1 {
					if c, _ := commitsOf(t, table, opts.WriteID); c != tc.landed {
						t.Fatalf("the failed run committed %d windows, want %d", c, tc.landed)
					}
				}
			}
			if failed != 1 {
				t.Fatalf("%d runs failed, want 1", failed)
			}
			// The run after the failure skips the windows that landed,
			// writing nothing for them, and commits the others.
			committed := 0
			for _, r := range collectedResults(key) {
				switch {
				case r.Committed:
					committed++
				case r.Files != 0:
					t.Errorf("a skipped window wrote %d files: %+v", r.Files, r)
				}
			}
			if committed != windows-tc.landed {
				t.Errorf("the run after the failure committed %d windows, want %d", committed, windows-tc.landed)
			}
			checkTable(t, table, windows*windowRows)
			checkWindowCommits(t, table, opts.WriteID, []int64{0, 1, 2, 3})
		})
	}
}

// TestWriteWindowLate writes windows 2 and 3, then, in another run of
// the same WriteID, window 0, whose version is below the committed one:
// the run fails with ErrWindowNotAfter, and the table keeps what it had.
func TestWriteWindowLate(t *testing.T) {
	table := newTable(t)
	opts := WriteOptions{WriteID: "late", Shards: 2}
	if err := run(t, windowedPipeline(table, 2*windowRows, 4*windowRows, t.Name(), opts)); err != nil {
		t.Fatal(err)
	}
	err := run(t, windowedPipeline(table, 0, windowRows, t.Name()+"/late", opts))
	if err == nil || !strings.Contains(err.Error(), "not above the write's committed version") {
		t.Fatalf("run of a late window: %v, want ErrWindowNotAfter", err)
	}
	if c, x := commitsOf(t, table, opts.WriteID); c != 2 || x != 2 {
		t.Errorf("%d commits, %d with the txn; want 2 and 2", c, x)
	}

	// The committer's own check, for a window whose writers ran before
	// the later window's commit: errors.Is-able.
	ctx := context.Background()
	tb, err := delta.Open(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adds, err := write.Rows(ctx, snap, rowBatches(rowsOf(0, 100), 4), write.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var enc []byte
	for i := range adds {
		b, err := actions.EncodeCommit([]actions.Action{{Add: &adds[i]}})
		if err != nil {
			t.Fatal(err)
		}
		enc = append(enc, b...)
	}
	cf := &commitWindowsFn{Table: table, Opts: opts}
	for _, tc := range []struct {
		version int64
		want    error // nil: a commit seen committed before, skipped
	}{
		{windowEnd(0), ErrWindowNotAfter},
		{windowEnd(2), nil},
		{windowEnd(3), nil},
	} {
		res, err := cf.commitWindow(ctx, tb, windowAdds{Version: tc.version, SnapshotVersion: snap.Version(), Adds: enc})
		if !errors.Is(err, tc.want) || (tc.want == nil && res.Committed) {
			t.Errorf("commit of version %d: %+v, %v; want %v", tc.version, res, err, tc.want)
		}
	}
	if c, _ := commitsOf(t, table, opts.WriteID); c != 2 {
		t.Errorf("%d commits, want 2", c)
	}
}

// TestWriteWindowingRefused: sessions (which every writer's group cuts
// differently), triggers that fire a window more than once and allowed
// lateness are refused with an invalid-argument error before any file is
// written.
func TestWriteWindowingRefused(t *testing.T) {
	if got := checkWindowing(&window.WindowingStrategy{Fn: window.NewSessions(time.Second)}); got == "" {
		t.Error("sessions accepted")
	}
	if got := checkWindowing(&window.WindowingStrategy{Fn: window.NewFixedWindows(time.Second), AllowedLateness: 1000}); got == "" {
		t.Error("allowed lateness accepted")
	}
	if got := checkWindowing(&window.WindowingStrategy{Fn: window.NewFixedWindows(time.Second), Trigger: trigger.Repeat(trigger.AfterCount(10))}); got == "" {
		t.Error("a repeated count trigger accepted")
	}
	if got := checkWindowing(&window.WindowingStrategy{Fn: window.NewFixedWindows(time.Second)}); got != "" {
		t.Errorf("fixed windows refused: %s", got)
	}
	err := (&planWriteFn{Table: "unused", Opts: WriteOptions{WriteID: "x"}, Refuse: "sessions"}).ProcessElement(context.Background(), nil, func(writePlan) {})
	if !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("plan of a refused windowing: %v, want ErrInvalidArgument", err)
	}
	if _, err := windowVersion(window.IntervalWindow{Start: mtime.FromMilliseconds(-2000), End: mtime.FromMilliseconds(-1000)}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("a window before 1970: %v, want ErrInvalidArgument", err)
	}

	table := newTable(t)
	p, s := beam.NewPipelineWithRoot()
	rows := beam.ParDo(s, stampFn{}, beam.CreateList(s, []Row{{Values: testRow(1)}}))
	beam.ParDo0(s, &resultFn{Key: t.Name()}, Write(s, table, beam.WindowInto(s, window.NewSessions(time.Second), rows), WriteOptions{WriteID: "sessions"}))
	if err := run(t, p); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("run: %v, want sessions refused", err)
	}
	if c, _ := commitsOf(t, table, "sessions"); c != 0 {
		t.Errorf("%d commits, want none", c)
	}
}

// TestWriteStreaming writes an unbounded input (Prism's TestStream) in
// fixed windows, the watermark advancing past each window in turn: one
// commit per window, in window order, each with its rows.
func TestWriteStreaming(t *testing.T) {
	const windows, chunk = 3, int64(1_000)
	table := newTable(t)
	cfg := teststream.NewConfig()
	for k := int64(0); k < windows; k++ {
		var firsts []int64
		for from := k * windowRows; from < (k+1)*windowRows; from += chunk {
			firsts = append(firsts, from)
		}
		// The rows of window k, at an event time inside it.
		if err := cfg.AddElementList(windowBase+k*windowRows+1, firsts); err != nil {
			t.Fatal(err)
		}
		if err := cfg.AdvanceWatermark(windowEnd(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := cfg.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	firsts := teststream.Create(s, cfg) // first in the pipeline, as TestStream requires
	rows := beam.ParDo(s, &chunkFn{Size: chunk}, firsts)
	windowed := beam.WindowInto(s, window.NewFixedWindows(time.Duration(windowRows)*time.Millisecond), rows)
	opts := WriteOptions{WriteID: "streaming", Shards: 2}
	key := resultKey(t, "")
	beam.ParDo0(s, &resultFn{Key: key}, Write(s, table, windowed, opts))
	if err := run(t, p); err != nil {
		t.Fatal(err)
	}
	if res := collectedResults(key); len(res) != windows {
		t.Fatalf("results %+v, want %d", res, windows)
	}
	checkWindowCommits(t, table, opts.WriteID, []int64{0, 1, 2})
	checkTable(t, table, windows*windowRows)
}
