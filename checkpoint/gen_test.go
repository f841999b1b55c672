package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/testutil"
)

// This file holds what the tests share: a Store over a directory, a Store
// that records what is read, and a writer of checkpoints with the schema
// Spark writes (every field optional, maps as MAP of key_value, lists as
// three-level LIST).

// dirStore is a read-mostly logstore.Store over a directory, for tests.
type dirStore struct{ root string }

func (s dirStore) file(key string) (string, error) {
	if err := logstore.CheckKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

func notFound(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", key, logstore.ErrNotFound)
	}
	return err
}

func (s dirStore) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := s.file(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	return b, notFound(key, err)
}

func (s dirStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	p, err := s.file(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, notFound(key, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if off >= st.Size() {
		return nil, nil
	}
	b := make([]byte, min(n, st.Size()-off))
	_, err = f.ReadAt(b, off)
	return b, err
}

func (s dirStore) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	p, err := s.file(key)
	if err != nil {
		return logstore.ObjectInfo{}, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return logstore.ObjectInfo{}, notFound(key, err)
	}
	return logstore.ObjectInfo{Key: key, Size: st.Size(), ModTime: st.ModTime()}, nil
}

func (s dirStore) List(ctx context.Context, dir, startAfter string) iter.Seq2[logstore.ObjectInfo, error] {
	return func(yield func(logstore.ObjectInfo, error) bool) {
		ents, _ := os.ReadDir(filepath.Join(s.root, filepath.FromSlash(dir)))
		for _, e := range ents {
			if e.IsDir() || dir+e.Name() <= startAfter {
				continue
			}
			info, _ := e.Info()
			if !yield(logstore.ObjectInfo{Key: dir + e.Name(), Size: info.Size(), ModTime: info.ModTime()}, nil) {
				return
			}
		}
	}
}

func (s dirStore) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	return errors.ErrUnsupported
}

func (s dirStore) Put(ctx context.Context, key string, data []byte) error {
	p, err := s.file(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func (s dirStore) Delete(ctx context.Context, key string) error { return errors.ErrUnsupported }

func (s dirStore) NewWriter(ctx context.Context, key string) (logstore.Writer, error) {
	return nil, errors.ErrUnsupported
}

func (s dirStore) URI() string  { return "file://" + filepath.ToSlash(s.root) }
func (s dirStore) Close() error { return nil }

// memStore is a logstore.Store over a map, for tests and benchmarks.
type memStore struct {
	dirStore // for the methods tests do not use
	files    map[string][]byte
}

func newMemStore(files map[string][]byte) *memStore { return &memStore{files: files} }

func (s *memStore) Get(ctx context.Context, key string) ([]byte, error) {
	b, ok := s.files[key]
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, logstore.ErrNotFound)
	}
	return bytes.Clone(b), nil
}

func (s *memStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, ok := s.files[key]
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, logstore.ErrNotFound)
	}
	if off >= int64(len(b)) {
		return nil, nil
	}
	return bytes.Clone(b[off:min(int64(len(b)), off+n)]), nil
}

func (s *memStore) Stat(ctx context.Context, key string) (logstore.ObjectInfo, error) {
	b, ok := s.files[key]
	if !ok {
		return logstore.ObjectInfo{}, fmt.Errorf("%s: %w", key, logstore.ErrNotFound)
	}
	return logstore.ObjectInfo{Key: key, Size: int64(len(b))}, nil
}

// recordingStore wraps a Store and records the ranges read.
type recordingStore struct {
	logstore.Store
	mu     sync.Mutex
	ranges map[string][][2]int64 // key: [offset, end) of each GetRange
	gets   map[string]int
}

func newRecordingStore(s logstore.Store) *recordingStore {
	return &recordingStore{Store: s, ranges: map[string][][2]int64{}, gets: map[string]int{}}
}

func (s *recordingStore) Get(ctx context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	s.gets[key]++
	s.mu.Unlock()
	return s.Store.Get(ctx, key)
}

