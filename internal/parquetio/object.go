package parquetio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// I/O sizes. Column chunks are fetched whole when they are small, with
// adjacent chunks of the same row group coalesced into one request; larger
// chunks are read in windows, so that memory stays bounded whatever the
// size of a row group.
const (
	// Window is the most bytes fetched at a time from a large chunk, and
	// the size up to which a chunk is fetched whole.
	Window = 8 << 20
	// maxCoalesced is the most bytes fetched by one coalesced request.
	maxCoalesced = 32 << 20
	// maxGap is the unwanted bytes fetched between two chunks: none.
	maxGap = 0
	// maxFetches is the coalesced requests in flight at once.
	maxFetches = 4
	// Whole is the size up to which a stored object is fetched whole, in
	// one request, at its first read: a small checkpoint or data file
	// then costs that one request, not one for the header magic, one for
	// the footer and one per coalesced run of column chunks.
	Whole = 64 << 10
)

// Object is one stored file of known size, read in ranges. It remembers
// the first error its source gave, so that a decoding failure caused by
// I/O is reported as the I/O error and not as corruption. It is safe for
// concurrent use.
type Object struct {
	ctx   context.Context // of ReadAt
	store logstore.Store  // the source: a store object,
	key   string
	ra    io.ReaderAt // or a reader
	name  string      // the file, for errors
	size  int64

	mu  sync.Mutex
	err error
	// whole is the object's bytes once a read fetched all of them (an
	// object of at most Whole bytes); later reads are served from it.
	whole []byte
}

// NewObject returns the object at key in store, of size bytes (from
// Stat). ReadAt uses ctx; chunk readers their own.
func NewObject(ctx context.Context, store logstore.Store, key string, size int64) *Object {
	return &Object{ctx: ctx, store: store, key: key, name: key, size: size}
}

// NewReaderObject returns an object over the first size bytes of r, named
// name in errors. Its chunk readers read straight through to r, with no
// buffering or prefetch of their own: an io.ReaderAt is typically a local
// file or bytes in memory, which a copy would only slow down.
func NewReaderObject(r io.ReaderAt, name string, size int64) *Object {
	return &Object{ctx: context.Background(), ra: r, name: name, size: size}
}

// Name returns the file's name for errors: the store key, or the name
// given to NewReaderObject.
func (o *Object) Name() string { return o.name }

// Stored reports whether the object is in a store, rather than read
// through an io.ReaderAt: whether range requests are costly.
func (o *Object) Stored() bool { return o.store != nil }

// Size returns the object's size in bytes.
func (o *Object) Size() int64 { return o.size }

// get returns length bytes at off, in a slice the caller must not
// modify. A stored object of at most Whole bytes is fetched whole at the
// first get, and every get is served from those bytes.
func (o *Object) get(ctx context.Context, off, length int64) ([]byte, error) {
	if o.store != nil && o.size <= Whole && off >= 0 && length >= 0 && off+length <= o.size {
		o.mu.Lock()
		whole := o.whole
		o.mu.Unlock()
		if whole == nil {
			var err error
			if whole, err = o.fetch(ctx, 0, o.size); err != nil {
				return nil, err
			}
			o.mu.Lock()
			o.whole = whole
			o.mu.Unlock()
		}
		return whole[off : off+length : off+length], nil
	}
	return o.fetch(ctx, off, length)
}

// fetch reads length bytes at off from the source, in a new slice.
func (o *Object) fetch(ctx context.Context, off, length int64) ([]byte, error) {
	var b []byte
	var err error
	if o.store != nil {
		b, err = o.store.GetRange(ctx, o.key, off, length)
	} else {
		b = make([]byte, length)
		var n int
		n, err = o.ra.ReadAt(b, off)
		if err == io.EOF && int64(n) == length {
			err = nil
		}
		b = b[:n]
	}
	if err == nil && int64(len(b)) != length {
		// The object changed size under us, or the store broke its
		// contract; either way the bytes are not what the footer says.
		err = fmt.Errorf("parquetio: %s: read %d bytes at offset %d, want %d: %w", o.name, len(b), off, length, io.ErrUnexpectedEOF)
	}
	if err != nil {
		o.mu.Lock()
		if o.err == nil {
			o.err = err
		}
		o.mu.Unlock()
		return nil, err
	}
	return b, nil
}

