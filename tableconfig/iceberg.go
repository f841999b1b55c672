package tableconfig

import (
	"fmt"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// UniversalFormatIceberg reports whether delta.universalFormat.enabledFormats
// lists iceberg: after each commit, Iceberg metadata describing the same
// data files is to be written beside the Delta log (package iceberg). It
// counts only on a table where icebergCompatV2 is enabled
// (IcebergCompatV2), as Spark requires.
func (c *Config) UniversalFormatIceberg() bool {
	return c.p.uniformIceberg && c.IcebergCompatV2()
}

// IcebergCompatV2 reports whether the icebergCompatV2 writer feature is
// enabled: the protocol supports it and delta.enableIcebergCompatV2 is
// true. Writers must then follow its rules (CheckIcebergCompat, and
// partition values materialized in data files, numRecords in every add's
// stats).
func (c *Config) IcebergCompatV2() bool {
	return c.p.icebergCompatV2 && c.IsFeatureSupported(actions.FeatureIcebergCompatV2)
}

// CheckIcebergCompat checks the rules of icebergCompatV2 (PROTOCOL.md,
// "Writer Requirements for IcebergCompatV2") that the configuration alone
// decides, when the feature is enabled: column mapping in name or id
// mode, icebergCompatV1 not active, deletion vectors not active, and only
// the types of the allow-list (byte, short, integer, long, float, double,
// decimal, string, binary, boolean, timestamp, timestamp_ntz, date, array,
// map, struct) in the schema. A broken rule is a *deltaerr.FeatureError
// naming it (errors.Is deltaerr.ErrUnsupportedFeature). A table without
// the feature enabled gives nil, unless
// delta.universalFormat.enabledFormats lists iceberg, which needs it.
func (c *Config) CheckIcebergCompat() error {
	if !c.IcebergCompatV2() {
		if c.p.uniformIceberg {
			// Spark refuses the property without the feature enabled.
			return icebergErr(KeyUniversalFormatEnabledFormats + " lists iceberg, which needs icebergCompatV2 enabled (" +
				KeyEnableIcebergCompatV2 + " and the protocol feature)")
		}
		return nil
	}
	if c.ColumnMappingMode() == schema.ColumnMappingNone {
		return icebergErr("icebergCompatV2 needs column mapping in name or id mode")
	}
	if c.IsFeatureEnabled(actions.FeatureIcebergCompatV1) {
		return icebergErr("icebergCompatV2 cannot be enabled with icebergCompatV1")
	}
	if c.p.deletionVectors && c.IsFeatureSupported(actions.FeatureDeletionVectors) {
		return icebergErr("icebergCompatV2 cannot be enabled with deletion vectors (delta.enableDeletionVectors)")
	}
	if path, t, ok := firstNotIceberg(c.schema, nil); ok {
		return icebergErr(fmt.Sprintf("icebergCompatV2: column %s has type %s, which Iceberg v2 has not", strings.Join(path, "."), t))
	}
	return nil
}

func icebergErr(reason string) error {
	return &deltaerr.FeatureError{Feature: actions.FeatureIcebergCompatV2 + ": " + reason, Op: "write"}
}

// firstNotIceberg returns the path and type of the first field whose type
// is outside icebergCompatV2's allow-list.
func firstNotIceberg(t schema.DataType, path []string) ([]string, schema.DataType, bool) {
	switch t := t.(type) {
	case nil:
		return nil, nil, false
	case *schema.StructType:
		for i := range t.Fields {
			f := &t.Fields[i]
			if p, bad, ok := firstNotIceberg(f.Type, append(path[:len(path):len(path)], f.Name)); ok {
				return p, bad, ok
			}
		}
		return nil, nil, false
	case *schema.ArrayType:
		return firstNotIceberg(t.ElementType, append(path[:len(path):len(path)], "element"))
	case *schema.MapType:
		if p, bad, ok := firstNotIceberg(t.KeyType, append(path[:len(path):len(path)], "key")); ok {
			return p, bad, ok
		}
		return firstNotIceberg(t.ValueType, append(path[:len(path):len(path)], "value"))
	case schema.DecimalType:
		return nil, nil, false
	}
	switch t {
	case schema.Byte, schema.Short, schema.Integer, schema.Long, schema.Float, schema.Double,
		schema.String, schema.Binary, schema.Boolean, schema.Timestamp, schema.TimestampNTZ, schema.Date:
		return nil, nil, false
	}
	return path, t, true
}

// IcebergProperties returns the properties to set, beside raw's, so that
// a table with the properties raw turns UniForm Iceberg on, as Spark
// documents it: delta.enableIcebergCompatV2=true and column mapping in
// name mode when raw does not choose a mode. It returns nil when raw does
// not list iceberg in delta.universalFormat.enabledFormats, and a
// *deltaerr.FeatureError when raw contradicts the rules (compatV2 set to
// false, column mapping mode none, deletion vectors or icebergCompatV1
// on). Invalid values give Validate's error.
func IcebergProperties(raw map[string]string) (map[string]string, error) {
	p, err := parseProps(raw)
	if err != nil {
		return nil, err
	}
	if !p.uniformIceberg && !p.icebergCompatV2 {
		return nil, nil
	}
	out := map[string]string{}
	if v, ok := raw[KeyEnableIcebergCompatV2]; ok && !p.icebergCompatV2 {
		return nil, icebergErr(KeyEnableIcebergCompatV2 + "=" + v + " but iceberg is an enabled universal format")
	} else if !ok {
		out[KeyEnableIcebergCompatV2] = "true"
	}
	if v, ok := raw[KeyColumnMappingMode]; ok && p.mappingMode == schema.ColumnMappingNone {
		return nil, icebergErr(KeyColumnMappingMode + "=" + v + ": icebergCompatV2 needs name or id")
	} else if !ok {
		out[KeyColumnMappingMode] = string(schema.ColumnMappingByName)
	}
	if p.deletionVectors {
		return nil, icebergErr("deletion vectors are enabled")
	}
	if p.icebergCompatV1 {
		return nil, icebergErr("icebergCompatV1 is enabled")
	}
	return out, nil
}
