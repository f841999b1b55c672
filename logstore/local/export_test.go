package local

import (
	"os"
	"syscall"

	"github.com/godelta/delta/logstore"
)

// DisableLinks makes s behave as on a file system without hard links, so
// that PutIfAbsent takes its O_EXCL fallback.
func DisableLinks(st logstore.Store) {
	s, _ := logstore.DriverOf[*Store](st)
	s.link = func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	}
}

// IsTemp exposes isTemp.
var IsTemp = isTemp
