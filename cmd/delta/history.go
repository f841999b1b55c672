package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	delta "github.com/godelta/delta"
)

func newHistoryCmd(stdout io.Writer) *cobra.Command {
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history TABLE",
		Short: "List a table's commits, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return usageError{fmt.Errorf("--limit %d: must be 0 (all) or more", limit)}
			}
			tbl, err := delta.Open(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			commits, err := tbl.History(cmd.Context(), limit)
			if err != nil {
				return err
			}
			if asJSON {
				docs := make([]historyJSON, len(commits))
				for i, c := range commits {
					docs[i] = historyDoc(c)
				}
				return writeJSON(stdout, docs)
			}
			return historyText(stdout, commits)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most N commits (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

type historyJSON struct {
	Version             int64          `json:"version"`
	Timestamp           string         `json:"timestamp"`
	Operation           string         `json:"operation"`
	OperationParameters map[string]any `json:"operationParameters"`
	ReadVersion         *int64         `json:"readVersion,omitempty"`
	IsolationLevel      string         `json:"isolationLevel,omitempty"`
	IsBlindAppend       *bool          `json:"isBlindAppend,omitempty"`
	EngineInfo          string         `json:"engineInfo,omitempty"`
	UserMetadata        string         `json:"userMetadata,omitempty"`
	OperationMetrics    map[string]any `json:"operationMetrics,omitempty"`
	TxnID               string         `json:"txnId,omitempty"`
}

func historyDoc(c delta.Commit) historyJSON {
	i := c.Info
	doc := historyJSON{
		Version: c.Version, Timestamp: formatTime(c.Timestamp), Operation: i.Operation,
		OperationParameters: i.OperationParameters, ReadVersion: i.ReadVersion,
		IsolationLevel: i.IsolationLevel, IsBlindAppend: i.IsBlindAppend, EngineInfo: i.EngineInfo,
		UserMetadata: i.UserMetadata, OperationMetrics: i.OperationMetrics, TxnID: i.TxnID,
	}
	if doc.OperationParameters == nil {
		doc.OperationParameters = map[string]any{}
	}
	return doc
}

func historyText(w io.Writer, commits []delta.Commit) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tTIMESTAMP\tOPERATION\tPARAMETERS")
	for _, c := range commits {
		params := ""
		if len(c.Info.OperationParameters) > 0 {
			b, _ := json.Marshal(c.Info.OperationParameters)
			params = string(b)
		}
		op := c.Info.Operation
		if !c.HasInfo {
			op = "(no commitInfo)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", c.Version, formatTime(c.Timestamp), op, params)
	}
	return tw.Flush()
}
