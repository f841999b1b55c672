// Command s3server runs the S3 test server (versitygw, installed by
// scripts/test-servers.sh install) on 127.0.0.1 for the streaming examples,
// and prints the table URI and the credentials to export; Ctrl-C stops it
// and removes its data.
//
//	bash scripts/test-servers.sh install
//	go run ./examples/s3server
//	# in other terminals, after the printed export lines:
//	go run ./examples/producer -table 's3://godelta-test/queue?endpoint=...'
//	go run ./examples/consumer -table 's3://godelta-test/queue?endpoint=...' -cursor /tmp/s3.offset
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/godelta/delta/testutil/testserver"
)

func main() {
	srv, cfg, err := testserver.StartS3()
	if err != nil {
		fmt.Fprintln(os.Stderr, "s3server:", err)
		os.Exit(1)
	}
	defer srv.Stop()
	fmt.Printf("export AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s AWS_REGION=%s AWS_EC2_METADATA_DISABLED=true\n",
		cfg.AccessKey, cfg.SecretKey, cfg.Region)
	fmt.Printf("table: 's3://%s/queue?endpoint=%s&region=%s&path_style=true'\n", cfg.Bucket, cfg.Endpoint, cfg.Region)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
}
