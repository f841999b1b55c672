package dml_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/dml"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// The concurrency tests run the competing writer in another process: this
// test binary run again with dmlChildEnv set, which makes TestDMLChild do
// one operation on the table and exit. The parent holds a snapshot taken
// before the child's commit, so that its own operation must meet the
// child's commit at the same version, deterministically.
const dmlChildEnv = "GODELTA_DML_CHILD" // "dir|op|arg"

// TestDMLChild is the body of a child process; without dmlChildEnv it
// does nothing.
func TestDMLChild(t *testing.T) {
	spec := os.Getenv(dmlChildEnv)
	if spec == "" {
		t.Skip("only run as a child process of the concurrency tests")
	}
	parts := strings.SplitN(spec, "|", 3)
	ctx := context.Background()
	store, err := local.New(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Load(ctx, store, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	switch parts[1] {
	case "append": // arg "p,from,to"
		a := strings.Split(parts[2], ",")
		from, _ := strconv.Atoi(a[1])
		to, _ := strconv.Atoi(a[2])
		var rows []row
		for id := from; id < to; id++ {
			rows = append(rows, row{id: int64(id), v: fmt.Sprint("v", id), n: int32(id % 10), p: a[0]})
		}
		if _, err := write.Append(ctx, snap, batch(rows), write.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	case "delete":
		if _, err := dml.Delete(ctx, snap, mustParse(t, parts[2]), dml.Options{}); err != nil {
			t.Fatal(err)
		}
	case "compact": // arg: the partition whose files are compacted
		var files []*actions.Add
		for a, err := range snap.Files(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if a.PartitionValues["p"] == parts[2] {
				files = append(files, a)
			}
		}
		keep := func(*actions.Add, int64, []schema.Value) (write.Verdict, []schema.Value, error) {
			return write.Keep, nil, nil
		}
		r, err := write.Rewrite(ctx, snap, files, keep, write.RewriteOptions{Copy: true, NoDataChange: true})
		if err != nil {
			t.Fatal(err)
		}
		tx := txn.Begin(snap, txn.Options{Operation: "OPTIMIZE"})
		tx.ReadFiles(r.Read...)
		tx.Remove(r.Removes...)
		tx.Add(r.Adds...)
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("unknown child operation %q", parts[1])
	}
}

// child runs one operation in another process and waits for it.
func child(t *testing.T, dir, op, arg string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDMLChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), dmlChildEnv+"="+dir+"|"+op+"|"+arg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child %s %s: %v\n%s", op, arg, err, out)
	}
}

// localTable is the test table in a local directory, partitioned by p.
func localTable(t *testing.T, o tableOpts) (string, *snapshot.Snapshot) {
	t.Helper()
	dir := t.TempDir()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, newTable(t, store, o)
}

func TestConcurrentProcesses(t *testing.T) {
	type tc struct {
		name      string
		isolation txn.IsolationLevel
		childOp   string
		childArg  string
		where     string
		dvs       bool
		retries   int
		conflict  txn.ConflictKind // "" when both commit
	}
	cases := []tc{
		{
			name: "append to another partition", isolation: txn.Serializable,
			childOp: "append", childArg: "c,1000,1010", where: "p = 'a' AND n < 5",
		},
		{
			name:    "blind append to the same partition, WriteSerializable",
			childOp: "append", childArg: "a,1000,1010", where: "p = 'a' AND n < 5",
		},
		{
			name: "append to the partition read, Serializable", isolation: txn.Serializable,
			childOp: "append", childArg: "a,1000,1010", where: "p = 'a' AND n < 5",
			conflict: txn.ConflictConcurrentAppend,
		},
		// The child rewrites (or re-adds under a deletion vector) files
		// of partition a: its adds there come first in Spark's order of
		// checks, a concurrent append.
		{
			name:    "delete of the same file",
			childOp: "delete", childArg: "p = 'a' AND n = 9", where: "p = 'a' AND n < 5",
			conflict: txn.ConflictConcurrentAppend,
		},
		{
			name: "delete of the same file, deletion vectors", dvs: true,
			childOp: "delete", childArg: "p = 'a' AND n = 9", where: "p = 'a' AND n < 5",
			conflict: txn.ConflictConcurrentAppend,
		},
		// The child removes the files read and adds none.
		{
			name: "delete of the whole partition read", dvs: true,
			childOp: "delete", childArg: "p = 'a'", where: "p = 'a' AND n < 5",
			conflict: txn.ConflictDeleteRead,
		},
		{
			name: "delete of the same file, planned again", dvs: true, retries: 1,
			childOp: "delete", childArg: "p = 'a' AND n = 9", where: "p = 'a' AND n < 5",
		},
		// Compaction (dataChange=false) of another partition goes
		// through; of the partition read, its adds conflict as Spark's do.
		{
			name: "compaction of another partition", isolation: txn.Serializable,
			childOp: "compact", childArg: "b", where: "p = 'a' AND n < 5",
		},
		{
			name:    "compaction of the partition read",
			childOp: "compact", childArg: "a", where: "p = 'a' AND n < 5",
			conflict: txn.ConflictConcurrentAppend,
		},
		{
			name: "delete of another file", dvs: true, isolation: txn.Serializable,
			childOp: "delete", childArg: "p = 'b' AND n = 9", where: "p = 'a' AND n < 5",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			// Unpartitioned tables read everything; these are partitioned.
			dir, stale := localTable(t, tableOpts{partitioned: true, dvs: c.dvs})
			child(t, dir, c.childOp, c.childArg)
			res, err := dml.Delete(ctx, stale, mustParse(t, c.where), dml.Options{Txn: txn.Options{Isolation: c.isolation}, ConflictRetries: c.retries})
			store, _ := local.New(dir)
			after := load(t, store)
			if c.conflict != "" {
				var ce *txn.ConflictError
				if !errors.As(err, &ce) || ce.Kind != c.conflict || !errors.Is(err, txn.ErrConflict) {
					t.Fatalf("err %v, want a %s conflict", err, c.conflict)
				}
				if after.Version() != stale.Version()+1 {
					t.Errorf("version %d, want only the child's commit %d", after.Version(), stale.Version()+1)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Commit.Version != stale.Version()+2 {
				t.Errorf("committed at %d, want %d, after the child's", res.Commit.Version, stale.Version()+2)
			}
			// Expected: the initial rows, the child's operation, ours.
			want := expected(func(r row) *row { return &r })
			a := strings.Split(c.childArg, ",")
			if c.childOp == "append" {
				from, _ := strconv.Atoi(a[1])
				to, _ := strconv.Atoi(a[2])
				for id := from; id < to; id++ {
					r := row{id: int64(id), v: fmt.Sprint("v", id), n: int32(id % 10), p: a[0]}
					want[r.id] = r.String()
				}
			}
			drop := func(p string, match func(n int) bool) {
				for id, s := range maps.Clone(want) {
					f := strings.Split(s, "|")
					n, _ := strconv.Atoi(f[2])
					if f[3] == p && match(n) {
						delete(want, id)
					}
				}
			}
			if c.childOp == "delete" {
				p := strings.Split(c.childArg, "'")[1]
				drop(p, func(n int) bool { return n == 9 })
			}
			// Ours deletes from the rows it read: those of the stale
			// snapshot (ids below 1000), or, planned again, all of them.
			seen := maps.Clone(want)
			drop("a", func(n int) bool { return n < 5 })
			if c.retries == 0 {
				for id, s := range seen {
					if id >= 1000 {
						want[id] = s
					}
				}
			}
			if got := tableRows(t, after); !maps.Equal(got, want) {
				t.Errorf("rows after:\n%v\nwant\n%v", got, want)
			}
		})
	}
}