// StoreErr returns the first error the source gave, if any.
func (o *Object) StoreErr() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// Failed turns an error met while decoding the object into what a reader
// returns: the source's error if it gave one, wrapped with prefix; ctx's
// if it is done; err itself if it is a *deltaerr.CorruptError (naming
// the object if it names no file); and
// otherwise a *deltaerr.CorruptError for the object that says where.
func (o *Object) Failed(ctx context.Context, err error, prefix, where string) error {
	if serr := o.StoreErr(); serr != nil {
		return fmt.Errorf("%s: reading %s: %w", prefix, o.name, serr)
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var ce *deltaerr.CorruptError
	if errors.As(err, &ce) {
		if ce.Path == "" {
			ce.Path = o.name // a decoder error that did not know the file
		}
		return err
	}
	return &deltaerr.CorruptError{Path: o.name, Reason: where, Err: err}
}

var errNegativeOffset = errors.New("parquetio: negative read offset")

// ReadAt reads straight from the source. parquet-go uses it to read the
// header magic and the footer.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errNegativeOffset
	}
	if off >= o.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), o.size-off)
	b, err := o.get(o.ctx, off, n)
	if err != nil {
		return 0, err
	}
	copy(p, b)
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// ChunkReader is an io.ReaderAt over one column chunk, [start, end) of its
// object, for parquet-go's page reader. Offsets are those of the object;
// reads outside the chunk find io.EOF, so a chunk whose pages run past its
// length, as the footer gives it, reads as truncated.
type ChunkReader struct {
	ctx        context.Context
	o          *Object
	start, end int64
	buf        []byte // bytes from bufOff
	bufOff     int64
}

// Chunk returns the reader of column chunk cc of o, after checking that
// the footer puts it inside the file. column names it in errors.
func (o *Object) Chunk(ctx context.Context, cc *format.ColumnChunk, column string) (*ChunkReader, error) {
	if cc.FilePath != "" {
		return nil, deltaerr.Corruptf(o.name, "column %s: chunk in another file (%s)", column, cc.FilePath)
	}
	md := &cc.MetaData
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset // where parquet-go starts reading
	}
	length := md.TotalCompressedSize
	if start < 4 || length < 0 || start > o.size || length > o.size-start {
		return nil, deltaerr.Corruptf(o.name, "column %s: chunk [%d, +%d) outside the file", column, start, length)
	}
	return &ChunkReader{ctx: ctx, o: o, start: start, end: start + length, bufOff: start}, nil
}

// ReadAt reads from the chunk's buffer, fetching a window when the read
// is outside it.
func (r *ChunkReader) ReadAt(p []byte, off int64) (int, error) {
	if r.o.ra != nil {
		return r.readThrough(p, off)
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if pos < r.start || pos >= r.end {
			return n, io.EOF
		}
		if pos >= r.bufOff && pos < r.bufOff+int64(len(r.buf)) {
			n += copy(p[n:], r.buf[pos-r.bufOff:])
			continue
		}
		// Fetch a window, but at least what this read asks for.
		length := min(r.end-pos, max(Window, int64(len(p)-n)))
		b, err := r.o.get(r.ctx, pos, length)
		if err != nil {
			return n, err
		}
		r.buf, r.bufOff = b, pos
	}
	return n, nil
}

// readThrough is ReadAt on an object read through an io.ReaderAt.
func (r *ChunkReader) readThrough(p []byte, off int64) (int, error) {
	if off < r.start || off >= r.end {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.end-off)
	n, err := r.o.ra.ReadAt(p[:want], off)
	if err == io.EOF && int64(n) == want {
		err = nil
	}
	if err != nil && err != io.EOF {
		r.o.mu.Lock()
		if r.o.err == nil {
			r.o.err = err
		}
		r.o.mu.Unlock()
	}
	if err == nil && want < int64(len(p)) {
		err = io.EOF
	}
	return n, err
}

// Prefetch fills the buffers of the given chunk readers of one row group:
// chunks up to Window bytes long are fetched whole, neighbours coalesced
// into requests of at most maxCoalesced bytes, a few requests at a time.
// Larger chunks are left to fetch their windows as they are read. All
// readers must be of one object.
func Prefetch(readers []*ChunkReader) error {
	small := make([]*ChunkReader, 0, len(readers))
	for _, r := range readers {
		if r.end-r.start <= Window && r.buf == nil && r.end > r.start && r.o.ra == nil {
			small = append(small, r)
		}
	}
	slices.SortFunc(small, func(a, b *ChunkReader) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	type request struct {
		start, end int64
		readers    []*ChunkReader
	}
	var reqs []request
	for _, r := range small {
		if k := len(reqs) - 1; k >= 0 && r.start >= reqs[k].start && r.start-reqs[k].end <= maxGap && max(reqs[k].end, r.end)-reqs[k].start <= maxCoalesced {
			reqs[k].end = max(reqs[k].end, r.end)
			reqs[k].readers = append(reqs[k].readers, r)
			continue
		}
		reqs = append(reqs, request{r.start, r.end, []*ChunkReader{r}})
	}
	fetch := func(q *request) error {
		r0 := q.readers[0]
		b, err := r0.o.get(r0.ctx, q.start, q.end-q.start)
		if err != nil {
			return err
		}
		for _, r := range q.readers {
			r.buf, r.bufOff = b[r.start-q.start:r.end-q.start:r.end-q.start], r.start
		}
		return nil
	}
	switch len(reqs) {
	case 0:
		return nil
	case 1:
		return fetch(&reqs[0])
	}
	errs := make([]error, len(reqs))
	sem := make(chan struct{}, maxFetches)
	var wg sync.WaitGroup
	for i := range reqs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fetch(&reqs[i])
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
