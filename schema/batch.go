package schema

// Batch is a run of rows held column by column: Columns[j][i] is the value
// of column j in row i, for i < Len. It is the one form rows take between
// the packages that read and write tables: a scan yields batches of its
// output columns (package scan), the writer takes batches of logical rows
// in table schema order, partition columns included (package write).
// Which columns a batch holds, and in which order, is said by whoever
// makes it; a Batch carries no schema of its own.
//
// Every column holds at least Len values; values past Len are ignored.
// Nested values are Values of kind struct, array or map. Who may keep a
// batch's slices is also said by its maker: a scan reuses a batch's memory
// once the loop body that received it returns (Clone keeps one).
type Batch struct {
	Len     int
	Columns [][]Value
}

// Clone returns a copy of b whose column slices share no memory with b's.
// The Values themselves are immutable and are shared.
func (b *Batch) Clone() *Batch {
	all := make([]Value, b.Len*len(b.Columns))
	cols := make([][]Value, len(b.Columns))
	for j, c := range b.Columns {
		cols[j] = all[j*b.Len : (j+1)*b.Len : (j+1)*b.Len]
		copy(cols[j], c[:b.Len])
	}
	return &Batch{Len: b.Len, Columns: cols}
}

// Row returns the values of row i, one per column, in a new slice.
func (b *Batch) Row(i int) []Value {
	vals := make([]Value, len(b.Columns))
	for j, c := range b.Columns {
		vals[j] = c[i]
	}
	return vals
}
