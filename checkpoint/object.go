package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/godelta/delta/logstore"
)

// I/O sizes. Column chunks are fetched whole when they are small, with
// adjacent chunks of the same row group coalesced into one request; larger
// chunks are read in windows, so that memory stays bounded whatever the
// size of a row group. Bytes of columns not wanted are never fetched, but
// for those at the end of a small file, read with the footer.
const (
	footerRead   = 256 << 10 // bytes read from the end of a file to find the footer
	maxCoalesced = 32 << 20  // most bytes fetched by one coalesced request
	maxGap       = 0         // unwanted bytes fetched between two chunks: none
	window       = 8 << 20   // bytes fetched at a time from a large chunk
	maxFetches   = 4         // coalesced requests in flight at once
)

// object is one stored file read in ranges. It remembers the first error
// the store gave, so that a decoding failure caused by I/O is reported as
// the I/O error and not as corruption.
type object struct {
	ctx   context.Context
	store logstore.Store
	key   string
	size  int64

	mu  sync.Mutex
	err error
}

// get returns length bytes at off; fewer only at the end of the object.
func (o *object) get(off, length int64) ([]byte, error) {
	b, err := o.store.GetRange(o.ctx, o.key, off, length)
	if err == nil && int64(len(b)) != length {
		// The object changed size under us, or the store broke its
		// contract; either way the bytes are not what the footer says.
		err = fmt.Errorf("checkpoint: %s: store returned %d bytes at offset %d, want %d", o.key, len(b), off, length)
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

// storeErr returns the first error the store gave, if any.
func (o *object) storeErr() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

var errNegativeOffset = errors.New("checkpoint: negative read offset")

// ReadAt reads straight from the store. parquet-go uses it to read the
// header magic and the footer.
func (o *object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errNegativeOffset
	}
	if off >= o.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), o.size-off)
	b, err := o.get(off, n)
	if err != nil {
		return 0, err
	}
	copy(p, b)
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// chunkReader is an io.ReaderAt over one column chunk, [start, end) of its
// object, for parquet-go's page reader. Offsets are those of the object;
// reads outside the chunk find io.EOF.
type chunkReader struct {
	o          *object
	start, end int64
	buf        []byte // bytes from bufOff
	bufOff     int64
}

func newChunkReader(o *object, start, length int64) *chunkReader {
	return &chunkReader{o: o, start: start, end: start + length, bufOff: start}
}

func (r *chunkReader) ReadAt(p []byte, off int64) (int, error) {
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
		length := min(r.end-pos, max(window, int64(len(p)-n)))
		b, err := r.o.get(pos, length)
		if err != nil {
			return n, err
		}
		r.buf, r.bufOff = b, pos
	}
	return n, nil
}

// prefetch fills the buffers of the given chunk readers of one row group:
// chunks up to window bytes long are fetched whole, neighbours coalesced
// into requests of at most maxCoalesced bytes, a few requests at a time.
// Larger chunks are left to fetch their windows as they are read.
func prefetch(readers []*chunkReader) error {
	small := make([]*chunkReader, 0, len(readers))
	for _, r := range readers {
		if r.end-r.start <= window && r.buf == nil {
			small = append(small, r)
		}
	}
	slices.SortFunc(small, func(a, b *chunkReader) int {
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
		readers    []*chunkReader
	}
	var reqs []request
	for _, r := range small {
		if k := len(reqs) - 1; k >= 0 && r.start >= reqs[k].start && r.start-reqs[k].end <= maxGap && max(reqs[k].end, r.end)-reqs[k].start <= maxCoalesced {
			reqs[k].end = max(reqs[k].end, r.end)
			reqs[k].readers = append(reqs[k].readers, r)
			continue
		}
		reqs = append(reqs, request{r.start, r.end, []*chunkReader{r}})
	}
	fetch := func(q *request) error {
		b, err := q.readers[0].o.get(q.start, q.end-q.start)
		if err != nil {
			return err
		}
		for _, r := range q.readers {
			r.buf, r.bufOff = b[r.start-q.start:r.end-q.start:r.end-q.start], r.start
		}
		return nil
	}
	if len(reqs) == 1 {
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
