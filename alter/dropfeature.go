package alter

import (
	"context"
	"slices"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
)

// OpDropFeature is the commitInfo operation of DropFeature, as Spark writes
// it (DeltaOperations.DropTableFeature).
const OpDropFeature = "DROP FEATURE"

// droppable are the writer features DropFeature removes, and what must be
// true of the table first. They are among Spark's removable writer
// features; the ones a drop prepares itself (inCommitTimestamp, turned off
// first as Spark's pre-downgrade command does) have no check here.
var droppable = map[string]func(s *snapshot.Snapshot, p *actions.Protocol) error{
	actions.FeatureCheckConstraints: func(s *snapshot.Snapshot, _ *actions.Protocol) error {
		var names []string
		for k := range s.Metadata().Configuration {
			if n, ok := strings.CutPrefix(k, tableconfig.KeyConstraintPrefix); ok {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			slices.Sort(names)
			return invalid("the table has CHECK constraints %s: drop them first", strings.Join(names, ", "))
		}
		return nil
	},
	actions.FeatureDomainMetadata: func(s *snapshot.Snapshot, p *actions.Protocol) error {
		for _, f := range []string{actions.FeatureRowTracking, actions.FeatureClustering} {
			if tableconfig.HasWriterFeature(p, f) {
				return invalid("feature %s needs domainMetadata: drop it first", f)
			}
		}
		return nil // live domains are checked on the snapshot the drop commits on
	},
	actions.FeatureInCommitTimestamp: nil,
}

// DropFeature removes the writer feature name from the table's protocol,
// as Spark's ALTER TABLE ... DROP FEATURE does for a writer feature, so that
// writers that do not know it may write the table again. The features it
// drops are checkConstraints (the table must have no CHECK constraint),
// domainMetadata (no domain metadata left, and neither rowTracking nor
// clustering), and inCommitTimestamp: a table with in-commit timestamps on
// first commits a SET TBLPROPERTIES that turns them off and removes their
// enablement properties, as Spark's pre-downgrade command does.
//
// The new protocol lists what the table supported but name: a legacy
// protocol when some legacy writer version implies exactly that set
// (writer 2 for appendOnly and invariants), else writer version 7 with
// the features listed, as Spark normalises it. The commit is Spark's DROP
// FEATURE, parameters featureName and truncateHistory (false).
//
// The reader-writer features deletionVectors, v2Checkpoint and
// vacuumProtocolCheck are dropped as Spark's fast DROP FEATURE drops them, with checkpoint
// protection and no history truncated (see dropProtected): the feature's
// traces are removed first, then barrier checkpoints, then the protocol
// without it and with checkpointProtection.
//
// A feature the protocol does not support is ErrInvalidChange; another
// reader-writer feature and any other writer feature are a
// *deltaerr.FeatureError (errors.Is deltaerr.ErrUnsupportedFeature) naming
// what is not supported.
func DropFeature(ctx context.Context, snap *snapshot.Snapshot, name string, opts Options) (txn.CommitResult, error) {
	info, ok := tableconfig.LookupFeature(name)
	if !ok {
		for _, n := range tableconfig.FeatureNames() {
			if strings.EqualFold(n, name) {
				name, ok = n, true
				info, _ = tableconfig.LookupFeature(n)
				break
			}
		}
	}
	p := snap.Protocol()
	if !ok || !tableconfig.HasWriterFeature(&p, name) {
		return txn.CommitResult{}, invalid("the table's protocol does not support feature %q: nothing to drop", name)
	}
	if d, ok := protectedDroppable[name]; ok {
		return dropProtected(ctx, snap, name, d, opts)
	}
	check, can := droppable[name]
	if info.ReaderWriter || !can {
		why := "dropping it is not supported here"
		if info.ReaderWriter {
			why = "dropping this reader-writer feature is not supported here (deletionVectors, v2Checkpoint and vacuumProtocolCheck are)"
		}
		return txn.CommitResult{}, &deltaerr.FeatureError{Feature: "DROP FEATURE " + name + ": " + why, Op: "write"}
	}
	if name == actions.FeatureInCommitTimestamp && snap.Config().IsFeatureEnabled(name) {
		res, err := disableICT(ctx, snap, opts)
		if err != nil {
			return txn.CommitResult{}, err
		}
		// The caller sees the drop's commit only: this one's post-commit
		// work (its version checksum) runs here, as VACUUM START's does.
		txn.PostCommit(ctx, &res)
		if snap, err = res.Snapshot(ctx); err != nil {
			return txn.CommitResult{}, err
		}
	}
	params := map[string]any{"featureName": name, "truncateHistory": false}
	return run(ctx, snap, opts, OpDropFeature, params, func(ctx context.Context, s *snapshot.Snapshot) (change, error) {
		p := s.Protocol()
		if !tableconfig.HasWriterFeature(&p, name) {
			return change{}, invalid("feature %q was dropped meanwhile", name)
		}
		if check != nil {
			if err := check(s, &p); err != nil {
				return change{}, err
			}
		}
		if name == actions.FeatureDomainMetadata {
			for d, err := range s.Domains(ctx) {
				if err != nil {
					return change{}, err
				}
				return change{}, invalid("the table has domain metadata %q: it must have none", d.Domain)
			}
		}
		if name == actions.FeatureInCommitTimestamp && s.Config().IsFeatureEnabled(name) {
			return change{}, invalid("in-commit timestamps were turned on again meanwhile")
		}
		return change{protocol: withoutFeature(p, name), metadata: s.Metadata(), protocolOnly: true}, nil
	})
}

// disableICT turns in-commit timestamps off and removes their enablement
// properties, in one SET TBLPROPERTIES / UNSET commit as Spark's
// InCommitTimestampsPreDowngradeCommand does.
func disableICT(ctx context.Context, snap *snapshot.Snapshot, opts Options) (txn.CommitResult, error) {
	params := map[string]any{"properties": jsonString(map[string]string{tableconfig.KeyEnableInCommitTimestamps: "false"})}
	return run(ctx, snap, opts, OpSetProperties, params, func(_ context.Context, s *snapshot.Snapshot) (change, error) {
		props := cloneProps(s)
		props[tableconfig.KeyEnableInCommitTimestamps] = "false"
		delete(props, tableconfig.KeyInCommitTimestampEnablementVersion)
		delete(props, tableconfig.KeyInCommitTimestampEnablementTimestamp)
		m := s.Metadata()
		m.Configuration = props
		return change{protocol: s.Protocol(), metadata: m}, nil
	})
}

// withoutFeature returns p without the writer feature name: the legacy
// protocol that implies exactly what is left, when one does, else writer
// version 7 listing it (and reader version 3 listing the reader-writer
// features, when there are any).
func withoutFeature(p actions.Protocol, name string) actions.Protocol {
	var writer, reader []string
	for _, f := range tableconfig.FeatureNames() {
		if f != name && tableconfig.HasWriterFeature(&p, f) {
			writer = append(writer, f)
		}
		if f != name && tableconfig.HasReaderFeature(&p, f) {
			reader = append(reader, f)
		}
	}
	// Features this build does not know stay as they are.
	for _, f := range p.WriterFeatures {
		if _, ok := tableconfig.LookupFeature(f); !ok && f != name {
			writer = append(writer, f)
		}
	}
	for _, f := range p.ReaderFeatures {
		if _, ok := tableconfig.LookupFeature(f); !ok && f != name {
			reader = append(reader, f)
		}
	}
	slices.Sort(writer)
	slices.Sort(reader)
	for _, legacy := range []actions.Protocol{
		{MinReaderVersion: 1, MinWriterVersion: 1}, {MinReaderVersion: 1, MinWriterVersion: 2},
		{MinReaderVersion: 1, MinWriterVersion: 3}, {MinReaderVersion: 1, MinWriterVersion: 4},
		{MinReaderVersion: 2, MinWriterVersion: 5}, {MinReaderVersion: 2, MinWriterVersion: 6},
	} {
		if implied(legacy, writer, reader) {
			return legacy
		}
	}
	np := actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: writer}
	switch {
	case p.MinReaderVersion < 3:
		// A legacy reader version stays: reader 2 implies columnMapping,
		// which the writer list names.
		np.MinReaderVersion = p.MinReaderVersion
	case len(reader) > 0:
		np.MinReaderVersion, np.ReaderFeatures = 3, reader
	}
	return np
}

// implied reports whether legacy protocol l implies exactly the writer
// and reader features given.
func implied(l actions.Protocol, writer, reader []string) bool {
	var w, r []string
	for _, f := range tableconfig.FeatureNames() {
		if tableconfig.HasWriterFeature(&l, f) {
			w = append(w, f)
		}
		if tableconfig.HasReaderFeature(&l, f) {
			r = append(r, f)
		}
	}
	return slices.Equal(w, writer) && slices.Equal(r, reader)
}
