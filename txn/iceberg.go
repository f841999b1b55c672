package txn

import (
	"fmt"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/statsjson"
	"github.com/godelta/delta/tableconfig"
)

// checkIcebergCompat checks the writer rules of icebergCompatV2 that a
// commit can see, when the committed configuration enables it (or the
// commit stages a metaData): the
// configuration's own (column mapping, no deletion vectors, no
// icebergCompatV1, allowed types), then every staged add's: numRecords in
// its stats and no deletion vector. Partition values materialized in the
// data files are the writer's part (package write does it).
func checkIcebergCompat(cfg *tableconfig.Config, adds []actions.Add, metadataStaged bool) error {
	// A staged metaData (an ALTER) is checked whatever it enables:
	// delta.universalFormat.enabledFormats=iceberg without icebergCompatV2
	// is refused, as Spark refuses it.
	if metadataStaged || cfg.IcebergCompatV2() {
		if err := cfg.CheckIcebergCompat(); err != nil {
			return err
		}
	}
	if !cfg.IcebergCompatV2() {
		return nil
	}
	for i := range adds {
		a := &adds[i]
		if a.DeletionVector != nil {
			return &deltaerr.FeatureError{Feature: actions.FeatureIcebergCompatV2 + ": add " + a.Path + " has a deletion vector", Op: "write"}
		}
		if _, ok, err := statsjson.NumRecords(a.Stats); err != nil || !ok {
			return fmt.Errorf("%w: icebergCompatV2 needs numRecords in the stats of add %s", deltaerr.ErrInvalidArgument, a.Path)
		}
	}
	return nil
}
