// Package ucrest speaks Unity Catalog's Delta-Tables REST API
// (/api/2.1/unity-catalog/delta/v1/..., the "UC Delta API" of Unity
// Catalog's api/delta.yaml), by which a catalog serves, creates and
// ratifies the commits of the catalog-managed Delta tables it manages: a
// client, whose per-table TableClient is a catalogmanaged.Client, and a
// server side, Handler, that serves the same API over any catalog that
// implements Catalog (this library's catalog server does).
//
// It is the successor of the older commits API (package
// catalogmanaged/uc, /delta/preview/commits): tables are named by their
// three-part name catalog.schema.table instead of an ID and a location,
// loading a table answers its unpublished commits inline, and one
// update_table call ratifies a commit and reports publication.
//
// # The API
//
//	GET  /delta/v1/config?catalog=C&protocol-versions=1.0      endpoints and protocol version
//	POST /delta/v1/catalogs/C/schemas/S/staging-tables          {name}: allocate an ID and a location
//	POST /delta/v1/catalogs/C/schemas/S/tables                  create (finalize) a table
//	GET  /delta/v1/catalogs/C/schemas/S/tables/T                load_table: metadata, commits, latest
//	POST /delta/v1/catalogs/C/schemas/S/tables/T                update_table: requirements, updates
//	GET  /delta/v1/catalogs/C/schemas/S/tables/T/credentials?operation=READ|READ_WRITE
//
// Every field name on the wire is kebab-case (latest-table-version,
// file-name). A commit is {version, timestamp, file-name, file-size,
// file-modification-timestamp}, its file-name the staged commit's name
// under _delta_log/_staged_commits/. load_table answers {metadata:
// {etag, table-type, table-uuid, location, ...}, commits,
// latest-table-version}: the commits not yet published ("backfilled"),
// newest first, and the latest ratified version. update_table takes
// {requirements: [{type: "assert-table-uuid", uuid}], updates: [{action:
// "add-commit", commit}, {action: "set-latest-backfilled-version",
// latest-published-version}]} and answers the table as load_table does.
// Errors are {error: {message, type, code}}, type one of Unity Catalog's
// DeltaErrorType names (CommitVersionConflictException, ...).
//
// # Commits as a compare-and-set
//
// The API has no requirement on the version: add-commit is itself the
// compare-and-set. The catalog ratifies a commit of version v only when
// its latest ratified version is v-1, and answers 409
// (CommitVersionConflictException) when another commit holds v. The
// client adds assert-table-uuid, so that a table dropped and created
// again under its name is not committed to (409
// UpdateRequirementConflictException). Version 0 is not ratified: the
// creator writes it published, as _delta_log/00000000000000000000.json,
// and then finalizes the table (create table); see StagingClient.
//
// # Errors
//
// The client maps answers to the kinds the commit pipeline acts on: 409
// is catalogmanaged.ErrConflict (the transaction rebases and retries), an
// answer that says nothing was done (another 4xx but 408 and 429) is
// logstore.ErrNotWritten, and no answer, a 5xx, 408 or 429 is an unknown
// outcome, which the transaction settles by loading the table again. An
// answer that breaks the API (not its JSON, over MaxResponse bytes, a
// commit named outside _staged_commits/ or not of its version, a commit
// past latest-table-version) is deltaerr.ErrCorrupt.
package ucrest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// V1Path is the path of the API under a Unity Catalog base URL
// (http://host:8080/api/2.1/unity-catalog).
const V1Path = "/delta/v1"

// ProtocolVersion is the version of the API this package speaks.
const ProtocolVersion = "1.0"

// MaxResponse bounds the body of an answer the client reads: a table's
// unpublished commits are few, and an answer must not exhaust memory.
const MaxResponse = 16 << 20

// maxRequest bounds a request body the Handler reads.
const maxRequest = 1 << 20

// TableName is Unity Catalog's three-part name of a table.
type TableName struct {
	Catalog, Schema, Table string
}

func (n TableName) String() string { return n.Catalog + "." + n.Schema + "." + n.Table }

// schemaPath is the path of a schema's resources.
func schemaPath(catalog, schema string) string {
	return V1Path + "/catalogs/" + url.PathEscape(catalog) + "/schemas/" + url.PathEscape(schema)
}

