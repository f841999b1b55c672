package txn

import (
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/tableconfig"
)

// WriteSupported returns nil when this package can commit to a table with
// protocol p and metadata m, else a *deltaerr.FeatureError (errors.Is
// deltaerr.ErrUnsupportedFeature) naming the first writer feature or
// version that stops it. The support table, and the reason behind each
// entry, is package tableconfig's (tableconfig.WriteSupported).
func WriteSupported(p *actions.Protocol, m *actions.Metadata) error {
	return tableconfig.WriteSupported(p, m, false)
}

// WriteSupportedChecked is WriteSupported for a writer that checks every
// row it writes against the table's invariants, CHECK constraints and
// generated columns, and fills identity columns (committing their
// high-water marks) and column defaults (package write does), so tables
// that use them are writable too.
func WriteSupportedChecked(p *actions.Protocol, m *actions.Metadata) error {
	return tableconfig.WriteSupported(p, m, true)
}
