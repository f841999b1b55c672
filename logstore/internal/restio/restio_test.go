package restio

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRange: a body with a Content-Range is what was asked, cut to
// length; without one (the server ignored the Range header) it is the
// whole object, cut to [offset, offset+length).
func TestRange(t *testing.T) {
	obj := []byte("0123456789")
	for _, c := range []struct {
		body         []byte
		contentRange string
		offset, n    int64
		want         string
	}{
		{obj[2:5], "bytes 2-4/10", 2, 3, "234"},
		{obj[2:], "bytes 2-9/10", 2, 3, "234"},
		{obj, "", 2, 3, "234"},
		{obj, "", 8, 5, "89"},
		{obj, "", 10, 1, ""},
		{obj, "", 0, 4, "0123"},
	} {
		if got := string(Range(c.body, c.contentRange, c.offset, c.n)); got != c.want {
			t.Errorf("Range(%q, %q, %d, %d) = %q, want %q", c.body, c.contentRange, c.offset, c.n, got, c.want)
		}
	}
}

func TestClipAndWait(t *testing.T) {
	if got := Clip("abcdef", 3); got != "abc..." {
		t.Errorf("Clip: %q", got)
	}
	if got := Clip("ab", 3); got != "ab" {
		t.Errorf("Clip: %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait of a cancelled context: %v", err)
	}
	if err := Wait(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Wait: %v", err)
	}
	e := &ResponseError{StatusCode: 404, Code: "NoSuchKey", Message: "gone", RequestID: "r1"}
	if e.Error() != "HTTP 404 NoSuchKey: gone (request id r1)" {
		t.Errorf("ResponseError: %q", e.Error())
	}
}
