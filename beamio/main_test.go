package beamio

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
)

// The tests run their pipelines on the Prism runner in this process: its
// workers use loopback, so a DoFn of a test shares the test's memory.
// Prism runs up to 8 bundles at once and splits a bundle that makes no
// progress between two progress reports; it has no worker-count option.
// It does not retry a failed bundle: it fails the job, so the tests show
// recovery from failures by running the same pipeline again, which is
// what a restarted pipeline does.
func TestMain(m *testing.M) {
	beam.Init()
	// Prism logs every job at INFO; keep the test output to warnings.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}

// run runs p on Prism.
func run(t *testing.T, p *beam.Pipeline) error {
	t.Helper()
	_, err := prism.Execute(context.Background(), p)
	return err
}

// corpus returns the directory of the shared test corpus, skipping the
// test when it is absent.
func corpus(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "testdata")
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		t.Skipf("no test corpus at %s: %v", dir, err)
	}
	return dir
}

// collected holds what collectFn and resultFn saw, by key.
var collected = struct {
	sync.Mutex
	rows    map[string][]string
	results map[string][]WriteResult
}{rows: map[string][]string{}, results: map[string][]WriteResult{}}

// collectFn records each row, encoded, under Key.
type collectFn struct{ Key string }

func (f *collectFn) ProcessElement(r Row) error {
	b, err := encodeRow(r)
	if err != nil {
		return err
	}
	collected.Lock()
	defer collected.Unlock()
	collected.rows[f.Key] = append(collected.rows[f.Key], string(b))
	return nil
}

// resultFn records each WriteResult under Key.
type resultFn struct{ Key string }

func (f *resultFn) ProcessElement(r WriteResult) {
	collected.Lock()
	defer collected.Unlock()
	collected.results[f.Key] = append(collected.results[f.Key], r)
}

func init() {
	register.DoFn1x1[Row, error](&collectFn{})
	register.DoFn1x0[WriteResult](&resultFn{})
	beam.RegisterType(reflect.TypeFor[genRange]())
	register.DoFn2x0[genRange, func(Row)](&genFn{})
}

func collectedRows(key string) []string {
	collected.Lock()
	defer collected.Unlock()
	return collected.rows[key]
}

func collectedResults(key string) []WriteResult {
	collected.Lock()
	defer collected.Unlock()
	return collected.results[key]
}