func (s *recordingStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	s.mu.Lock()
	s.ranges[key] = append(s.ranges[key], [2]int64{off, off + n})
	s.mu.Unlock()
	return s.Store.GetRange(ctx, key, off, n)
}

// touched reports whether any range read from key overlaps [start, end),
// leaving out the reads of the header magic and of the footer, which ends
// the file of size bytes.
func (s *recordingStore) touched(key string, size, start, end int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.ranges[key] {
		if r[1] <= 4 || r[1] >= size {
			continue
		}
		if r[0] < end && start < r[1] {
			return true
		}
	}
	return false
}

// Spark's checkpoint schema, as Go types for parquet-go's writer.

type sDV struct {
	StorageType    *string `parquet:"storageType,optional"`
	PathOrInlineDv *string `parquet:"pathOrInlineDv,optional"`
	Offset         *int32  `parquet:"offset,optional"`
	SizeInBytes    *int32  `parquet:"sizeInBytes,optional"`
	Cardinality    *int64  `parquet:"cardinality,optional"`
	MaxRowIndex    *int64  `parquet:"maxRowIndex,optional"`
}

type sAdd struct {
	Path                    *string            `parquet:"path,optional"`
	PartitionValues         map[string]*string `parquet:"partitionValues,optional"`
	Size                    *int64             `parquet:"size,optional"`
	ModificationTime        *int64             `parquet:"modificationTime,optional"`
	DataChange              *bool              `parquet:"dataChange,optional"`
	Tags                    map[string]*string `parquet:"tags,optional"`
	DeletionVector          *sDV               `parquet:"deletionVector,optional"`
	BaseRowID               *int64             `parquet:"baseRowId,optional"`
	DefaultRowCommitVersion *int64             `parquet:"defaultRowCommitVersion,optional"`
	ClusteringProvider      *string            `parquet:"clusteringProvider,optional"`
	Stats                   *string            `parquet:"stats,optional"`
}

type sRemove struct {
	Path                 *string            `parquet:"path,optional"`
	DeletionTimestamp    *int64             `parquet:"deletionTimestamp,optional"`
	DataChange           *bool              `parquet:"dataChange,optional"`
	ExtendedFileMetadata *bool              `parquet:"extendedFileMetadata,optional"`
	PartitionValues      map[string]*string `parquet:"partitionValues,optional"`
	Size                 *int64             `parquet:"size,optional"`
	DeletionVector       *sDV               `parquet:"deletionVector,optional"`
	BaseRowID            *int64             `parquet:"baseRowId,optional"`
	DefaultRowCommitVer  *int64             `parquet:"defaultRowCommitVersion,optional"`
}

type sFormat struct {
	Provider *string            `parquet:"provider,optional"`
	Options  map[string]*string `parquet:"options,optional"`
}

type sMeta struct {
	ID               *string            `parquet:"id,optional"`
	Name             *string            `parquet:"name,optional"`
	Description      *string            `parquet:"description,optional"`
	Format           *sFormat           `parquet:"format,optional"`
	SchemaString     *string            `parquet:"schemaString,optional"`
	PartitionColumns []string           `parquet:"partitionColumns,optional,list"`
	Configuration    map[string]*string `parquet:"configuration,optional"`
	CreatedTime      *int64             `parquet:"createdTime,optional"`
}

type sProto struct {
	MinReaderVersion *int32   `parquet:"minReaderVersion,optional"`
	MinWriterVersion *int32   `parquet:"minWriterVersion,optional"`
	ReaderFeatures   []string `parquet:"readerFeatures,optional,list"`
	WriterFeatures   []string `parquet:"writerFeatures,optional,list"`
}

type sTxn struct {
	AppID       *string `parquet:"appId,optional"`
	Version     *int64  `parquet:"version,optional"`
	LastUpdated *int64  `parquet:"lastUpdated,optional"`
}

type sDomain struct {
	Domain        *string `parquet:"domain,optional"`
	Configuration *string `parquet:"configuration,optional"`
	Removed       *bool   `parquet:"removed,optional"`
}

type sCheckpointMeta struct {
	Version *int64             `parquet:"version,optional"`
	Tags    map[string]*string `parquet:"tags,optional"`
}

