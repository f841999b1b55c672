package main

import (
	"context"

	"github.com/godelta/delta"
)

func init() {
	alterOps["cluster-by"] = alterOp{Usage: alterClusterByUsage, MinArgs: 1, MaxArgs: 1, Run: alterClusterBy}
}

// alterClusterByUsage is the usage of delta alter TABLE cluster-by.
const alterClusterByUsage = "cluster-by COLUMNS (comma-separated; NONE to stop clustering new data)"

// alterClusterBy is delta alter TABLE cluster-by a,b: ALTER TABLE ...
// CLUSTER BY (a, b), or CLUSTER BY NONE.
func alterClusterBy(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
	cols := splitList(args[0])
	if len(cols) == 1 && (cols[0] == "NONE" || cols[0] == "none") {
		cols = nil
	}
	return t.ClusterBy(ctx, cols)
}
