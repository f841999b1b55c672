package s3

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// connSet is the set of network connections the HTTP client a Store built
// for itself has dialled and not yet closed. Each such client has its own
// http.Transport, whose pool keeps idle connections (and a reader and a
// writer goroutine for each) until they time out, long after the store is
// dropped. Store.Close therefore closes every
// connection in the set, idle or in use, and later dials fail.
//
// A caller's Options.HTTPClient is the caller's: its connections are never
// tracked nor closed.
type connSet struct {
	mu     sync.Mutex
	open   map[*trackedConn]struct{}
	closed bool
}

// track records the dials of tr in the set. tr is the transport of the
// client the store built for itself.
func (c *connSet) track(tr *http.Transport) {
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			conn.Close()
			return nil, fmt.Errorf("logstore/s3: dial after Close: %w", net.ErrClosed)
		}
		if c.open == nil {
			c.open = map[*trackedConn]struct{}{}
		}
		tc := &trackedConn{Conn: conn, set: c}
		c.open[tc] = struct{}{}
		return tc, nil
	}
}

// close closes every connection of the set; dials fail from then on. A
// nil set holds nothing.
func (c *connSet) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	open := c.open
	c.open, c.closed = nil, true
	c.mu.Unlock()
	for tc := range open {
		tc.Conn.Close()
	}
}

// trackedConn is a connection that leaves its set when closed.
type trackedConn struct {
	net.Conn
	set *connSet
}

func (t *trackedConn) Close() error {
	t.set.mu.Lock()
	delete(t.set.open, t)
	t.set.mu.Unlock()
	return t.Conn.Close()
}
