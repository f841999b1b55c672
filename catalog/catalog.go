package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/godelta/delta/deltaerr"
)

// Errors of a Store. Each is returned wrapped with the name concerned.
var (
	// ErrNoSuchNamespace: the namespace (or, on creation, its parent)
	// does not exist.
	ErrNoSuchNamespace = errors.New("catalog: no such namespace")
	// ErrNoSuchTable: no table of that name is registered.
	ErrNoSuchTable = errors.New("catalog: no such table")
	// ErrLocationNotAllowed: a table may not be registered at the
	// location asked for; a catalog server takes tables inside its
	// warehouse and the locations it was told to allow, and opens no
	// other.
	ErrLocationNotAllowed = errors.New("catalog: location not allowed")
	// ErrAlreadyExists: a namespace or table of that name exists.
	ErrAlreadyExists = errors.New("catalog: already exists")
	// ErrNamespaceNotEmpty: the namespace to drop holds tables or
	// namespaces.
	ErrNamespaceNotEmpty = errors.New("catalog: namespace not empty")
	// ErrInvalidName: a namespace level or table name breaks the naming
	// rules of the package doc. It matches deltaerr.ErrInvalidArgument.
	ErrInvalidName = fmt.Errorf("catalog: invalid name: %w", deltaerr.ErrInvalidArgument)
)

// MaxNameLen is the longest namespace level or table name, in bytes.
const MaxNameLen = 255

// Separator joins the levels of a namespace in the Iceberg REST API's
// paths and in the database: the unit separator, which no level holds.
const Separator = "\x1f"

// Namespace is a namespace's levels, outermost first. The empty Namespace
// is the root, the parent of top-level namespaces; it is never created.
type Namespace []string

// String joins the levels with dots, for messages.
func (ns Namespace) String() string { return strings.Join(ns, ".") }

// Key joins the levels with Separator: the namespace's database key.
func (ns Namespace) Key() string { return strings.Join(ns, Separator) }

// Parent returns ns without its last level (the root for a top-level
// namespace).
func (ns Namespace) Parent() Namespace {
	if len(ns) == 0 {
		return nil
	}
	return ns[:len(ns)-1]
}

// Check returns ErrInvalidName when ns is empty or a level breaks the
// naming rules.
func (ns Namespace) Check() error {
	if len(ns) == 0 {
		return fmt.Errorf("%w: empty namespace", ErrInvalidName)
	}
	for _, l := range ns {
		if err := CheckName(l); err != nil {
			return err
		}
	}
	return nil
}

// NamespaceFromKey splits a key made by Key; "" gives the root.
func NamespaceFromKey(key string) Namespace {
	if key == "" {
		return nil
	}
	return strings.Split(key, Separator)
}

// ParseNamespace parses the dotted form "a.b" that String prints (and that
// the CLI takes); a level holding a dot cannot be written this way.
func ParseNamespace(s string) (Namespace, error) {
	ns := Namespace(strings.Split(s, "."))
	if s == "" {
		ns = nil
	}
	return ns, ns.Check()
}

// CheckName returns ErrInvalidName when name is not a valid namespace
// level or table name.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", ErrInvalidName)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: %.40q...: longer than %d bytes", ErrInvalidName, name, MaxNameLen)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %q: not UTF-8", ErrInvalidName, name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' {
			return fmt.Errorf("%w: %q: holds %q", ErrInvalidName, name, r)
		}
	}
	return nil
}

// TableIdent names a table: its namespace and its name.
type TableIdent struct {
	Namespace Namespace
	Name      string
}

// String is "ns.name", for messages and the CLI.
func (id TableIdent) String() string { return id.Namespace.String() + "." + id.Name }

// Check returns ErrInvalidName when the namespace or the name is invalid.
func (id TableIdent) Check() error {
	if err := id.Namespace.Check(); err != nil {
		return err
	}
	return CheckName(id.Name)
}

// ParseTableIdent parses "ns.table" (the last dot separates the name).
func ParseTableIdent(s string) (TableIdent, error) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return TableIdent{}, fmt.Errorf("%w: %q: want NAMESPACE.TABLE", ErrInvalidName, s)
	}
	ns, err := ParseNamespace(s[:i])
	if err != nil {
		return TableIdent{}, err
	}
	id := TableIdent{Namespace: ns, Name: s[i+1:]}
	return id, id.Check()
}

// NamespaceInfo is a namespace and its properties.
type NamespaceInfo struct {
	Name       Namespace
	Properties map[string]string
	Created    time.Time
}

// Table is the registration of a Delta table.
type Table struct {
	Ident TableIdent
	// Location is the table root's URI (the directory holding
	// _delta_log/).
	Location string
	// ID is a random UUID given at registration; it never changes.
	ID string
	// Created is when the table was registered.
	Created time.Time
}

// Page asks for part of a listing: the entries after the one Token names
// (the first page when Token is ""), at most Size of them (all when Size
// is 0 or less). The token of the next page comes back with each page, ""
// after the last.
type Page struct {
	Token string
	Size  int
}

// Store keeps the catalog's state. Every method is safe for concurrent
// use; each change is atomic.
type Store interface {
	// CreateNamespace creates ns with its properties. ErrAlreadyExists if
	// it exists, ErrNoSuchNamespace if its parent does not.
	CreateNamespace(ctx context.Context, ns Namespace, props map[string]string) error
	// Namespace returns ns and its properties, or ErrNoSuchNamespace.
	Namespace(ctx context.Context, ns Namespace) (NamespaceInfo, error)
	// ListNamespaces lists the children of parent (the top-level
	// namespaces for the root), in increasing byte order of their last
	// level. ErrNoSuchNamespace for a parent that does not exist.
	ListNamespaces(ctx context.Context, parent Namespace, page Page) ([]Namespace, string, error)
	// DropNamespace drops an empty namespace: ErrNamespaceNotEmpty if it
	// holds a table or a namespace, ErrNoSuchNamespace if it does not
	// exist.
	DropNamespace(ctx context.Context, ns Namespace) error
	// RegisterTable registers t.Ident at t.Location, and returns it with
	// its ID and Created set. ErrAlreadyExists if the name is taken,
	// ErrNoSuchNamespace if the namespace does not exist.
	RegisterTable(ctx context.Context, t Table) (Table, error)
	// Table returns the registration of id, or ErrNoSuchTable
	// (ErrNoSuchNamespace when the namespace does not exist).
	Table(ctx context.Context, id TableIdent) (Table, error)
	// ListTables lists the tables of ns in increasing byte order of their
	// names. ErrNoSuchNamespace if ns does not exist.
	ListTables(ctx context.Context, ns Namespace, page Page) ([]TableIdent, string, error)
	// DropTable forgets the registration of id; the table's files are
	// not touched. ErrNoSuchTable if it is not registered.
	DropTable(ctx context.Context, id TableIdent) error
	// Close releases the database. The Store is unusable afterwards.
	Close() error
}
