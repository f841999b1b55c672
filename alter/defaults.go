package alter

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
)

// SetColumnDefault sets the default value of the top-level column at
// path to the SQL expression sql (Spark's ALTER TABLE ... ALTER COLUMN
// ... SET DEFAULT), or removes it when sql is empty (DROP DEFAULT). The
// default is stored as the column's CURRENT_DEFAULT metadata and applies
// to rows written from then on: rows already in the table keep their
// values (nulls stay null), as PROTOCOL.md "Default Columns" says a
// default is metadata for writes only. A default turns the
// allowColumnDefaults feature on (writer 7); package write says which
// defaults it takes (literals) and refuses the others, and an identity or
// generated column cannot have one. The commit is Spark's CHANGE COLUMN.
func SetColumnDefault(ctx context.Context, snap *snapshot.Snapshot, path []string, sql string, opts Options) (txn.CommitResult, error) {
	params := map[string]any{}
	return run(ctx, snap, opts, OpChangeColumn, params, func(_ context.Context, s *snapshot.Snapshot) (change, error) {
		if len(path) != 1 {
			return change{}, invalid("column %s: only top-level columns can have a default", strings.Join(path, "."))
		}
		sch, err := cloneSchema(s)
		if err != nil {
			return change{}, err
		}
		_, j, err := lookup(sch, path)
		if err != nil {
			return change{}, err
		}
		f := &sch.Fields[j]
		var md schema.Metadata
		for _, e := range f.Metadata {
			if e.Key != schema.MetadataCurrentDefault {
				md = append(md, e)
			}
		}
		if sql = strings.TrimSpace(sql); sql != "" {
			raw, _ := json.Marshal(sql)
			md = append(md, schema.MetadataEntry{Key: schema.MetadataCurrentDefault, Value: raw})
		}
		f.Metadata = md
		params["column"] = fieldJSON(*f)
		return evolve(s, sch, cloneProps(s))
	})
}
