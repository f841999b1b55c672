package actions

import (
	"errors"
	"fmt"
)

// The rules below are those PROTOCOL.md states for a single action or a
// single commit file, which every reader can check without any other state:
//
//   - add, remove and cdc name a file: their path is required and not empty
//     (an add without one would count as a live file that no reader can
//     open, and would be copied into every later checkpoint);
//   - a file's size is a byte count: never negative (add and cdc always carry
//     one, remove only with extendedFileMetadata, where it is optional);
//   - a sidecar names a file in _delta_log/_sidecars and its size;
//   - a deletion vector, when an add or remove has one, has a storage type
//     the protocol defines ("u", "i" or "p") and a path or inline data: a
//     descriptor with its fields null ({}) is damage, never "no deletion
//     vector", which would bring the file's deleted rows back;
//   - one commit holds at most one protocol and at most one metaData action
//     ("a commit MUST NOT contain more than one" of each).
//
// A remove of a file that the table does not hold is legal (Spark writes
// them, and readers ignore them), so nothing here looks at the table.
//
// The errors say which rule was broken but carry no kind: a reader wraps
// them in a *deltaerr.CorruptError naming the file and line (EachAction
// does), a writer in deltaerr.ErrInvalidArgument.

// errTwice is the cause of a second protocol or metaData in one file.
var errTwice = errors.New("more than one in one commit")

// Check reports the first rule of the protocol that a breaks on its own, or
// nil. An Action with no kind set (an unknown kind) breaks no rule.
func (a *Action) Check() error {
	switch {
	case a.Add != nil:
		if err := checkFile("add", a.Add.Path, &a.Add.Size); err != nil {
			return err
		}
		return checkDV("add", a.Add.Path, a.Add.DeletionVector)
	case a.Remove != nil:
		if err := checkFile("remove", a.Remove.Path, a.Remove.Size); err != nil {
			return err
		}
		return checkDV("remove", a.Remove.Path, a.Remove.DeletionVector)
	case a.CDC != nil:
		return checkFile("cdc", a.CDC.Path, &a.CDC.Size)
	case a.Sidecar != nil:
		return checkFile("sidecar", a.Sidecar.Path, &a.Sidecar.SizeInBytes)
	}
	return nil
}

func checkFile(kind, path string, size *int64) error {
	if path == "" {
		return fmt.Errorf("%s has no path", kind)
	}
	if size != nil && *size < 0 {
		return fmt.Errorf("%s %s has a negative size %d", kind, path, *size)
	}
	return nil
}

func checkDV(kind, path string, d *DeletionVector) error {
	if d == nil {
		return nil
	}
	switch d.StorageType {
	case "u", "i", "p":
	default:
		return fmt.Errorf("%s %s has a deletion vector of storage type %q, not u, i or p", kind, path, d.StorageType)
	}
	if d.PathOrInlineDv == "" {
		return fmt.Errorf("%s %s has a deletion vector with no pathOrInlineDv", kind, path)
	}
	if d.Cardinality < 0 || d.SizeInBytes < 0 {
		return fmt.Errorf("%s %s has a deletion vector with a negative size or cardinality", kind, path)
	}
	return nil
}

// commitRules counts, over one file, the actions of which there may be
// only one.
type commitRules struct {
	protocol, metadata int
}

// see records a and reports whether it is a second protocol or metaData.
func (c *commitRules) see(a *Action) error {
	switch {
	case a.Protocol != nil:
		c.protocol++
		if c.protocol > 1 {
			return fmt.Errorf("protocol action %w", errTwice)
		}
	case a.Metadata != nil:
		c.metadata++
		if c.metadata > 1 {
			return fmt.Errorf("metaData action %w", errTwice)
		}
	}
	return nil
}

// CheckCommit reports the first rule of the protocol that the actions of
// one commit break, alone (Check) or together (at most one protocol and one
// metaData), or nil. The error names the action by its index in acts.
func CheckCommit(acts []Action) error {
	var rules commitRules
	for i := range acts {
		if err := acts[i].Check(); err != nil {
			return fmt.Errorf("action %d: %w", i, err)
		}
		if err := rules.see(&acts[i]); err != nil {
			return fmt.Errorf("action %d: %w", i, err)
		}
	}
	return nil
}
