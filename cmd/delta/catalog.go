package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/icebergrest"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/logstore"
)

func init() { extraCommands = append(extraCommands, newCatalogCmd) }

// openCatalogDB opens the database of `catalog serve`; nil is SQLite
// only (catalog_postgres.go sets it in builds with PostgreSQL).
var openCatalogDB func(ctx context.Context, db string) (*catalog.SQLStore, error)

// Environment variables of the catalog commands.
const (
	catalogURIEnv   = "DELTA_CATALOG_URI"
	catalogTokenEnv = "DELTA_CATALOG_TOKEN"
	defaultCatalog  = "http://127.0.0.1:8181"
)

func newCatalogCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "Serve a catalog of Delta tables (the Iceberg REST catalog API), or call one",
		Long: "catalog serve runs a catalog server over a warehouse of Delta tables: every\n" +
			"table at <warehouse>/<namespace>/<table>/ is registered at start, and Iceberg\n" +
			"engines (iceberg-go, PyIceberg, Spark, Trino, DuckDB) find and read the tables\n" +
			"that keep UniForm Iceberg metadata through the Iceberg REST catalog API it serves.\n" +
			"Its state (namespaces, registrations) is an SQLite database file.\n" +
			"ls, create and register call a running server over HTTP (--catalog, default $" + catalogURIEnv + "\n" +
			"or " + defaultCatalog + "; --token, default $" + catalogTokenEnv + ").",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd, "unknown catalog command %q", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Usage()
			return usageErrorf(cmd, "a catalog command is required")
		},
	}
	cmd.AddCommand(newCatalogServeCmd(), newCatalogLsCmd(), newCatalogCreateCmd(), newCatalogRegisterCmd())
	return cmd
}

func newCatalogServeCmd() *cobra.Command {
	var cfg server.Config
	var listen string
	cmd := &cobra.Command{
		Use:   "serve --warehouse URI [--listen ADDR] [--db PATH] [--token T] [--allow-location URI ...]",
		Short: "Serve the Iceberg REST catalog API over a warehouse of Delta tables",
		Long: "serve registers every Delta table at <warehouse>/<namespace>/<table>/ (a\n" +
			"directory holding _delta_log/; directories beginning with '.' or '_' are\n" +
			"skipped), then serves the Iceberg REST catalog API at http://ADDR/v1/... until\n" +
			"interrupted. A table's load answers its newest UniForm Iceberg metadata, so\n" +
			"readers see each new commit. The state is kept in the SQLite database --db\n" +
			"(default <warehouse>/" + server.DefaultDBName + " for a local warehouse), or, built\n" +
			"with -tags catalog_postgres, in the PostgreSQL database of a postgres:// URL,\n" +
			"which several servers may share; a\n" +
			"restart with the same database keeps the namespaces and tables registered before.\n" +
			"With --token (default $" + catalogTokenEnv + ") every request must carry\n" +
			"'Authorization: Bearer TOKEN'. Clients may register tables (delta catalog\n" +
			"register, an EXTERNAL create) inside the warehouse and inside each\n" +
			"--allow-location, nowhere else: the server reads registered tables with its own\n" +
			"credentials. It prints the URL it serves on, then a log line per start and\n" +
			"failure on standard error.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cfg.Warehouse == "" {
				return usageErrorf(cmd, "--warehouse is required")
			}
			if !cmd.Flags().Changed("token") {
				cfg.Token = os.Getenv(catalogTokenEnv)
			}
			for i, loc := range cfg.AllowLocations {
				if !strings.Contains(loc, "://") {
					abs, err := filepath.Abs(loc)
					if err != nil {
						return usageErrorf(cmd, "--allow-location %s: %v", loc, err)
					}
					cfg.AllowLocations[i] = "file://" + filepath.ToSlash(abs)
				}
			}
			ctx := cmd.Context()
			cfg.OpenDB = openCatalogDB
			srv, err := server.Open(ctx, cfg)
			if err != nil {
				return failure(err)
			}
			defer srv.Close()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return failure(err)
			}
			r := srv.Registered
			fmt.Fprintf(cmd.OutOrStdout(), "serving the Iceberg REST catalog on http://%s (%d tables registered from the warehouse, %d known; database %s)\n",
				ln.Addr(), r.Tables, r.Known, srv.DBPath)
			return failure(srv.Serve(ctx, ln))
		},
	}
	cmd.Flags().StringVar(&cfg.Warehouse, "warehouse", "", "the warehouse `URI`: <warehouse>/<namespace>/<table>/ are Delta tables")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8181", "the `ADDR` (host:port) to listen on")
	cmd.Flags().StringVar(&cfg.DB, "db", "", "the SQLite database file `PATH` (default <warehouse>/"+server.DefaultDBName+"), or, in a build with -tags catalog_postgres, a postgres:// URL of a PostgreSQL database several servers share")
	cmd.Flags().StringVar(&cfg.Token, "token", "", "the bearer `TOKEN` requests must carry (default $"+catalogTokenEnv+"; none: no authentication)")
	cmd.Flags().StringArrayVar(&cfg.AllowLocations, "allow-location", nil, "a `URI` (or directory) inside which clients may register tables, besides the warehouse (repeatable)")
	return cmd
}

// catalogClient holds the flags of the commands that call a server.
type catalogClient struct {
	uri, token string
}

