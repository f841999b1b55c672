package delta

import (
	"context"

	"github.com/godelta/delta/convert"
)

// ConvertOptions tune Convert; see convert.Options.
type ConvertOptions = convert.Options

// ConvertResult is what Convert did; see convert.Result.
type ConvertResult = convert.Result

// Convert puts the directory of Parquet files at uri (a local path, or a
// URI whose scheme names a store, as Open takes) under a Delta log
// (CONVERT TO DELTA): version 0, one add per file with statistics computed
// from it, nothing rewritten; see package convert. It returns the table,
// opened (Close it), and what was done.
func Convert(ctx context.Context, uri string, opts ConvertOptions) (*Table, ConvertResult, error) {
	if opts.Txn.EngineInfo == "" {
		opts.Txn.EngineInfo = EngineInfo
	}
	store, err := ResolveContext(ctx, uri)
	if err != nil {
		return nil, ConvertResult{}, err
	}
	res, err := convert.Store(ctx, store, opts)
	if err != nil {
		store.Close()
		return nil, ConvertResult{}, err
	}
	t, err := OpenStore(ctx, uri, store)
	if err != nil {
		store.Close()
		return nil, res, err
	}
	t.owned = true
	return t, res, nil
}
