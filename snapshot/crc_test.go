package snapshot_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/checksum"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/testutil"
	"github.com/godelta/delta/txn"
)

// crcTables returns the corpus tables that hold <v>.crc files, with
// their versions.
func crcTables(t *testing.T) map[string][]int64 {
	t.Helper()
	out := map[string][]int64{}
	err := filepath.WalkDir(testutil.CorpusDir(t), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(path)) != "_delta_log" {
			return err
		}
		if f, ok := deltalog.ParseName(d.Name()); ok && f.Kind == deltalog.CRC {
			table := filepath.Dir(filepath.Dir(path))
			out[table] = append(out[table], f.Version)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// state is what a snapshot says of its table, in a comparable form.
type state struct {
	Version  int64
	Protocol actions.Protocol
	Metadata actions.Metadata
	Files    []string
	Txns     []actions.Txn
	Domains  []actions.DomainMetadata
}

func stateOf(ctx context.Context, s *snapshot.Snapshot) (state, error) {
	// Not the timestamp: the copy without checksums has new file times.
	st := state{Version: s.Version(), Protocol: s.Protocol(), Metadata: s.Metadata()}
	for a, err := range s.Files(ctx) {
		if err != nil {
			return st, err
		}
		st.Files = append(st.Files, fmt.Sprintf("%s %d %s", a.Path, a.Size, a.DeletionVector.UniqueID()))
	}
	slices.Sort(st.Files)
	for tx, err := range s.Txns(ctx) {
		if err != nil {
			return st, err
		}
		st.Txns = append(st.Txns, tx)
	}
	for d, err := range s.Domains(ctx) {
		if err != nil {
			return st, err
		}
		st.Domains = append(st.Domains, d)
	}
	return st, nil
}

// TestCorpusWithAndWithoutChecksums: every corpus table with Spark's
// .crc files reads the same, at every version that has one, as a copy
// of it without them; and Load did use the ones that are sound.
func TestCorpusWithAndWithoutChecksums(t *testing.T) {
	ctx := context.Background()
	used := 0
	for table, versions := range crcTables(t) {
		name := strings.TrimPrefix(table, testutil.CorpusDir(t))
		t.Run(name, func(t *testing.T) {
			bare := t.TempDir()
			if err := testutil.CopyTree(table, bare); err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(filepath.Join(bare, "_delta_log"))
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".crc") {
					if err := os.Remove(filepath.Join(bare, "_delta_log", e.Name())); err != nil {
						t.Fatal(err)
					}
				}
			}
			with, err := local.New(table)
			if err != nil {
				t.Fatal(err)
			}
			without, err := local.New(bare)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range versions {
				s1, err1 := snapshot.Load(ctx, with, v)
				s2, err2 := snapshot.Load(ctx, without, v)
				if (err1 == nil) != (err2 == nil) {
					t.Fatalf("version %d: Load with .crc: %v, without: %v", v, err1, err2)
				}
				if err1 != nil {
					continue // a table the corpus says cannot be read
				}
				if s1.Checksum() != nil {
					used++
				}
				st1, err1 := stateOf(ctx, s1)
				st2, err2 := stateOf(ctx, s2)
				if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(st1, st2) {
					t.Errorf("version %d differs with .crc:\n%+v (%v)\nwithout:\n%+v (%v)", v, st1, err1, st2, err2)
				}
			}
		})
	}
	if used == 0 {
		t.Error("Load used none of the corpus's checksums")
	}
	t.Logf("Load used %d corpus checksums", used)
}

