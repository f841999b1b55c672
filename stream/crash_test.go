package stream_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/stream"
)

// soak makes TestCrashRestart a long run: go test ./stream -run CrashRestart
// -stream.soak=2000 writes 2000 batches (the default run writes 40).
var soak = flag.Int("stream.soak", 0, "batches of the producer crash test (default 40)")

const producerEnv = "GODELTA_STREAM_TEST_PRODUCER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(producerEnv); spec != "" {
		if err := runProducer(spec); err != nil {
			fmt.Fprintln(os.Stderr, "producer:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashRows is how many rows each batch of the crash test has.
const crashRows = 5

// runProducer is the child process of TestCrashRestart: "table,batches".
// It resumes after the last batch the table holds and writes the rest,
// one commit per batch, until it is done or killed.
func runProducer(spec string) error {
	var path string
	var n int64
	if _, err := fmt.Sscanf(spec, "%d,%s", &n, &path); err != nil {
		return err
	}
	ctx := context.Background()
	tbl, err := delta.Open(ctx, path)
	if err != nil {
		return err
	}
	defer tbl.Close()
	sink, err := stream.NewSink(tbl.Store(), "crash-producer", stream.SinkOptions{})
	if err != nil {
		return err
	}
	next := int64(0)
	if v, ok, err := sink.LastVersion(ctx); err != nil {
		return err
	} else if ok {
		next = v + 1
	}
	for b := next; b < n; b++ {
		if _, err := sink.Write(ctx, b, delta.Rows(rowsOf(b, crashRows))); err != nil {
			return err
		}
		fmt.Println(b) // progress, for the parent to time its kill
	}
	return nil
}

// TestCrashRestart runs the table as a message queue under crashes: a
// producer process SIGKILLed at random points and restarted until it has
// written every batch, a consumer that "crashes" (drops its work and
// restarts from its stored offset) at random points, and a compaction
// beside both. Every batch must be in the table exactly once, and the
// consumer must have seen every row exactly once, in order.
func TestCrashRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	batches := int64(40)
	if *soak > 0 {
		batches = int64(*soak)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tbl := newTable(t, "", nil)
	dir := tbl.URI()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 16))
	seed := rng.Uint64()
	t.Logf("seed %d", seed)

	// The consumer: FileCursor, crashes between reading a batch and
	// saving its offset.
	cursor := stream.FileCursor{Path: filepath.Join(t.TempDir(), "offset")}
	var (
		seen           []key
		consumerErr    error
		consumerStarts int
		wg             sync.WaitGroup
	)
	total := int(batches) * crashRows
	stopC := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		crng := rand.New(rand.NewPCG(seed, 1))
		defer close(stopC) // the compaction stops with the consumer
		for len(seen) < total && consumerErr == nil {
			consumerStarts++
			consumerErr = consumeOnce(ctx, tbl, cursor, crng, &seen, total)
		}
	}()
	compactions := 0
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stopC:
				return
			case <-time.After(15 * time.Millisecond):
			}
			res, err := stream.Compact(ctx, tbl.Store(), stream.CompactOptions{})
			if err != nil && !errors.Is(err, delta.ErrConflict) {
				t.Errorf("compaction: %v", err)
				return
			}
			if res.Removed > 0 {
				compactions++
			}
		}
	}()

	kills := 0
	prng := rand.New(rand.NewPCG(seed, 2))
	for {
		// The kill comes after a random number of commits (0 to 3) and
		// then a random delay: anywhere in a write, in a commit, between
		// commits, or while the process starts.
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), producerEnv+"="+strconv.FormatInt(batches, 10)+","+dir)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan struct{}, 1)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- struct{}{}
			}
			close(lines)
		}()
		after, open := prng.IntN(4), true
		for i := 0; i < after && open; i++ {
			_, open = <-lines
		}
		if open {
			time.Sleep(time.Duration(prng.IntN(30)) * time.Millisecond)
		}
		killed := cmd.Process.Signal(syscall.SIGKILL) == nil
		for range lines {
		}
		err = cmd.Wait()
		if err == nil {
			break // it finished before the kill
		}
		if !killed {
			t.Fatalf("producer failed: %v", err)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("producer failed: %v", err)
		}
		kills++
	}
	wg.Wait()
	if consumerErr != nil {
		t.Fatal(consumerErr)
	}
	equalKeys(t, tableKeys(t, tbl), want(crashRows, "", seq(batches)...))
	equalKeys(t, seen, want(crashRows, "", seq(batches)...))
	t.Logf("%d batches: producer killed %d times, consumer restarted %d times, %d compactions", batches, kills, consumerStarts-1, compactions)
}

func seq(n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// consumeOnce is one run of the consumer: from the stored offset, read
// batches and save their ends, until a simulated crash (work of the
// batch in hand lost, offset not saved) or every row has been seen.
func consumeOnce(ctx context.Context, tbl *delta.Table, cursor stream.Cursor, rng *rand.Rand, seen *[]key, total int) error {
	start := stream.FromVersion(0)
	if o, ok, err := cursor.Load(ctx); err != nil {
		return err
	} else if ok {
		start = stream.FromOffset(o)
	}
	src, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: start, MaxFilesPerTrigger: 1 + rng.IntN(3),
		PollInterval: time.Millisecond, MaxPollInterval: 10 * time.Millisecond})
	if err != nil {
		return err
	}
	for len(*seen) < total {
		b, err := src.Next(ctx)
		if err != nil {
			return err
		}
		k, err := readKeys(ctx, b)
		if err != nil {
			return err
		}
		if rng.IntN(5) == 0 {
			return nil // crash: this batch's work and offset are lost
		}
		*seen = append(*seen, k...)
		if err := cursor.Save(ctx, b.End); err != nil {
			return err
		}
	}
	return nil
}