type sSidecar struct {
	Path             *string            `parquet:"path,optional"`
	SizeInBytes      *int64             `parquet:"sizeInBytes,optional"`
	ModificationTime *int64             `parquet:"modificationTime,optional"`
	Tags             map[string]*string `parquet:"tags,optional"`
}

// sRow is one row of a Spark checkpoint: at most one field is set.
type sRow struct {
	Txn                *sTxn            `parquet:"txn,optional"`
	Add                *sAdd            `parquet:"add,optional"`
	Remove             *sRemove         `parquet:"remove,optional"`
	MetaData           *sMeta           `parquet:"metaData,optional"`
	Protocol           *sProto          `parquet:"protocol,optional"`
	DomainMetadata     *sDomain         `parquet:"domainMetadata,optional"`
	CheckpointMetadata *sCheckpointMeta `parquet:"checkpointMetadata,optional"`
	Sidecar            *sSidecar        `parquet:"sidecar,optional"`
}

func ptr[T any](v T) *T { return &v }

// writeRows writes rows as a Parquet file, with Spark's snappy compression
// and version 1 data pages unless opts say otherwise.
func writeRows[T any](t testing.TB, rows []T, opts ...parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts = append([]parquet.WriterOption{parquet.Compression(&parquet.Snappy), parquet.DataPageVersion(1)}, opts...)
	w := parquet.NewGenericWriter[T](&buf, opts...)
	for i := 0; i < len(rows); i += 4096 {
		if _, err := w.Write(rows[i:min(i+4096, len(rows))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// headRows returns the protocol and metaData rows of a synthetic table
// partitioned by "date".
func headRows() []sRow {
	return []sRow{
		{Protocol: &sProto{MinReaderVersion: ptr[int32](1), MinWriterVersion: ptr[int32](2)}},
		{MetaData: &sMeta{
			ID:               ptr("6e7e9d44-5b6a-4bd4-8d6f-0a0d7b5c3b27"),
			Format:           &sFormat{Provider: ptr("parquet"), Options: map[string]*string{}},
			SchemaString:     ptr(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"date","type":"string","nullable":true,"metadata":{}}]}`),
			PartitionColumns: []string{"date"},
			Configuration:    map[string]*string{"delta.checkpointInterval": ptr("10")},
			CreatedTime:      ptr[int64](1700000000000),
		}},
	}
}

// fileRows returns n add rows like those of a large Spark table: one
// partition column, and statistics of five columns.
func fileRows(n int) []sRow {
	rows := make([]sRow, 0, n)
	for i := range n {
		day := "2024-01-" + strconv.Itoa(1+i%28)
		stats := fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d,"name":"name-%06d","amount":%d.25,"ts":"2024-01-01T00:00:00.000Z","flag":false},`+
			`"maxValues":{"id":%d,"name":"name-%06d","amount":%d.75,"ts":"2024-01-31T23:59:59.999Z","flag":true},`+
			`"nullCount":{"id":0,"name":%d,"amount":0,"ts":0,"flag":1}}`,
			1000+i%500, i*1000, i, i%97, i*1000+999, i+1, 100+i%89, i%7)
		rows = append(rows, sRow{Add: &sAdd{
			Path:             ptr(fmt.Sprintf("date=%s/part-%05d-%08x-1b2c-4d5e-8f90-%012x.c000.snappy.parquet", day, i%1000, i*7919, i)),
			PartitionValues:  map[string]*string{"date": &day},
			Size:             ptr(int64(100_000 + i*13%50_000)),
			ModificationTime: ptr(1700000000000 + int64(i)),
			DataChange:       ptr(false),
			Stats:            &stats,
		}})
	}
	return rows
}

func corpusDir(t testing.TB) string { return testutil.CorpusDir(t) }

// rel returns p relative to the corpus, for messages.
func rel(corpus, p string) string {
	r, err := filepath.Rel(corpus, p)
	if err != nil {
		return p
	}
	return strings.ReplaceAll(r, string(filepath.Separator), "/")
}
