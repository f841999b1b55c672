package alter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// SetProperties sets table properties, as ALTER TABLE ... SET
// TBLPROPERTIES does. Values are checked as Spark checks them
// (tableconfig.Validate), and an unknown delta.* key is refused
// (tableconfig.CheckSettable); keys outside delta. are free. A property
// that turns a feature on (delta.enableDeletionVectors,
// delta.enableChangeDataFeed, delta.enableTypeWidening, ...;
// tableconfig.FeaturesFor) upgrades the protocol to support it, and
// delta.feature.<name> = supported adds the feature without storing the
// key. delta.columnMapping.mode = name on a table without column mapping
// turns it on as EnableColumnMapping does; any other change of the mode is
// refused, as Spark refuses it. CHECK constraints are set with
// AddConstraint, not here. delta.minReaderVersion and
// delta.minWriterVersion ask for at least those protocol versions and
// are not stored, as in Spark; a version below the table's that adds no
// feature is write.ErrProtocolDowngrade.
//
// delta.enableRowTracking = true on a table with files that have no row
// ids runs backfillRowIDs first (an UPGRADE PROTOCOL commit when the
// protocol lacks rowTracking, then ROW TRACKING BACKFILL commits), then
// the SET TBLPROPERTIES commit, which sets the materialized row id and row
// commit version column names (write.Evolve) and is made only once every
// live file has a baseRowId, as Spark does. delta.enableInCommitTimestamps
// = true after version 0 gets delta.inCommitTimestampEnablementVersion and
// delta.inCommitTimestampEnablementTimestamp, the version and in-commit
// timestamp of the commit itself, stamped by the transaction when it lands
// (txn). Otherwise the change is one commit, Spark's SET TBLPROPERTIES.
func SetProperties(ctx context.Context, snap *snapshot.Snapshot, props map[string]string, opts Options) (txn.CommitResult, error) {
	if len(props) == 0 {
		return txn.CommitResult{}, invalid("no property to set")
	}
	for _, k := range sortedKeys(props) {
		if err := tableconfig.CheckSettable(k, props[k]); err != nil {
			return txn.CommitResult{}, err
		}
		switch {
		case strings.HasPrefix(k, tableconfig.KeyConstraintPrefix):
			return txn.CommitResult{}, invalid("%s: CHECK constraints are added with ADD CONSTRAINT, which checks the rows", k)
		case k == tableconfig.KeyColumnMappingMaxColumnID, k == tableconfig.KeyMaterializedRowIDColumn,
			k == tableconfig.KeyMaterializedRowCommitVersionColumn,
			k == tableconfig.KeyInCommitTimestampEnablementVersion, k == tableconfig.KeyInCommitTimestampEnablementTimestamp:
			return txn.CommitResult{}, invalid("%s is maintained by the table and cannot be set", k)
		}
	}
	params := map[string]any{propertiesParamName: jsonString(props)}
	set := func() (txn.CommitResult, error) {
		return run(ctx, snap, opts, OpSetProperties, params, func(ctx context.Context, s *snapshot.Snapshot) (change, error) {
			return setProperties(ctx, s, props)
		})
	}
	on, err := turnsOnRowTracking(snap, props)
	if err != nil || !on {
		if err != nil {
			return txn.CommitResult{}, err
		}
		return set()
	}
	// Row tracking on a table with files: support the feature and
	// backfill row ids first (backfillRowIDs), then turn it on; the
	// commit that turns it on checks again that every file has ids.
	for round := 1; ; round++ {
		need, err := needsBackfill(ctx, snap)
		if err != nil {
			return txn.CommitResult{}, err
		}
		if need {
			if _, err := backfillRowIDs(ctx, snap, opts); err != nil {
				return txn.CommitResult{}, err
			}
			if snap, err = snap.Update(ctx); err != nil {
				return txn.CommitResult{}, err
			}
		}
		res, err := set()
		if !errors.Is(err, errNeedsBackfill) {
			return res, err
		}
		if round == backfillRounds {
			return txn.CommitResult{}, fmt.Errorf("alter: turning on %s: files without row ids were added again during %d backfills: %w",
				tableconfig.KeyEnableRowTracking, round, txn.ErrConflict)
		}
		if snap, err = snap.Update(ctx); err != nil {
			return txn.CommitResult{}, err
		}
	}
}

