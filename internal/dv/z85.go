package dv

import "github.com/godelta/delta/deltaerr"

// z85Alphabet is the Z85 alphabet (ZeroMQ RFC 32). It is part of the
// format and must not change.
const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85Value maps a byte to its Z85 digit value, or 0xFF if not a digit.
var z85Value = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for i := range len(z85Alphabet) {
		t[z85Alphabet[i]] = byte(i)
	}
	return t
}()

// Z85Encode encodes b as Z85 text, 5 characters per 4 bytes, big-endian
// within each group. Z85 covers only whole groups, so b is first padded
// with zero bytes to a multiple of 4, as Delta does for inline deletion
// vectors; the caller records the real length (sizeInBytes).
func Z85Encode(b []byte) string {
	groups := (len(b) + 3) / 4
	out := make([]byte, 5*groups)
	for g := range groups {
		var v uint32
		for k := range 4 {
			v <<= 8
			if i := 4*g + k; i < len(b) {
				v |= uint32(b[i])
			}
		}
		for k := 4; k >= 0; k-- {
			out[5*g+k] = z85Alphabet[v%85]
			v /= 85
		}
	}
	return string(out)
}

// Z85Decode decodes Z85 text. Its length must be a multiple of 5 and every
// character must be in the alphabet; otherwise the error wraps
// deltaerr.ErrCorrupt.
//
// Padding of the last group: Z85 covers whole 4-byte groups only, and Delta
// writers have padded a short tail in two ways. Zero bytes after the data
// (the caller drops them using sizeInBytes), or, as Delta's Java codec and
// kernel-rs do, k = 1 to 3 padding bytes before the data with the group's
// first k characters written as '#'. A group can never legitimately start
// with '#' (84·85^4 exceeds 2^32), so such a last group is read as its
// digits with '#' taken as '0', and its first k bytes are dropped: for
// example "##093" is the two bytes 03 00 (kernel-rs/cdf-table-with-dv).
// Any other group standing for 2^32 or more is corrupt.
func Z85Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, deltaerr.Corruptf("Z85 text", "length %d is not a multiple of 5", len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for g := 0; g < len(s); g += 5 {
		pad := 0
		if g+5 == len(s) {
			for pad < 4 && s[g+pad] == '#' {
				pad++
			}
			if pad == 4 {
				return nil, deltaerr.Corruptf("Z85 text", "last group %q is all padding", s[g:])
			}
		}
		var v uint64
		for k := range 5 {
			d := z85Value[s[g+k]]
			if d == 0xFF {
				return nil, deltaerr.Corruptf("Z85 text", "invalid character %q at %d", s[g+k], g+k)
			}
			if k < pad {
				d = 0
			}
			v = v*85 + uint64(d)
		}
		if v >= 1<<32 {
			return nil, deltaerr.Corruptf("Z85 text", "group %q at %d exceeds 32 bits", s[g:g+5], g)
		}
		group := [4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
		out = append(out, group[pad:]...)
	}
	return out, nil
}
