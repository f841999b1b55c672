package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/godelta/delta"
)

func newHistoryCmd() *cobra.Command {
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history TABLE",
		Short: "List a table's commits, newest first",
		Args:  tableArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return usageErrorf(cmd, "invalid --limit %d: must be 0 (all) or more", limit)
			}
			ctx := cmd.Context()
			t, err := openTable(cmd, args[0])
			if err != nil {
				return failure(err)
			}
			defer t.Close()
			commits, err := t.History(ctx, limit)
			if err != nil {
				return failure(err)
			}
			w, flush := output(cmd)
			if asJSON {
				docs := make([]commitJSON, len(commits))
				for i := range commits {
					docs[i] = commitDocument(&commits[i])
				}
				if err := writeJSON(w, docs); err != nil {
					return failure(err)
				}
			} else {
				historyText(w, commits)
			}
			return flush()
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most `N` commits, the newest (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, of a stable shape")
	return cmd
}

// commitJSON is one element of history --json; its field names and types
// are part of the CLI's stable output.
type commitJSON struct {
	Version             int64           `json:"version"`
	Timestamp           string          `json:"timestamp"`
	Operation           string          `json:"operation"`
	OperationParameters json.RawMessage `json:"operationParameters"`
	ReadVersion         *int64          `json:"readVersion,omitempty"`
	IsolationLevel      string          `json:"isolationLevel,omitempty"`
	IsBlindAppend       *bool           `json:"isBlindAppend,omitempty"`
	EngineInfo          string          `json:"engineInfo,omitempty"`
	UserMetadata        string          `json:"userMetadata,omitempty"`
	OperationMetrics    json.RawMessage `json:"operationMetrics,omitempty"`
	TxnID               string          `json:"txnId,omitempty"`
}

func commitDocument(c *delta.Commit) commitJSON {
	ci := &c.Info
	params, metrics := rawCommitMaps(c)
	if params == nil {
		params = json.RawMessage("{}")
	}
	return commitJSON{
		Version:             c.Version,
		Timestamp:           formatTime(c.Timestamp),
		Operation:           ci.Operation,
		OperationParameters: params,
		ReadVersion:         ci.ReadVersion,
		IsolationLevel:      ci.IsolationLevel,
		IsBlindAppend:       ci.IsBlindAppend,
		EngineInfo:          ci.EngineInfo,
		UserMetadata:        ci.UserMetadata,
		OperationMetrics:    metrics,
		TxnID:               ci.TxnID,
	}
}

// rawCommitMaps returns the operationParameters and operationMetrics
// objects of a commit as they were written, so that numbers keep their
// exact text; nil for one that is absent or not an object.
func rawCommitMaps(c *delta.Commit) (params, metrics json.RawMessage) {
	if !c.HasInfo {
		return nil, nil
	}
	var raw struct {
		OperationParameters json.RawMessage `json:"operationParameters"`
		OperationMetrics    json.RawMessage `json:"operationMetrics"`
	}
	if len(c.Info.Raw) > 0 && json.Unmarshal(c.Info.Raw, &raw) == nil {
		if isJSONObject(raw.OperationParameters) {
			params = raw.OperationParameters
		}
		if isJSONObject(raw.OperationMetrics) {
			metrics = raw.OperationMetrics
		}
		return params, metrics
	}
	// A commitInfo built in code has no Raw: encode the decoded maps.
	if c.Info.OperationParameters != nil {
		params, _ = json.Marshal(c.Info.OperationParameters)
	}
	if c.Info.OperationMetrics != nil {
		metrics, _ = json.Marshal(c.Info.OperationMetrics)
	}
	return params, metrics
}

func historyText(w io.Writer, commits []delta.Commit) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tTIMESTAMP\tOPERATION\tPARAMETERS")
	for i := range commits {
		c := &commits[i]
		params, _ := rawCommitMaps(c)
		paramText := "-"
		var b bytes.Buffer
		if params != nil && json.Compact(&b, params) == nil && b.String() != "{}" {
			paramText = b.String()
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", c.Version, formatTime(c.Timestamp), orDash(c.Info.Operation), paramText)
	}
	tw.Flush()
}
