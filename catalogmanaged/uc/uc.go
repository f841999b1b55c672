// Package uc speaks Unity Catalog's Delta commits API
// (/api/2.1/unity-catalog/delta/preview/commits, tag DeltaCommits of Unity
// Catalog's OpenAPI spec), by which a catalog ratifies the commits of the
// catalog-managed tables it manages: a client, which is a
// catalogmanaged.Client for one table, and a server side, Handler, that
// serves the same API over any catalog of this library.
//
// The wire shapes are Unity Catalog's: GET with a JSON body {table_id,
// table_uri, start_version[, end_version]} answers {commits,
// latest_table_version}, each commit {version, timestamp, file_name,
// file_size, file_modification_timestamp} with file_name the staged
// commit's name under _delta_log/_staged_commits/; POST {table_id,
// table_uri, commit_info} ratifies one, POST {table_id, table_uri,
// latest_backfilled_version} reports publication ("backfill"). A version
// held by another commit is 409; replaying an accepted commit (same version
// and file name) succeeds, so a client that lost the answer may send it
// again. Errors are Unity Catalog's {error_code, message}.
//
// The client maps answers to the kinds the commit pipeline acts on: 409 is
// catalogmanaged.ErrConflict (the transaction rebases and retries), an
// answer that says the commit was refused (4xx) is logstore.ErrNotWritten,
// and no answer or a 5xx is an unknown outcome, which the transaction
// settles by reading the catalog's view again.
package uc

import "github.com/godelta/delta/catalogmanaged"

// CommitsPath is the path of the Delta commits API under a Unity Catalog
// base URL (http://host:8080/api/2.1/unity-catalog).
const CommitsPath = "/delta/preview/commits"

// MultiCommitsPath is where this library's catalog server (Handler over a
// MultiCatalog) ratifies commits to several tables at once: POST
// {"commits": [DeltaCommit, ...]}, each with its table_id, table_uri and
// commit_info, answers 200 when all are ratified and 409 when a version
// is taken, and then none is. It is an extension, not part of Unity
// Catalog's API.
const MultiCommitsPath = "/delta/preview/multi-table-commits"

// multiCommitRequest is the body of a request at MultiCommitsPath.
type multiCommitRequest struct {
	Commits []commitRequest `json:"commits"`
}

// commitInfo is DeltaCommitInfo.
type commitInfo struct {
	Version                   int64  `json:"version"`
	Timestamp                 int64  `json:"timestamp"`
	FileName                  string `json:"file_name"`
	FileSize                  int64  `json:"file_size"`
	FileModificationTimestamp int64  `json:"file_modification_timestamp"`
}

// getCommits is DeltaGetCommits.
type getCommits struct {
	TableID      string `json:"table_id"`
	TableURI     string `json:"table_uri"`
	StartVersion int64  `json:"start_version"`
	EndVersion   *int64 `json:"end_version,omitempty"`
}

// getCommitsResponse is DeltaGetCommitsResponse.
type getCommitsResponse struct {
	Commits            []commitInfo `json:"commits"`
	LatestTableVersion int64        `json:"latest_table_version"`
}

// commitRequest is DeltaCommit (without metadata and uniform, which this
// client does not send and the Handler ignores).
type commitRequest struct {
	TableID                 string      `json:"table_id"`
	TableURI                string      `json:"table_uri"`
	CommitInfo              *commitInfo `json:"commit_info,omitempty"`
	LatestBackfilledVersion *int64      `json:"latest_backfilled_version,omitempty"`
}

// errorResponse is Unity Catalog's error body.
type errorResponse struct {
	ErrorCode string `json:"error_code"`
	Message   string `json:"message"`
}

// Error codes the Handler answers with, as Unity Catalog names them.
const (
	codeInvalidArgument = "INVALID_ARGUMENT"
	codeNotFound        = "TABLE_NOT_FOUND"
	codeConflict        = "ALREADY_EXISTS"
	codeUnauthenticated = "UNAUTHENTICATED"
	codeInternal        = "INTERNAL"
)

var _ catalogmanaged.Client = (*TableClient)(nil)

// TablesPath is the path of Unity Catalog's tables API under the base
// URL: GET TablesPath/{full_name} answers a TableInfo.
const TablesPath = "/tables"

// TableInfo is the part of Unity Catalog's TableInfo a client needs to
// open a table: its ID (for the commits API) and its storage location.
type TableInfo struct {
	Name             string `json:"name"`
	SchemaName       string `json:"schema_name,omitempty"`
	CatalogName      string `json:"catalog_name,omitempty"`
	FullName         string `json:"full_name,omitempty"`
	TableID          string `json:"table_id"`
	StorageLocation  string `json:"storage_location"`
	TableType        string `json:"table_type,omitempty"`
	DataSourceFormat string `json:"data_source_format,omitempty"`
}
