package catalogmanaged

import (
	"context"
	"errors"
)

// ErrConflict is returned by Client.Commit when the catalog has already
// ratified another commit as the version asked for.
var ErrConflict = errors.New("catalogmanaged: version already ratified")

// A Commit is a ratified commit of one version, or one proposed for
// ratification: a staged commit (Key) or an inline one (Inline).
type Commit struct {
	// Version is the table version the commit makes.
	Version int64
	// Key is the store key of a staged commit,
	// _delta_log/_staged_commits/<v>.<uuid>.json; empty for an inline
	// commit.
	Key string
	// Inline is the content of an inline commit, as a Delta file holds it
	// (one action per line); nil for a staged commit.
	Inline []byte
	// Size is the commit's size in bytes; 0 when unknown.
	Size int64
	// Timestamp is when the commit was made, in milliseconds since the
	// epoch: the modification time its listing entry shows.
	Timestamp int64
}

// Ratified is what the catalog says of a table's log.
type Ratified struct {
	// Latest is the table's latest ratified version, -1 when it has none.
	// It is authoritative: files of later versions are ignored.
	Latest int64
	// Commits are the ratified commits the catalog still stores (those not
	// yet published, and perhaps some that are), in version order.
	Commits []Commit
}

// A Client is the client side of the catalog that manages one table. Its
// methods are safe for concurrent use.
type Client interface {
	// Commits returns the table's latest ratified version and the
	// ratified commits the catalog still stores.
	Commits(ctx context.Context) (Ratified, error)
	// Commit asks the catalog to ratify c as version c.Version, which must
	// follow its latest ratified version. It returns an error matching
	// ErrConflict when another commit holds that version (or the version
	// does not follow the latest), an error matching
	// logstore.ErrNotWritten when the catalog certainly did not ratify c,
	// and any other error when the outcome is unknown.
	Commit(ctx context.Context, c Commit) error
	// Published tells the catalog that every version up to version is
	// published in _delta_log, so it may stop storing those commits.
	Published(ctx context.Context, version int64) error
}
