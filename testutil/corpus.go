// Package testutil holds helpers shared by the tests of several packages.
// Its subpackages are faultstore (fault and crash injection over any
// store), testserver (the loopback S3, GCS and Azure servers) and
// backendtest (the checks every cloud backend runs).
package testutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// CorpusDir returns the shared conformance corpus: $GODELTA_TESTDATA, else
// shared/testdata beside the module checkout. It skips the test when the
// corpus is missing, and fails it when CI is set (CI always has it).
func CorpusDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "shared", "testdata")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if os.Getenv("CI") != "" {
			t.Fatalf("corpus missing at %s (set GODELTA_TESTDATA); CI must have ../shared beside the checkout", dir)
		}
		t.Skipf("corpus missing at %s (set GODELTA_TESTDATA)", dir)
	}
	return dir
}
