package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/schema"
)

func newDescribeCmd() *cobra.Command {
	var sel selector
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe TABLE",
		Short: "Show a table's version, protocol, metadata, size and schema",
		Args:  tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			snap, err := sel.snapshot(cmd, args[0])
			defer sel.close()
			if err != nil {
				return err
			}
			w, flush := output(cmd)
			if asJSON {
				doc, err := describeDocument(cmd.Context(), snap)
				if err != nil {
					return failure(err)
				}
				if err := writeJSON(w, doc); err != nil {
					return failure(err)
				}
			} else if err := describeText(cmd.Context(), w, snap); err != nil {
				return failure(err)
			}
			return flush()
		},
	}
	sel.register(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, of a stable shape")
	return cmd
}

// describeJSON is the document of describe --json; its field names and
// types are part of the CLI's stable output.
type describeJSON struct {
	Version     int64            `json:"version"`
	Timestamp   string           `json:"timestamp"`
	Protocol    actions.Protocol `json:"protocol"`
	Metadata    metadataJSON     `json:"metadata"`
	NumFiles    int64            `json:"numFiles"`
	SizeInBytes int64            `json:"sizeInBytes"`
}

type metadataJSON struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Description      string            `json:"description"`
	Format           actions.Format    `json:"format"`
	Schema           json.RawMessage   `json:"schema"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`
}

func describeDocument(ctx context.Context, snap *delta.Snapshot) (*describeJSON, error) {
	m := snap.Metadata()
	sch, err := schemaJSON(snap)
	if err != nil {
		return nil, err
	}
	numFiles, size, err := tableSize(ctx, snap)
	if err != nil {
		return nil, err
	}
	format := m.Format
	format.Options = nonNilMap(format.Options)
	return &describeJSON{
		Version:   snap.Version(),
		Timestamp: formatTime(snap.Timestamp()),
		Protocol:  snap.Protocol(),
		Metadata: metadataJSON{
			ID:               m.ID,
			Name:             m.Name,
			Description:      m.Description,
			Format:           format,
			Schema:           sch,
			PartitionColumns: nonNilSlice(m.PartitionColumns),
			Configuration:    nonNilMap(m.Configuration),
			CreatedTime:      m.CreatedTime,
		},
		NumFiles:    numFiles,
		SizeInBytes: size,
	}, nil
}

// schemaJSON returns the table schema as a JSON object: as package schema
// encodes it, or else the schema string of the log when that is an object.
// The encoding is checked, so that a fault there cannot make the document
// invalid.
func schemaJSON(snap *delta.Snapshot) (json.RawMessage, error) {
	if st := snap.Schema(); st != nil {
		if b, err := st.MarshalJSON(); err == nil && isJSONObject(b) {
			return b, nil
		}
	}
	raw := snap.Metadata().SchemaString
	if isJSONObject([]byte(raw)) {
		return json.RawMessage(raw), nil
	}
	return nil, fmt.Errorf("metaData.schemaString of version %d is not a JSON object", snap.Version())
}

// tableSize returns the number and size of snap's live files: from the
// version checksum Load took the snapshot's protocol and metadata from,
// when it did (as Spark's DESCRIBE DETAIL does), so that describing a
// large table reads no part of its checkpoint; else from the replay.
// Load used the checksum only if it is sound and agrees with the commits
// after the checkpoint; checksum.Compare against crcwriter.Compute tells
// whether its totals match the replay.
func tableSize(ctx context.Context, snap *delta.Snapshot) (files, bytes int64, err error) {
	if c := snap.Checksum(); c != nil {
		return c.NumFiles, c.TableSizeBytes, nil
	}
	if files, err = snap.NumFiles(ctx); err != nil {
		return 0, 0, err
	}
	bytes, err = snap.SizeInBytes(ctx)
	return files, bytes, err
}

func describeText(ctx context.Context, w io.Writer, snap *delta.Snapshot) error {
	numFiles, size, err := tableSize(ctx, snap)
	if err != nil {
		return err
	}
	m, p := snap.Metadata(), snap.Protocol()
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(label, value string) { fmt.Fprintf(tw, "%s:\t%s\n", label, value) }
	row("Version", strconv.FormatInt(snap.Version(), 10))
	row("Timestamp", formatTime(snap.Timestamp()))
	row("ID", m.ID)
	row("Name", orDash(m.Name))
	row("Description", orDash(m.Description))
	row("Format", orDash(m.Format.Provider))
	if m.CreatedTime != nil {
		row("Created", formatTime(time.UnixMilli(*m.CreatedTime)))
	}
	row("Protocol", fmt.Sprintf("minReaderVersion=%d minWriterVersion=%d", p.MinReaderVersion, p.MinWriterVersion))
	if len(p.ReaderFeatures) > 0 {
		row("Reader features", strings.Join(p.ReaderFeatures, ", "))
	}
	if len(p.WriterFeatures) > 0 {
		row("Writer features", strings.Join(p.WriterFeatures, ", "))
	}
	row("Partition columns", orDash(strings.Join(m.PartitionColumns, ", ")))
	row("Number of files", strconv.FormatInt(numFiles, 10))
	row("Size in bytes", strconv.FormatInt(size, 10))
	if len(m.Configuration) == 0 {
		row("Properties", "-")
	}
	tw.Flush()

	if len(m.Configuration) > 0 {
		fmt.Fprintln(w, "Properties:")
		keys := make([]string, 0, len(m.Configuration))
		for k := range m.Configuration {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(tw, "  %s\t= %s\n", k, m.Configuration[k])
		}
		tw.Flush()
	}

	fmt.Fprintln(w, "Schema:")
	fmt.Fprintln(w, "root")
	if st := snap.Schema(); st != nil {
		writeStructTree(w, st, " ")
	}
	return nil
}

// writeStructTree prints the fields of st as an indented tree, one line a
// field, the way Spark's printSchema does:
//
//	root
//	 |-- id: long (nullable = true)
//	 |-- tags: array (nullable = true)
//	 |    |-- element: string (containsNull = true)
func writeStructTree(w io.Writer, st *schema.StructType, prefix string) {
	for i := range st.Fields {
		f := &st.Fields[i]
		fmt.Fprintf(w, "%s|-- %s: %s (nullable = %t)\n", prefix, f.Name, typeName(f.Type), f.Nullable)
		writeNested(w, f.Type, prefix+"|    ")
	}
}

// writeNested prints the children of a struct, array or map type.
func writeNested(w io.Writer, t schema.DataType, prefix string) {
	switch t := t.(type) {
	case *schema.StructType:
		writeStructTree(w, t, prefix)
	case *schema.ArrayType:
		fmt.Fprintf(w, "%s|-- element: %s (containsNull = %t)\n", prefix, typeName(t.ElementType), t.ContainsNull)
		writeNested(w, t.ElementType, prefix+"|    ")
	case *schema.MapType:
		fmt.Fprintf(w, "%s|-- key: %s\n", prefix, typeName(t.KeyType))
		writeNested(w, t.KeyType, prefix+"|    ")
		fmt.Fprintf(w, "%s|-- value: %s (valueContainsNull = %t)\n", prefix, typeName(t.ValueType), t.ValueContainsNull)
		writeNested(w, t.ValueType, prefix+"|    ")
	}
}

// typeName is a type's name in the tree: the schema-string name of a
// primitive, decimal or geospatial type, else struct, array or map.
func typeName(t schema.DataType) string {
	switch t.(type) {
	case nil:
		return "<missing>"
	case *schema.StructType:
		return "struct"
	case *schema.ArrayType:
		return "array"
	case *schema.MapType:
		return "map"
	}
	return t.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