func (c *catalogClient) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.uri, "catalog", "", "the catalog server's `URL` (default $"+catalogURIEnv+" or "+defaultCatalog+")")
	cmd.Flags().StringVar(&c.token, "token", "", "the bearer `TOKEN` (default $"+catalogTokenEnv+")")
}

func (c *catalogClient) client(cmd *cobra.Command) (*icebergrest.Client, error) {
	uri, token := c.uri, c.token
	if !cmd.Flags().Changed("catalog") {
		if uri = os.Getenv(catalogURIEnv); uri == "" {
			uri = defaultCatalog
		}
	}
	if !cmd.Flags().Changed("token") {
		token = os.Getenv(catalogTokenEnv)
	}
	cl, err := icebergrest.NewClient(uri, token, nil)
	if err != nil {
		return nil, usageErrorf(cmd, "%v", err)
	}
	return cl, nil
}

func newCatalogLsCmd() *cobra.Command {
	var cc catalogClient
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls [NAMESPACE]",
		Short: "List a catalog's namespaces, or the tables of one",
		Long: "ls lists the catalog's namespaces, every level, one per line (dotted: a.b); with\n" +
			"NAMESPACE, its tables (NAMESPACE.TABLE). --json prints one JSON array of strings.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := cc.client(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			out := []string{}
			if len(args) == 1 {
				ns, err := catalog.ParseNamespace(args[0])
				if err != nil {
					return usageErrorf(cmd, "%v", err)
				}
				ids, err := cl.ListTables(ctx, ns)
				if err != nil {
					return failure(err)
				}
				for _, id := range ids {
					out = append(out, id.String())
				}
			} else if out, err = allNamespaces(ctx, cl, nil, out); err != nil {
				return failure(err)
			}
			if asJSON {
				return failure(writeJSON(cmd.OutOrStdout(), out))
			}
			for _, s := range out {
				fmt.Fprintln(cmd.OutOrStdout(), s)
			}
			return nil
		},
	}
	cc.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array")
	return cmd
}

// allNamespaces appends parent's namespaces and theirs, depth first, at
// most 16 levels down.
func allNamespaces(ctx context.Context, cl *icebergrest.Client, parent catalog.Namespace, out []string) ([]string, error) {
	nss, err := cl.ListNamespaces(ctx, parent)
	if err != nil {
		return nil, err
	}
	for _, ns := range nss {
		out = append(out, ns.String())
		if len(ns) < 16 {
			if out, err = allNamespaces(ctx, cl, ns, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func newCatalogCreateCmd() *cobra.Command {
	var cc catalogClient
	var props []string
	cmd := &cobra.Command{
		Use:   "create NAMESPACE [--property KEY=VALUE]...",
		Short: "Create a namespace in a catalog",
		Long:  "create creates the namespace NAMESPACE (a.b for a nested one, whose parent must exist).",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := catalog.ParseNamespace(args[0])
			if err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			m := map[string]string{}
			for _, p := range props {
				k, v, ok := strings.Cut(p, "=")
				if !ok || k == "" {
					return usageErrorf(cmd, "--property %q: want KEY=VALUE", p)
				}
				m[k] = v
			}
			cl, err := cc.client(cmd)
			if err != nil {
				return err
			}
			if err := cl.CreateNamespace(cmd.Context(), ns, m); err != nil {
				return failure(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created namespace %s\n", ns)
			return nil
		},
	}
	cc.register(cmd)
	cmd.Flags().StringArrayVar(&props, "property", nil, "a namespace property `KEY=VALUE`; repeatable")
	return cmd
}

func newCatalogRegisterCmd() *cobra.Command {
	var cc catalogClient
	cmd := &cobra.Command{
		Use:   "register NAMESPACE.TABLE LOCATION",
		Short: "Register a Delta table in a catalog",
		Long: "register registers the Delta table at LOCATION (a path or URI of its root) as\n" +
			"NAMESPACE.TABLE; the namespace must exist. A path is sent as an absolute file://\n" +
			"URI, a URI as given (with its query, such as an S3 endpoint=): the server reads\n" +
			"the table there. It prints the table's Iceberg metadata\n" +
			"location, or says that the table keeps none (UniForm Iceberg off).",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := catalog.ParseTableIdent(args[0])
			if err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			st, err := logstore.Open(cmd.Context(), args[1])
			if err != nil {
				return failure(err)
			}
			// A URI is sent as given, with its query (an object store's
			// endpoint=, region=, ...), so that the server opens it as
			// this command did; a path as the absolute URI it names.
			loc := args[1]
			if !strings.Contains(loc, "://") {
				loc = st.URI()
			}
			st.Close()
			cl, err := cc.client(cmd)
			if err != nil {
				return err
			}
			res, err := cl.RegisterTable(cmd.Context(), id, loc)
			if err != nil {
				return failure(err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "registered %s at %s\n", id, logstore.RedactURI(loc))
			if res.MetadataLocation == "" {
				fmt.Fprintf(out, "iceberg metadata:  none (UniForm Iceberg is off: `delta iceberg --enable` turns it on)\n")
			} else {
				fmt.Fprintf(out, "iceberg metadata:  %s\n", res.MetadataLocation)
			}
			return nil
		},
	}
	cc.register(cmd)
	return cmd
}
