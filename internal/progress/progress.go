// Package progress draws a one-line progress bar on a terminal, for
// commands that work through a known number of items (VACUUM's deletes,
// CONVERT's files). It draws only when its writer is a terminal: on a pipe
// or file it writes nothing, so logs and scripted output stay clean.
//
// A *Bar is safe for concurrent use: workers call Add from any goroutine.
// It redraws at most every 100 ms; Done draws the final state and ends the
// line.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Bar is a progress bar over total items. The zero value and a nil *Bar
// draw nothing.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	total int64
	done  int64
	last  time.Time
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// New returns a bar that draws to w, or nil (which draws nothing) when w is
// not a terminal.
func New(w io.Writer, label string, total int64) *Bar {
	if !IsTerminal(w) {
		return nil
	}
	return NewTo(w, label, total)
}

// NewTo returns a bar that draws to w whether or not it is a terminal
// (for tests).
func NewTo(w io.Writer, label string, total int64) *Bar {
	return &Bar{w: w, label: label, total: total}
}

// Add records n more items done and redraws when due.
func (b *Bar) Add(n int64) {
	if b == nil || b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	if now := time.Now(); now.Sub(b.last) >= 100*time.Millisecond {
		b.last = now
		b.draw()
	}
}

// Done draws the final state and ends the line.
func (b *Bar) Done() {
	if b == nil || b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.draw()
	fmt.Fprintln(b.w)
}

const width = 30

func (b *Bar) draw() {
	frac := 1.0
	if b.total > 0 {
		frac = min(float64(b.done)/float64(b.total), 1)
	}
	n := int(frac * width)
	fmt.Fprintf(b.w, "\r%s [%s%s] %d/%d %3.0f%%", b.label, strings.Repeat("=", n), strings.Repeat(" ", width-n), b.done, b.total, frac*100)
}