// setProperties computes SetProperties on s.
func setProperties(ctx context.Context, s *snapshot.Snapshot, props map[string]string) (change, error) {
	merged := cloneProps(s)
	for k, v := range props {
		merged[k] = v
	}
	if err := tableconfig.Validate(merged); err != nil {
		return change{}, err
	}
	cfg := s.Config()
	sch, err := cloneSchema(s)
	if err != nil {
		return change{}, err
	}
	if v, ok := props[tableconfig.KeyColumnMappingMode]; ok {
		mode, _ := schema.ParseColumnMappingMode(v)
		cur := cfg.ColumnMappingMode()
		switch {
		case mode == cur:
		case cur == schema.ColumnMappingNone && mode == schema.ColumnMappingByName:
			p, m, err := write.EnableColumnMapping(s.Protocol(), s.Metadata(), sch, merged)
			if err != nil {
				return change{}, err
			}
			return change{protocol: p, metadata: m}, nil
		default:
			return change{}, invalid("%s cannot change from %s to %s: only none to name is allowed on an existing table, as in Spark",
				tableconfig.KeyColumnMappingMode, cur, mode)
		}
	}
	newFeats, err := tableconfig.FeaturesFor(merged)
	if err != nil {
		return change{}, err
	}
	if slices.Contains(newFeats, actions.FeatureRowTracking) && !cfg.RowTracking() {
		// Row tracking is on only once every live file has row ids:
		// SetProperties backfills them first.
		need, err := needsBackfill(ctx, s)
		if err != nil {
			return change{}, err
		}
		if need {
			return change{}, errNeedsBackfill
		}
	}
	// Turning in-commit timestamps on needs nothing here: the transaction
	// stamps the enablement properties with the version and in-commit
	// timestamp the commit lands with.
	return evolve(s, sch, merged)
}

// UnsetProperties removes table properties, as ALTER TABLE ... UNSET
// TBLPROPERTIES does. A key the table does not have is ErrPropertyNotFound
// unless ifExists. CHECK constraints are dropped with DropConstraint;
// delta.columnMapping.* and delta.feature.* cannot be unset (a feature is
// removed from a protocol only by DROP FEATURE, which this library does
// not do). The commit is Spark's UNSET TBLPROPERTIES.
func UnsetProperties(ctx context.Context, snap *snapshot.Snapshot, keys []string, ifExists bool, opts Options) (txn.CommitResult, error) {
	if len(keys) == 0 {
		return txn.CommitResult{}, invalid("no property to unset")
	}
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, tableconfig.KeyConstraintPrefix):
			return txn.CommitResult{}, invalid("%s: CHECK constraints are dropped with DROP CONSTRAINT", k)
		case strings.HasPrefix(k, "delta.columnMapping."), strings.HasPrefix(k, tableconfig.KeyFeaturePrefix),
			strings.HasPrefix(k, "delta.rowTracking."):
			return txn.CommitResult{}, invalid("%s cannot be unset", k)
		}
	}
	// UnsetTableProperties.parameters: ifExists is a JSON boolean.
	params := map[string]any{propertiesParamName: jsonString(keys), "ifExists": ifExists}
	return run(ctx, snap, opts, OpUnsetProperties, params, func(_ context.Context, s *snapshot.Snapshot) (change, error) {
		props := cloneProps(s)
		for _, k := range keys {
			if _, ok := props[k]; !ok && !ifExists {
				return change{}, errorf(ErrPropertyNotFound, "%s", k)
			}
			delete(props, k)
		}
		sch, err := cloneSchema(s)
		if err != nil {
			return change{}, err
		}
		return evolve(s, sch, props)
	})
}

// AddConstraint adds the CHECK constraint name (delta.constraints.<name>
// = text), as ALTER TABLE ... ADD CONSTRAINT does: the expression must
// parse, name columns of the table and be a condition
// (write.CheckConstraints), the name must be new (ignoring case), and
// every row already in the table must satisfy it (true: false and null
// fail), which is checked by scanning the table for a row that does not
// (files whose statistics prove every row passes are skipped). A row that
// does not is a *write.ConstraintError naming the constraint and showing
// the row; nothing is committed. The protocol gets checkConstraints
// (writer 3, or the feature). The transaction reads the whole table, so a
// concurrent commit that adds rows makes it check again. The commit is
// Spark's ADD CONSTRAINT.
func AddConstraint(ctx context.Context, snap *snapshot.Snapshot, name, text string, opts Options) (txn.CommitResult, error) {
	params := map[string]any{"name": name, "expr": text}
	return run(ctx, snap, opts, OpAddConstraint, params, func(ctx context.Context, s *snapshot.Snapshot) (change, error) {
		if strings.TrimSpace(name) == "" {
			return change{}, invalid("a CHECK constraint needs a name")
		}
		for _, c := range s.Config().Constraints() {
			if strings.EqualFold(c.Name, name) {
				return change{}, invalid("CHECK constraint %s already exists (%s)", c.Name, c.Expression)
			}
		}
		props := cloneProps(s)
		props[tableconfig.KeyConstraintPrefix+name] = text
		sch, err := cloneSchema(s)
		if err != nil {
			return change{}, err
		}
		ch, err := evolve(s, sch, props)
		if err != nil {
			return change{}, err
		}
		if err := checkRows(ctx, s, name, text); err != nil {
			return change{}, err
		}
		ch.readWholeTable = true
		return ch, nil
	})
}

