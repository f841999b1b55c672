package delta

import (
	"context"

	"github.com/godelta/delta/convert"
)

// ConvertOptions tune Convert; see convert.Options.
type ConvertOptions = convert.Options

// ConvertResult is what Convert did; see convert.Result.
type ConvertResult = convert.Result

// Convert puts the local directory dir of Parquet files under a Delta log
// (CONVERT TO DELTA): version 0, one add per file with statistics computed
// from it, nothing rewritten; see package convert. It returns the table,
// opened, and what was done.
func Convert(ctx context.Context, dir string, opts ConvertOptions) (*Table, ConvertResult, error) {
	if opts.Txn.EngineInfo == "" {
		opts.Txn.EngineInfo = EngineInfo
	}
	res, err := convert.Dir(ctx, dir, opts)
	if err != nil {
		return nil, ConvertResult{}, err
	}
	t, err := Open(ctx, dir)
	if err != nil {
		return nil, res, err
	}
	return t, res, nil
}
