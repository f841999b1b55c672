// Package checksum reads, writes, builds and compares version checksum
// files: _delta_log/<v>.crc, the auxiliary file PROTOCOL.md ("Version
// Checksum File") lets a writer put beside each commit, describing the
// table's state at that version.
//
// # Format
//
// A .crc file is one JSON object, followed by a newline, with Spark's
// field names (VersionChecksum lists them): the table's size and file
// count, its protocol and metaData, its live set transactions and domain
// metadata, the version's in-commit timestamp, a file size histogram and,
// on tables with deletion vectors, their counts. The field names are part
// of the on-disk format shared with every Delta implementation: never
// change them. Older Spark releases wrote the histogram as "histogramOpt"
// and left out protocol and metaData; Read accepts both, Write writes the
// protocol's names.
//
// # Reading, writing, comparing
//
// Read returns ErrNotFound when a version has no .crc, and a
// *deltaerr.CorruptError (deltaerr.ErrCorrupt) for a file that is not a
// checksum or whose numbers contradict each other; it reads at most
// MaxSize bytes. A checksum is a hint: readers that use one (package
// snapshot) fall back to replaying the log when it is missing or
// unsound, and must keep working without it.
//
// Write puts the file only if it is absent: an existing .crc is never
// replaced (PROTOCOL.md: "Writers MUST NOT overwrite existing Version
// Checksum files"), and finding one there is not an error.
//
// Compare lists the differences between two checksums of one version,
// field by field, skipping the optional fields one side lacks: what a
// table checker (delta check, issue 25) reports for a .crc that does not
// match the replay of its version (crcwriter.Compute).
//
// # Building
//
// A Builder computes version v's checksum from v-1's and the actions
// committed at v, without reading the table (Spark's incremental commit,
// kernel-rs's CrcDelta). It refuses, with ErrNotIncremental, the commits
// whose effect on the totals the actions alone do not tell: a remove
// without a size, an operation that re-adds files already in the table
// (Spark's ROW TRACKING BACKFILL, COMPUTE STATS, DROP FEATURE) or edits
// the log by hand, an add with dataChange=false in a commit that removes
// nothing (a re-add of a live file), two actions of one kind for one file,
// and a previous checksum without protocol or metaData. The writer then
// computes the checksum from a replay instead (package crcwriter).
//
// The package does no I/O but through the logstore.Store it is given, and
// holds no state: its functions are safe for concurrent use; a Builder is
// not.
package checksum

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// MaxSize is the largest .crc file Read accepts. Spark's files hold a few
// kilobytes (the schema and, for tables of at most 50 files, the add
// actions); a larger one is refused as corrupt rather than read into
// memory.
const MaxSize = 16 << 20

// Caps on the lists a checksum records, Spark's defaults
// (setTransactionsInCrc.maxAllowed, domainMetadatasInCrc.maxAllowed): a
// table with more records none of them, and readers read them from the
// log.
const (
	MaxSetTransactions = 100
	MaxDomainMetadata  = 10
)

var (
	// ErrNotFound is returned by Read when the version has no .crc file.
	// The error also matches logstore.ErrNotFound.
	ErrNotFound = errors.New("checksum: no version checksum file")

	// ErrNotIncremental is returned by Builder.Apply (and Apply) for a
	// commit whose checksum cannot be derived from the previous one and
	// its actions; see the package doc. The caller computes the checksum
	// from a replay of the table instead.
	ErrNotIncremental = errors.New("checksum: cannot be derived incrementally")
)

