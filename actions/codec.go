package actions

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/godelta/delta/deltaerr"
)

// DecodeCommit decodes the newline-delimited JSON of a commit file (or of a
// JSON checkpoint, or a compacted log file) into its actions, in file order.
// Blank lines and unknown action kinds are skipped. name is used in errors.
//
// A line that is not a JSON object, whose known action has fields of the
// wrong type, or that breaks a rule of the protocol for one action or one
// commit (see Check and CheckCommit: an add with no path, a negative size, a
// second metaData) makes the whole file corrupt: the error is a
// *deltaerr.CorruptError naming the file and line.
func DecodeCommit(name string, data []byte) ([]Action, error) {
	out := make([]Action, 0, bytes.Count(data, []byte{'\n'})+1)
	err := EachAction(name, data, func(a *Action) error {
		out = append(out, *a)
		return nil
	})
	return out, err
}

// EachAction decodes data like DecodeCommit but hands each action to fn
// instead of collecting them; fn must not keep a. An error from fn stops the
// walk and is returned as is.
func EachAction(name string, data []byte, fn func(a *Action) error) error {
	lineNo := 0
	var rules commitRules
	for len(data) > 0 {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if err := decodeLine(name, lineNo, line, &rules, fn); err != nil {
			return err
		}
	}
	return nil
}

// decodeLine decodes line lineNo of file name, if it is not blank, checks
// it against the protocol's rules for one action and, with rules, for one
// commit (see Check), and hands its action to fn unless it is of an
// unknown kind.
func decodeLine(name string, lineNo int, line []byte, rules *commitRules, fn func(a *Action) error) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var a Action
	if err := json.Unmarshal(line, &a); err != nil {
		return &deltaerr.CorruptError{Path: name, Reason: fmt.Sprintf("line %d is not a valid action", lineNo), Err: err}
	}
	if a.IsEmpty() {
		return nil
	}
	if err := a.Check(); err != nil {
		return &deltaerr.CorruptError{Path: name, Reason: fmt.Sprintf("line %d", lineNo), Err: err}
	}
	if err := rules.see(&a); err != nil {
		return &deltaerr.CorruptError{Path: name, Reason: fmt.Sprintf("line %d", lineNo), Err: err}
	}
	return fn(&a)
}

// EncodeCommit encodes actions as the newline-delimited JSON of a commit
// file, one action per line, each line ending in a newline.
func EncodeCommit(acts []Action) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range acts {
		if acts[i].IsEmpty() {
			return nil, fmt.Errorf("actions: action %d has no kind set: %w", i, deltaerr.ErrInvalidArgument)
		}
		if err := enc.Encode(&acts[i]); err != nil { // Encode appends '\n'
			return nil, fmt.Errorf("actions: encoding action %d: %w", i, err)
		}
	}
	return buf.Bytes(), nil
}