// tablePath is the path of a table's resource.
func (n TableName) path() string {
	return schemaPath(n.Catalog, n.Schema) + "/tables/" + url.PathEscape(n.Table)
}

// Commit is DeltaCommit, one ratified or proposed commit.
type Commit struct {
	Version int64 `json:"version"`
	// Timestamp is the commit's in-commit timestamp, in milliseconds.
	Timestamp int64 `json:"timestamp"`
	// FileName is the staged commit's name under _staged_commits/.
	FileName                  string `json:"file-name"`
	FileSize                  int64  `json:"file-size"`
	FileModificationTimestamp int64  `json:"file-modification-timestamp"`
}

// TableMetadata is DeltaTableMetadata.
type TableMetadata struct {
	Etag      string `json:"etag"`
	TableType string `json:"table-type"`
	TableUUID string `json:"table-uuid"`
	Location  string `json:"location"`
	// CreatedTime and UpdatedTime are in milliseconds since the epoch.
	CreatedTime int64 `json:"created-time"`
	UpdatedTime int64 `json:"updated-time"`
	// Columns is the schema, a Delta StructType as JSON.
	Columns               json.RawMessage   `json:"columns"`
	PartitionColumns      []string          `json:"partition-columns,omitempty"`
	Properties            map[string]string `json:"properties"`
	LastCommitVersion     *int64            `json:"last-commit-version,omitempty"`
	LastCommitTimestampMs *int64            `json:"last-commit-timestamp-ms,omitempty"`
}

// LoadTableResponse is DeltaLoadTableResponse: what load_table,
// update_table and create table answer.
type LoadTableResponse struct {
	Metadata TableMetadata `json:"metadata"`
	// Commits are the ratified commits not yet published; Unity Catalog
	// answers them newest first.
	Commits []Commit `json:"commits"`
	// Uniform is UniForm's metadata, kept as it came.
	Uniform json.RawMessage `json:"uniform,omitempty"`
	// LatestTableVersion is the latest ratified version; nil for a table
	// whose commits the catalog does not keep.
	LatestTableVersion *int64 `json:"latest-table-version,omitempty"`
}

// Requirement is a DeltaTableRequirement: Type "assert-table-uuid" with
// UUID, or "assert-etag" with Etag.
type Requirement struct {
	Type string `json:"type"`
	UUID string `json:"uuid,omitempty"`
	Etag string `json:"etag,omitempty"`
}

// Requirement types.
const (
	AssertTableUUID = "assert-table-uuid"
	AssertEtag      = "assert-etag"
)

// Update is a DeltaTableUpdate. This package sends and serves two
// actions: "add-commit" with Commit, and "set-latest-backfilled-version"
// with LatestPublishedVersion.
type Update struct {
	Action                 string  `json:"action"`
	Commit                 *Commit `json:"commit,omitempty"`
	LatestPublishedVersion *int64  `json:"latest-published-version,omitempty"`
}

// Update actions.
const (
	AddCommit                  = "add-commit"
	SetLatestBackfilledVersion = "set-latest-backfilled-version"
)

// UpdateTableRequest is DeltaUpdateTableRequest.
type UpdateTableRequest struct {
	Requirements []Requirement `json:"requirements"`
	Updates      []Update      `json:"updates"`
}

// CatalogConfig is DeltaCatalogConfig, the answer of /config.
type CatalogConfig struct {
	// Endpoints are "METHOD /v1/..." as Unity Catalog lists them.
	Endpoints       []string `json:"endpoints"`
	ProtocolVersion string   `json:"protocol-version"`
}

// Operation is DeltaCredentialOperation.
type Operation string

// Operations credentials are vended for.
const (
	Read      Operation = "READ"
	ReadWrite Operation = "READ_WRITE"
)

// StorageCredential is DeltaStorageCredential. Config holds secrets: it
// is left out of String.
type StorageCredential struct {
	Prefix           string            `json:"prefix"`
	Operation        Operation         `json:"operation"`
	ExpirationTimeMs *int64            `json:"expiration-time-ms"`
	Config           map[string]string `json:"config"`
}

