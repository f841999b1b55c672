package stream

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Offset is a position in a stream: the next file to read. Version is a
// commit's version, or, with Snapshot, the version of the snapshot the
// stream began with, read whole before the commits after it; Index counts
// the data-changing files of that commit (in the order of its actions), or
// of that snapshot (by modification time, then path, as Spark orders them),
// already read. Offsets only grow: a later position compares greater with
// Less.
//
// An Offset is stored by the caller between runs: as text (MarshalText,
// "12:3@<table id>" for commit 12 from its fourth file, "snapshot:12:3@<table
// id>" in a snapshot) or packed into one int64 (Seq) for a txn version.
//
// TableID is the id (metaData.id) of the table the offset was taken on,
// as Spark's offsets carry it (reservoirId): a stream resumed at the
// offset on another table, such as one created again at the same
// location, is refused with a *TableReplacedError. Every offset a Source
// gives carries it; an offset without one (text without "@...", one from
// OffsetFromSeq, which cannot pack it) is only a position, checked against
// nothing.
type Offset struct {
	Version  int64
	Index    int64
	Snapshot bool
	TableID  string
}

// Less reports whether o comes before p in a stream. TableID is not
// compared.
func (o Offset) Less(p Offset) bool {
	if o.Version != p.Version {
		return o.Version < p.Version
	}
	if o.Snapshot != p.Snapshot {
		return o.Snapshot // a snapshot at v precedes the commit v, were both read
	}
	return o.Index < p.Index
}

// String returns the offset as MarshalText writes it.
func (o Offset) String() string {
	s := strconv.FormatInt(o.Version, 10) + ":" + strconv.FormatInt(o.Index, 10)
	if o.Snapshot {
		s = "snapshot:" + s
	}
	if o.TableID != "" {
		s += "@" + o.TableID
	}
	return s
}

// MarshalText implements encoding.TextMarshaler.
func (o Offset) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; a malformed text is
// ErrOffset.
func (o *Offset) UnmarshalText(b []byte) error {
	p, err := ParseOffset(string(b))
	if err != nil {
		return err
	}
	*o = p
	return nil
}

// ParseOffset parses an offset as String writes it; a bare version "12"
// is the commit 12 from its first file, and text without "@<table id>" an
// offset without a table id. Malformed text is ErrOffset.
func ParseOffset(s string) (Offset, error) {
	var o Offset
	t := strings.TrimSpace(s)
	if pos, id, ok := strings.Cut(t, "@"); ok {
		if id == "" {
			return Offset{}, fmt.Errorf("%q: %w", s, ErrOffset)
		}
		o.TableID, t = id, pos
	}
	if rest, ok := strings.CutPrefix(t, "snapshot:"); ok {
		o.Snapshot, t = true, rest
	}
	vs, is, hasIndex := strings.Cut(t, ":")
	v, err := strconv.ParseInt(vs, 10, 64)
	if err != nil || v < 0 {
		return Offset{}, fmt.Errorf("%q: %w", s, ErrOffset)
	}
	o.Version = v
	if hasIndex {
		i, err := strconv.ParseInt(is, 10, 64)
		if err != nil || i < 0 {
			return Offset{}, fmt.Errorf("%q: %w", s, ErrOffset)
		}
		o.Index = i
	}
	return o, nil
}

// Packing of an Offset into an int64 (Seq). Stored in tables as txn
// versions: must not change.
const (
	seqIndexBits = 23
	seqMaxIndex  = 1<<seqIndexBits - 1
	seqSnapshot  = 1 << seqIndexBits
	seqVersionAt = seqIndexBits + 1
	seqMaxVer    = 1<<(63-seqVersionAt) - 1
)

// Seq packs the offset into one non-negative int64 that grows with the
// offset (Less), for a txn action's version (TableCursor): the version in
// the high 39 bits, the snapshot flag, then the index in the low 23 bits.
// The table id is not packed: such an offset is recorded in the output
// table, and the consumer checks which table it reads.
// An index of 2^23 files or more (a snapshot of over eight million files
// resumed mid-way) cannot be packed: ErrOffset.
func (o Offset) Seq() (int64, error) {
	if o.Version < 0 || o.Version > seqMaxVer || o.Index < 0 || o.Index > seqMaxIndex {
		return 0, fmt.Errorf("%s cannot be packed into a sequence number: %w", o, ErrOffset)
	}
	n := o.Version<<seqVersionAt | o.Index
	if o.Snapshot {
		n |= seqSnapshot
	}
	return n, nil
}

// OffsetFromSeq is the inverse of Seq, without a table id.
func OffsetFromSeq(n int64) Offset {
	return Offset{Version: n >> seqVersionAt, Index: n & seqMaxIndex, Snapshot: n&seqSnapshot != 0}
}

// Start says where a new stream begins. The zero Start is Spark's default:
// the latest snapshot of the table whole, then every commit after it.
type Start struct {
	kind    startKind
	version int64
	ts      time.Time
	off     Offset
}

type startKind uint8

const (
	startSnapshot startKind = iota
	startVersion
	startTimestamp
	startLatest
	startOffset
)

// FromVersion begins at commit v (Spark's startingVersion): its rows, then
// those of every later commit; nothing of the table before v. v must be in
// the log (ErrVersionsCleanedUp otherwise) and at most the latest version.
func FromVersion(v int64) Start { return Start{kind: startVersion, version: v} }

// FromTimestamp begins at the first commit made at or after t (Spark's
// startingTimestamp). A t after the latest commit waits for the next one;
// a t before the earliest commit still in the log begins at that commit.
func FromTimestamp(t time.Time) Start { return Start{kind: startTimestamp, ts: t} }

// FromLatest begins after the latest commit: only changes made from now on
// (Spark's startingVersion "latest").
func FromLatest() Start { return Start{kind: startLatest} }

// FromOffset resumes a stream at an offset a Batch gave as its End. An
// offset that carries a table id resumes only that table: another one is
// a *TableReplacedError (deltaerr.ErrTableReplaced).
func FromOffset(o Offset) Start { return Start{kind: startOffset, off: o} }

// String describes the start, for logs.
func (s Start) String() string {
	switch s.kind {
	case startVersion:
		return "version " + strconv.FormatInt(s.version, 10)
	case startTimestamp:
		return "timestamp " + s.ts.UTC().Format(time.RFC3339Nano)
	case startLatest:
		return "latest"
	case startOffset:
		return "offset " + s.off.String()
	}
	return "latest snapshot"
}
