package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func TestBar(t *testing.T) {
	var buf bytes.Buffer
	if New(&buf, "x", 3) != nil {
		t.Fatal("a bytes.Buffer is not a terminal, but New returned a bar")
	}
	b := NewTo(&buf, "deleting", 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { b.Add(1) })
	}
	wg.Wait()
	b.Done()
	out := buf.String()
	if !strings.HasSuffix(out, "deleting ["+strings.Repeat("=", width)+"] 4/4 100%\n") {
		t.Fatalf("final line = %q", out)
	}
	var nilBar *Bar
	nilBar.Add(1) // must not panic
	nilBar.Done()
}
