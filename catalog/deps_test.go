package catalog_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFacadeLinksNoCatalog: the root package delta, what a local program
// links, imports neither the catalog nor the SQLite engine (nor does
// package catalog itself import a database driver).
func TestFacadeLinksNoCatalog(t *testing.T) {
	for pkg, forbidden := range map[string][]string{
		"github.com/godelta/delta":         {"github.com/godelta/delta/catalog/", "modernc.org/"},
		"github.com/godelta/delta/catalog": {"modernc.org/", "net/http"},
		// The CLI links SQLite for `delta catalog serve`, PostgreSQL's
		// driver only with -tags catalog_postgres.
		"github.com/godelta/delta/cmd/delta":      {"github.com/jackc/"},
		"github.com/godelta/delta/catalog/server": {"github.com/jackc/"},
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Skipf("go list: %v", err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				// A forbidden path ending in '/' is the package and its
				// subpackages (catalogmanaged, a sibling, is allowed).
				if strings.HasPrefix(dep, f) || strings.HasSuffix(f, "/") && dep == strings.TrimSuffix(f, "/") {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
