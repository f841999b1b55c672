package testserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
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

// S3Client returns an SDK client for the server cfg describes.
func S3Client(cfg S3Config) *s3.Client {
	return s3.New(s3.Options{
		Region:       cfg.Region,
		BaseEndpoint: aws.String(cfg.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, ""),
	})
}

// CreateS3Bucket creates bucket on the server cfg describes, through the S3
// API (the posix backend makes it a directory). A bucket that exists
// already and is ours is no error.
func CreateS3Bucket(ctx context.Context, cfg S3Config, bucket string) error {
	_, err := S3Client(cfg).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "BucketAlreadyOwnedByYou" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("testserver: creating bucket %s: %w", bucket, err)
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
