package s3_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/logstore/storetest"
	"github.com/godelta/delta/testutil/testserver"
)

// One versitygw serves every test of the package that does not stop its
// server; each test works under a prefix of its own.
var (
	shared struct {
		once sync.Once
		srv  *testserver.Server
		cfg  testserver.S3Config
		err  error
	}
	prefixes atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	os.Exit(code)
}

// server returns the shared server, starting it on first use; it skips the
// test when versitygw is not installed (fails in CI).
func server(t testing.TB) testserver.S3Config {
	t.Helper()
	shared.once.Do(func() {
		shared.srv, shared.cfg, shared.err = testserver.StartS3()
	})
	testserver.Require(t, shared.srv, shared.err)
	return shared.cfg
}

func options(cfg testserver.S3Config) s3.Options {
	return s3.Options{
		Region:    cfg.Region,
		Endpoint:  cfg.Endpoint,
		PathStyle: true,
		AccessKey: cfg.AccessKey,
		SecretKey: cfg.SecretKey,
	}
}

// newStore returns a store on the shared server under a fresh prefix.
func newStore(t testing.TB, tweak ...func(*s3.Options)) *logstore.Portable {
	t.Helper()
	cfg := server(t)
	opts := options(cfg)
	for _, f := range tweak {
		f(&opts)
	}
	prefix := fmt.Sprintf("t%04d/root", prefixes.Add(1))
	st, err := s3.New(context.Background(), cfg.Bucket, prefix, opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store { return newStore(t) })
}

func TestConformanceSmallPages(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store {
		return newStore(t, func(o *s3.Options) { o.PageSize = 3 })
	})
}

// driver returns the *s3.Store under st, for its extras (Client, Prefix).
func driver(st logstore.Store) *s3.Store {
	d, _ := logstore.DriverOf[*s3.Store](st)
	return d
}