// String describes the credential without its secrets.
func (c StorageCredential) String() string {
	return fmt.Sprintf("credential for %s (%s, %d config entries)", c.Prefix, c.Operation, len(c.Config))
}

// credentialsResponse is DeltaCredentialsResponse.
type credentialsResponse struct {
	StorageCredentials []StorageCredential `json:"storage-credentials"`
}

// Protocol is DeltaProtocol.
type Protocol struct {
	MinReaderVersion int      `json:"min-reader-version"`
	MinWriterVersion int      `json:"min-writer-version"`
	ReaderFeatures   []string `json:"reader-features,omitempty"`
	WriterFeatures   []string `json:"writer-features,omitempty"`
}

// createStagingTableRequest is DeltaCreateStagingTableRequest.
type createStagingTableRequest struct {
	Name string `json:"name"`
}

// StagingTableResponse is DeltaStagingTableResponse: the ID and location
// the catalog allocated for a table to be created, and what its version 0
// must hold. A nil value of a property means any valid value.
type StagingTableResponse struct {
	TableID             string              `json:"table-id"`
	TableType           string              `json:"table-type"`
	Location            string              `json:"location"`
	StorageCredentials  []StorageCredential `json:"storage-credentials"`
	RequiredProtocol    Protocol            `json:"required-protocol"`
	SuggestedProtocol   json.RawMessage     `json:"suggested-protocol,omitempty"`
	RequiredProperties  map[string]*string  `json:"required-properties"`
	SuggestedProperties map[string]*string  `json:"suggested-properties,omitempty"`
}

// CreateTableRequest is DeltaCreateTableRequest: the table, after its
// version 0 was written at Location.
type CreateTableRequest struct {
	Name      string `json:"name"`
	Location  string `json:"location"`
	TableType string `json:"table-type"`
	Comment   string `json:"comment,omitempty"`
	// Columns is the schema, a Delta StructType as JSON.
	Columns          json.RawMessage            `json:"columns"`
	PartitionColumns []string                   `json:"partition-columns,omitempty"`
	Protocol         Protocol                   `json:"protocol"`
	Properties       map[string]string          `json:"properties"`
	DomainMetadata   map[string]json.RawMessage `json:"domain-metadata,omitempty"`
	// LastCommitTimestampMs is version 0's timestamp.
	LastCommitTimestampMs int64 `json:"last-commit-timestamp-ms"`
}

// Table types.
const (
	Managed  = "MANAGED"
	External = "EXTERNAL"
)

// TableIDProperty is the property of a table's Delta metadata that holds
// its Unity Catalog ID (a required property of a staged table).
const TableIDProperty = "io.unitycatalog.tableId"

// errorModel is DeltaErrorModel, inside DeltaErrorResponse.
type errorModel struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

type errorResponse struct {
	Error errorModel `json:"error"`
}

// Error types (DeltaErrorType) the Handler answers with.
const (
	typeBadRequest          = "BadRequestException"
	typeInvalidParameter    = "InvalidParameterValueException"
	typeNotAuthorized       = "NotAuthorizedException"
	typeForbidden           = "PermissionDeniedException"
	typeNoSuchCatalog       = "NoSuchCatalogException"
	typeNoSuchSchema        = "NoSuchSchemaException"
	typeNoSuchTable         = "NoSuchTableException"
	typeAlreadyExists       = "AlreadyExistsException"
	typeCommitConflict      = "CommitVersionConflictException"
	typeRequirementConflict = "UpdateRequirementConflictException"
	typeInternal            = "InternalServerErrorException"
	typeNotImplemented      = "NotImplementedException"
)

// endpoints are what Handler serves, as /config lists them.
var endpoints = []string{
	"POST /v1/catalogs/{catalog}/schemas/{schema}/staging-tables",
	"POST /v1/catalogs/{catalog}/schemas/{schema}/tables",
	"GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
	"POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
	"GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}/credentials",
}

// supportsVersion reports whether a protocol-versions list (the highest
// version per major version a client speaks: "1.1,2.3") includes 1.0.
func supportsVersion(list string) bool {
	if list == "" {
		return true
	}
	for v := range strings.SplitSeq(list, ",") {
		if major, _, _ := strings.Cut(strings.TrimSpace(v), "."); major == "1" {
			return true
		}
	}
	return false
}