// VersionChecksum is the content of a <v>.crc file. The JSON names are
// Spark's (Checksum.scala's VersionChecksum) and the protocol's. A nil
// pointer or slice is a field the file does not record; an empty,
// non-nil SetTransactions or DomainMetadata records that there are none.
type VersionChecksum struct {
	// TxnID identifies the transaction that committed the version
	// (commitInfo.txnId); optional.
	TxnID string `json:"txnId,omitempty"`
	// TableSizeBytes is the sum of the sizes of the live files.
	TableSizeBytes int64 `json:"tableSizeBytes"`
	// NumFiles is the number of live files (add actions after
	// reconciliation).
	NumFiles int64 `json:"numFiles"`
	// NumDeletedRecords is the number of rows deleted through deletion
	// vectors, and NumDeletionVectors the number of live files that have
	// one; recorded on tables that support deletion vectors.
	NumDeletedRecords  *int64 `json:"numDeletedRecordsOpt,omitempty"`
	NumDeletionVectors *int64 `json:"numDeletionVectorsOpt,omitempty"`
	// NumMetadata and NumProtocol are always 1.
	NumMetadata int64 `json:"numMetadata"`
	NumProtocol int64 `json:"numProtocol"`
	// InCommitTimestamp is the version's in-commit timestamp, where the
	// table has them.
	InCommitTimestamp *int64 `json:"inCommitTimestampOpt,omitempty"`
	// SetTransactions are the live txn actions, by application id.
	SetTransactions []actions.Txn `json:"setTransactions,omitzero"`
	// DomainMetadata are the live domainMetadata actions (no removed
	// ones), by domain.
	DomainMetadata []actions.DomainMetadata `json:"domainMetadata,omitzero"`
	// Metadata and Protocol are the table's at the version. Spark
	// releases before 1.0 left them out; Write requires them.
	Metadata *actions.Metadata `json:"metadata,omitempty"`
	Protocol *actions.Protocol `json:"protocol,omitempty"`
	// FileSizeHistogram is the distribution of the live files' sizes.
	FileSizeHistogram *FileSizeHistogram `json:"fileSizeHistogram,omitempty"`
	// DeletedRecordCountsHistogram is the distribution of the live files'
	// deleted row counts; recorded with NumDeletedRecords.
	DeletedRecordCountsHistogram *DeletedRecordCountsHistogram `json:"deletedRecordCountsHistogramOpt,omitempty"`
	// AllFiles are the live add actions, which Spark records for small
	// tables. This package reads them but never computes them.
	AllFiles []actions.Add `json:"allFiles,omitzero"`
}

// FileSizeHistogram counts the live files and their bytes by size:
// bin i holds the sizes from SortedBinBoundaries[i] (inclusive) to
// SortedBinBoundaries[i+1] (exclusive), the last bin has no end.
type FileSizeHistogram struct {
	SortedBinBoundaries []int64 `json:"sortedBinBoundaries"`
	FileCounts          []int64 `json:"fileCounts"`
	TotalBytes          []int64 `json:"totalBytes"`
}

// DeletedRecordCountsHistogram counts the live files by the number of
// rows their deletion vector deletes, in ten bins: 0, 1-9, 10-99, ...,
// 10,000,000 to 2^31-2, and 2^31-1 or more.
type DeletedRecordCountsHistogram struct {
	DeletedRecordCounts []int64 `json:"deletedRecordCounts"`
}

// defaultBinBoundaries are Spark's file size histogram bins
// (FileSizeHistogramUtils): part of what Spark compares, never change
// them.
var defaultBinBoundaries = []int64{
	0, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10,
	1 << 20, 2 << 20, 4 << 20, 8 << 20, 12 << 20, 16 << 20, 20 << 20, 24 << 20, 28 << 20, 32 << 20,
	36 << 20, 40 << 20, 48 << 20, 56 << 20, 64 << 20, 72 << 20, 80 << 20, 88 << 20, 96 << 20,
	104 << 20, 112 << 20, 120 << 20, 124 << 20, 128 << 20, 132 << 20, 136 << 20, 140 << 20, 144 << 20,
	160 << 20, 176 << 20, 192 << 20, 208 << 20, 224 << 20, 240 << 20, 256 << 20, 272 << 20, 288 << 20,
	304 << 20, 320 << 20, 336 << 20, 352 << 20, 368 << 20, 384 << 20, 400 << 20, 416 << 20, 432 << 20,
	448 << 20, 464 << 20, 480 << 20, 496 << 20, 512 << 20, 528 << 20, 544 << 20, 560 << 20, 576 << 20,
	640 << 20, 704 << 20, 768 << 20, 832 << 20, 896 << 20, 960 << 20, 1 << 30, 1088 << 20, 1152 << 20,
	1216 << 20, 1280 << 20, 1344 << 20, 1408 << 20, 1536 << 20, 1664 << 20, 1792 << 20, 1920 << 20,
	2 << 30, 2304 << 20, 2560 << 20, 2816 << 20, 3 << 30, 3328 << 20, 3584 << 20, 3840 << 20,
	4 << 30, 8 << 30, 16 << 30, 32 << 30, 64 << 30, 128 << 30, 256 << 30,
}

