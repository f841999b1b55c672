// Package actions defines the actions of the Delta protocol and their JSON
// form, exactly as PROTOCOL.md names them, and the table-feature rules that
// decide whether a table can be read or written.
//
// The types here hold decoded data only: they do no I/O. Decoding checks
// only the rules the protocol states for one action or one commit file (a
// file action names a file and a size that is not negative; at most one
// protocol and one metaData per commit; see Check), because those need no
// other state. A Protocol or Metadata taken alone is unchecked;
// tableconfig.New builds the checked table configuration from them
// (package snapshot does so for every snapshot: Snapshot.Config).
//
// Decoding follows the protocol's rule that clients ignore what they do not
// know: unknown fields in an action and unknown action kinds on a line are
// skipped, never an error. Encoding (EncodeCommit, EncodeJSON) writes JSON
// as Spark does, without HTML escaping.
//
// The JSON field names below are part of the on-disk format shared with every
// other Delta implementation. They must never change.
//
// # Errors
//
// A commit line that is not a JSON object, or a known action with a field of
// the wrong type, is a *deltaerr.CorruptError naming the file and line
// (errors.Is(err, deltaerr.ErrCorrupt)). Whether this library can read or
// write a table with a decoded protocol is package tableconfig's question
// (tableconfig.ReadSupported, tableconfig.WriteSupported): a Protocol here
// is unchecked data.
//
// Decoded values are plain data: safe to share once no one modifies them,
// but nothing here guards them. The examples decode and encode a commit.
package actions

import (
	"encoding/json"
	"strconv"
)

// Protocol is the protocol action: the versions and features a client must
// support to read or write the table.
type Protocol struct {
	MinReaderVersion int32 `json:"minReaderVersion"`
	MinWriterVersion int32 `json:"minWriterVersion"`
	// ReaderFeatures is present only when MinReaderVersion is 3.
	ReaderFeatures []string `json:"readerFeatures,omitempty"`
	// WriterFeatures is present only when MinWriterVersion is 7.
	WriterFeatures []string `json:"writerFeatures,omitempty"`
}

// Format names the encoding of the table's data files.
type Format struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options"`
}

// Metadata is the metaData action: the table's id, schema, partitioning and
// configuration. SchemaString is the schema as JSON; package schema parses it.
type Metadata struct {
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Format           Format            `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`
	Configuration    map[string]string `json:"configuration"`
}

// DeletionVector is the descriptor of a deletion vector attached to a file.
type DeletionVector struct {
	// StorageType is "u" (relative path from a UUID), "i" (inline) or "p"
	// (absolute path).
	StorageType    string `json:"storageType"`
	PathOrInlineDv string `json:"pathOrInlineDv"`
	// Offset is absent for inline vectors.
	Offset      *int32 `json:"offset,omitempty"`
	SizeInBytes int32  `json:"sizeInBytes"`
	Cardinality int64  `json:"cardinality"`
	MaxRowIndex *int64 `json:"maxRowIndex,omitempty"`
}

// UniqueID returns the identifier the protocol uses, together with a file's
// path, as the logical identity of a file: storage type, path or inline data,
// and "@offset" when an offset is present.
func (dv *DeletionVector) UniqueID() string {
	if dv == nil {
		return ""
	}
	id := dv.StorageType + dv.PathOrInlineDv
	if dv.Offset != nil {
		id += "@" + strconv.FormatInt(int64(*dv.Offset), 10)
	}
	return id
}

// Add is the add action: a data file that is part of the table.
//
// Path is as written in the log: a URI, relative to the table root or
// absolute, percent-encoded. PartitionValues maps partition column (physical
// name under column mapping) to its serialized value; a null value decodes as
// the empty string, which the protocol treats the same, and "" is written as
// JSON null (see MarshalJSON). Stats is the raw JSON
// statistics string, parsed only when needed.
type Add struct {
	Path                    string            `json:"path"`
	PartitionValues         map[string]string `json:"partitionValues"`
	Size                    int64             `json:"size"`
	ModificationTime        int64             `json:"modificationTime"`
	DataChange              bool              `json:"dataChange"`
	Stats                   string            `json:"stats,omitempty"`
	Tags                    map[string]string `json:"tags,omitempty"`
	DeletionVector          *DeletionVector   `json:"deletionVector,omitempty"`
	BaseRowID               *int64            `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64            `json:"defaultRowCommitVersion,omitempty"`
	ClusteringProvider      string            `json:"clusteringProvider,omitempty"`
}

// Remove is the remove action: a file that is no longer part of the table.
// Removes are kept as tombstones until their retention passes, for VACUUM.
type Remove struct {
	Path                    string            `json:"path"`
	DeletionTimestamp       *int64            `json:"deletionTimestamp,omitempty"`
	DataChange              bool              `json:"dataChange"`
	ExtendedFileMetadata    *bool             `json:"extendedFileMetadata,omitempty"`
	PartitionValues         map[string]string `json:"partitionValues,omitempty"`
	Size                    *int64            `json:"size,omitempty"`
	Stats                   string            `json:"stats,omitempty"`
	Tags                    map[string]string `json:"tags,omitempty"`
	DeletionVector          *DeletionVector   `json:"deletionVector,omitempty"`
	BaseRowID               *int64            `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64            `json:"defaultRowCommitVersion,omitempty"`
}

