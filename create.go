package delta

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// TableSpec describes a table to create: its schema, partition columns,
// name, description and properties. See package write for the protocol it
// gets.
type TableSpec = write.TableSpec

// ErrTableExists is returned by Create where a Delta table already is. It
// matches ErrInvalidArgument too.
var ErrTableExists = txn.ErrTableExists

// EngineInfo is written to commitInfo.engineInfo by the commits this
// package makes.
const EngineInfo = "godelta"

// Create creates a table at uri (see Resolve) from spec and returns it: the
// first commit, version 0, holds commitInfo (operation "CREATE TABLE"),
// protocol and metaData. It is committed through package txn like any
// other commit, with put-if-absent, so that of two concurrent creators
// exactly one succeeds. A location that already holds a Delta log (any log
// file) is ErrTableExists; a bad spec is write.ErrInvalidSpec; a spec
// needing a feature this library cannot write is ErrUnsupportedFeature.
func Create(ctx context.Context, uri string, spec TableSpec) (*Table, error) {
	store, err := ResolveContext(ctx, uri)
	if err != nil {
		return nil, err
	}
	return CreateStore(ctx, uri, store, spec)
}

// CreateStore is Create on a table whose root is the root of store; name
// is used in messages only.
func CreateStore(ctx context.Context, name string, store logstore.Store, spec TableSpec) (*Table, error) {
	p, m, err := write.NewTable(spec)
	if err != nil {
		return nil, err
	}
	// The operation parameters Spark writes for CREATE TABLE.
	partitionBy, _ := json.Marshal(m.PartitionColumns)
	props, _ := json.Marshal(m.Configuration)
	tx := txn.BeginCreate(store, txn.Options{
		Operation: "CREATE TABLE",
		OperationParameters: map[string]any{
			"isManaged":   "false",
			"description": spec.Description,
			"partitionBy": string(partitionBy),
			"properties":  string(props),
		},
		EngineInfo: EngineInfo,
	})
	tx.SetProtocol(p)
	tx.SetMetadata(m)
	if _, err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("creating %s: %w", logstore.RedactURI(name), err)
	}
	return &Table{uri: name, store: store}, nil
}
