package tableconfig

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// Error kinds of CheckMetadataChange, matched with errors.Is. Each also
// matches deltaerr.ErrInvalidArgument.
var (
	// ErrInvalidColumnName is returned for a column name that Spark
	// cannot write without column mapping.
	ErrInvalidColumnName = fmt.Errorf("tableconfig: invalid column name: %w", deltaerr.ErrInvalidArgument)
	// ErrReservedColumn is returned for a table with both the change data
	// feed on and a column named as one of the columns the feed adds.
	ErrReservedColumn = fmt.Errorf("tableconfig: column name reserved by the change data feed: %w", deltaerr.ErrInvalidArgument)
	// ErrProtocolProperty is returned for a metaData that stores a
	// protocol request (delta.minReaderVersion, delta.minWriterVersion,
	// delta.feature.<name>) as a table property.
	ErrProtocolProperty = fmt.Errorf("tableconfig: protocol request stored as a table property: %w", deltaerr.ErrInvalidArgument)
)

// InvalidColumnNameChars are the characters a column name cannot hold
// without column mapping: Parquet's, which Spark refuses in the names it
// writes (SchemaUtils.checkFieldNames): space, comma, semicolon, braces,
// parentheses, newline, tab and equals.
const InvalidColumnNameChars = " ,;{}()\n\t="

// CDCColumnNames are the columns the change data feed adds to the rows it
// reads, which a table with the feed on cannot have (compared ignoring
// case). They are package scan's ChangeTypeColumn, CommitVersionColumn
// and CommitTimestampColumn.
var CDCColumnNames = []string{"_change_type", "_commit_version", "_commit_timestamp"}

// CheckMetadataChange checks c, the configuration a commit that stages a
// metaData gives the table, against prev, the configuration before it (nil
// for a new table), for what Spark refuses in new metadata and a reader
// cannot see on its own:
//
//   - without column mapping, a column name (at any depth) holding one of
//     InvalidColumnNameChars: Spark cannot write such a table
//     (DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES). Column mapping
//     (delta.columnMapping.mode = name) allows any name. Names prev
//     already had without column mapping (a table another writer made) are
//     not refused again: only the commit that brings such a name in is.
//     ErrInvalidColumnName.
//   - the change data feed on (delta.enableChangeDataFeed) and a top-level
//     column named as one of CDCColumnNames, ignoring case: the feed would
//     report the column's value as its own (DELTA_TABLE_ALREADY_CONTAINS_CDC_COLUMNS
//     when the commit turns the feed on, RESERVED_CDC_COLUMNS_ON_WRITE when
//     it adds the column). A pair prev already had is not refused again.
//     ErrReservedColumn.
//   - delta.minReaderVersion, delta.minWriterVersion or delta.feature.<name>
//     stored as a property: they are requests for the protocol, which the
//     writer turns into the protocol action and never stores, as Spark
//     does (write.Evolve). A value prev already stored is let through.
//     ErrProtocolProperty.
//
// These are rules for writing metadata: New and snapshot loading do not
// apply them, so tables that break them stay readable.
func (c *Config) CheckMetadataChange(prev *Config) error {
	if err := c.checkProtocolProperties(prev); err != nil {
		return err
	}
	if err := c.checkColumnNames(prev); err != nil {
		return err
	}
	return c.checkCDCColumns(prev)
}

func (c *Config) checkProtocolProperties(prev *Config) error {
	keys := slices.Sorted(maps.Keys(c.metadata.Configuration)) // the same error from run to run
	for _, k := range keys {
		if k != KeyMinReaderVersion && k != KeyMinWriterVersion && !strings.HasPrefix(k, KeyFeaturePrefix) {
			continue
		}
		v := c.metadata.Configuration[k]
		if prev != nil {
			if old, ok := prev.metadata.Configuration[k]; ok && old == v {
				continue
			}
		}
		return fmt.Errorf("%w: %s = %q asks for a protocol and is not stored: the protocol action carries it "+
			"(write.Evolve and ALTER turn it into one)", ErrProtocolProperty, k, v)
	}
	return nil
}

func (c *Config) checkColumnNames(prev *Config) error {
	if c.ColumnMappingMode() != schema.ColumnMappingNone {
		return nil
	}
	had := map[string]bool{}
	if prev != nil && prev.ColumnMappingMode() == schema.ColumnMappingNone {
		walkFieldNames(prev.schema, nil, func(path []string) bool {
			had[strings.Join(path, "\x00")] = true
			return true
		})
	}
	var bad []string
	walkFieldNames(c.schema, nil, func(path []string) bool {
		name := path[len(path)-1]
		if strings.ContainsAny(name, InvalidColumnNameChars) && !had[strings.Join(path, "\x00")] {
			bad = path
			return false
		}
		return true
	})
	if bad == nil {
		return nil
	}
	return fmt.Errorf("%w: column %q has a character Spark does not allow in a column name without column mapping "+
		"(one of %q): rename it, or turn column mapping on (%s = name), which allows any name",
		ErrInvalidColumnName, strings.Join(bad, "."), InvalidColumnNameChars, KeyColumnMappingMode)
}

// walkFieldNames calls fn with the path of every field of t, parents
// first, through structs, arrays (element) and maps (key, value), until
// fn returns false.
func walkFieldNames(t schema.DataType, path []string, fn func(path []string) bool) bool {
	switch t := t.(type) {
	case *schema.StructType:
		if t == nil {
			return true
		}
		for i := range t.Fields {
			p := append(path[:len(path):len(path)], t.Fields[i].Name)
			if !fn(p) || !walkFieldNames(t.Fields[i].Type, p, fn) {
				return false
			}
		}
	case *schema.ArrayType:
		return walkFieldNames(t.ElementType, append(path[:len(path):len(path)], "element"), fn)
	case *schema.MapType:
		return walkFieldNames(t.KeyType, append(path[:len(path):len(path)], "key"), fn) &&
			walkFieldNames(t.ValueType, append(path[:len(path):len(path)], "value"), fn)
	}
	return true
}

func (c *Config) checkCDCColumns(prev *Config) error {
	if !c.ChangeDataFeed() {
		return nil
	}
	reserved := cdcColumns(c.schema)
	if len(reserved) == 0 {
		return nil
	}
	if prev == nil || !prev.ChangeDataFeed() {
		return fmt.Errorf("%w: the change data feed cannot be turned on (%s = true): the table has column %s, "+
			"which the feed adds to the rows it reads; rename or drop it first",
			ErrReservedColumn, KeyEnableChangeDataFeed, strings.Join(reserved, ", "))
	}
	before := map[string]bool{}
	for _, n := range cdcColumns(prev.schema) {
		before[strings.ToLower(n)] = true
	}
	var added []string
	for _, n := range reserved {
		if !before[strings.ToLower(n)] {
			added = append(added, n)
		}
	}
	if len(added) == 0 {
		return nil
	}
	return fmt.Errorf("%w: column %s cannot be added: the change data feed, which is on (%s), adds a column "+
		"of that name to the rows it reads; choose another name, or turn the feed off",
		ErrReservedColumn, strings.Join(added, ", "), KeyEnableChangeDataFeed)
}

// cdcColumns returns the top-level columns of sch named as a column of
// the change data feed, ignoring case.
func cdcColumns(sch *schema.StructType) []string {
	var out []string
	if sch == nil {
		return nil
	}
	for i := range sch.Fields {
		for _, r := range CDCColumnNames {
			if strings.EqualFold(sch.Fields[i].Name, r) {
				out = append(out, sch.Fields[i].Name)
			}
		}
	}
	return out
}
