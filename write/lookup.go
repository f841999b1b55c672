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
	l := &rowLookup{sch: sch, vals: row}
	return l.lookup
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
