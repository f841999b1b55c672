package delta

import (
	"context"

	"github.com/godelta/delta/stream"
)

// Streaming: the table as a message queue (see package stream).
type (
	// StreamOptions configure a stream; see stream.Options.
	StreamOptions = stream.Options
	// Stream tails a table; see stream.Source.
	Stream = stream.Source
	// StreamBatch is one step of a stream; see stream.Batch.
	StreamBatch = stream.Batch
	// StreamOffset is a position in a stream; see stream.Offset.
	StreamOffset = stream.Offset
	// Sink commits an application's batches exactly once; see stream.Sink.
	Sink = stream.Sink
	// SinkOptions configure a Sink; see stream.SinkOptions.
	SinkOptions = stream.SinkOptions
)

// Stream opens a stream over the table: the rows each commit adds, or its
// change data feed, from where opts.Start says, in version order (see
// package stream). Absolute data file paths under the table's URI are
// accepted, and, on a shallow clone, under its source's. Close the stream
// when done: it holds the stores it opened for a clone's source.
func (t *Table) Stream(ctx context.Context, opts StreamOptions) (*Stream, error) {
	return stream.NewSource(ctx, t.store, opts)
}

// Sink returns the exactly-once sink of application appID into the table.
func (t *Table) Sink(appID string, opts SinkOptions) (*Sink, error) {
	if opts.Txn.EngineInfo == "" {
		opts.Txn.EngineInfo = EngineInfo
	}
	return stream.NewSink(t.store, appID, opts)
}

// AppVersion returns the last version application appID committed to the
// table (txn actions: Spark's txnAppId and txnVersion, and Sink), and false
// when it committed none or its record expired
// (delta.setTransactionRetentionDuration).
func (t *Table) AppVersion(ctx context.Context, appID string) (int64, bool, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return 0, false, err
	}
	return snap.TxnVersion(ctx, appID)
}
