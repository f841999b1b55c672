package delta

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/azblob"
	"github.com/godelta/delta/logstore/gcs"
	"github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/testutil/testserver"
)

// cloudBackends start each cloud backend's loopback server (once per
// test, stopped at its end) and return a function that opens a store on
// it under a key prefix.
var cloudBackends = []struct {
	name  string
	start func(t *testing.T) func(prefix string) (logstore.Store, error)
}{
	{"s3", func(t *testing.T) func(string) (logstore.Store, error) {
		srv, cfg, err := testserver.StartS3()
		testserver.Require(t, srv, err)
		t.Cleanup(srv.Stop)
		return func(prefix string) (logstore.Store, error) {
			return s3.New(context.Background(), cfg.Bucket, prefix, s3.Options{Endpoint: cfg.Endpoint, Region: cfg.Region,
				PathStyle: true, AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey})
		}
	}},
	{"gcs", func(t *testing.T) func(string) (logstore.Store, error) {
		srv, err := testserver.StartGCS()
		testserver.Require(t, srv, err)
		t.Cleanup(srv.Stop)
		return func(prefix string) (logstore.Store, error) {
			return gcs.New(context.Background(), testserver.GCSBucket, prefix, gcs.Options{Endpoint: srv.URL()})
		}
	}},
	{"azblob", func(t *testing.T) func(string) (logstore.Store, error) {
		srv, cfg, err := testserver.StartAzurite()
		testserver.Require(t, srv, err)
		t.Cleanup(srv.Stop)
		return func(prefix string) (logstore.Store, error) {
			return azblob.New(context.Background(), cfg.Container, prefix, azblob.Options{ConnectionString: cfg.ConnectionString})
		}
	}},
}

// The concurrency test's mixed workload (blind appends, app-id appends,
// Serializable partition overwrites, compactions) against each cloud
// backend on its loopback server: 8 writers, each with its own Table and
// store client, as separate machines would have.
func TestConcurrentWritersCloud(t *testing.T) {
	ops := 20 // 8 writers x 20: about 160 commits per backend
	if testing.Short() {
		ops = 6
	}
	for _, b := range cloudBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			open := b.start(t)
			newStore := func() (logstore.Store, error) { return open("conc/t") }
			first, err := newStore()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := CreateStore(ctx, b.name, first, TableSpec{Schema: concSchema(), PartitionColumns: []string{"p"},
				Properties: map[string]string{"delta.checkpointInterval": "50"}}); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var records []commitRecord
			var wg sync.WaitGroup
			errs := make(chan error, concGoroutines)
			for w := range concGoroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					st, err := newStore()
					if err != nil {
						errs <- err
						return
					}
					tbl, err := OpenStore(ctx, b.name, st)
					if err != nil {
						errs <- err
						return
					}
					recs, err := concOps(ctx, tbl, w, ops)
					mu.Lock()
					records = append(records, recs...)
					mu.Unlock()
					if err != nil {
						errs <- fmt.Errorf("writer %d: %w", w, err)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if t.Failed() {
				return
			}
			tbl, err := OpenStore(ctx, b.name, first)
			if err != nil {
				t.Fatal(err)
			}
			checkConcurrentTable(t, tbl, records)
		})
	}
}
