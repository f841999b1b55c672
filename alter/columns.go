package alter

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
)

// ParsePath splits a column path: names separated by dots, a name
// `backquoted` when it holds a dot (a doubled backquote inside is one).
func ParsePath(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted, wasQuoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '`' && i+1 < len(s) && s[i+1] == '`':
			cur.WriteByte('`')
			i++
		case c == '`':
			quoted = !quoted
			wasQuoted = true
		case c == '.' && !quoted:
			if cur.Len() == 0 && !wasQuoted {
				return nil, invalid("column path %q has an empty name", s)
			}
			out = append(out, cur.String())
			cur.Reset()
			wasQuoted = false
		default:
			cur.WriteByte(c)
		}
	}
	if quoted {
		return nil, invalid("column path %q: a backquote is not closed", s)
	}
	if cur.Len() == 0 && !wasQuoted {
		return nil, invalid("column path %q has an empty name", s)
	}
	return append(out, cur.String()), nil
}

// lookup finds the struct holding the field at path and the field's index
// in it, matching names ignoring case as Spark does.
func lookup(sch *schema.StructType, path []string) (*schema.StructType, int, error) {
	st := sch
	for i, name := range path {
		j := st.Index(name)
		if j < 0 {
			return nil, -1, notFound(path[:i+1])
		}
		if i == len(path)-1 {
			return st, j, nil
		}
		sub, ok := st.Fields[j].Type.(*schema.StructType)
		if !ok {
			return nil, -1, invalid("column %s is %s, not a struct", strings.Join(path[:i+1], "."), st.Fields[j].Type)
		}
		st = sub
	}
	return nil, -1, notFound(path)
}

func notFound(path []string) error {
	return errorf(ErrColumnNotFound, "%s", strings.Join(path, "."))
}

// mapped reports whether the table of s uses column mapping.
func mapped(s *snapshot.Snapshot) bool {
	return s.Config().ColumnMappingMode() != schema.ColumnMappingNone
}

// AddColumn adds field to the table: at the top level when parent is
// empty, else as the last field of the struct column at parent. The
// field must be nullable (rows already written have no value for it: they
// read it as null) and its name new in its struct (ignoring case). Under
// column mapping it, and every field nested in it, gets the next column id
// and a physical name col-<uuid>, and delta.columnMapping.maxColumnId
// follows; column mapping metadata given with field is dropped. A type
// that needs a feature (timestamp_ntz) adds it to the protocol. The
// commit is Spark's ADD COLUMNS.
func AddColumn(ctx context.Context, snap *snapshot.Snapshot, parent []string, field schema.StructField, opts Options) (txn.CommitResult, error) {
	full := append(slices.Clone(parent), field.Name)
	logged := field
	logged.Name = strings.Join(full, ".")
	col := map[string]any{"column": json.RawMessage(fieldJSON(logged))}
	params := map[string]any{"columns": jsonString([]any{col})}
	return run(ctx, snap, opts, OpAddColumns, params, func(_ context.Context, s *snapshot.Snapshot) (change, error) {
		if field.Name == "" {
			return change{}, invalid("a column needs a name")
		}
		if !field.Nullable {
			return change{}, invalid("column %s: only nullable columns can be added (existing rows have no value for it)", logged.Name)
		}
		if field.IsIdentity() {
			// Spark: identity columns are defined at CREATE TABLE only.
			return change{}, invalid("column %s: an identity column cannot be added to an existing table", logged.Name)
		}
		if _, ok := field.Metadata.Get(schema.MetadataCurrentDefault); ok {
			// PROTOCOL.md "Default Columns": an operation that adds a
			// column must not give it a default in the same command.
			return change{}, invalid("column %s: a column cannot be added with a default value (set the default in a later change)", logged.Name)
		}
		sch, err := cloneSchema(s)
		if err != nil {
			return change{}, err
		}
		st := sch
		if len(parent) > 0 {
			ps, j, err := lookup(sch, parent)
			if err != nil {
				return change{}, err
			}
			sub, ok := ps.Fields[j].Type.(*schema.StructType)
			if !ok {
				return change{}, invalid("column %s is %s: fields can be added to structs only", strings.Join(parent, "."), ps.Fields[j].Type)
			}
			st = sub
		}
		if st.Index(field.Name) >= 0 {
			return change{}, invalid("column %s already exists", logged.Name)
		}
		nf, err := cleanField(field)
		if err != nil {
			return change{}, err
		}
		st.Fields = append(st.Fields, nf)
		return evolve(s, sch, cloneProps(s))
	})
}

