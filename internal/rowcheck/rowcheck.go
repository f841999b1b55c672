// Package rowcheck carries the one privilege of package write that the
// public API must not offer: marking a transaction's staged rows as
// checked against the table's invariants, CHECK constraints and generated
// columns.
//
// A commit cannot see rows, so package txn refuses tables that use those
// features unless the rows were checked. Only a writer that checked every
// row may say so; a public flag would let any program say it. Package txn
// installs the marker at init (it owns the transaction's state); the
// writers of this module that checked their rows (package write, and the
// root package staging files package write produced) call Mark. Being
// internal, it cannot be imported from outside the module.
package rowcheck

// mark is the marker package txn installs.
var mark func(tx any) bool

// Install sets the marker. Package txn calls it once, at init.
func Install(f func(tx any) bool) { mark = f }

// Mark marks the rows staged in tx, a *txn.Transaction, as checked. It
// reports false when tx is not one (or txn is not linked in, which cannot
// happen for a caller holding a transaction).
func Mark(tx any) bool {
	return mark != nil && mark(tx)
}
