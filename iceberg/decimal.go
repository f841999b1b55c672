package iceberg

import (
	"math/big"
)

// twosComplement returns the big-endian two's complement of n (small when
// it fits in an int64, else big) in the fewest bytes that keep its sign.
func twosComplement(small int64, n *big.Int) []byte {
	if n == nil {
		n = big.NewInt(small)
	}
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// Negative: 2^(8k) + n for the smallest k that keeps the top bit set.
	k := (n.BitLen() + 8) / 8
	mod := new(big.Int).Lsh(big.NewInt(1), uint(8*k))
	b := new(big.Int).Add(mod, n).Bytes()
	for len(b) < k {
		b = append([]byte{0xff}, b...)
	}
	// Drop redundant leading 0xff bytes.
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}