// NewFileSizeHistogram returns an empty histogram with Spark's bins.
func NewFileSizeHistogram() *FileSizeHistogram {
	n := len(defaultBinBoundaries)
	return &FileSizeHistogram{SortedBinBoundaries: slices.Clone(defaultBinBoundaries), FileCounts: make([]int64, n), TotalBytes: make([]int64, n)}
}

// bin returns the bin of size: the last boundary at or below it.
func (h *FileSizeHistogram) bin(size int64) int {
	i, found := slices.BinarySearch(h.SortedBinBoundaries, size)
	if !found {
		i--
	}
	return max(i, 0)
}

// Insert counts a file of size bytes.
func (h *FileSizeHistogram) Insert(size int64) {
	i := h.bin(size)
	h.FileCounts[i]++
	h.TotalBytes[i] += size
}

// Remove uncounts a file of size bytes.
func (h *FileSizeHistogram) Remove(size int64) {
	i := h.bin(size)
	h.FileCounts[i]--
	h.TotalBytes[i] -= size
}

func (h *FileSizeHistogram) clone() *FileSizeHistogram {
	if h == nil {
		return nil
	}
	return &FileSizeHistogram{SortedBinBoundaries: slices.Clone(h.SortedBinBoundaries), FileCounts: slices.Clone(h.FileCounts), TotalBytes: slices.Clone(h.TotalBytes)}
}

// deletedRecordBins is the number of bins of a DeletedRecordCountsHistogram.
const deletedRecordBins = 10

// NewDeletedRecordCountsHistogram returns an empty histogram.
func NewDeletedRecordCountsHistogram() *DeletedRecordCountsHistogram {
	return &DeletedRecordCountsHistogram{DeletedRecordCounts: make([]int64, deletedRecordBins)}
}

// deletedRecordsBin returns the bin of a file with n deleted rows.
func deletedRecordsBin(n int64) int {
	const maxInt32 = 1<<31 - 1
	switch {
	case n >= maxInt32:
		return 9
	case n >= 10_000_000:
		return 8
	}
	i := 0
	for n > 0 {
		n /= 10
		i++
	}
	return i
}

// Insert counts a file with n deleted rows.
func (h *DeletedRecordCountsHistogram) Insert(n int64) { h.DeletedRecordCounts[deletedRecordsBin(n)]++ }

// Remove uncounts a file with n deleted rows.
func (h *DeletedRecordCountsHistogram) Remove(n int64) { h.DeletedRecordCounts[deletedRecordsBin(n)]-- }

func (h *DeletedRecordCountsHistogram) clone() *DeletedRecordCountsHistogram {
	if h == nil {
		return nil
	}
	return &DeletedRecordCountsHistogram{DeletedRecordCounts: slices.Clone(h.DeletedRecordCounts)}
}

