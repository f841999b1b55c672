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
	s.link = func(d *dir, oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: d.join(oldname), New: d.join(newname), Err: syscall.EPERM}
	}
}

// IsTemp exposes isTemp.
var IsTemp = isTemp

// FailLinks makes every link(2) of s fail with errno, as a file system
// that refuses the new directory entry would.
func FailLinks(st logstore.Store, errno syscall.Errno) {
	s, _ := logstore.DriverOf[*Store](st)
	s.link = func(d *dir, oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: d.join(oldname), New: d.join(newname), Err: errno}
	}
}
