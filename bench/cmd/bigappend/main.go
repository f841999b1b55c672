// Command bigappend measures the memory of appending one large partition
// to a table on S3: it appends rows of (id BIGINT, part STRING, payload
// STRING of 200 random characters) with one partition value, so that all
// of them go to ONE data file of about -size bytes (TargetFileSize is set
// above it), and prints the elapsed time, the bytes of Parquet written and
// the peak RSS of this process (getrusage maxrss; the S3 server, a child
// process, is not counted).
//
// The rows come from a generator, batch by batch, and are never held all
// at once, so the peak RSS is what the write path holds: with streaming
// writes, about one row group of the data file and two upload parts;
// without, the whole file.
//
//	go run ./bench/cmd/bigappend -size 2GiB            # starts versitygw (testutil/testserver)
//	go run ./bench/cmd/bigappend -endpoint http://127.0.0.1:7070 -bucket b   # credentials from AWS_*
package main

import (
	"context"
	"flag"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/logstore/s3"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/testutil/testserver"
)

var memProfile string

const (
	payloadLen = 200
	batchRows  = 8192
	// rowBytes is about what one row takes in the Parquet file: the id,
	// and the payload with its 4-byte length (random characters do not
	// compress).
	rowBytes = 8 + 4 + payloadLen
)

func main() {
	sizeFlag := flag.String("size", "2GiB", "approximate size of the data file (suffixes KiB, MiB, GiB)")
	endpoint := flag.String("endpoint", "", "S3 endpoint; empty starts versitygw")
	bucket := flag.String("bucket", testserver.S3Bucket, "bucket, with -endpoint")
	flag.StringVar(&memProfile, "memprofile", "", "write a heap profile to this file when half the rows are generated")
	flag.Parse()
	size, err := parseSize(*sizeFlag)
	if err == nil {
		err = run(size, *endpoint, *bucket)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bigappend:", err)
		os.Exit(1)
	}
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if t, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = t, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad -size %q", s)
	}
	return n * mult, nil
}

func run(size int64, endpoint, bucket string) error {
	ctx := context.Background()
	if endpoint == "" {
		srv, cfg, err := testserver.StartS3()
		if err != nil {
			return fmt.Errorf("starting versitygw: %w", err)
		}
		defer srv.Stop()
		endpoint, bucket = cfg.Endpoint, cfg.Bucket
		os.Setenv("AWS_ACCESS_KEY_ID", cfg.AccessKey)
		os.Setenv("AWS_SECRET_ACCESS_KEY", cfg.SecretKey)
		os.Setenv("AWS_REGION", cfg.Region)
	}
	uri := fmt.Sprintf("s3://%s/bigappend-%d?endpoint=%s&path_style=true", bucket, time.Now().UnixNano(), endpoint)
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "part", Type: schema.String, Nullable: true},
		{Name: "payload", Type: schema.String, Nullable: true},
	}}
	t, err := delta.Create(ctx, uri, delta.TableSpec{Schema: sch, PartitionColumns: []string{"part"}})
	if err != nil {
		return err
	}
	rows := size / rowBytes
	start := time.Now()
	v, err := t.Append(ctx, generate(rows), delta.WriteOptions{TargetFileSize: 4 * size})
	if err != nil {
		return err
	}
	elapsed := time.Since(start)

	store, err := s3.Open(ctx, uri)
	if err != nil {
		return err
	}
	var files int
	var written int64
	for info, err := range store.List(ctx, "part=p0/", "") {
		if err != nil {
			return err
		}
		files++
		written += info.Size
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	fmt.Printf("version %d: %d rows, %d file(s), %d bytes (%.2f GiB) of Parquet in %.1fs (%.0f MiB/s); peak RSS %d MiB\n",
		v.Version, rows, files, written, float64(written)/(1<<30), elapsed.Seconds(),
		float64(written)/(1<<20)/elapsed.Seconds(), ru.Maxrss>>10)
	return nil
}

// generate yields rows batches of batchRows rows (the last one shorter),
// each made afresh, so at most one batch is alive at a time besides what
// the writer holds.
func generate(rows int64) iter.Seq2[delta.RowBatch, error] {
	return func(yield func(delta.RowBatch, error) bool) {
		r := rand.New(rand.NewPCG(1, 2))
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		part := schema.StringValue("p0")
		buf := make([]byte, payloadLen)
		for done := int64(0); done < rows; {
			n := int(min(batchRows, rows-done))
			ids := make([]schema.Value, n)
			parts := make([]schema.Value, n)
			payloads := make([]schema.Value, n)
			for i := range n {
				for j := 0; j < len(buf); j += 10 {
					u := r.Uint64() // 10 characters of 6 random bits
					for k := j; k < min(j+10, len(buf)); k++ {
						buf[k] = alphabet[u&63]
						u >>= 6
					}
				}
				ids[i] = schema.LongValue(done + int64(i))
				parts[i] = part
				payloads[i] = schema.StringValue(string(buf))
			}
			if !yield(delta.RowBatch{Len: n, Columns: [][]schema.Value{ids, parts, payloads}}, nil) {
				return
			}
			if memProfile != "" && done < rows/2 && done+int64(n) >= rows/2 {
				writeHeapProfile(memProfile)
			}
			done += int64(n)
		}
	}
}

// writeHeapProfile writes the live heap, after a GC, to path.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err == nil {
		runtime.GC()
		err = pprof.WriteHeapProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bigappend: heap profile:", err)
	}
}
