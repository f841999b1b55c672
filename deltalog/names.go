// Package deltalog knows the layout of a table's _delta_log directory: what
// each file name means, how to list the files of a table, and which of them
// make up the log segment for a version.
//
// It works in three steps, each with its own type, like delta-kernel-rs:
//
//  1. ParseName turns a file name into a LogFile (version plus kind). No
//     other code in godelta slices log file names.
//  2. List reads the directory through a logstore.Store and returns the
//     parsed files, in version order.
//  3. NewSegment checks a listing against the protocol's rules, with no I/O,
//     and picks the checkpoint and commits that reconstruct a version. Its
//     doc lists the rules; each broken rule has its own error.
//
// Beside the three steps, the package owns the two other files of the log
// directory that are not commits: the _last_checkpoint hint
// (ReadLastCheckpoint, WriteLastCheckpoint; a hint is only a hint, checked
// against the listing by its readers) and metadata cleanup (Cleanup, which
// deletes expired log files oldest first, so that a Cleanup cut short leaves
// every version from some point on loadable).
//
// Reading the contents of commits and checkpoints is the job of packages
// checkpoint and snapshot. The package imports only logstore and deltaerr.
//
// # Listings that race writers and cleanup
//
// A listing is not a point-in-time view of the log: it may show commit
// N+1 without N (a directory read while a writer creates files, object
// store list pages), and log cleanup may delete a file it shows before the
// file is read. List looks up the commits missing between two listed ones
// directly. What is still wrong once the files are read comes out as
// deltaerr.ErrMissingLogFile (NewSegment's hole rules, Vanished for a
// listed file that is gone), and Relist is the one place that lists again:
// every reader of the listing runs its list-and-read through it, a bounded
// number of times, so that a race heals and a genuine hole still fails
// with deltaerr.ErrMissingLogFile. A listing never serves the versions
// below a hole in place of the latest one (see package snapshot).
//
// # Errors
//
// Errors are tested with errors.Is on the kinds of package deltaerr:
// NewSegment gives deltaerr.ErrTableNotFound for a listing with no commit
// and no checkpoint, deltaerr.ErrVersionNotFound for a version the listing
// does not reach and deltaerr.ErrMissingLogFile for a hole in the commits
// (or a log with commits but neither commit 0 nor a checkpoint);
// a _last_checkpoint that cannot be decoded is a *deltaerr.CorruptError
// (deltaerr.ErrCorrupt). Store errors keep their logstore kinds.
//
// The functions hold no state and are safe for concurrent use; Cleanup must
// not run while a checkpoint older than its cut-off is being written. The
// examples parse names and pick a segment from a listing.
package deltalog

import (
	"fmt"
	"strconv"
	"strings"
)

// Directory and file names of the log. They are part of the on-disk format
// shared with every Delta implementation: never change them.
const (
	// LogDir is the key prefix of the log, relative to the table root.
	LogDir = "_delta_log/"
	// SidecarDir holds the sidecar files of V2 checkpoints.
	SidecarDir = LogDir + "_sidecars/"
	// LastCheckpointKey is the hint naming the newest checkpoint.
	LastCheckpointKey = LogDir + "_last_checkpoint"

	versionDigits = 20
	partDigits    = 10
)

// Kind is what a log file holds.
type Kind int

// Kinds of log files.
const (
	Unknown Kind = iota
	// Commit is <v>.json: the actions of one version.
	Commit
	// ClassicCheckpoint is <v>.checkpoint.parquet.
	ClassicCheckpoint
	// MultiPartCheckpoint is <v>.checkpoint.<part>.<parts>.parquet.
	MultiPartCheckpoint
	// UUIDCheckpoint is <v>.checkpoint.<uuid>.json or .parquet (V2).
	UUIDCheckpoint
	// Compacted is <x>.<y>.compacted.json: the reconciled actions of
	// versions x through y.
	Compacted
	// CRC is <v>.crc: the version checksum file.
	CRC
)

