package write

import (
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/snapshot"
)

// Discard deletes, best effort, the data files of adds that a commit
// failed to name, after err, the commit's error: nothing when err matches
// txn.ErrCommitUnknown (the commit may have landed and name them). It is
// what Append and Overwrite do with their files on failure, for callers
// that commit Rewrite's output themselves (OPTIMIZE).
func Discard(snap *snapshot.Snapshot, err error, adds []actions.Add) { dropFiles(snap, err, adds) }