// checkRows scans s for a row the constraint does not accept.
func checkRows(ctx context.Context, s *snapshot.Snapshot, name, text string) error {
	e, err := expr.Parse(text)
	if err != nil {
		return invalid("CHECK constraint %s: %v", name, err)
	}
	bad := expr.Or{Terms: []expr.Expr{expr.Not{Value: e}, expr.IsNull{Value: e}}}
	sc, err := scan.New(s, scan.Options{Predicate: bad, BatchSize: 1})
	if err != nil {
		return err
	}
	sch := s.Schema()
	for b, err := range sc.Batches(ctx) {
		if err != nil {
			return err
		}
		if b.Len == 0 {
			continue
		}
		return &write.ConstraintError{Kind: write.KindCheck, Name: name, Expression: text, Row: -1, Values: write.ShowRow(sch, b.Row(0))}
	}
	return nil
}

// DropConstraint removes the CHECK constraint name (ignoring case), as
// ALTER TABLE ... DROP CONSTRAINT does. A constraint the table does not
// have is ErrConstraintNotFound, unless ifExists, when nothing is
// committed and the result is zero. The commit is Spark's DROP
// CONSTRAINT.
func DropConstraint(ctx context.Context, snap *snapshot.Snapshot, name string, ifExists bool, opts Options) (txn.CommitResult, error) {
	params := map[string]any{"name": name}
	var missing bool
	res, err := run(ctx, snap, opts, OpDropConstraint, params, func(_ context.Context, s *snapshot.Snapshot) (change, error) {
		props := cloneProps(s)
		for _, c := range s.Config().Constraints() {
			if strings.EqualFold(c.Name, name) {
				delete(props, tableconfig.KeyConstraintPrefix+c.Name)
				params["expr"] = c.Expression
				params["existed"] = "true"
				sch, err := cloneSchema(s)
				if err != nil {
					return change{}, err
				}
				return evolve(s, sch, props)
			}
		}
		missing = true
		return change{}, errorf(ErrConstraintNotFound, "%s", name)
	})
	if missing && ifExists && errors.Is(err, ErrConstraintNotFound) {
		return txn.CommitResult{}, nil
	}
	return res, err
}

// featureProperty is the property that turns a feature on, for the
// features EnableFeature turns on rather than only supports.
var featureProperty = map[string]string{
	actions.FeatureDeletionVectors: tableconfig.KeyEnableDeletionVectors,
	actions.FeatureChangeDataFeed:  tableconfig.KeyEnableChangeDataFeed,
	actions.FeatureTypeWidening:    tableconfig.KeyEnableTypeWidening,
}

// EnableFeature adds the named table feature to the protocol, upgraded
// minimally (write.UpgradeProtocol), as ALTER TABLE ... SET TBLPROPERTIES
// ('delta.feature.<name>' = 'supported') does. Features a property turns
// on are turned on too: columnMapping (delta.columnMapping.mode = name,
// with every field keeping its name as physical name: see
// EnableColumnMapping), deletionVectors, changeDataFeed and typeWidening
// (their delta.enable* property set to true); those commits are SET
// TBLPROPERTIES, the others UPGRADE PROTOCOL. An unknown feature, or one
// this library cannot write, is a *deltaerr.FeatureError; a feature the
// protocol already supports (and is on) commits nothing and returns a
// zero result.
func EnableFeature(ctx context.Context, snap *snapshot.Snapshot, name string, opts Options) (txn.CommitResult, error) {
	_, ok := tableconfig.LookupFeature(name)
	if !ok {
		// Feature names are case-sensitive in the protocol; accept the
		// case the user typed when it is unambiguous.
		for _, n := range tableconfig.FeatureNames() {
			if strings.EqualFold(n, name) {
				ok = true
				name = n
				break
			}
		}
	}
	if !ok {
		return txn.CommitResult{}, &deltaerr.FeatureError{Feature: "table feature " + name, Op: "write"}
	}
	cfg := snap.Config()
	if name == actions.FeatureColumnMapping {
		if cfg.ColumnMappingMode() != schema.ColumnMappingNone {
			return txn.CommitResult{}, nil
		}
		return SetProperties(ctx, snap, map[string]string{tableconfig.KeyColumnMappingMode: string(schema.ColumnMappingByName)}, opts)
	}
	if key, ok := featureProperty[name]; ok {
		if cfg.IsFeatureEnabled(name) {
			return txn.CommitResult{}, nil
		}
		return SetProperties(ctx, snap, map[string]string{key: "true"}, opts)
	}
	if cfg.IsFeatureSupported(name) {
		return txn.CommitResult{}, nil
	}
	params := map[string]any{}
	return run(ctx, snap, opts, OpUpgradeProtocol, params, func(_ context.Context, s *snapshot.Snapshot) (change, error) {
		p, _ := write.UpgradeProtocol(s.Protocol(), name)
		params["newProtocol"] = jsonString(p)
		return change{protocol: p, metadata: s.Metadata(), protocolOnly: true}, nil
	})
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
