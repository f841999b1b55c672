package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"time"
)

// GCSBucket is the bucket StartGCS creates.
const GCSBucket = "godelta-test"

// StartGCS starts fake-gcs-server on a free port of 127.0.0.1, keeping its
// objects in memory, and creates GCSBucket on it. Clients reach it at
// URL(): the JSON API under /storage/v1/, media downloads at
// /BUCKET/OBJECT. The emulator checks no credentials.
//
// The binary is GODELTA_FAKE_GCS, else fake-gcs-server in the Go bin
// directory or on PATH; without it the error is ErrNotInstalled.
func StartGCS() (*Server, error) {
	bin, err := findBinary("GODELTA_FAKE_GCS", filepath.Join(goBin(), "fake-gcs-server"))
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// -public-host must name the address clients use: the emulator routes
	// media requests by Host header, and any other host reads as a
	// missing object.
	args := []string{
		"-scheme", "http",
		"-host", "127.0.0.1",
		"-port", strconv.Itoa(port),
		"-public-host", addr,
		"-external-url", "http://" + addr,
		"-backend", "memory",
		"-log-level", "warn",
	}
	s, err := start(bin, args, nil, "", port, "/_internal/healthcheck")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := CreateGCSBucket(ctx, s, GCSBucket); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// CreateGCSBucket creates a bucket on a server started by StartGCS, through
// the JSON API (buckets.insert). A bucket that exists already is no error.
func CreateGCSBucket(ctx context.Context, s *Server, name string) error {
	body, err := json.Marshal(map[string]string{"name": name})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/storage/v1/b?project=test", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("testserver: creating bucket %s: %w", name, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusConflict {
		return fmt.Errorf("testserver: creating bucket %s: %s: %s", name, resp.Status, msg)
	}
	return nil
}
