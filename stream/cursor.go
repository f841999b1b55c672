package stream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Cursor keeps a consumer's position between runs: Load the offset to
// resume at (FromOffset), Save a batch's End once the batch is processed.
// A consumer that writes its output to a Delta table should rather record
// the offset in the same commit as the output (Sink.Write with
// End.Seq() as the batch version, then Sink.LastVersion and
// OffsetFromSeq on restart), so that output and position cannot part.
type Cursor interface {
	// Load returns the saved offset, and false when none was saved.
	Load(ctx context.Context) (Offset, bool, error)
	// Save records o durably.
	Save(ctx context.Context, o Offset) error
}

// FileCursor keeps the offset in a local file, as text (Offset.String).
// Save replaces the file atomically (a temporary file, synced, renamed,
// and the directory synced), so a crash leaves the old offset or the new
// one, never a mix.
type FileCursor struct {
	Path string
}

// Load reads the offset; a missing file is no offset, a malformed one
// ErrOffset.
func (c FileCursor) Load(context.Context) (Offset, bool, error) {
	b, err := os.ReadFile(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return Offset{}, false, nil
	}
	if err != nil {
		return Offset{}, false, err
	}
	o, err := ParseOffset(strings.TrimSpace(string(b)))
	if err != nil {
		return Offset{}, false, fmt.Errorf("%s: %w", c.Path, err)
	}
	return o, true, nil
}

// Save writes the offset.
func (c FileCursor) Save(_ context.Context, o Offset) error {
	dir := filepath.Dir(c.Path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(c.Path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.WriteString(o.String() + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, c.Path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// TableCursor keeps the offset in a Delta table as the txn version of
// an application (Offset.Seq): Load asks the table, Save commits a txn
// action alone. Use it when the consumer's output is not that table;
// when it is, record the offset with the output (see Cursor).
type TableCursor struct {
	Sink *Sink
}

// Load returns the offset the application last recorded.
func (c TableCursor) Load(ctx context.Context) (Offset, bool, error) {
	n, ok, err := c.Sink.LastVersion(ctx)
	if err != nil || !ok {
		return Offset{}, false, err
	}
	return OffsetFromSeq(n), true, nil
}

// Save records o; an offset not after the one recorded is a no-op.
func (c TableCursor) Save(ctx context.Context, o Offset) error {
	n, err := o.Seq()
	if err != nil {
		return err
	}
	_, err = c.Sink.Write(ctx, n, nil)
	return err
}
