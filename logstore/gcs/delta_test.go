package gcs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godelta/delta"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/gcs"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil/backendtest"
	"github.com/godelta/delta/testutil/testserver"
)

func tableSchema() *schema.StructType {
	st, err := schema.ParseDDL("id BIGINT NOT NULL, writer INT, note STRING")
	if err != nil {
		panic(err)
	}
	return st
}

func createTable(t testing.TB, st logstore.Store) *delta.Table {
	t.Helper()
	tbl, err := delta.CreateStore(t.Context(), "gcs-test", st, delta.TableSpec{Schema: tableSchema(), Name: "gcs"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// rowsFor is the one row writer w appends in its i-th commit; its id is
// unique across writers.
func rowsFor(w, i int) [][]schema.Value {
	id := int64(w)*1_000_000 + int64(i)
	return [][]schema.Value{{schema.LongValue(id), schema.IntegerValue(int32(w)), schema.StringValue(fmt.Sprintf("w%d-%d", w, i))}}
}

func deltaWriteOptions() delta.WriteOptions { return delta.WriteOptions{} }

// scanIDs returns the ids of a full scan of the latest version.
func scanIDs(t testing.TB, tbl *delta.Table) []int64 {
	t.Helper()
	ctx := t.Context()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Scan(snap, delta.ScanOptions{Columns: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for row, err := range s.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, row.Values()[0].Int64())
	}
	slices.Sort(ids)
	return ids
}

// TestDeltaTable writes a table on the server from concurrent writers,
// checkpoints it, and reads it back through a fresh Store.
func TestDeltaTable(t *testing.T) {
	st := newStore(t, gcs.Options{PageSize: 25})
	// A second store on the same prefix, as another process would open it.
	st2, err := gcs.New(t.Context(), driver(st).Bucket(), driver(st).Prefix(), gcs.Options{Endpoint: server(t).URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	backendtest.TableRoundTrip(t, st, st2)
}

// TestCorpusTables uploads corpus tables and reads them through the
// backend: the same version, files and rows as from the local disk.
func TestCorpusTables(t *testing.T) {
	backendtest.Corpus(t, func(t *testing.T) logstore.Store { return newStore(t, gcs.Options{PageSize: 5}) })
}

// flakyProxy forwards TCP connections to a server, and cuts a share of
// them after the request went through but before the response came back:
// the write lands, the client sees a broken connection.
type flakyProxy struct {
	ln      net.Listener
	target  string
	dropPct atomic.Int64
	cuts    atomic.Int64
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]bool // open client connections
}

func newFlakyProxy(t *testing.T, target string) *flakyProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &flakyProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Go(p.serve)
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			c.Close() // idle keep-alive connections would stay for 90s
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *flakyProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *flakyProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns[c] = true
		p.mu.Unlock()
		p.wg.Go(func() {
			p.handle(c)
			p.mu.Lock()
			delete(p.conns, c)
			p.mu.Unlock()
		})
	}
}

func (p *flakyProxy) handle(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() {
		_, _ = io.Copy(s, c)
		s.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if rand.Int64N(100) < p.dropPct.Load() {
				p.cuts.Add(1)
				return // the server answered; the client never hears it
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestAmbiguousCommits runs appends through a proxy that loses responses
// after the server acted on the request. Every append that returned a
// version must be in the table once; one that failed may be there or not;
// no row may be there twice, and nothing else.
func TestAmbiguousCommits(t *testing.T) {
	s := server(t)
	ctx := t.Context()
	proxy := newFlakyProxy(t, s.Addr)
	direct := newStore(t, gcs.Options{})
	tbl := createTable(t, direct)
	flaky, err := gcs.New(ctx, driver(direct).Bucket(), driver(direct).Prefix(), gcs.Options{Endpoint: proxy.URL(), MaxAttempts: 10, RetryBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer flaky.Close()
	ftbl, err := delta.OpenStore(ctx, "flaky", flaky)
	if err != nil {
		t.Fatal(err)
	}
	proxy.dropPct.Store(4)
	events := &countingHandler{counts: map[string]int{}}
	wopts := delta.WriteOptions{Txn: delta.TxnOptions{Logger: slog.New(events)}}
	const writers, perWriter = 4, 25
	var (
		mu        sync.Mutex
		succeeded = map[int64]bool{}
		failed    = map[int64]bool{}
		wg        sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				rows := rowsFor(w, i)
				_, err := ftbl.AppendRows(ctx, rows, wopts)
				mu.Lock()
				if err == nil {
					succeeded[rows[0][0].Int64()] = true
				} else {
					failed[rows[0][0].Int64()] = true
					if len(failed) <= 3 {
						t.Logf("append failed: %v", err)
					}
					if errors.Is(err, logstore.ErrAlreadyExists) {
						t.Errorf("append failed with ErrAlreadyExists: %v", err)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	proxy.dropPct.Store(0)
	ids := scanIDs(t, tbl)
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("row %d is in the table twice", id)
		}
		seen[id] = true
		if !succeeded[id] && !failed[id] {
			t.Errorf("row %d was never appended", id)
		}
	}
	for id := range succeeded {
		if !seen[id] {
			t.Errorf("append of row %d returned success, but the row is not in the table", id)
		}
	}
	landed := 0
	for id := range failed {
		if seen[id] {
			landed++
		}
	}
	t.Logf("%d responses cut; %d appends succeeded, %d failed (%d of those landed anyway)", proxy.cuts.Load(), len(succeeded), len(failed), landed)
	events.mu.Lock()
	t.Logf("txn events: %v", events.counts)
	events.mu.Unlock()
	if proxy.cuts.Load() == 0 {
		t.Error("the proxy cut nothing")
	}
}

// countingHandler counts txn's log records by message.
type countingHandler struct {
	mu     sync.Mutex
	counts map[string]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.counts[r.Message]++
	h.mu.Unlock()
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// BenchmarkCommitLatency compares a Delta commit with a bare upload with
// ifGenerationMatch=0 on the same server (see backendtest.CommitLatency).
// Run it with -benchtime=500x for 500 commits.
func BenchmarkCommitLatency(b *testing.B) {
	st := benchStore(b)
	d := driver(st)
	backendtest.CommitLatency(b, st, func(ctx context.Context, key string, data []byte) error {
		// A bare media upload (uploadType=media), one request.
		u := server(b).URL() + "/upload/storage/v1/b/" + d.Bucket() + "/o?uploadType=media&ifGenerationMatch=0&name=" + url.QueryEscape(d.Prefix()+key)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(data))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := d.HTTPClient().Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("upload: %s", resp.Status)
		}
		return nil
	})
}

// benchStore is a store on a bucket of its own: the emulator's memory
// backend scans a bucket's objects on every write, so a bucket shared with
// earlier runs would slow later ones.
func benchStore(b *testing.B) *logstore.Portable {
	s := server(b)
	name := fmt.Sprintf("bench-%d", seq.Add(1))
	if err := testserver.CreateGCSBucket(b.Context(), s, name); err != nil {
		b.Fatal(err)
	}
	st, err := gcs.New(b.Context(), name, "t", gcs.Options{Endpoint: s.URL()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}