// TestChecksumSkipsCheckpoint: with a sound <v>.crc, Load of a table
// whose commits after the checkpoint set no protocol or metadata reads
// nothing of the checkpoint (it only checks it is there), and Txns and
// Domains need none of it either; without the .crc, it reads the
// checkpoint's protocol and metaData columns.
func TestChecksumSkipsCheckpoint(t *testing.T) {
	ctx := context.Background()
	store, _ := synthTable(t, 2000)
	plain := store.Unwrap()
	snap, err := snapshot.Load(ctx, plain, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Checksum() != nil {
		t.Fatal("the synthetic table has a checksum")
	}
	store.Reset()
	if _, err := snapshot.Load(ctx, store, deltalog.Latest); err != nil {
		t.Fatal(err)
	}
	if c := store.Counts(); c.Bytes == 0 {
		t.Fatalf("without a .crc Load read no checkpoint bytes: %+v", c)
	}
	c, err := checksum.FromState(checksum.State{Protocol: snap.Protocol(), Metadata: snap.Metadata()}, snap.Files(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if err := checksum.Write(ctx, plain, snap.Version(), c); err != nil {
		t.Fatal(err)
	}
	store.Reset()
	s, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if s.Checksum() == nil {
		t.Fatal("Load did not use the .crc")
	}
	for range s.Txns(ctx) {
	}
	for range s.Domains(ctx) {
	}
	if c := store.Counts(); c.Gets+c.Ranges != 0 {
		t.Fatalf("with a .crc Load read the checkpoint: %+v", c)
	}
	if !reflect.DeepEqual(s.Protocol(), snap.Protocol()) || !reflect.DeepEqual(s.Metadata(), snap.Metadata()) {
		t.Fatal("protocol or metadata differ")
	}
}

// TestHostileChecksumFallsBack: a .crc that is garbage, huge, or wrong
// (its numbers or its protocol and metadata disagree with the log) is
// not used, and Load reads the same table as without it.
func TestHostileChecksumFallsBack(t *testing.T) {
	ctx := context.Background()
	base := memory.New()
	createTable(t, base, txn.Options{}, map[string]string{"delta.checkpointInterval": "2"}, true)
	for v := 1; v <= 2; v++ {
		snap, err := snapshot.Load(ctx, base, deltalog.Latest)
		if err != nil {
			t.Fatal(err)
		}
		appendFile(t, snap, txn.Options{}, fmt.Sprintf("f%d", v))
	}
	// Version 3, after the checkpoint at 2, changes the metadata: a
	// .crc whose metadata is not that one is not used.
	snap, err := snapshot.Load(ctx, base, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	tx := txn.Begin(snap, txn.Options{})
	m := snap.Metadata()
	m.Configuration = map[string]string{"delta.checkpointInterval": "2", "x": "y"}
	tx.SetMetadata(m)
	tx.SetTransaction("app", 7)
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	txn.PostCommit(ctx, &res)
	good, err := base.Get(ctx, deltalog.CRCKey(3))
	if err != nil {
		t.Fatalf("the commit wrote no .crc: %v", err)
	}
	ref, err := snapshot.Load(ctx, base, 3)
	if err != nil || ref.Checksum() == nil {
		t.Fatalf("the good .crc was not used: %v", err)
	}
	want, err := stateOf(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"garbage", []byte("\x00\xff{{{")},
		{"huge", bytes.Repeat([]byte(" "), checksum.MaxSize+10)},
		{"wrong numbers", bytes.Replace(good, []byte(`"numMetadata":1`), []byte(`"numMetadata":3`), 1)},
		{"metadata not the commit's", bytes.Replace(good, []byte(`"x":"y"`), []byte(`"x":"z"`), 1)},
		{"txn not the commit's", bytes.Replace(good, []byte(`"version":7`), []byte(`"version":8`), 1)},
		{"unreadable protocol", bytes.Replace(good, []byte(`"minReaderVersion":1`), []byte(`"minReaderVersion":99`), 1)},
		{"no protocol", bytes.Replace(good, []byte(`"protocol"`), []byte(`"protocolX"`), 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.New()
			copyStore(t, base, store)
			if err := store.Put(ctx, deltalog.CRCKey(3), tc.data); err != nil {
				t.Fatal(err)
			}
			s, err := snapshot.Load(ctx, store, 3)
			if err != nil {
				t.Fatal(err)
			}
			if s.Checksum() != nil {
				t.Fatal("Load used the bad .crc")
			}
			got, err := stateOf(ctx, s)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%+v (%v), want %+v", got, err, want)
			}
		})
	}
}

func copyStore(t *testing.T, from, to logstore.Store) {
	t.Helper()
	ctx := context.Background()
	for obj, err := range from.List(ctx, deltalog.LogDir, "") {
		if err != nil {
			t.Fatal(err)
		}
		data, err := from.Get(ctx, obj.Key)
		if err != nil {
			t.Fatal(err)
		}
		if err := to.Put(ctx, obj.Key, data); err != nil {
			t.Fatal(err)
		}
	}
}