// cleanField returns a deep copy of f without column mapping metadata at
// any depth: a new column gets ids of its own.
func cleanField(f schema.StructField) (schema.StructField, error) {
	st, err := schema.Parse((&schema.StructType{Fields: []schema.StructField{f}}).String())
	if err != nil {
		return f, invalid("column %s: %v", f.Name, err)
	}
	var strip func(t schema.DataType)
	clean := func(sf *schema.StructField) {
		sf.Metadata = slices.DeleteFunc(sf.Metadata, func(e schema.MetadataEntry) bool {
			return e.Key == schema.MetadataColumnMappingID || e.Key == schema.MetadataPhysicalName || e.Key == schema.MetadataNestedIDs
		})
		strip(sf.Type)
	}
	strip = func(t schema.DataType) {
		switch t := t.(type) {
		case *schema.StructType:
			for i := range t.Fields {
				clean(&t.Fields[i])
			}
		case *schema.ArrayType:
			strip(t.ElementType)
		case *schema.MapType:
			strip(t.KeyType)
			strip(t.ValueType)
		}
	}
	clean(&st.Fields[0])
	return st.Fields[0], nil
}

// RenameColumn gives the column at path the name newName (a name, or a
// path with the same parent), on a table with column mapping: the
// physical name and id stay, so every file reads the column by its new
// name. A partition column is renamed in metaData.partitionColumns too,
// and delta.dataSkippingStatsColumns follows the rename (a drop removes the
// column from it), as Spark does. A
// column a CHECK constraint or a generated column uses is refused (the
// expression would name a column that no longer exists), as Spark refuses
// it. The commit is Spark's RENAME COLUMN.
func RenameColumn(ctx context.Context, snap *snapshot.Snapshot, path []string, newName string, opts Options) (txn.CommitResult, error) {
	if np, err := ParsePath(newName); err == nil && len(np) > 1 {
		if len(np) != len(path) || !slices.EqualFunc(np[:len(np)-1], path[:len(path)-1], strings.EqualFold) {
			return txn.CommitResult{}, invalid("renaming %s to %s: a column keeps its parent", strings.Join(path, "."), newName)
		}
		newName = np[len(np)-1]
	}
	newPath := append(slices.Clone(path[:len(path)-1]), newName)
	params := map[string]any{"oldColumnPath": strings.Join(path, "."), "newColumnPath": strings.Join(newPath, ".")}
	return run(ctx, snap, opts, OpRenameColumn, params, func(_ context.Context, s *snapshot.Snapshot) (change, error) {
		if !mapped(s) {
			return change{}, ErrColumnMappingRequired
		}
		if newName == "" {
			return change{}, invalid("a column needs a name")
		}
		sch, err := cloneSchema(s)
		if err != nil {
			return change{}, err
		}
		st, j, err := lookup(sch, path)
		if err != nil {
			return change{}, err
		}
		if k := st.Index(newName); k >= 0 && k != j {
			return change{}, invalid("column %s already exists", strings.Join(newPath, "."))
		}
		if err := checkUnused(s, path, "rename"); err != nil {
			return change{}, err
		}
		old := st.Fields[j].Name
		st.Fields[j].Name = newName
		// The collations of its strings are keyed by the field's name.
		if st.Fields[j].Metadata, err = schema.RenameCollations(st.Fields[j].Metadata, old, newName); err != nil {
			return change{}, err
		}
		m := s.Metadata()
		m.PartitionColumns = slices.Clone(m.PartitionColumns)
		if len(path) == 1 {
			if k := slices.Index(m.PartitionColumns, old); k >= 0 {
				m.PartitionColumns[k] = newName
			}
		}
		props := cloneProps(s)
		fixStatsColumns(s, props, path, newName)
		return evolveMeta(s, m, sch, props)
	})
}

