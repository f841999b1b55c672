package testserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// S3Bucket is the bucket StartS3 creates.
const S3Bucket = "godelta-test"

// S3Config is how a client reaches a server started by StartS3: path-style
// requests to Endpoint, signed with AccessKey and SecretKey for Region.
// The keys are random for each server and are test-only secrets.
type S3Config struct {
	Endpoint  string // http://127.0.0.1:PORT
	Region    string
	AccessKey string
	SecretKey string
	Bucket    string // created before StartS3 returns
}

// StartS3 starts versitygw (an S3 gateway) on a free port of 127.0.0.1
// over its posix backend, with its data in a new temporary directory that
// Stop removes, and creates S3Bucket on it.
//
// The binary is GODELTA_VERSITYGW, else versitygw in the Go bin directory
// or on PATH; without it the error is ErrNotInstalled.
func StartS3() (*Server, S3Config, error) {
	dir, err := os.MkdirTemp("", "godelta-versitygw-")
	if err != nil {
		return nil, S3Config{}, err
	}
	s, cfg, err := startS3(dir, S3Config{})
	if err != nil {
		os.RemoveAll(dir)
		return nil, S3Config{}, err
	}
	s.dir = dir
	return s, cfg, nil
}

// StartS3In is StartS3 on the data directory dir, which the caller owns:
// Stop leaves it in place, so a later StartS3In on the same dir (a restart,
// on a new port) sees the same buckets and objects. Keys set in cfg are
// kept, so clients of the old server sign the same way; S3Bucket is created
// if missing. A test stops a server mid-operation with Stop and looks at
// what landed through a restarted one.
func StartS3In(dir string, cfg S3Config) (*Server, S3Config, error) {
	return startS3(dir, cfg)
}

func startS3(dir string, cfg S3Config) (*Server, S3Config, error) {
	bin, err := findBinary("GODELTA_VERSITYGW", filepath.Join(goBin(), "versitygw"))
	if err != nil {
		return nil, S3Config{}, err
	}
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		cfg.AccessKey, cfg.SecretKey = "GODELTA"+randomHex(8), randomHex(20)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	cfg.Bucket = S3Bucket
	port, err := freePort()
	if err != nil {
		return nil, S3Config{}, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cfg.Endpoint = "http://" + addr
	// The keys go through the environment, not the command line, so they
	// do not show in process listings.
	env := []string{
		"ROOT_ACCESS_KEY_ID=" + cfg.AccessKey,
		"ROOT_SECRET_ACCESS_KEY=" + cfg.SecretKey,
		"VGW_REGION=" + cfg.Region,
	}
	args := []string{"--port", addr, "--quiet", "--health", "/health", "posix", dir}
	s, err := start(bin, args, env, "", port, "/health")
	if err != nil {
		return nil, S3Config{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := CreateS3Bucket(ctx, cfg, cfg.Bucket); err != nil {
		s.Stop()
		return nil, S3Config{}, err
	}
	return s, cfg, nil
}

// S3Do sends one request to the server cfg describes, path-style
// (path is "/BUCKET/KEY", already percent-encoded as it is to be sent),
// signed with SigV4 by the AWS SDK's signer: the tests' own plain requests,
// independent of the store under test. The caller closes the answer.
func S3Do(ctx context.Context, cfg S3Config, method, path string, query url.Values, header http.Header, body []byte) (*http.Response, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	u.RawPath = path
	if u.Path, err = url.PathUnescape(path); err != nil {
		return nil, err
	}
	u.RawQuery = strings.ReplaceAll(query.Encode(), "+", "%20")
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	for k, v := range header {
		req.Header[k] = v
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	creds := aws.Credentials{AccessKeyID: cfg.AccessKey, SecretAccessKey: cfg.SecretKey}
	if err := signer.SignHTTP(ctx, creds, req, hash, "s3", cfg.Region, time.Now()); err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req)
}

// CreateS3Bucket creates bucket on the server cfg describes, through the S3
// API (the posix backend makes it a directory). A bucket that exists
// already and is ours is no error.
func CreateS3Bucket(ctx context.Context, cfg S3Config, bucket string) error {
	resp, err := S3Do(ctx, cfg, http.MethodPut, "/"+bucket, nil, nil, nil)
	if err != nil {
		return fmt.Errorf("testserver: creating bucket %s: %w", bucket, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusOK || bytes.Contains(b, []byte("<Code>BucketAlreadyOwnedByYou</Code>")) {
		return nil
	}
	return fmt.Errorf("testserver: creating bucket %s: HTTP %d: %.200s", bucket, resp.StatusCode, b)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
