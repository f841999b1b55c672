package testserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"time"
)

// Azurite's well-known development account. The key is public (it is in
// Azurite's documentation); it is no secret.
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	// AzureContainer is the container StartAzurite creates.
	AzureContainer = "godelta-test"
)

// AzureConfig says how to reach a server started by StartAzurite.
type AzureConfig struct {
	// ServiceURL is the blob service endpoint of the account, path-style
	// as the emulator wants it: http://127.0.0.1:PORT/devstoreaccount1.
	ServiceURL string
	// AccountName and AccountKey are Azurite's well-known account.
	AccountName, AccountKey string
	// Container exists when StartAzurite returns.
	Container string
	// ConnectionString holds the same endpoint, account and key.
	ConnectionString string
}

// StartAzurite starts Azurite's blob service on a free port of 127.0.0.1,
// keeping blobs in memory, and creates AzureContainer on it. It runs with
// --skipApiVersionCheck: logstore/azblob sends x-ms-version 2026-12-06
// (the version the Go SDK sent), newer than Azurite 3.37 knows, which it
// would otherwise refuse with 400.
//
// The binary is GODELTA_AZURITE, else .tools/azurite/node_modules/.bin/
// azurite-blob under the module root (scripts/test-servers.sh installs it
// there), else azurite-blob on PATH; without it the error is
// ErrNotInstalled.
func StartAzurite() (*Server, AzureConfig, error) {
	bin, err := findBinary("GODELTA_AZURITE", filepath.Join(repoRoot(), ".tools", "azurite", "node_modules", ".bin", "azurite-blob"))
	if err != nil {
		return nil, AzureConfig{}, err
	}
	port, err := freePort()
	if err != nil {
		return nil, AzureConfig{}, err
	}
	args := []string{
		"--blobHost", "127.0.0.1",
		"--blobPort", strconv.Itoa(port),
		"--inMemoryPersistence",
		"--disableTelemetry",
		"--skipApiVersionCheck",
		"--silent",
	}
	// Without credentials the account answers 403, which start counts as
	// up: any status below 500 means the service is listening.
	s, err := start(bin, args, nil, "", port, "/"+AzuriteAccount+"?comp=list")
	if err != nil {
		return nil, AzureConfig{}, err
	}
	cfg := AzureConfig{
		ServiceURL:  s.URL() + "/" + AzuriteAccount,
		AccountName: AzuriteAccount,
		AccountKey:  AzuriteKey,
		Container:   AzureContainer,
	}
	cfg.ConnectionString = "DefaultEndpointsProtocol=http;AccountName=" + cfg.AccountName +
		";AccountKey=" + cfg.AccountKey + ";BlobEndpoint=" + cfg.ServiceURL + ";"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := CreateAzureContainer(ctx, cfg, cfg.Container); err != nil {
		s.Stop()
		return nil, AzureConfig{}, err
	}
	return s, cfg, nil
}

// CreateAzureContainer creates container name on the server cfg describes
// (Create Container, signed with the account key). A container that exists
// already is no error.
func CreateAzureContainer(ctx context.Context, cfg AzureConfig, name string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, cfg.ServiceURL+"/"+name+"?restype=container", http.NoBody)
	if err != nil {
		return err
	}
	const version = "2021-12-02"
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", version)
	// Shared Key string-to-sign: the verb, eleven standard headers (all
	// empty here; Content-Length is empty for 0), the x-ms- headers in
	// order, then the resource: /account + the URL path, and the query.
	toSign := "PUT\n\n\n\n\n\n\n\n\n\n\n\n" +
		"x-ms-date:" + date + "\nx-ms-version:" + version + "\n" +
		"/" + cfg.AccountName + req.URL.Path + "\nrestype:container"
	key, err := base64.StdEncoding.DecodeString(cfg.AccountKey)
	if err != nil {
		return fmt.Errorf("testserver: account key: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(toSign))
	req.Header.Set("Authorization", "SharedKey "+cfg.AccountName+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("testserver: creating container %s: %w", name, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusConflict {
		return fmt.Errorf("testserver: creating container %s: %s: %s", name, resp.Status, msg)
	}
	return nil
}
