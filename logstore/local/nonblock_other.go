//go:build !unix

package local

// oNonblock is 0 where named pipes cannot be opened as files of the
// store's root: os.Stat's check before the open is the only one needed.
const oNonblock = 0
