package parquetio

import (
	"io"

	"github.com/parquet-go/parquet-go"
)

// PageAhead reads the pages of a column chunk on its own goroutine, one
// page ahead of the caller, so that decompression and decoding run on
// another core while the caller assembles values. A panic of parquet-go
// on that goroutine becomes, through [Decode], the error of the page
// read.
type PageAhead struct {
	pages   parquet.Pages
	file    string // for errors
	column  string
	ch      chan pageResult
	done    chan struct{}
	started bool
}

type pageResult struct {
	page parquet.Page
	err  error
}

// NewPageAhead returns a PageAhead over the pages of column of file. The
// goroutine starts with the first ReadPage.
func NewPageAhead(pages parquet.Pages, file, column string) *PageAhead {
	return &PageAhead{pages: pages, file: file, column: column, ch: make(chan pageResult, 1), done: make(chan struct{})}
}

func (p *PageAhead) run() {
	defer close(p.ch)
	for {
		var r pageResult
		r.err = Decode(p.file, p.column, func() error {
			var err error
			r.page, err = p.pages.ReadPage()
			return err
		})
		select {
		case p.ch <- r:
		case <-p.done:
			if r.page != nil {
				parquet.Release(r.page)
			}
			return
		}
		if r.err != nil {
			return
		}
	}
}

// ReadPage returns the next page, io.EOF after the last.
func (p *PageAhead) ReadPage() (parquet.Page, error) {
	if !p.started {
		p.started = true
		go p.run()
	}
	r, ok := <-p.ch
	if !ok {
		return nil, io.EOF
	}
	return r.page, r.err
}

// Close stops the goroutine, waits for it, and closes the pages.
func (p *PageAhead) Close() error {
	if p.started {
		close(p.done)
		for r := range p.ch {
			if r.page != nil {
				parquet.Release(r.page)
			}
		}
	}
	return p.pages.Close()
}
