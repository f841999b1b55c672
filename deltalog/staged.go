package deltalog

import (
	"strings"

	"github.com/godelta/delta/logstore"
)

// StagedDir holds the staged commits of a catalog-managed table:
// proposed commits, each at <v>.<uuid>.json, that the table's catalog may
// ratify as version v (PROTOCOL.md "Catalog-managed tables"). Whether a
// staged commit was ratified is the catalog's to say, never the
// directory's: one may be a rejected or an unfinished attempt.
const StagedDir = LogDir + "_staged_commits/"

// StagedCommitKey returns the key of the staged commit uuid proposed for
// version.
func StagedCommitKey(version int64, uuid string) string {
	return StagedDir + pad(version, versionDigits) + "." + uuid + ".json"
}

// ParseStagedName parses the key of a staged commit,
// _delta_log/_staged_commits/<v>.<uuid>.json, into its version and uuid.
func ParseStagedName(key string) (version int64, uuid string, ok bool) {
	name, found := strings.CutPrefix(key, StagedDir)
	if !found || strings.Contains(name, "/") || len(name) < versionDigits+2 || name[versionDigits] != '.' {
		return 0, "", false
	}
	v, ok := parseVersion(name[:versionDigits])
	uuid, json := strings.CutSuffix(name[versionDigits+1:], ".json")
	if !ok || !json || uuid == "" || strings.Contains(uuid, ".") {
		return 0, "", false
	}
	return v, uuid, true
}

// A CatalogView is a store whose log is the view of a table's managing
// catalog (package catalogmanaged): its listing shows the commits the
// catalog has ratified and nothing newer, and a commit made through it is
// ratified by the catalog. A table with the catalogManaged feature is read
// and committed only through one; a plain directory would show a wrong
// table, and a commit there would bypass the catalog.
type CatalogView interface {
	logstore.Store
	// CatalogManaged reports that the store is such a view.
	CatalogManaged() bool
}

// ThroughCatalog reports whether store is a CatalogView, or wraps one
// (a wrapper exposes what it wraps with an Unwrap() logstore.Store
// method, as the log cache and location.Trust do).
func ThroughCatalog(store logstore.Store) bool {
	for store != nil {
		if v, ok := store.(CatalogView); ok && v.CatalogManaged() {
			return true
		}
		u, ok := store.(interface{ Unwrap() logstore.Store })
		if !ok {
			return false
		}
		store = u.Unwrap()
	}
	return false
}