// DropColumns removes the columns at paths from the schema, on a table
// with column mapping; their bytes stay in old files, unread. A partition
// column, the last data column, the last field of a struct, and a column
// a CHECK constraint or a generated column uses are refused, as Spark
// refuses them. The commit is Spark's DROP COLUMNS.
func DropColumns(ctx context.Context, snap *snapshot.Snapshot, paths [][]string, opts Options) (txn.CommitResult, error) {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strings.Join(p, ".")
	}
	params := map[string]any{"columns": jsonString(names)}
	return run(ctx, snap, opts, OpDropColumns, params, func(_ context.Context, s *snapshot.Snapshot) (change, error) {
		if !mapped(s) {
			return change{}, ErrColumnMappingRequired
		}
		if len(paths) == 0 {
			return change{}, invalid("no column to drop")
		}
		sch, err := cloneSchema(s)
		if err != nil {
			return change{}, err
		}
		parts := s.Metadata().PartitionColumns
		props := cloneProps(s)
		for _, path := range paths {
			fixStatsColumns(s, props, path, "")
			st, j, err := lookup(sch, path)
			if err != nil {
				return change{}, err
			}
			if st == sch && slices.ContainsFunc(parts, func(c string) bool { return strings.EqualFold(c, st.Fields[j].Name) }) {
				return change{}, invalid("column %s is a partition column: partition columns cannot be dropped", strings.Join(path, "."))
			}
			if err := checkUnused(s, path, "drop"); err != nil {
				return change{}, err
			}
			if len(st.Fields) == 1 {
				return change{}, invalid("column %s is the only field of its struct: drop the struct instead", strings.Join(path, "."))
			}
			st.Fields = slices.Delete(st.Fields, j, j+1)
		}
		data := 0
		for _, f := range sch.Fields {
			if !slices.Contains(parts, f.Name) {
				data++
			}
		}
		if data == 0 {
			return change{}, invalid("dropping %s would leave no data column", strings.Join(names, ", "))
		}
		return evolve(s, sch, props)
	})
}

// checkUnused refuses a rename or drop of a column (or of a struct
// holding it) that a CHECK constraint or a generated column names.
func checkUnused(s *snapshot.Snapshot, path []string, what string) error {
	target := strings.ToLower(strings.Join(path, "."))
	uses := func(text string) bool {
		e, err := expr.Parse(text)
		if err != nil {
			return false
		}
		for _, c := range expr.Columns(e) {
			c = strings.ToLower(c)
			if c == target || strings.HasPrefix(c, target+".") {
				return true
			}
		}
		return false
	}
	for _, c := range s.Config().Constraints() {
		if uses(c.Expression) {
			return invalid("cannot %s column %s: CHECK constraint %s (%s) uses it; drop the constraint first", what, strings.Join(path, "."), c.Name, c.Expression)
		}
	}
	for _, f := range s.Schema().Fields {
		if raw, ok := f.Metadata.Get(schema.MetadataGenerationExpression); ok {
			var text string
			if json.Unmarshal(raw, &text) == nil && uses(text) {
				return invalid("cannot %s column %s: generated column %s (%s) uses it", what, strings.Join(path, "."), f.Name, text)
			}
		}
	}
	return nil
}

// fixStatsColumns rewrites delta.dataSkippingStatsColumns in props after a
// column at path is renamed to newName (newName != "") or dropped, as
// Spark does, so that the columns keep (or lose) their statistics rather
// than a stale name silently matching nothing.
func fixStatsColumns(s *snapshot.Snapshot, props map[string]string, path []string, newName string) {
	cols, ok := s.Config().StatsColumns()
	if !ok {
		return
	}
	var out []string
	changed := false
	for _, c := range cols {
		p, err := ParsePath(strings.TrimSpace(c))
		if err != nil || len(p) < len(path) || !slices.EqualFunc(p[:len(path)], path, strings.EqualFold) {
			out = append(out, c)
			continue
		}
		changed = true
		if newName == "" {
			continue
		}
		p = slices.Clone(p)
		p[len(path)-1] = newName
		out = append(out, quotePath(p))
	}
	if changed {
		props[tableconfig.KeyDataSkippingStatsColumns] = strings.Join(out, ",")
	}
}

// quotePath writes a column path, backquoting names that need it.
func quotePath(p []string) string {
	parts := make([]string, len(p))
	for i, n := range p {
		plain := n != ""
		for _, r := range n {
			if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				plain = false
			}
		}
		if plain {
			parts[i] = n
		} else {
			parts[i] = "`" + strings.ReplaceAll(n, "`", "``") + "`"
		}
	}
	return strings.Join(parts, ".")
}