// CDC is the cdc action: a change-data file written by an operation that
// changed rows, read only by the change data feed.
type CDC struct {
	Path            string            `json:"path"`
	PartitionValues map[string]string `json:"partitionValues"`
	Size            int64             `json:"size"`
	DataChange      bool              `json:"dataChange"`
	Tags            map[string]string `json:"tags,omitempty"`
}

// Txn is the txn (set transaction) action: the last version an application
// committed, for exactly-once writes.
type Txn struct {
	AppID       string `json:"appId"`
	Version     int64  `json:"version"`
	LastUpdated *int64 `json:"lastUpdated,omitempty"`
}

// DomainMetadata is the domainMetadata action: named configuration owned by a
// system or user domain. Removed marks a tombstone.
type DomainMetadata struct {
	Domain        string `json:"domain"`
	Configuration string `json:"configuration"`
	Removed       bool   `json:"removed"`
}

// Sidecar is the sidecar action of a V2 checkpoint: a file holding some of
// the checkpoint's add and remove actions. Path is relative to
// _delta_log/_sidecars/ unless absolute.
type Sidecar struct {
	Path             string            `json:"path"`
	SizeInBytes      int64             `json:"sizeInBytes"`
	ModificationTime int64             `json:"modificationTime"`
	Tags             map[string]string `json:"tags,omitempty"`
}

// CheckpointMetadata is the checkpointMetadata action, present once in every
// V2 checkpoint.
type CheckpointMetadata struct {
	Version int64             `json:"version"`
	Tags    map[string]string `json:"tags,omitempty"`
}

// TagRowTrackingPreserved is the commitInfo tag by which a writer says
// that the commit preserved the stable row ids of the rows it updated or
// copied and the row commit versions of those it copied ("true", also when
// it updated or copied none), as PROTOCOL.md "Row Tracking" asks of
// writers to a table with row tracking enabled.
const TagRowTrackingPreserved = "delta.rowTracking.preserved"

// TagIdentitySchemaUpdate is the commitInfo tag ("true") by which Spark
// marks a commit whose metaData changes only identity columns'
// high-water marks (DeltaSourceUtils.IDENTITY_COMMITINFO_TAG). It is part
// of the log format: it must never change.
const TagIdentitySchemaUpdate = "delta.identity.schemaUpdate"

// CommitInfo is the commitInfo action. Its content is free-form; the fields
// below are those Delta writers commonly set. Raw holds the whole object as
// read, so nothing a writer recorded is lost.
type CommitInfo struct {
	Timestamp           *int64         `json:"timestamp,omitempty"`
	InCommitTimestamp   *int64         `json:"inCommitTimestamp,omitempty"`
	Operation           string         `json:"operation,omitempty"`
	OperationParameters map[string]any `json:"operationParameters,omitempty"`
	ReadVersion         *int64         `json:"readVersion,omitempty"`
	IsolationLevel      string         `json:"isolationLevel,omitempty"`
	IsBlindAppend       *bool          `json:"isBlindAppend,omitempty"`
	OperationMetrics    map[string]any `json:"operationMetrics,omitempty"`
	UserMetadata        string         `json:"userMetadata,omitempty"`
	EngineInfo          string         `json:"engineInfo,omitempty"`
	ClientVersion       string         `json:"clientVersion,omitempty"`
	TxnID               string         `json:"txnId,omitempty"`
	// Tags are string tags, such as TagRowTrackingPreserved.
	Tags map[string]string `json:"tags,omitempty"`

	// Raw is the object as it was read; nil for a CommitInfo built in code.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the known fields and keeps the whole object in Raw.
func (c *CommitInfo) UnmarshalJSON(b []byte) error {
	type plain CommitInfo
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = CommitInfo(p)
	c.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Action is one line of a commit file: exactly one of its fields is set for
// a well-formed line. A line whose only key is an action kind this library
// does not know decodes to an Action with every field nil; callers skip it.
type Action struct {
	Protocol           *Protocol           `json:"protocol,omitempty"`
	Metadata           *Metadata           `json:"metaData,omitempty"`
	Add                *Add                `json:"add,omitempty"`
	Remove             *Remove             `json:"remove,omitempty"`
	CDC                *CDC                `json:"cdc,omitempty"`
	Txn                *Txn                `json:"txn,omitempty"`
	CommitInfo         *CommitInfo         `json:"commitInfo,omitempty"`
	DomainMetadata     *DomainMetadata     `json:"domainMetadata,omitempty"`
	Sidecar            *Sidecar            `json:"sidecar,omitempty"`
	CheckpointMetadata *CheckpointMetadata `json:"checkpointMetadata,omitempty"`
}

// IsEmpty reports whether no known action is set (an unknown action kind).
func (a *Action) IsEmpty() bool {
	return a.Protocol == nil && a.Metadata == nil && a.Add == nil && a.Remove == nil &&
		a.CDC == nil && a.Txn == nil && a.CommitInfo == nil && a.DomainMetadata == nil &&
		a.Sidecar == nil && a.CheckpointMetadata == nil
}
