package actions

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/godelta/delta/deltaerr"
)

// MaxLineBytes caps one line of a commit file (one action) read by
// ReadActions. Real actions are far smaller (an add with full statistics of
// a very wide table is a few MiB); the cap keeps a damaged or hostile log
// file, such as a 40 GB sparse file of NUL bytes, from exhausting memory.
const MaxLineBytes = 256 << 20

// ReadActions decodes the newline-delimited JSON of a commit file (or of a
// JSON checkpoint) from r like EachAction, but streams it: it holds one line
// at a time, never the whole file, so a commit of any size is read in
// bounded memory. name is used in errors.
//
// A line longer than MaxLineBytes, or one that does not start with '{'
// (checked as soon as its first bytes arrive, without reading the rest of
// it), makes the file corrupt: the error is a *deltaerr.CorruptError naming
// the file and line. An error from r is returned wrapped, so errors.Is still
// finds the store's kind; an error from fn stops the walk and is returned as
// is.
func ReadActions(name string, r io.Reader, fn func(a *Action) error) error {
	return readActions(name, r, MaxLineBytes, fn)
}

// DecodeCommitReader is DecodeCommit over a stream (see ReadActions).
func DecodeCommitReader(name string, r io.Reader) ([]Action, error) {
	var out []Action
	err := ReadActions(name, r, func(a *Action) error {
		out = append(out, *a)
		return nil
	})
	return out, err
}

func readActions(name string, r io.Reader, maxLine int, fn func(a *Action) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte // owned storage for a line that spans reads of br
	var rules commitRules
	for lineNo := 1; ; lineNo++ {
		var line []byte
		started := false // the line's first non-space byte was seen
		var err error
		for spanning := false; ; spanning = true {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			if !started {
				if t := bytes.TrimLeft(frag, " \t\r\n"); len(t) > 0 {
					started = true
					if t[0] != '{' {
						return deltaerr.Corruptf(name, "line %d is not a valid action: it does not start with '{' but with byte %#02x", lineNo, t[0])
					}
				}
			}
			if len(line)+len(frag) > maxLine {
				return deltaerr.Corruptf(name, "line %d is longer than %d bytes", lineNo, maxLine)
			}
			full := errors.Is(err, bufio.ErrBufferFull)
			if !full && !spanning {
				line = frag // the common case: the line fits br's buffer
				break
			}
			if !spanning {
				buf = buf[:0]
			}
			buf = append(buf, frag...)
			line = buf
			if !full {
				break
			}
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		if derr := decodeLine(name, lineNo, line, &rules, fn); derr != nil {
			return derr
		}
		if err == io.EOF {
			return nil
		}
	}
}