// UnmarshalJSON decodes a .crc object, taking the file size histogram
// from "histogramOpt", the name Spark wrote before the protocol named the
// field, when "fileSizeHistogram" is absent.
func (c *VersionChecksum) UnmarshalJSON(b []byte) error {
	type plain VersionChecksum
	var v struct {
		plain
		HistogramOpt *FileSizeHistogram `json:"histogramOpt"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = VersionChecksum(v.plain)
	if c.FileSizeHistogram == nil {
		c.FileSizeHistogram = v.HistogramOpt
	}
	return nil
}

// Decode decodes and checks the bytes of a .crc file; name names it in
// errors. Anything but one JSON object (and white space) is corrupt, and
// so is a checksum whose numbers contradict each other (see Check).
func Decode(name string, data []byte) (*VersionChecksum, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var c VersionChecksum
	if err := dec.Decode(&c); err != nil {
		return nil, &deltaerr.CorruptError{Path: name, Reason: "not a version checksum", Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, deltaerr.Corruptf(name, "data after the checksum object")
	}
	if err := c.Check(); err != nil {
		return nil, &deltaerr.CorruptError{Path: name, Reason: "inconsistent version checksum", Err: err}
	}
	return &c, nil
}

// Check reports the first rule c breaks, or nil: numMetadata and
// numProtocol are 1; counts and sizes are not negative; each histogram has
// its bins (sorted boundaries from 0, one count per bin) and adds up to
// numFiles and tableSizeBytes; the deletion vector counts come together;
// set transactions and domains are named once each, and no domain is a
// removal; allFiles, when present, adds up to numFiles and tableSizeBytes.
func (c *VersionChecksum) Check() error {
	switch {
	case c.NumMetadata != 1 || c.NumProtocol != 1:
		return fmt.Errorf("numMetadata %d and numProtocol %d, not 1", c.NumMetadata, c.NumProtocol)
	case c.NumFiles < 0 || c.TableSizeBytes < 0:
		return fmt.Errorf("numFiles %d or tableSizeBytes %d is negative", c.NumFiles, c.TableSizeBytes)
	case c.Protocol != nil && (c.Protocol.MinReaderVersion < 1 || c.Protocol.MinWriterVersion < 1):
		return fmt.Errorf("protocol versions %d/%d", c.Protocol.MinReaderVersion, c.Protocol.MinWriterVersion)
	case c.Metadata != nil && c.Metadata.ID == "":
		return errors.New("metadata has no id")
	}
	if h := c.FileSizeHistogram; h != nil {
		n := len(h.SortedBinBoundaries)
		if n == 0 || h.SortedBinBoundaries[0] != 0 || len(h.FileCounts) != n || len(h.TotalBytes) != n {
			return errors.New("fileSizeHistogram: bins do not start at 0 or counts do not match them")
		}
		var files, bytes int64
		for i := range n {
			if i > 0 && h.SortedBinBoundaries[i] <= h.SortedBinBoundaries[i-1] {
				return errors.New("fileSizeHistogram: boundaries not sorted")
			}
			if h.FileCounts[i] < 0 || h.TotalBytes[i] < 0 {
				return errors.New("fileSizeHistogram: negative count")
			}
			files += h.FileCounts[i]
			bytes += h.TotalBytes[i]
		}
		if files != c.NumFiles || bytes != c.TableSizeBytes {
			return fmt.Errorf("fileSizeHistogram counts %d files of %d bytes, numFiles %d of %d bytes", files, bytes, c.NumFiles, c.TableSizeBytes)
		}
	}
	if (c.NumDeletedRecords == nil) != (c.NumDeletionVectors == nil) {
		return errors.New("numDeletedRecordsOpt and numDeletionVectorsOpt not both present")
	}
	if c.NumDeletedRecords != nil && (*c.NumDeletedRecords < 0 || *c.NumDeletionVectors < 0 || *c.NumDeletionVectors > c.NumFiles) {
		return fmt.Errorf("deletion vector counts %d/%d out of range", *c.NumDeletedRecords, *c.NumDeletionVectors)
	}
	if h := c.DeletedRecordCountsHistogram; h != nil {
		if len(h.DeletedRecordCounts) != deletedRecordBins {
			return fmt.Errorf("deletedRecordCountsHistogramOpt has %d bins, not %d", len(h.DeletedRecordCounts), deletedRecordBins)
		}
		var files int64
		for _, n := range h.DeletedRecordCounts {
			if n < 0 {
				return errors.New("deletedRecordCountsHistogramOpt: negative count")
			}
			files += n
		}
		if files != c.NumFiles {
			return fmt.Errorf("deletedRecordCountsHistogramOpt counts %d files, numFiles %d", files, c.NumFiles)
		}
	}
	seen := map[string]bool{}
	for _, t := range c.SetTransactions {
		if t.AppID == "" || seen[t.AppID] {
			return fmt.Errorf("setTransactions: app id %q empty or repeated", t.AppID)
		}
		seen[t.AppID] = true
	}
	clear(seen)
	for _, d := range c.DomainMetadata {
		if d.Domain == "" || seen[d.Domain] || d.Removed {
			return fmt.Errorf("domainMetadata: domain %q empty, repeated or removed", d.Domain)
		}
		seen[d.Domain] = true
	}
	if c.AllFiles != nil {
		var size int64
		for i := range c.AllFiles {
			a := actions.Action{Add: &c.AllFiles[i]}
			if err := a.Check(); err != nil {
				return fmt.Errorf("allFiles: %w", err)
			}
			size += c.AllFiles[i].Size
		}
		if int64(len(c.AllFiles)) != c.NumFiles || size != c.TableSizeBytes {
			return fmt.Errorf("allFiles has %d files of %d bytes, numFiles %d of %d bytes", len(c.AllFiles), size, c.NumFiles, c.TableSizeBytes)
		}
	}
	return nil
}

// Read reads and checks the .crc file of version. It reads at most
// MaxSize bytes. Errors: ErrNotFound (which also matches
// logstore.ErrNotFound) when there is no file; a *deltaerr.CorruptError
// for a file that Decode refuses or that is larger than MaxSize; the
// store's error otherwise.
func Read(ctx context.Context, store logstore.Store, version int64) (*VersionChecksum, error) {
	if version < 0 {
		return nil, fmt.Errorf("checksum: version %d: %w", version, deltaerr.ErrInvalidArgument)
	}
	key := deltalog.CRCKey(version)
	data, err := store.GetRange(ctx, key, 0, MaxSize+1)
	switch {
	case errors.Is(err, logstore.ErrNotFound):
		return nil, fmt.Errorf("%w for version %d: %w", ErrNotFound, version, err)
	case err != nil:
		return nil, fmt.Errorf("checksum: reading %s: %w", key, err)
	case len(data) > MaxSize:
		return nil, deltaerr.Corruptf(key, "larger than %d bytes", MaxSize)
	}
	return Decode(key, data)
}

// Encode returns the bytes of the .crc file of c: one JSON object and a
// newline, without HTML escaping, as Spark writes it. c must have a
// protocol and metaData and pass Check; otherwise the error matches
// deltaerr.ErrInvalidArgument. Nil maps and lists of the metaData are
// written as empty ones, as Spark writes them.
func Encode(c *VersionChecksum) ([]byte, error) {
	if c.Protocol == nil || c.Metadata == nil {
		return nil, fmt.Errorf("checksum: a checksum without protocol or metadata: %w", deltaerr.ErrInvalidArgument)
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("checksum: %w: %w", err, deltaerr.ErrInvalidArgument)
	}
	out := *c
	m := *c.Metadata
	if m.PartitionColumns == nil {
		m.PartitionColumns = []string{}
	}
	if m.Configuration == nil {
		m.Configuration = map[string]string{}
	}
	if m.Format.Options == nil {
		m.Format.Options = map[string]string{}
	}
	out.Metadata = &m
	data, err := actions.EncodeJSON(&out)
	if err != nil {
		return nil, fmt.Errorf("checksum: encoding: %w", err)
	}
	return append(data, '\n'), nil
}

// Write writes c as the .crc file of version, only if there is none:
// an existing file is left as it is, and that is not an error (a
// concurrent writer, or a retry, wrote it first). Writers call it only
// once the commit of version is in the log.
func Write(ctx context.Context, store logstore.Store, version int64, c *VersionChecksum) error {
	if version < 0 {
		return fmt.Errorf("checksum: version %d: %w", version, deltaerr.ErrInvalidArgument)
	}
	data, err := Encode(c)
	if err != nil {
		return err
	}
	key := deltalog.CRCKey(version)
	if err := store.PutIfAbsent(ctx, key, data); err != nil && !errors.Is(err, logstore.ErrAlreadyExists) {
		return fmt.Errorf("checksum: writing %s: %w", key, err)
	}
	return nil
}
