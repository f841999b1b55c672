package parquetio

import (
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
)

// Raw is a [Loader] that keeps the values of pages and dictionaries as
// parquet-go decodes them, by physical kind, for readers that take values
// column-wise without boxing them (the checkpoint reader).
type Raw struct {
	// Text makes byte arrays strings: each page's bytes are copied into
	// one string and each value is a substring of it, and a dictionary's
	// values are made strings once.
	Text bool
	// Alias makes the strings of a Text loader's plain pages alias the
	// page's bytes instead of copying them: they are valid only while the
	// page is, so the cursor must hold its pages (Cursor.Hold) for as long
	// as they are used. Dictionaries are still copied, once per chunk.
	Alias bool

	Page Values // values of the current plain page
	Dict Values // values of the chunk's dictionary
}

// Values holds the decoded values of a page or a dictionary, by physical
// kind. The slices point into parquet-go's page buffers and are valid only
// while the page is; Text and Strs are copies, and so outlive it, but for
// the Text of a plain page of an Alias loader.
//
// The [Cursor] has checked what they hold: for byte arrays, Offs[j] <=
// Offs[j+1] <= len(Bytes) for every value j.
type Values struct {
	N     int // number of values
	Bits  []byte
	I32   []int32
	I64   []int64
	I96   []deprecated.Int96
	F32   []float32
	F64   []float64
	Bytes []byte   // byte array data, or fixed length values back to back
	Offs  []uint32 // byte array offsets: value j is Bytes[Offs[j]:Offs[j+1]]
	Size  int      // fixed length byte array size
	Text  string   // byte array data as one string, when the loader is Text
	Strs  []string // dictionary values as strings, when the loader is Text
}

// LoadPage keeps the values of a plain page.
func (r *Raw) LoadPage(d encoding.Values, n int) { r.load(&r.Page, d, false) }

// LoadDict keeps the values of a dictionary.
func (r *Raw) LoadDict(d encoding.Values, n int) { r.load(&r.Dict, d, true) }

// Reset forgets the dictionary, at the start of a chunk.
func (r *Raw) Reset() { r.Page, r.Dict = Values{}, Values{} }

func (r *Raw) load(vs *Values, d encoding.Values, dictionary bool) {
	*vs = Values{}
	switch d.Kind() {
	case encoding.Boolean:
		vs.Bits = d.Boolean()
		vs.N = len(vs.Bits) * 8
	case encoding.Int32:
		vs.I32 = d.Int32()
		vs.N = len(vs.I32)
	case encoding.Int64:
		vs.I64 = d.Int64()
		vs.N = len(vs.I64)
	case encoding.Int96:
		vs.I96 = d.Int96()
		vs.N = len(vs.I96)
	case encoding.Float:
		vs.F32 = d.Float()
		vs.N = len(vs.F32)
	case encoding.Double:
		vs.F64 = d.Double()
		vs.N = len(vs.F64)
	case encoding.ByteArray:
		vs.Bytes, vs.Offs = d.ByteArray()
		vs.N = max(len(vs.Offs)-1, 0)
		if r.Text && vs.N > 0 {
			// One copy per page, or none when aliased; each value is then
			// a substring of it.
			if n := vs.Offs[vs.N]; r.Alias && !dictionary && n > 0 {
				vs.Text = unsafe.String(&vs.Bytes[0], n)
			} else {
				vs.Text = string(vs.Bytes[:n])
			}
			if dictionary {
				vs.Strs = make([]string, vs.N)
				for j := range vs.Strs {
					vs.Strs[j] = vs.TextAt(j)
				}
			}
		}
	case encoding.FixedLenByteArray:
		vs.Bytes, vs.Size = d.FixedLenByteArray()
		vs.N = len(vs.Bytes) / vs.Size
	}
}

// TextAt returns byte array value j of a Text loader.
func (vs *Values) TextAt(j int) string { return vs.Text[vs.Offs[j]:vs.Offs[j+1]] }

// Src returns the values the current entry's value is in, and its index
// there. The caller has checked that the entry has a value (Has).
func (c *Cursor) Src(r *Raw) (*Values, int) {
	if c.Idx != nil {
		return &r.Dict, int(c.Idx[c.V])
	}
	return &r.Page, c.V
}

// Str returns the value of the current entry of a byte array column read
// by a Text loader r and moves past it; ok is false for a null.
func (c *Cursor) Str(r *Raw) (s string, ok bool) {
	if !c.Has() {
		c.Next()
		return "", false
	}
	vs, j := c.Src(r)
	if vs.Strs != nil {
		s = vs.Strs[j]
	} else {
		s = vs.TextAt(j)
	}
	c.Next()
	return s, true
}

// Int64 returns the value of the current entry of an INT32 or INT64
// column read by r and moves past it; ok is false for a null.
func (c *Cursor) Int64(r *Raw) (x int64, ok bool) {
	if !c.Has() {
		c.Next()
		return 0, false
	}
	vs, j := c.Src(r)
	if c.Kind == parquet.Int32 {
		x = int64(vs.I32[j])
	} else {
		x = vs.I64[j]
	}
	c.Next()
	return x, true
}

// Bool returns the value of the current entry of a BOOLEAN column read by
// r and moves past it; ok is false for a null.
func (c *Cursor) Bool(r *Raw) (b, ok bool) {
	if !c.Has() {
		c.Next()
		return false, false
	}
	vs, j := c.Src(r)
	b = vs.Bits[j>>3]>>(j&7)&1 != 0
	c.Next()
	return b, true
}
