package tableconfig

import "strings"

// Spark's properties that ask for protocol versions at CREATE or ALTER:
// the protocol gets at least those versions, and the keys are not stored.
// Part of Spark's interface: never change them.
const (
	KeyMinReaderVersion = "delta.minReaderVersion"
	KeyMinWriterVersion = "delta.minWriterVersion"
)

// otherKnownKeys are delta.* table properties Delta Spark defines
// (DeltaConfigs) that this library keeps as given without reading them:
// setting one is legitimate, so it is not an unknown key.
var otherKnownKeys = map[string]bool{
	"delta.autoOptimize.optimizeWrite":                  true,
	"delta.checkpointRetentionDuration":                 true,
	"delta.sampleRetentionDuration":                     true,
	"delta.compatibility.symlinkFormatManifest.enabled": true,
	"delta.tuneFileSizesForRewrites":                    true,
	"delta.enableFullRetentionRollback":                 true,
	"delta.parquet.compression.codec":                   true,
	"delta.parquet.format.version":                      true,
	"delta.enableVariantShredding":                      true,
	"delta.enableIcebergCompatV3":                       true,
	"delta.enableIcebergWriterCompatV1":                 true,
	"delta.enableIcebergWriterCompatV3":                 true,
	"delta.requireCheckpointProtectionBeforeVersion":    true,
	"delta.enableChangeDataCapture":                     true,
	"delta.columnMapping.hasDroppedOrRenamed":           true,
	"delta.universalFormat.compatibility.version":       true,
	KeyMinReaderVersion:                                 true,
	KeyMinWriterVersion:                                 true,
}

// knownPrefixes start families of delta.* properties Spark defines.
var knownPrefixes = []string{KeyConstraintPrefix, KeyFeaturePrefix, "delta.coordinatedCommits.", "delta.catalogManaged."}

// IsKnownKey reports whether key is a table property Delta defines: one
// this package parses, a CHECK constraint or feature key, or one of the
// other properties of Delta Spark. Keys outside the delta. namespace are
// the user's own and always count as known.
func IsKnownKey(key string) bool {
	if !strings.HasPrefix(key, "delta.") {
		return true
	}
	if _, ok := parsers[key]; ok || otherKnownKeys[key] {
		return true
	}
	for _, p := range knownPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// CheckSettable refuses, with a *PropertyError, a key ALTER TABLE ... SET
// TBLPROPERTIES must not set: an unknown delta.* key, as Spark refuses it
// ("Unknown configuration was specified") unless told to allow arbitrary
// properties. Keys outside the delta. namespace are accepted.
func CheckSettable(key, value string) error {
	if IsKnownKey(key) {
		return nil
	}
	return &PropertyError{Key: key, Value: value, Reason: "unknown delta table property (keys outside delta. are free)"}
}
