package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
)

func newFilesCmd(stdout io.Writer) *cobra.Command {
	var vf versionFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "files TABLE",
		Short: "List a table's live data files",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			snap, err := vf.snapshot(cmd.Context(), cmd, args[0])
			if err != nil {
				return err
			}
			bw := bufio.NewWriterSize(stdout, 1<<16)
			if asJSON {
				err = filesJSON(bw, snap)
			} else {
				err = filesText(bw, snap)
			}
			if err != nil {
				return err
			}
			return bw.Flush()
		},
	}
	vf.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

type fileJSON struct {
	Path             string                  `json:"path"`
	Size             int64                   `json:"size"`
	ModificationTime int64                   `json:"modificationTime"`
	PartitionValues  map[string]*string      `json:"partitionValues"`
	DataChange       bool                    `json:"dataChange"`
	Stats            json.RawMessage         `json:"stats,omitempty"`
	DeletionVector   *actions.DeletionVector `json:"deletionVector"`
}

// filesJSON streams the array one element at a time: tables can have
// millions of files.
func filesJSON(w io.Writer, snap *delta.Snapshot) error {
	if _, err := io.WriteString(w, "["); err != nil {
		return err
	}
	first := true
	for f := range snap.Files() {
		doc := fileJSON{
			Path: f.Path, Size: f.Size, ModificationTime: f.ModificationTime,
			PartitionValues: make(map[string]*string, len(f.PartitionValues)),
			DataChange:      f.DataChange, DeletionVector: f.DeletionVector,
		}
		for k, v := range f.PartitionValues {
			if v != "" {
				doc.PartitionValues[k] = &v
			} else {
				doc.PartitionValues[k] = nil
			}
		}
		if f.Stats != "" && json.Valid([]byte(f.Stats)) {
			doc.Stats = json.RawMessage(f.Stats)
		}
		b, err := json.MarshalIndent(doc, "  ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n  "
		if first {
			sep, first = "\n  ", false
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if !first {
		io.WriteString(w, "\n")
	}
	_, err := io.WriteString(w, "]\n")
	return err
}

func filesText(w io.Writer, snap *delta.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tSIZE\tPARTITION\tDELETION VECTOR")
	for f := range snap.Files() {
		keys := make([]string, 0, len(f.PartitionValues))
		for k := range f.PartitionValues {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			v := f.PartitionValues[k]
			if v == "" {
				v = "null"
			}
			parts[i] = k + "=" + v
		}
		dv := "-"
		if f.DeletionVector != nil {
			dv = fmt.Sprintf("%d rows deleted", f.DeletionVector.Cardinality)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", f.Path, f.Size, strings.Join(parts, ","), dv)
	}
	fmt.Fprintf(tw, "%d files, %d bytes\n", snap.NumFiles(), snap.SizeInBytes())
	return tw.Flush()
}
