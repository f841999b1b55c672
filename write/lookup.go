package write

import (
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
)

// RowLookup returns the expr.Lookup of one row in schema order, as the
// row writer's checks resolve columns: names matched exactly, then
// ignoring case, dotted names reaching into struct fields (a field of a
// null struct is null). Callers that decide a row's fate in a RowFunc
// (DELETE, UPDATE, MERGE) evaluate their expressions with it, so that a
// column means the same there as in a CHECK constraint. The lookup reads
// row when called: it must not outlive the row's values.
func RowLookup(sch *schema.StructType, row []schema.Value) expr.Lookup {
	return NewRowLookup(sch).Bind(row)
}

// BoundLookup is RowLookup for one row after another: Bind points it at
// the next row without allocating, for a RowFunc that evaluates
// expressions on every row it sees. It is not safe for concurrent use.
type BoundLookup struct {
	l  rowLookup
	fn expr.Lookup
}

// NewRowLookup returns a BoundLookup over rows of sch.
func NewRowLookup(sch *schema.StructType) *BoundLookup {
	b := &BoundLookup{l: rowLookup{sch: sch}}
	b.fn = b.l.lookup
	return b
}

// Bind makes the lookup read row, and returns it; a lookup returned
// earlier reads row too from then on.
func (b *BoundLookup) Bind(row []schema.Value) expr.Lookup {
	b.l.vals = row
	return b.fn
}

// GeneratedColumns returns the schema indexes of the top-level generated
// columns of sch (those with delta.generationExpression). The row writer
// computes a generated column given as null, so an operation that changes
// a row's other columns passes null for these to have them computed again.
func GeneratedColumns(sch *schema.StructType) []int {
	var out []int
	for i := range sch.Fields {
		if _, ok := sch.Fields[i].Metadata.Get(MetaGenerationExpression); ok {
			out = append(out, i)
		}
	}
	return out
}
