package txn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
)

// stores are the backends every scenario runs on.
var stores = []struct {
	name string
	new  func(t *testing.T) logstore.Store
}{
	{"memory", func(t *testing.T) logstore.Store { return memory.New() }},
	{"local", func(t *testing.T) logstore.Store {
		s, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

const testSchema = `{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"part","type":"string","nullable":true,"metadata":{}}]}`

// tableSpec describes version 0 of a test table.
type tableSpec struct {
	protocol    actions.Protocol
	unpartition bool
	config      map[string]string
	schema      string
	extra       []actions.Action // appended to version 0
}

func (s tableSpec) actions() []actions.Action {
	p := s.protocol
	if p.MinReaderVersion == 0 {
		p = actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	}
	parts := []string{"part"}
	if s.unpartition {
		parts = []string{}
	}
	sch := s.schema
	if sch == "" {
		sch = testSchema
	}
	cfg := s.config
	if cfg == nil {
		cfg = map[string]string{}
	}
	acts := []actions.Action{
		{Protocol: &p},
		{Metadata: &actions.Metadata{ID: "test-table", Format: actions.Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString: sch, PartitionColumns: parts, Configuration: cfg}},
	}
	return append(acts, s.extra...)
}

// createTable writes version 0 of spec, with files f1 (part=a) and f2
// (part=b), into store.
func createTable(t *testing.T, store logstore.Store, spec tableSpec) {
	t.Helper()
	acts := spec.actions()
	a1, a2 := addFile("f1", "a", 10), addFile("f2", "b", 10)
	acts = append(acts, actions.Action{Add: &a1}, actions.Action{Add: &a2})
	writeCommit(t, store, 0, acts...)
}

func writeCommit(t *testing.T, store logstore.Store, version int64, acts ...actions.Action) {
	t.Helper()
	data, err := actions.EncodeCommit(acts)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(context.Background(), deltalog.CommitKey(version), data); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, store logstore.Store) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.Load(context.Background(), store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func addFile(path, part string, records int) actions.Add {
	return actions.Add{
		Path:             path,
		PartitionValues:  map[string]string{"part": part},
		Size:             100,
		ModificationTime: 1,
		DataChange:       true,
		Stats:            fmt.Sprintf(`{"numRecords":%d}`, records),
	}
}

func removeFile(path string, dataChange bool) actions.Remove {
	return actions.Remove{Path: path, DataChange: dataChange}
}

// readCommit returns the actions of one commit file.
func readCommit(t *testing.T, store logstore.Store, version int64) []actions.Action {
	t.Helper()
	data, err := store.Get(context.Background(), deltalog.CommitKey(version))
	if err != nil {
		t.Fatal(err)
	}
	acts, err := actions.DecodeCommit(deltalog.CommitKey(version), data)
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

// commitVersions lists the commit versions in the log.
func commitVersions(t *testing.T, store logstore.Store) []int64 {
	t.Helper()
	files, err := deltalog.List(context.Background(), store, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, f := range files {
		if f.Kind == deltalog.Commit {
			out = append(out, f.Version)
		}
	}
	return out
}

func commitInfo(t *testing.T, store logstore.Store, version int64) *actions.CommitInfo {
	t.Helper()
	for _, a := range readCommit(t, store, version) {
		if a.CommitInfo != nil {
			return a.CommitInfo
		}
	}
	t.Fatalf("version %d has no commitInfo", version)
	return nil
}

var errInjected = errors.New("injected storage fault")

// faultStore wraps a Store and makes PutIfAbsent of commit files fail in
// ways a network store can: fail is called before each such put and says
// what happens to it.
type faultStore struct {
	logstore.Store
	mu      sync.Mutex
	puts    int
	fail    func(n int) fault // n counts commit puts from 0
	getFail func(key string) bool
	late    map[string][]byte // puts that land late, at the next put
}

type fault int

const (
	noFault     fault = iota
	failBefore        // return an error, write nothing
	failAfter         // write, then return an error
	failLate          // return an error; the write lands at the next put
	otherWriter       // another writer's commit lands first, then an error
)

func (s *faultStore) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if !strings.HasPrefix(key, deltalog.LogDir) {
		return s.Store.PutIfAbsent(ctx, key, data)
	}
	s.mu.Lock()
	n := s.puts
	s.puts++
	for k, d := range s.late {
		_ = s.Store.PutIfAbsent(ctx, k, d)
		delete(s.late, k)
	}
	s.mu.Unlock()
	f := noFault
	if s.fail != nil {
		f = s.fail(n)
	}
	switch f {
	case failBefore:
		return errInjected
	case failAfter:
		if err := s.Store.PutIfAbsent(ctx, key, data); err != nil {
			return err
		}
		return errInjected
	case failLate:
		s.mu.Lock()
		if s.late == nil {
			s.late = map[string][]byte{}
		}
		s.late[key] = data
		s.mu.Unlock()
		return errInjected
	case otherWriter:
		other, _ := actions.EncodeCommit([]actions.Action{
			{CommitInfo: &actions.CommitInfo{Operation: "WRITE", TxnID: "someone-else", IsBlindAppend: ptr(true)}},
			{Add: ptr(addFile("other", "a", 1))},
		})
		if err := s.Store.PutIfAbsent(ctx, key, other); err != nil {
			return err
		}
		return errInjected
	}
	return s.Store.PutIfAbsent(ctx, key, data)
}

func (s *faultStore) Get(ctx context.Context, key string) ([]byte, error) {
	if s.getFail != nil && s.getFail(key) {
		return nil, errInjected
	}
	return s.Store.Get(ctx, key)
}

// GetRange fails as Get does: commits are read in GetRange windows.
func (s *faultStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if s.getFail != nil && s.getFail(key) {
		return nil, errInjected
	}
	return s.Store.GetRange(ctx, key, off, n)
}

func ptr[T any](v T) *T { return &v }
