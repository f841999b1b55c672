package main

import (
	"context"
	"fmt"

	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/write"
)

// mergedInputSchema returns the schema of the rows of the input files for
// append --merge-schema: the table's schema with every column of the
// files it lacks added (write.MergeSchemas), typed as inputSchema (the
// file schema MERGE reads its source with) types them: a Parquet file
// gives its own schema; a CSV header's new columns are STRING; a JSON
// lines file's new keys take the type of their values (integers BIGINT,
// other numbers DOUBLE, booleans BOOLEAN, anything else STRING), in name
// order.
func mergedInputSchema(ctx context.Context, table *schema.StructType, paths []string) (*schema.StructType, error) {
	out := table
	for _, p := range paths {
		src, err := inputSchema(ctx, p, out)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		// Widening allowed here: this is the rows' layout; the append
		// decides whether the table may widen.
		if out, _, err = write.MergeSchemas(out, src, true); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return out, nil
}
