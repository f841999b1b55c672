package dml

// Auto compaction (delta.autoOptimize.autoCompact) is a post-commit hook
// that package optimize registers from its init: linked here, it follows
// the DML commits of programs that use this package without the delta
// facade, once they run txn.PostCommit.
import _ "github.com/godelta/delta/optimize"
