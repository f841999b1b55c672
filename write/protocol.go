package write

import (
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/schema"
)

// UpgradeProtocol returns the smallest protocol that supports every
// feature p supports (those its legacy versions imply included) and the
// features named, chosen as NewTable chooses a new table's (see the
// package doc). It is what a commit that turns features on for an
// existing table (an ALTER TABLE SET TBLPROPERTIES) stages; p itself when
// it already supports them all.
func UpgradeProtocol(p actions.Protocol, features ...string) actions.Protocol {
	missing := false
	for _, f := range features {
		info, _ := actions.LookupFeature(f)
		if !p.HasWriterFeature(f) || (info.ReaderWriter && !p.HasReaderFeature(f)) {
			missing = true
		}
	}
	if !missing {
		return p
	}
	feats := map[string]bool{}
	if p.MinWriterVersion >= 7 {
		for _, f := range p.WriterFeatures {
			feats[f] = true
		}
		for _, f := range p.ReaderFeatures {
			feats[f] = true
		}
	} else {
		// The features the legacy versions imply, as Spark lists them
		// when it upgrades a table to table features.
		for _, name := range []string{actions.FeatureAppendOnly, actions.FeatureInvariants,
			actions.FeatureCheckConstraints, actions.FeatureChangeDataFeed, actions.FeatureGeneratedColumns,
			actions.FeatureColumnMapping, actions.FeatureIdentityColumns} {
			info, _ := actions.LookupFeature(name)
			if p.HasWriterFeature(name) && (!info.ReaderWriter || p.HasReaderFeature(name)) {
				feats[name] = true
			}
		}
	}
	for _, f := range features {
		feats[f] = true
	}
	return chooseProtocol(feats)
}

// AssignColumnMapping gives every field of sch without them a column id
// above maxID and a physical name, as NewTable does when column mapping is
// turned on, and returns the largest id (the new
// delta.columnMapping.maxColumnId).
func AssignColumnMapping(sch *schema.StructType, maxID int64) int64 {
	return assignColumnMapping(sch, maxID)
}
