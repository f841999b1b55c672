package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
	"github.com/godelta/delta/actions"
)

func newFilesCmd() *cobra.Command {
	var sel selector
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "files TABLE",
		Short: "List a table's live data files",
		Args:  tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			snap, err := sel.snapshot(cmd, args[0])
			defer sel.close()
			if err != nil {
				return err
			}
			w, flush := output(cmd)
			if asJSON {
				err = filesJSON(cmd.Context(), w, snap)
			} else {
				err = filesText(cmd.Context(), w, snap)
			}
			if err != nil {
				return failure(err)
			}
			return flush()
		},
	}
	sel.register(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, of a stable shape")
	return cmd
}

// fileJSON is one element of files --json; its field names and types are
// part of the CLI's stable output.
type fileJSON struct {
	Path             string                  `json:"path"`
	Size             int64                   `json:"size"`
	ModificationTime int64                   `json:"modificationTime"`
	PartitionValues  map[string]*string      `json:"partitionValues"`
	DataChange       bool                    `json:"dataChange"`
	Stats            json.RawMessage         `json:"stats,omitempty"`
	DeletionVector   *actions.DeletionVector `json:"deletionVector"`
}

// filesJSON writes the files as one JSON array, encoding one element at a
// time so that memory does not grow with the number of files.
func filesJSON(ctx context.Context, w io.Writer, snap *delta.Snapshot) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("  ", "  ")
	n := 0
	for f, err := range snap.Files(ctx) {
		if err != nil {
			return err
		}
		buf.Reset()
		if err := enc.Encode(fileDocument(f)); err != nil {
			return fmt.Errorf("encoding file %s: %w", f.Path, err)
		}
		sep := ",\n  "
		if n == 0 {
			sep = "[\n  "
		}
		io.WriteString(w, sep)
		w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		n++
	}
	if n == 0 {
		io.WriteString(w, "[]\n")
	} else {
		io.WriteString(w, "\n]\n")
	}
	return nil
}

func fileDocument(f *actions.Add) fileJSON {
	doc := fileJSON{
		Path:             f.Path,
		Size:             f.Size,
		ModificationTime: f.ModificationTime,
		PartitionValues:  make(map[string]*string, len(f.PartitionValues)),
		DataChange:       f.DataChange,
		DeletionVector:   f.DeletionVector,
	}
	for k, v := range f.PartitionValues {
		if v == "" {
			// The protocol treats an empty partition value as null, and the
			// decoder gives "" for a JSON null.
			doc.PartitionValues[k] = nil
		} else {
			doc.PartitionValues[k] = &v
		}
	}
	if isJSONObject([]byte(f.Stats)) {
		doc.Stats = json.RawMessage(f.Stats)
	}
	return doc
}

// filesText writes the files as aligned columns. tabwriter would hold every
// line until the end to align them, so the widths are measured in a first
// pass over the files instead, and the lines written out in a second one.
func filesText(ctx context.Context, w io.Writer, snap *delta.Snapshot) error {
	partitioned := len(snap.Metadata().PartitionColumns) > 0
	pathW, sizeW, partW := len("PATH"), len("SIZE"), len("PARTITION VALUES")
	var keys []string
	for f, err := range snap.Files(ctx) {
		if err != nil {
			return err
		}
		pathW = max(pathW, utf8.RuneCountInString(f.Path))
		sizeW = max(sizeW, len(strconv.FormatInt(f.Size, 10)))
		if partitioned {
			partW = max(partW, utf8.RuneCountInString(partitionText(f.PartitionValues, &keys)))
		}
	}
	line := func(path, size, part, dv string) {
		if partitioned {
			fmt.Fprintf(w, "%-*s  %*s  %-*s  %s\n", pathW, path, sizeW, size, partW, part, dv)
		} else {
			fmt.Fprintf(w, "%-*s  %*s  %s\n", pathW, path, sizeW, size, dv)
		}
	}
	line("PATH", "SIZE", "PARTITION VALUES", "DELETION VECTOR")
	for f, err := range snap.Files(ctx) {
		if err != nil {
			return err
		}
		part := ""
		if partitioned {
			part = partitionText(f.PartitionValues, &keys)
		}
		line(f.Path, strconv.FormatInt(f.Size, 10), part, dvText(f.DeletionVector))
	}
	return nil
}

// partitionText renders partition values as "k1=v1, k2=v2" in key order,
// with "null" for a null value. keys is scratch space reused across calls.
func partitionText(values map[string]string, keys *[]string) string {
	if len(values) == 0 {
		return "-"
	}
	*keys = (*keys)[:0]
	for k := range values {
		*keys = append(*keys, k)
	}
	slices.Sort(*keys)
	var b strings.Builder
	for i, k := range *keys {
		if i > 0 {
			b.WriteString(", ")
		}
		v := values[k]
		if v == "" {
			v = "null"
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}

func dvText(dv *actions.DeletionVector) string {
	switch {
	case dv == nil:
		return "-"
	case dv.Cardinality == 1:
		return "1 row deleted"
	}
	return strconv.FormatInt(dv.Cardinality, 10) + " rows deleted"
}
