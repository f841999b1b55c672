// Package ucwire holds what Unity Catalog's two HTTP APIs this library
// speaks (the commits API of package catalogmanaged/uc and the
// Delta-Tables API of package catalogmanaged/ucrest) share: how an
// answer's status maps onto the kinds the commit pipeline acts on, and
// the bounded reading of answers and requests. The error bodies of the two
// APIs differ; each package keeps its own.
package ucwire

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// StatusIs reports whether an error answer of HTTP status matches target:
// 404 is deltaerr.ErrTableNotFound, 409 catalogmanaged.ErrConflict (the
// transaction rebases and retries), and any other 4xx but 408 and 429 a
// refusal, logstore.ErrNotWritten: the server did nothing. A 5xx, a 408
// or a 429 (which a proxy may answer after the server acted) matches
// none: the outcome is unknown.
func StatusIs(status int, target error) bool {
	switch target {
	case deltaerr.ErrTableNotFound:
		return status == http.StatusNotFound
	case catalogmanaged.ErrConflict:
		return status == http.StatusConflict
	case logstore.ErrNotWritten:
		return status >= 400 && status < 500 && status != http.StatusConflict &&
			status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
	}
	return false
}

// ReadAnswer reads the body of an answer, at most max bytes: a longer one
// is deltaerr.ErrCorrupt (a server's answer must not exhaust memory).
func ReadAnswer(body io.Reader, max int, what string) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(body, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %w", what, err)
	}
	if len(raw) > max {
		return nil, &deltaerr.CorruptError{Path: what, Reason: fmt.Sprintf("an answer over %d bytes", max)}
	}
	return raw, nil
}

// DecodeRequest reads a JSON request body of at most max bytes into v.
// When it fails it returns the status to answer and why.
func DecodeRequest(r *http.Request, max int, v any) (int, string, bool) {
	data, err := io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	switch {
	case err != nil:
		return http.StatusBadRequest, "reading the request: " + err.Error(), false
	case len(data) > max:
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("a request body over %d bytes", max), false
	}
	if err := json.Unmarshal(data, v); err != nil {
		return http.StatusBadRequest, "the request is not the API's JSON: " + err.Error(), false
	}
	return 0, "", true
}
