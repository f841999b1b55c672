package deltaarrow

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// poolAllocator is the reader's default allocator: it recycles the buffers
// of released records by power-of-two size class, so that a scan that
// releases each record before the next reuses their memory instead of
// allocating (and zeroing) as much again per batch. Buffers are 64-byte
// aligned, as memory.GoAllocator's. Unlike GoAllocator's, a buffer's
// content is not zeroed: the reader writes every byte it exposes.
// sync.Pool drops what is not reused at the next garbage collection.
type poolAllocator struct {
	classes [48]sync.Pool // class c holds *[]byte of cap 1<<c
}

const poolAlign = 64

var defaultPool = &poolAllocator{}

func (p *poolAllocator) Allocate(size int) []byte {
	if size == 0 {
		return nil
	}
	c := bits.Len(uint(size - 1))
	if c >= len(p.classes) {
		return memory.DefaultAllocator.Allocate(size)
	}
	if b, ok := p.classes[c].Get().(*[]byte); ok {
		return (*b)[:size]
	}
	n := 1 << c
	raw := make([]byte, n+poolAlign)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw))) & (poolAlign - 1))
	return raw[off : off+size : off+n]
}

func (p *poolAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *poolAllocator) Free(b []byte) {
	c := cap(b)
	if c == 0 || c&(c-1) != 0 || bits.Len(uint(c-1)) >= len(p.classes) {
		return // not one of ours: the garbage collector takes it
	}
	b = b[:0]
	p.classes[bits.Len(uint(c-1))].Put(&b)
}
