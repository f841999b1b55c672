package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/godelta/delta/logstore"
)

// LogDir is the directory whose presence makes a directory a Delta table.
const LogDir = "_delta_log/"

// WarehouseResult counts what RegisterWarehouse found.
type WarehouseResult struct {
	Namespaces int // namespaces created
	Tables     int // tables registered
	Known      int // tables already registered at the same location
	Skipped    int // directories that are no table, or whose name is taken by another location or is not a valid name
}

// RegisterWarehouse registers every Delta table of the warehouse wh, laid
// out as <warehouse>/<namespace>/<table>/ with <table>/_delta_log/ (one
// namespace level). A namespace directory missing from s is created with
// the property "location"; a table already registered under its name
// stays as it is (a different location is logged and skipped). Directories
// whose names begin with '.' or '_', or that are not valid names, are
// skipped: they are no namespace or table. It is idempotent: a restart
// over the same warehouse registers only what is new.
//
// uri is the warehouse's URI as given (wh is the store it opened): table
// locations are uri joined with the two names (JoinLocation), so that they
// keep its query (an endpoint=, region=, ... of an object store) and open
// as the warehouse did. A plain path is made the absolute URI wh has.
func RegisterWarehouse(ctx context.Context, s Store, uri string, wh logstore.Store, log *slog.Logger) (WarehouseResult, error) {
	if log == nil {
		log = slog.Default()
	}
	var res WarehouseResult
	root := strings.TrimRight(wh.URI(), "/")
	base := uri
	if !strings.Contains(uri, "://") {
		base = root
	}
	nsDirs, err := dirs(ctx, wh, "")
	if err != nil {
		return res, fmt.Errorf("catalog: listing warehouse %s: %w", logstore.RedactURI(root), err)
	}
	for _, nsName := range nsDirs {
		if skipName(nsName) {
			continue
		}
		tblDirs, err := dirs(ctx, wh, nsName+"/")
		if err != nil {
			return res, fmt.Errorf("catalog: listing warehouse namespace %s: %w", nsName, err)
		}
		ns := Namespace{nsName}
		nsCreated := false
		for _, name := range tblDirs {
			if skipName(name) {
				continue
			}
			sub, err := dirs(ctx, wh, nsName+"/"+name+"/")
			if err != nil {
				return res, fmt.Errorf("catalog: listing warehouse table %s/%s: %w", nsName, name, err)
			}
			isTable := false
			for _, d := range sub {
				isTable = isTable || d+"/" == LogDir
			}
			if !isTable {
				res.Skipped++
				continue
			}
			if !nsCreated {
				err := s.CreateNamespace(ctx, ns, map[string]string{"location": root + "/" + nsName})
				if err == nil {
					res.Namespaces++
				} else if !errors.Is(err, ErrAlreadyExists) {
					return res, err
				}
				nsCreated = true
			}
			id := TableIdent{Namespace: ns, Name: name}
			loc := JoinLocation(base, nsName, name)
			_, err = s.RegisterTable(ctx, Table{Ident: id, Location: loc})
			switch {
			case err == nil:
				res.Tables++
			case errors.Is(err, ErrAlreadyExists):
				t, err := s.Table(ctx, id)
				if err != nil {
					return res, err
				}
				if t.Location == loc {
					res.Known++
				} else {
					res.Skipped++
					log.Warn("catalog: warehouse table not registered: its name is taken by another location", "table", id.String(), "location", logstore.RedactURI(loc), "registered", logstore.RedactURI(t.Location))
				}
			default:
				return res, err
			}
		}
	}
	return res, nil
}

// JoinLocation joins path elements to a location URI, before its query:
// ("s3://b/wh?region=x", "ns", "t") gives "s3://b/wh/ns/t?region=x".
func JoinLocation(base string, elems ...string) string {
	path, query, hasQuery := strings.Cut(base, "?")
	path = strings.TrimRight(path, "/")
	for _, e := range elems {
		path += "/" + e
	}
	if hasQuery {
		path += "?" + query
	}
	return path
}

// skipName tells directories that are never a namespace or table.
func skipName(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || CheckName(name) != nil
}

// dirs returns the names of the sub-directories directly under dir.
func dirs(ctx context.Context, st logstore.Store, dir string) ([]string, error) {
	var out []string
	for d, err := range logstore.ListDirs(ctx, st, dir) {
		if err != nil {
			if errors.Is(err, logstore.ErrNotFound) {
				return out, nil
			}
			return nil, err
		}
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(d, dir), "/"))
	}
	return out, nil
}