var kindNames = [...]string{"unknown", "commit", "checkpoint", "multi-part checkpoint", "v2 checkpoint", "compacted", "crc"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// IsCheckpoint reports whether k is one of the checkpoint kinds.
func (k Kind) IsCheckpoint() bool {
	return k == ClassicCheckpoint || k == MultiPartCheckpoint || k == UUIDCheckpoint
}

// LogFile is one parsed file of the log.
type LogFile struct {
	// Key is the store key, such as "_delta_log/00000000000000000010.json".
	Key     string
	Kind    Kind
	Version int64
	// EndVersion is the last version a Compacted file covers.
	EndVersion int64
	// Part and NumParts number the parts of a multi-part checkpoint, from 1.
	Part, NumParts int
	// UUID names a UUID checkpoint.
	UUID string
	// Ext is "json" or "parquet" for checkpoints.
	Ext string
	// Size and ModTime come from the listing; zero when unknown.
	Size    int64
	ModTime int64 // milliseconds since the epoch
}

// CommitKey returns the key of the commit file for version.
func CommitKey(version int64) string {
	return LogDir + pad(version, versionDigits) + ".json"
}

// CRCKey returns the key of the checksum file for version.
func CRCKey(version int64) string {
	return LogDir + pad(version, versionDigits) + ".crc"
}

// CompactedKey returns the key of the log compaction file of commits
// from..to (<from>.<to>.compacted.json).
func CompactedKey(from, to int64) string {
	return LogDir + pad(from, versionDigits) + "." + pad(to, versionDigits) + ".compacted.json"
}

// ClassicCheckpointKey returns the key of the single-file checkpoint.
func ClassicCheckpointKey(version int64) string {
	return LogDir + pad(version, versionDigits) + ".checkpoint.parquet"
}

// MultiPartCheckpointKey returns the key of part (from 1) of parts.
func MultiPartCheckpointKey(version int64, part, parts int) string {
	return LogDir + pad(version, versionDigits) + ".checkpoint." + pad(int64(part), partDigits) + "." + pad(int64(parts), partDigits) + ".parquet"
}

// UUIDCheckpointKey returns the key of a V2 checkpoint with the given UUID
// and extension ("json" or "parquet").
func UUIDCheckpointKey(version int64, uuid, ext string) string {
	return LogDir + pad(version, versionDigits) + ".checkpoint." + uuid + "." + ext
}

func pad(v int64, width int) string {
	s := strconv.FormatInt(v, 10)
	if len(s) >= width {
		return s
	}
	return strings.Repeat("0", width-len(s)) + s
}

// ParseName parses the name of a file in _delta_log (the part after the
// last '/'; key is kept as given). It returns false for names that are not
// log files: _last_checkpoint, Hadoop .crc side files ("." prefix), temp
// files, and anything else.
func ParseName(key string) (LogFile, bool) {
	name := key[strings.LastIndexByte(key, '/')+1:]
	if len(name) < versionDigits+2 || name[0] == '.' {
		return LogFile{}, false
	}
	v, ok := parseVersion(name[:versionDigits])
	if !ok || name[versionDigits] != '.' {
		return LogFile{}, false
	}
	f := LogFile{Key: key, Version: v}
	rest := name[versionDigits+1:]
	switch {
	case rest == "json":
		f.Kind = Commit
	case rest == "crc":
		f.Kind = CRC
	case rest == "checkpoint.parquet":
		f.Kind, f.Ext = ClassicCheckpoint, "parquet"
	case strings.HasPrefix(rest, "checkpoint."):
		return parseCheckpoint(f, strings.TrimPrefix(rest, "checkpoint."))
	case strings.HasSuffix(rest, ".compacted.json"):
		end, ok := parseVersion(strings.TrimSuffix(rest, ".compacted.json"))
		if !ok || end < v {
			return LogFile{}, false
		}
		f.Kind, f.EndVersion = Compacted, end
	default:
		return LogFile{}, false
	}
	return f, true
}

// parseCheckpoint handles "<part>.<parts>.parquet" and "<uuid>.<ext>".
func parseCheckpoint(f LogFile, rest string) (LogFile, bool) {
	fields := strings.Split(rest, ".")
	switch {
	case len(fields) == 3 && fields[2] == "parquet" && len(fields[0]) == partDigits && len(fields[1]) == partDigits:
		part, ok1 := parseVersion(fields[0])
		parts, ok2 := parseVersion(fields[1])
		if !ok1 || !ok2 || part < 1 || part > parts || parts > 1<<20 {
			return LogFile{}, false
		}
		f.Kind, f.Part, f.NumParts, f.Ext = MultiPartCheckpoint, int(part), int(parts), "parquet"
	case len(fields) == 2 && (fields[1] == "json" || fields[1] == "parquet") && isUUID(fields[0]):
		f.Kind, f.UUID, f.Ext = UUIDCheckpoint, fields[0], fields[1]
	default:
		return LogFile{}, false
	}
	return f, true
}

func parseVersion(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// isUUID accepts the canonical 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

func (f LogFile) String() string {
	return fmt.Sprintf("%s v%d (%s)", f.Key, f.Version, f.Kind)
}
