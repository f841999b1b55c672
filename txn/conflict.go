package txn

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// ConflictKind names the rule a concurrent commit broke. The values appear
// in error messages; match on the constants, not on the text.
type ConflictKind string

// Kinds of conflict, in the order Commit checks them. See the package doc.
const (
	ConflictProtocolChanged  ConflictKind = "protocol changed"
	ConflictMetadataChanged  ConflictKind = "metadata changed"
	ConflictDomain           ConflictKind = "concurrent domain metadata"
	ConflictAppTransaction   ConflictKind = "concurrent transaction for the same application id"
	ConflictConcurrentAppend ConflictKind = "concurrent append"
	ConflictDeleteRead       ConflictKind = "concurrent delete of a file read"
	ConflictDeleteDelete     ConflictKind = "concurrent delete of a file deleted"
)

// ConflictError reports a concurrent commit that makes a transaction's
// result wrong. errors.Is(err, ErrConflict) reports true for it.
type ConflictError struct {
	Kind ConflictKind
	// Version is the version of the commit that won and conflicts.
	Version int64
	// Detail names what both touched: a file, a domain, an application id.
	Detail string
}

func (e *ConflictError) Error() string {
	msg := fmt.Sprintf("%s by the commit of version %d", e.Kind, e.Version)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Is reports whether target is ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// winner is what a commit that won the race holds, as the checks need it.
type winner struct {
	version    int64
	commitInfo *actions.CommitInfo
	protocol   *actions.Protocol
	metadata   *actions.Metadata
	adds       []actions.Add
	removes    []actions.Remove
	txns       []actions.Txn
	domains    []actions.DomainMetadata
}

// readWinner reads and decodes the commit at version, streamed (see
// actions.ReadActions). A missing commit gives an error matching
// logstore.ErrNotFound; one that does not decode, a *deltaerr.CorruptError.
func readWinner(ctx context.Context, store logstore.Store, version int64) (*winner, error) {
	key := deltalog.CommitKey(version)
	w := &winner{version: version}
	err := actions.ReadActions(key, logstore.NewWindowReader(ctx, store, key, 0), func(a *actions.Action) error {
		switch {
		case a.CommitInfo != nil:
			if w.commitInfo == nil {
				ci := *a.CommitInfo
				w.commitInfo = &ci
			}
		case a.Protocol != nil:
			p := *a.Protocol
			w.protocol = &p
		case a.Metadata != nil:
			m := *a.Metadata
			w.metadata = &m
		case a.Add != nil:
			w.adds = append(w.adds, *a.Add)
		case a.Remove != nil:
			w.removes = append(w.removes, *a.Remove)
		case a.Txn != nil:
			w.txns = append(w.txns, *a.Txn)
		case a.DomainMetadata != nil:
			w.domains = append(w.domains, *a.DomainMetadata)
		}
		return nil
	})
	return w, err
}

// isBlindAppend reports whether the winner said it was a blind append. A
// commit that does not say is taken as not one, which can only add
// conflicts, never miss one.
func (w *winner) isBlindAppend() bool {
	return w.commitInfo != nil && w.commitInfo.IsBlindAppend != nil && *w.commitInfo.IsBlindAppend
}

func (w *winner) txnID() string {
	if w.commitInfo == nil {
		return ""
	}
	return w.commitInfo.TxnID
}

// checkConflicts applies the checks of the package doc, in order, to one
// winner. level is the isolation level the transaction runs at.
func (t *Transaction) checkConflicts(w *winner, level IsolationLevel) error {
	conflict := func(kind ConflictKind, format string, args ...any) error {
		return &ConflictError{Kind: kind, Version: w.version, Detail: fmt.Sprintf(format, args...)}
	}

	// 0. A winner that makes the table append-only refuses this
	// transaction's removes outright: no retry can make them valid.
	if w.metadata != nil && t.removesData() {
		p := t.snap.Protocol()
		if w.protocol != nil {
			p = *w.protocol
		}
		cfg, err := tableconfig.New(p, *w.metadata)
		if err != nil {
			return fmt.Errorf("txn: metadata of the commit of version %d: %w", w.version, err)
		}
		if cfg.AppendOnly() {
			return fmt.Errorf("txn: the commit of version %d made the table append-only: %w", w.version, ErrAppendOnly)
		}
	}
	// 1. Protocol.
	if w.protocol != nil {
		if t.protocol != nil {
			return conflict(ConflictProtocolChanged, "both commits change the protocol")
		}
		if rp := t.snap.Protocol(); !sameProtocol(w.protocol, &rp) {
			return conflict(ConflictProtocolChanged, "protocol is now (%d, %d) %v %v",
				w.protocol.MinReaderVersion, w.protocol.MinWriterVersion, w.protocol.ReaderFeatures, w.protocol.WriterFeatures)
		}
	}
	// 2. Metadata. A winner that only moved identity high-water marks (a
	// write that generated identity values) does not conflict with a
	// transaction that changes no metadata: such a transaction neither
	// reads nor writes the marks. Spark's ConflictChecker
	// (checkNoMetadataUpdates) tolerates the same winners, which it knows
	// by their commitInfo tag; here the metadata itself is compared.
	if w.metadata != nil && (t.metadata != nil || !identityMarksOnly(t.snap.Metadata(), *w.metadata)) {
		return conflict(ConflictMetadataChanged, "table metadata changed")
	}
	// 3. Domains.
	for _, d := range w.domains {
		if d.Domain == rowTrackingDomain {
			continue
		}
		if _, ok := t.domains[d.Domain]; ok {
			return conflict(ConflictDomain, "domain %s", d.Domain)
		}
	}
	// 4. Application ids.
	for _, x := range w.txns {
		_, set := t.txns[x.AppID]
		if set || t.readAppIDs[x.AppID] {
			return conflict(ConflictAppTransaction, "application id %s (version %d)", x.AppID, x.Version)
		}
	}
	// 5. Adds this transaction should have read.
	if err := t.checkAdds(w, level, conflict); err != nil {
		return err
	}
	// 6. Removes of files this transaction read.
	for i := range w.removes {
		r := &w.removes[i]
		if t.readWholeTable {
			return conflict(ConflictDeleteRead, "file %s removed after the whole table was read", r.Path)
		}
		if t.readFiles[snapshot.CanonicalPath(r.Path)] {
			return conflict(ConflictDeleteRead, "file %s", r.Path)
		}
	}
	// 7. Removes of files this transaction removes too.
	if len(t.removes) > 0 && len(w.removes) > 0 {
		ours := make(map[string]bool, len(t.removes))
		for i := range t.removes {
			ours[snapshot.CanonicalPath(t.removes[i].Path)] = true
		}
		for i := range w.removes {
			if ours[snapshot.CanonicalPath(w.removes[i].Path)] {
				return conflict(ConflictDeleteDelete, "file %s", w.removes[i].Path)
			}
		}
	}
	return nil
}

func sameProtocol(a, b *actions.Protocol) bool {
	return a.MinReaderVersion == b.MinReaderVersion && a.MinWriterVersion == b.MinWriterVersion &&
		sameSet(a.ReaderFeatures, b.ReaderFeatures) && sameSet(a.WriterFeatures, b.WriterFeatures)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// checkAdds is check 5: the winner's adds that count at level, against what
// the transaction read.
func (t *Transaction) checkAdds(w *winner, level IsolationLevel, conflict func(ConflictKind, string, ...any) error) error {
	if len(w.adds) == 0 || t.isBlindAppend() {
		return nil
	}
	switch level {
	case SnapshotIsolation:
		return nil
	case WriteSerializable:
		if t.metadata == nil && w.isBlindAppend() {
			return nil
		}
	}
	if t.readWholeTable {
		return conflict(ConflictConcurrentAppend, "file %s added after the whole table was read", w.adds[0].Path)
	}
	if len(t.readPredicates) == 0 {
		return nil
	}
	lookup := t.partitionLookup()
	for i := range w.adds {
		a := &w.adds[i]
		for _, p := range t.readPredicates {
			if expr.Eval(p, lookup(a)) != expr.False {
				return conflict(ConflictConcurrentAppend, "file %s may match the predicate read, %s", a.Path, p)
			}
		}
	}
	return nil
}

// partitionLookup returns, for an add, the lookup expr.Eval needs: typed
// partition values of the read snapshot's partition columns, by logical
// name. Other columns have no value, so a predicate on them is Unknown: a
// possible match. A partition value that does not parse is Unknown too.
func (t *Transaction) partitionLookup() func(*actions.Add) expr.Lookup {
	type part struct {
		typ      schema.DataType
		physical string
	}
	md := t.snap.Metadata()
	mode := t.snap.Config().ColumnMappingMode()
	parts := map[string]part{}
	if sch := t.snap.Schema(); sch != nil {
		for _, name := range md.PartitionColumns {
			if f, ok := sch.Field(name); ok {
				parts[name] = part{typ: f.Type, physical: f.PhysicalName(mode)}
			}
		}
	}
	return func(a *actions.Add) expr.Lookup {
		return func(col string) (schema.DataType, schema.Value, bool) {
			p, ok := parts[col]
			if !ok {
				return nil, schema.Value{}, false
			}
			raw, ok := a.PartitionValues[p.physical]
			if !ok {
				return nil, schema.Value{}, false
			}
			v, err := schema.ParsePartitionValue(p.typ, raw)
			if err != nil {
				return nil, schema.Value{}, false
			}
			return p.typ, v, true
		}
	}
}

// identityMarksOnly reports whether metadata b differs from a in the
// high-water marks of identity columns and in nothing else.
func identityMarksOnly(a, b actions.Metadata) bool {
	return a.SchemaString != b.SchemaString && a.ID == b.ID && a.Name == b.Name && a.Description == b.Description &&
		a.Format.Provider == b.Format.Provider && maps.Equal(a.Format.Options, b.Format.Options) &&
		slices.Equal(a.PartitionColumns, b.PartitionColumns) && maps.Equal(a.Configuration, b.Configuration) &&
		(a.CreatedTime == nil) == (b.CreatedTime == nil) && (a.CreatedTime == nil || *a.CreatedTime == *b.CreatedTime) &&
		schema.SameButHighWaterMarks(a.SchemaString, b.SchemaString)
}
