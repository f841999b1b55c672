// Package restio holds what the object-store drivers that speak their
// service's REST API over net/http (logstore/s3, logstore/azblob) share:
// the error of an answer that is not a success, the wait between
// attempts, and the bounds put on what a hostile answer can make the
// driver hold or print. Each driver keeps what differs between services:
// signing, its retry policy, and how its error bodies are laid out.
package restio

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ResponseError is an answer of the service that is not a success: its
// HTTP status, and the service's error code, message and request id when
// it gave them. The drivers export it as their own ResponseError.
type ResponseError struct {
	StatusCode int
	Code       string // the service's error code; "" without one
	Message    string
	RequestID  string
}

func (e *ResponseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d", e.StatusCode)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request id " + e.RequestID + ")")
	}
	return b.String()
}

// Wait waits d, or until ctx is done (its error then).
func Wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Clip cuts s to n bytes, so that a hostile answer cannot make messages
// long.
func Clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Range cuts b, the body of a GET of length bytes from offset, to what
// was asked: a server that ignored the Range header (no Content-Range in
// its answer) sent the whole object.
func Range(b []byte, contentRange string, offset, length int64) []byte {
	if contentRange == "" && offset > 0 {
		if offset >= int64(len(b)) {
			return []byte{}
		}
		b = b[offset:]
	}
	if int64(len(b)) > length {
		b = b[:length]
	}
	return b
}
