package delta

import (
	"context"
	"fmt"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// TableSpec describes a table to create: its schema, partition columns,
// name, description and properties. See package write for the protocol it
// gets.
type TableSpec = write.TableSpec

// ErrTableExists is returned by Create where a Delta table already is.
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
	p, m, err := write.NewTable(spec)
	if err != nil {
		return nil, err
	}
	// The operation parameters Spark writes for CREATE TABLE.
	partitionBy, _ := actions.EncodeJSON(m.PartitionColumns)
	props, _ := actions.EncodeJSON(m.Configuration)
	clusterBy, domain, err := clustering(p, m, spec.ClusterBy)
	if err != nil {
		return nil, err
	}
	// Spark's CreateTable.parameters: clusterBy always ("[]" when not
	// clustered), description null when there is none.
	params := map[string]any{
		"isManaged":   "false",
		"description": nil,
		"partitionBy": string(partitionBy),
		"clusterBy":   clusterBy,
		"properties":  string(props),
	}
	if spec.Description != "" {
		params["description"] = spec.Description
	}
	tx := txn.BeginCreate(store, txn.Options{
		Operation:           "CREATE TABLE",
		OperationParameters: params,
		EngineInfo:          EngineInfo,
	})
	tx.SetProtocol(p)
	tx.SetMetadata(m)
	if domain != nil {
		tx.SetDomainMetadata(*domain)
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", logstore.RedactURI(name), err)
	}
	t := &Table{uri: name, store: store}
	t.PostCommit(ctx, &res)
	return t, nil
}
