package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/godelta/delta"
	"github.com/godelta/delta/alter"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// The schema, property, constraint and feature operations of delta alter.
func init() {
	none := delta.AlterOptions{Txn: delta.TxnOptions{EngineInfo: "godelta-cli"}}
	alterOps["add-column"] = alterOp{Usage: "add-column 'NAME TYPE [COMMENT ...]' (nested: 'a.b TYPE')", MinArgs: 1, MaxArgs: 1,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			path, f, err := columnDef(args[0])
			if err != nil {
				return delta.CommitResult{}, err
			}
			return t.AddColumn(ctx, path[:len(path)-1], f, none)
		}}
	alterOps["rename-column"] = alterOp{Usage: "rename-column COLUMN NEW-NAME", MinArgs: 2, MaxArgs: 2,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			path, err := alter.ParsePath(args[0])
			if err != nil {
				return delta.CommitResult{}, err
			}
			return t.RenameColumn(ctx, path, args[1], none)
		}}
	alterOps["drop-column"] = alterOp{Usage: "drop-column COLUMN...", MinArgs: 1, MaxArgs: -1,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			var paths [][]string
			for _, a := range args {
				p, err := alter.ParsePath(a)
				if err != nil {
					return delta.CommitResult{}, err
				}
				paths = append(paths, p)
			}
			return t.DropColumns(ctx, paths, none)
		}}
	alterOps["widen-column"] = alterOp{Usage: "widen-column COLUMN TYPE", MinArgs: 2, MaxArgs: 2,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			path, err := alter.ParsePath(args[0])
			if err != nil {
				return delta.CommitResult{}, err
			}
			st, err := schema.ParseDDL("x " + args[1])
			if err != nil {
				return delta.CommitResult{}, err
			}
			return t.WidenColumn(ctx, path, st.Fields[0].Type, none)
		}}
	alterOps["set-default"] = alterOp{Usage: "set-default COLUMN 'LITERAL'", MinArgs: 2, MaxArgs: 2,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			if strings.TrimSpace(args[1]) == "" {
				return delta.CommitResult{}, fmt.Errorf("set-default %s: an empty default (use drop-default): %w", args[0], deltaerr.ErrInvalidArgument)
			}
			return t.SetColumnDefault(ctx, args[0], args[1], none)
		}}
	alterOps["drop-default"] = alterOp{Usage: "drop-default COLUMN", MinArgs: 1, MaxArgs: 1,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			return t.SetColumnDefault(ctx, args[0], "", none)
		}}
	alterOps["set"] = alterOp{Usage: "set KEY=VALUE...", MinArgs: 1, MaxArgs: -1,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			props := map[string]string{}
			for _, a := range args {
				k, v, ok := strings.Cut(a, "=")
				if !ok || k == "" {
					return delta.CommitResult{}, fmt.Errorf("%q: want KEY=VALUE: %w", a, deltaerr.ErrInvalidArgument)
				}
				props[k] = v
			}
			return t.SetProperties(ctx, props, none)
		}}
	alterOps["unset"] = alterOp{Usage: "unset [--if-exists] KEY...", MinArgs: 1, MaxArgs: -1,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			ifExists := args[0] == "--if-exists"
			if ifExists {
				args = args[1:]
			}
			return t.UnsetProperties(ctx, args, ifExists, none)
		}}
	alterOps["add-constraint"] = alterOp{Usage: "add-constraint NAME 'EXPR'", MinArgs: 2, MaxArgs: 2,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			return t.AddConstraint(ctx, args[0], args[1], none)
		}}
	alterOps["drop-constraint"] = alterOp{Usage: "drop-constraint [--if-exists] NAME", MinArgs: 1, MaxArgs: 2,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			ifExists := args[0] == "--if-exists"
			if ifExists {
				args = args[1:]
			}
			if len(args) != 1 {
				return delta.CommitResult{}, fmt.Errorf("want one constraint name: %w", deltaerr.ErrInvalidArgument)
			}
			return t.DropConstraint(ctx, args[0], ifExists, none)
		}}
	alterOps["enable-feature"] = alterOp{Usage: "enable-feature NAME (columnMapping, deletionVectors, changeDataFeed, typeWidening, ...)", MinArgs: 1, MaxArgs: 1,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			return t.EnableFeature(ctx, args[0], none)
		}}
	alterOps["drop-feature"] = alterOp{Usage: "drop-feature NAME (checkConstraints, domainMetadata, inCommitTimestamp, deletionVectors, v2Checkpoint, vacuumProtocolCheck)", MinArgs: 1, MaxArgs: 1,
		Run: func(ctx context.Context, t *delta.Table, args []string) (delta.CommitResult, error) {
			return t.DropFeature(ctx, args[0], none)
		}}
}

// columnDef parses "path TYPE [NOT NULL] [COMMENT '...']": a column path
// (dotted, backquotes for odd names) and a Spark SQL type.
func columnDef(def string) ([]string, schema.StructField, error) {
	def = strings.TrimSpace(def)
	end := 0
	quoted := false
	for end < len(def) {
		c := def[end]
		if c == '`' {
			quoted = !quoted
		} else if !quoted && (c == ' ' || c == '\t') {
			break
		}
		end++
	}
	path, err := alter.ParsePath(def[:end])
	if err != nil {
		return nil, schema.StructField{}, err
	}
	rest := strings.TrimSpace(def[end:])
	if rest == "" {
		return nil, schema.StructField{}, fmt.Errorf("column %q: want NAME TYPE: %w", def, deltaerr.ErrInvalidArgument)
	}
	st, err := schema.ParseDDL("x " + rest)
	if err != nil {
		return nil, schema.StructField{}, err
	}
	f := st.Fields[0]
	f.Name = path[len(path)-1]
	return path, f, nil
}
