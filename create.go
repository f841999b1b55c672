package delta

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/write"
)

// TableSpec describes a table to create: its schema, partition columns,
// name, description and properties. See package write for the protocol it
// gets.
type TableSpec = write.TableSpec

// ErrTableExists is returned by Create where a Delta table already is.
var ErrTableExists = write.ErrTableExists

// EngineInfo is written to commitInfo.engineInfo by the commits this
// package makes.
const EngineInfo = "godelta"

// Create creates a table at uri (see Resolve) from spec and returns it: the
// first commit, version 0, holds commitInfo (operation "CREATE TABLE"),
// protocol and metaData, written with put-if-absent, so that of two
// concurrent creators exactly one succeeds. A location that already holds
// a Delta log is ErrTableExists; a bad spec is write.ErrInvalidSpec; a
// spec needing a feature this library cannot write is
// ErrUnsupportedFeature.
//
// The Table owns the store it opens: Close it when done.
func Create(ctx context.Context, uri string, spec TableSpec) (*Table, error) {
	store, err := ResolveContext(ctx, uri)
	if err != nil {
		return nil, err
	}
	t, err := CreateStore(ctx, uri, store, spec)
	if err != nil {
		store.Close()
		return nil, err
	}
	t.owned = true
	return t, nil
}

// CreateStore is Create on a table whose root is the root of store; name
// is used in messages only. The Table does not own store (see Table).
func CreateStore(ctx context.Context, name string, store logstore.Store, spec TableSpec) (*Table, error) {
	if _, err := OpenStore(ctx, name, store); err == nil {
		return nil, fmt.Errorf("delta: creating %s: %w", logstore.RedactURI(name), ErrTableExists)
	} else if !errors.Is(err, ErrTableNotFound) {
		return nil, err
	}
	p, m, err := write.NewTable(spec)
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixMilli()
	if m.CreatedTime != nil {
		now = *m.CreatedTime
	}
	partitionBy, _ := actions.EncodeJSON(m.PartitionColumns)
	props, _ := actions.EncodeJSON(m.Configuration)
	blind := true
	ci := actions.CommitInfo{
		Timestamp: &now,
		Operation: "CREATE TABLE",
		OperationParameters: map[string]any{
			"isManaged":   "false",
			"description": spec.Description,
			"partitionBy": string(partitionBy),
			"properties":  string(props),
		},
		IsolationLevel: "Serializable",
		IsBlindAppend:  &blind,
		EngineInfo:     EngineInfo,
		TxnID:          uuid.NewString(),
	}
	cfg, err := tableconfig.New(p, m)
	if err != nil {
		return nil, err
	}
	if cfg.InCommitTimestamps() {
		ci.InCommitTimestamp = &now
	}
	// commitInfo first: the protocol requires it there when in-commit
	// timestamps are enabled, and it costs nothing otherwise.
	data, err := actions.EncodeCommit([]actions.Action{{CommitInfo: &ci}, {Protocol: &p}, {Metadata: &m}})
	if err != nil {
		return nil, err
	}
	if err := store.PutIfAbsent(ctx, deltalog.CommitKey(0), data); err != nil {
		if errors.Is(err, logstore.ErrAlreadyExists) {
			return nil, fmt.Errorf("delta: creating %s: %w", logstore.RedactURI(name), ErrTableExists)
		}
		return nil, fmt.Errorf("delta: creating %s: %w", logstore.RedactURI(name), err)
	}
	return &Table{uri: name, store: store}, nil
}
