package checkpoint

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// ActionSet selects the action kinds a Read yields.
type ActionSet uint

// The action kinds a checkpoint can hold.
const (
	Protocol ActionSet = 1 << iota
	Metadata
	Add
	Remove
	Txn
	DomainMetadata
	Sidecar
	CheckpointMetadata
)

// All selects every action kind a checkpoint can hold.
const All = Protocol | Metadata | Add | Remove | Txn | DomainMetadata | Sidecar | CheckpointMetadata

// batchSize caps the number of actions handed to fn in one call.
const batchSize = 4096

// sidecarDir is the directory, relative to the store root, of V2 sidecars.
const sidecarDir = "_delta_log/_sidecars/"

// Read streams the actions of one checkpoint. parts are store keys: one
// classic `_delta_log/<v>.checkpoint.parquet`, or all parts of a multi-part
// set in order, or one UUID-named V2 checkpoint
// `_delta_log/<v>.checkpoint.<uuid>.json|parquet`. Keys ending in ".json" are
// read as newline-delimited JSON actions, all others as Parquet. V2 sidecar
// actions are followed when Add or Remove is wanted: the sidecar's adds and
// removes are yielded after the actions of the checkpoint itself.
//
// Only the kinds in want are yielded. fn gets the actions in batches and must
// not keep the slice. An error from fn is returned as is; decoding failures
// are *deltaerr.CorruptError; a missing part gives the store's error, which
// wraps logstore.ErrNotFound.
func Read(ctx context.Context, store logstore.Store, parts []string, want ActionSet, fn func(batch []actions.Action) error) error {
	if len(parts) == 0 {
		return fmt.Errorf("checkpoint: no parts given: %w", deltaerr.ErrInvalidArgument)
	}
	follow := want&(Add|Remove) != 0
	var sidecars []actions.Sidecar
	for _, key := range parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		var side []actions.Sidecar
		var err error
		if strings.HasSuffix(key, ".json") {
			side, err = readJSON(ctx, store, key, want, follow, fn)
		} else {
			side, err = readParquet(ctx, store, key, want, follow, fn)
		}
		if err != nil {
			return err
		}
		sidecars = append(sidecars, side...)
	}
	for _, sc := range sidecars {
		key, err := sidecarKey(parts[0], sc.Path)
		if err != nil {
			return err
		}
		if _, err := readParquet(ctx, store, key, want&(Add|Remove), false, fn); err != nil {
			return err
		}
	}
	return nil
}

// sidecarKey returns the store key of the sidecar at path (as written in a
// sidecar action of the checkpoint at key from).
func sidecarKey(from, path string) (string, error) {
	bad := func(why string) error {
		return &deltaerr.CorruptError{Path: from, Reason: fmt.Sprintf("sidecar path %q %s", path, why)}
	}
	if path == "" {
		return "", bad("is empty")
	}
	if strings.Contains(path, "/") || strings.Contains(path, "\\") || strings.Contains(path, ":") {
		return "", bad("is not a plain file name")
	}
	dec, err := url.PathUnescape(path)
	if err != nil {
		return "", bad("is not valid percent-encoding")
	}
	if dec == "" || dec == "." || dec == ".." || strings.Contains(dec, "..") || strings.ContainsAny(dec, "/\\:\x00") {
		return "", bad("is not a plain file name")
	}
	return sidecarDir + dec, nil
}

// readJSON reads a V2 checkpoint in JSON form.
func readJSON(ctx context.Context, store logstore.Store, key string, want ActionSet, follow bool, fn func([]actions.Action) error) ([]actions.Sidecar, error) {
	data, err := store.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading %s: %w", key, err)
	}
	var sidecars []actions.Sidecar
	batch := make([]actions.Action, 0, 256)
	var fnErr error
	err = actions.EachAction(key, data, func(a *actions.Action) error {
		if follow && a.Sidecar != nil {
			sidecars = append(sidecars, *a.Sidecar)
		}
		f := filter(*a, want)
		if f.IsEmpty() {
			return nil
		}
		batch = append(batch, f)
		if len(batch) >= batchSize {
			if err := fn(batch); err != nil {
				fnErr = err
				return errStop
			}
			batch = batch[:0]
		}
		return nil
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, err
	}
	if len(batch) > 0 {
		if err := fn(batch); err != nil {
			return nil, err
		}
	}
	return sidecars, nil
}

// filter keeps only the kinds in want.
func filter(a actions.Action, want ActionSet) actions.Action {
	var out actions.Action
	if want&Protocol != 0 {
		out.Protocol = a.Protocol
	}
	if want&Metadata != 0 {
		out.Metadata = a.Metadata
	}
	if want&Add != 0 {
		out.Add = a.Add
	}
	if want&Remove != 0 {
		out.Remove = a.Remove
	}
	if want&Txn != 0 {
		out.Txn = a.Txn
	}
	if want&DomainMetadata != 0 {
		out.DomainMetadata = a.DomainMetadata
	}
	if want&Sidecar != 0 {
		out.Sidecar = a.Sidecar
	}
	if want&CheckpointMetadata != 0 {
		out.CheckpointMetadata = a.CheckpointMetadata
	}
	return out
}

// decodePanic is a panic raised by this package's decoder on bad input.
type decodePanic struct{ reason string }

// fail aborts decoding; the panic is recovered at the read boundary.
func fail(format string, args ...any) {
	panic(decodePanic{fmt.Sprintf(format, args...)})
}

// guard runs f, turning a panic into a *deltaerr.CorruptError for key.
func guard(key string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if up, ok := r.(callerPanic); ok {
				panic(up.v) // not ours: the caller's fn panicked
			}
			if dp, ok := r.(decodePanic); ok {
				err = &deltaerr.CorruptError{Path: key, Reason: dp.reason}
				return
			}
			err = &deltaerr.CorruptError{Path: key, Reason: "parquet decoding failed", Err: fmt.Errorf("%v", r)}
		}
	}()
	return f()
}

// callerPanic carries a panic of the caller's fn through guard unchanged.
type callerPanic struct{ v any }

// callFn calls fn, marking a panic in it so that guard does not take it for
// a decoding failure.
func callFn(fn func([]actions.Action) error, batch []actions.Action) error {
	defer func() {
		if r := recover(); r != nil {
			panic(callerPanic{r})
		}
	}()
	return fn(batch)
}
