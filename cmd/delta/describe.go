package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/schema"
)

func newDescribeCmd(stdout io.Writer) *cobra.Command {
	var vf versionFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe TABLE",
		Short: "Show a table's version, protocol, metadata and size",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			snap, err := vf.snapshot(cmd.Context(), cmd, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(stdout, describeDoc(snap))
			}
			return describeText(stdout, snap)
		},
	}
	vf.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

type metadataDoc struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Description      string            `json:"description"`
	Format           actions.Format    `json:"format"`
	Schema           json.RawMessage   `json:"schema"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`
}

type describeJSON struct {
	Version     int64            `json:"version"`
	Timestamp   string           `json:"timestamp"`
	Protocol    actions.Protocol `json:"protocol"`
	Metadata    metadataDoc      `json:"metadata"`
	NumFiles    int64            `json:"numFiles"`
	SizeInBytes int64            `json:"sizeInBytes"`
}

func describeDoc(snap *delta.Snapshot) describeJSON {
	m := snap.Metadata()
	sch, err := json.Marshal(snap.Schema())
	if err != nil {
		sch = []byte(`{"type":"struct","fields":[]}`)
	}
	doc := describeJSON{
		Version:   snap.Version(),
		Timestamp: formatTime(snap.Timestamp()),
		Protocol:  snap.Protocol(),
		Metadata: metadataDoc{
			ID: m.ID, Name: m.Name, Description: m.Description, Format: m.Format,
			Schema: sch, PartitionColumns: m.PartitionColumns, Configuration: m.Configuration,
			CreatedTime: m.CreatedTime,
		},
		NumFiles:    snap.NumFiles(),
		SizeInBytes: snap.SizeInBytes(),
	}
	if doc.Metadata.PartitionColumns == nil {
		doc.Metadata.PartitionColumns = []string{}
	}
	if doc.Metadata.Configuration == nil {
		doc.Metadata.Configuration = map[string]string{}
	}
	if doc.Metadata.Format.Options == nil {
		doc.Metadata.Format.Options = map[string]string{}
	}
	return doc
}

func describeText(w io.Writer, snap *delta.Snapshot) error {
	m, p := snap.Metadata(), snap.Protocol()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("version", fmt.Sprint(snap.Version()))
	row("timestamp", formatTime(snap.Timestamp()))
	row("id", m.ID)
	if m.Name != "" {
		row("name", m.Name)
	}
	if m.Description != "" {
		row("description", m.Description)
	}
	proto := fmt.Sprintf("reader %d, writer %d", p.MinReaderVersion, p.MinWriterVersion)
	if len(p.ReaderFeatures) > 0 {
		proto += "; reader features: " + strings.Join(p.ReaderFeatures, ", ")
	}
	if len(p.WriterFeatures) > 0 {
		proto += "; writer features: " + strings.Join(p.WriterFeatures, ", ")
	}
	row("protocol", proto)
	row("partition columns", strings.Join(m.PartitionColumns, ", "))
	row("files", fmt.Sprint(snap.NumFiles()))
	row("size", fmt.Sprintf("%d bytes", snap.SizeInBytes()))
	keys := make([]string, 0, len(m.Configuration))
	for k := range m.Configuration {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		label := ""
		if i == 0 {
			label = "properties"
		}
		row(label, k+" = "+m.Configuration[k])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "schema:")
	printStruct(w, snap.Schema(), " |")
	return nil
}

func printStruct(w io.Writer, st *schema.StructType, indent string) {
	if st == nil {
		return
	}
	for _, f := range st.Fields {
		printField(w, f.Name, f.Type, f.Nullable, indent)
	}
}

func printField(w io.Writer, name string, t schema.DataType, nullable bool, indent string) {
	switch t := t.(type) {
	case *schema.StructType:
		fmt.Fprintf(w, "%s-- %s: struct (nullable = %v)\n", indent, name, nullable)
		printStruct(w, t, indent+"    |")
	case *schema.ArrayType:
		fmt.Fprintf(w, "%s-- %s: array (nullable = %v)\n", indent, name, nullable)
		printField(w, "element", t.ElementType, t.ContainsNull, indent+"    |")
	case *schema.MapType:
		fmt.Fprintf(w, "%s-- %s: map (nullable = %v)\n", indent, name, nullable)
		printField(w, "key", t.KeyType, false, indent+"    |")
		printField(w, "value", t.ValueType, t.ValueContainsNull, indent+"    |")
	default:
		fmt.Fprintf(w, "%s-- %s: %s (nullable = %v)\n", indent, name, t, nullable)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
