package delta_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	stdmaps "maps"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/vacuum"
	"github.com/godelta/delta/write"
)

// TestVacuumProperty is the property test of VACUUM (issue 24).
//
// Each iteration builds random tables from a random sequence of operations
// (seeded): appends to partitioned and unpartitioned tables, DELETE and
// UPDATE with copy-on-write and with deletion vectors (inline or in files),
// OPTIMIZE (compaction and Z-order), shallow CLONE of any version whose
// files are all there (of sources and of clones, which are then written to
// like any table), CONVERT of a directory of Parquet files written here (Hive
// partition directories with escaped names), checkpoints, and log cleanup.
// Table roots, partition values and converted file names hold characters a
// path must escape (space, '%', '#', '=', '/', ':', quotes, non-ASCII), so
// that every resolver of a path (scan, writers, VACUUM, CLONE, CONVERT) is
// asked to agree on them. Some tables have deletion vectors, the change
// data feed (so _change_data files), column mapping by name, in-commit
// timestamps.
//
// Time: every operation runs at a simulated time, days in the past, that
// moves forward by minutes to hours per operation; commits are dated by it
// through TxnOptions.Clock (DML's removes through its write.Options.Now as
// well), and every file an operation writes is given that time as its
// modification time, as if the table had been written over those days (log
// cleanup and full VACUUM go by modification times; a clock alone cannot
// make a log old). delta.logRetentionDuration is one to four days, so log
// cleanup (after checkpoints, at the simulated time, and CleanupLog, at the
// real time) deletes commits. delta.deletedFileRetentionDuration stays at
// its 7 days and the simulated days stay within the last 6, so that no
// checkpoint drops a tombstone a retention window below needs (a VACUUM with
// a window longer than the table's retention may lose versions: by design,
// as in Spark, and not tested).
//
// Every version is read when it is made and checked against a model of the
// rows. VACUUMs (all with Force) run during the sequence, with a retention
// window, full or lite at random, and the tables are written to, cloned and
// cleaned afterwards; then each table (sources, converted tables and
// clones alike) is vacuumed three more times:
//
//  1. with a retention covering its last versions: a cut-off drawn within
//     the last 23 simulated hours (sometimes exactly at a commit's time,
//     sometimes now), full or lite at random, at the simulated time;
//  2. lite, retention 0 ("VACUUM LITE ... RETAIN 0 HOURS") at the real
//     time;
//  3. full, retention 0 ("VACUUM ... RETAIN 0 HOURS") at the real time.
//
// A lite run may be refused (ErrCannotVacuumLite): it is checked to be
// refused only when log cleanup has deleted commit 0 and no VACUUM has
// handled the commits before the earliest left; a full run follows it.
//
// What is asserted:
//
//   - A VACUUM deletes nothing outside its table's root: the files of every
//     other table (a clone's source among them) are the same before and
//     after, in name, size and modification time.
//   - A VACUUM's retention window is every version from the newest
//     committed at or before the cut-off on (the version current at the
//     cut-off, Spark's latestCommitVersionOutsideOfRetentionWindow, and
//     later ones); with retention 0, the latest. Right after the VACUUM,
//     every file under the table's own root that a window version needs
//     (data file or deletion vector file) still exists, and every window
//     version that the log can still load reads, as a sorted multiset,
//     exactly the rows it read when it was made.
//   - A version stays asserted ("intact") until a VACUUM of the table that
//     owns one of its files had a window that does not need that file:
//     for a table's own versions, until they leave a window; for a clone's
//     versions, also when the source's (or the source's source's) VACUUM
//     had a window without a source file the clone version names. CLONE is
//     shallow: the source's VACUUM keeps only what the source's own window
//     needs, so a clone of an older version whose files the source has
//     since removed may break once the source is vacuumed (Delta Spark
//     documents this for shallow clones); such clone versions are counted,
//     not asserted. So a clone of a source's latest version whose files
//     are still live in the source stays readable, whatever is vacuumed,
//     and so does every window version of a table that is no clone (that
//     one names a file of another table fails the test). After every
//     VACUUM during the sequence and after each final round, every intact
//     version the log can still load is read and compared.
//   - A full VACUUM with retention 0 leaves under the table's root, outside
//     _delta_log and other hidden paths, exactly the files the latest
//     version names there: no orphan, no expired file, no change-data
//     file is left.
//
// OPTIMIZE dates its removes by the wall clock, not TxnOptions.Clock (it
// has no other clock option): its tombstones are newer than the simulated
// cut-offs, so VACUUMs at the simulated time keep those files (never
// less than they must); the rounds at the real time delete them.
//
// Running it: by default four iterations with fixed seeds (a few
// seconds). GODELTA_PROP_ITER=n runs n iterations with seeds from a
// random base (printed); GODELTA_PROP_SEED=s runs the seed s (and, with
// GODELTA_PROP_ITER=n, the n seeds from s). A failure prints its seed, the
// command that reproduces it, and the sequence of operations;
// GODELTA_PROP_MAXOPS=k stops the sequence after k random operations (the
// same prefix: a seed's operations are drawn in order), to minimize one.
//
//	GODELTA_PROP_ITER=300 go test -run TestVacuumProperty -count=1 .
func TestVacuumProperty(t *testing.T) {
	iter := 0
	if s := os.Getenv("GODELTA_PROP_ITER"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("GODELTA_PROP_ITER=%q: want a positive number", s)
		}
		iter = n
	}
	maxOps := -1
	if s := os.Getenv("GODELTA_PROP_MAXOPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			t.Fatalf("GODELTA_PROP_MAXOPS=%q: want a number", s)
		}
		maxOps = n
	}
	var seeds []uint64
	var base uint64
	switch s := os.Getenv("GODELTA_PROP_SEED"); {
	case s != "":
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("GODELTA_PROP_SEED=%q: want a number", s)
		}
		base = n
		if iter == 0 {
			iter = 1
		}
	case iter > 0:
		base = uint64(time.Now().UnixNano()%1_000_000_000) * 1000
		t.Logf("seeds %d to %d", base, base+uint64(iter)-1)
	default:
		// Seeds whose sequences have, between them, clones of clones,
		// conversions, refused lite runs, and clone versions a source's
		// VACUUM breaks.
		seeds = []uint64{4, 16, 19, 33}
	}
	for i := range iter {
		seeds = append(seeds, base+uint64(i))
	}
	var tot vpFigures
	done := 0
	for _, seed := range seeds {
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			w := vpNewWorld(t, seed, maxOps)
			t.Cleanup(func() {
				if t.Failed() {
					env := fmt.Sprintf("GODELTA_PROP_SEED=%d", seed)
					if maxOps >= 0 {
						env += fmt.Sprintf(" GODELTA_PROP_MAXOPS=%d", maxOps)
					}
					t.Logf("seed %d failed; reproduce with\n\t%s go test -run TestVacuumProperty -count=1 .\nsequence:\n\t%s",
						seed, env, strings.Join(w.log, "\n\t"))
				}
			})
			w.run()
			tot.add(w.figs)
			done++
		})
		if !ok {
			break
		}
	}
	t.Logf("%d iterations passed: %s", done, &tot)
}

// vpFigures count what the iterations did, to show that the property was
// exercised (and not vacuously true).
type vpFigures struct {
	tables, clones, converts, ops, versions int
	clonesOfClones                          int
	vacuums, deleted, liteRefused           int // VACUUMs run, files they deleted, lite runs refused
	checked, cloneChecked                   int // versions read after a VACUUM (of clones)
	droppedClone                            int // clone versions no longer asserted: their source's VACUUM may delete their files
	notLoadable                             int // versions log cleanup deleted, no longer read
	logDeleted                              int // log files deleted by CleanupLog
}

func (f *vpFigures) add(o vpFigures) {
	f.tables += o.tables
	f.clones += o.clones
	f.clonesOfClones += o.clonesOfClones
	f.converts += o.converts
	f.ops += o.ops
	f.versions += o.versions
	f.vacuums += o.vacuums
	f.checked += o.checked
	f.cloneChecked += o.cloneChecked
	f.droppedClone += o.droppedClone
	f.deleted += o.deleted
	f.liteRefused += o.liteRefused
	f.notLoadable += o.notLoadable
	f.logDeleted += o.logDeleted
}

func (f *vpFigures) String() string {
	return fmt.Sprintf("tables=%d (clones=%d, of clones %d; converted=%d) ops=%d versions=%d; VACUUMs=%d (lite refused %d) deleted %d files; "+
		"versions read after a VACUUM=%d (of clones %d); no longer asserted: clone versions whose source's VACUUM may delete their files=%d, "+
		"versions log cleanup deleted=%d (CleanupLog deleted %d log files)",
		f.tables, f.clones, f.clonesOfClones, f.converts, f.ops, f.versions, f.vacuums, f.liteRefused, f.deleted,
		f.checked, f.cloneChecked, f.droppedClone, f.notLoadable, f.logDeleted)
}

// vpRow is a row of every table here: id, v, and p, the partition column
// of partitioned tables (nil: null).
type vpRow struct {
	id, v int64
	p     *string
}

func (r vpRow) String() string {
	p := "null"
	if r.p != nil {
		p = strconv.Quote(*r.p)
	}
	return fmt.Sprintf("%d|%d|%s", r.id, r.v, p)
}

func vpRender(rows []vpRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	slices.Sort(out)
	return out
}

// vpPartitions are partition values that need escaping in a directory
// name, a URI, or an SQL literal.
var vpPartitions = []string{"a", "b c", "x%y", "é", "k=v", "a/b", "q:r", "#1", "%41", "it's", "sp ace%20"}

// vpRootNames are the stems of table roots.
var vpRootNames = []string{"t", "t x", "t%", "t%20", "tä", "t#", "t+", "t=1"}

type vpTable struct {
	name        string
	dir         string
	tbl         *delta.Table
	partitioned bool
	pcol        string // the name of p: "p", or "_p" for some partitioned tables
	dv          bool
	clone       bool
	model       []vpRow // rows of the latest version, as the model has them

	latest int64
	ts     map[int64]time.Time       // simulated commit time of each version
	read   map[int64][]string        // rows read when the version was made
	refs   map[int64]map[string]bool // local paths of the files each version needs
	// intact are the versions whose files must all be there, and which,
	// unless gone, must read as they did when made: every version, until
	// a VACUUM may delete a file it needs (see vacuum).
	intact map[int64]bool
	// gone are the versions log cleanup deleted.
	gone map[int64]bool
}

type vpWorld struct {
	t      *testing.T
	ctx    context.Context
	rng    *rand.Rand
	seed   uint64
	maxOps int
	base   string
	now    time.Time // the simulated clock
	tables []*vpTable
	nextID int64
	log    []string
	figs   vpFigures
}

func vpNewWorld(t *testing.T, seed uint64, maxOps int) *vpWorld {
	w := &vpWorld{t: t, ctx: context.Background(), seed: seed, maxOps: maxOps, base: t.TempDir(),
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	// Five days and up to twelve hours before today's midnight (UTC): the
	// sequence ends two days before now at least, and starts within the 7
	// days of the tables' deletedFileRetentionDuration. Log cleanup cuts
	// at a midnight: counted from today's, a seed's sequence meets the same
	// cut-offs whatever the time of day it runs at.
	midnight := time.Now().UTC().Truncate(24 * time.Hour)
	w.now = midnight.Add(-5*24*time.Hour - time.Duration(w.rng.Int64N(int64(12*time.Hour)))).Truncate(time.Millisecond)
	t.Cleanup(func() {
		for _, tb := range w.tables {
			tb.tbl.Close()
		}
	})
	return w
}

func (w *vpWorld) logf(format string, args ...any) {
	w.log = append(w.log, fmt.Sprintf("%s ", w.now.UTC().Format("01-02T15:04:05.000"))+fmt.Sprintf(format, args...))
}

// clock returns the simulated time of the current operation.
func (w *vpWorld) clock() func() time.Time {
	now := w.now
	return func() time.Time { return now }
}

// tick moves the simulated clock on.
func (w *vpWorld) tick() {
	w.now = w.now.Add(10*time.Minute + time.Duration(w.rng.Int64N(int64(170*time.Minute)))).Truncate(time.Millisecond)
}

func (w *vpWorld) pick(n int) int { return w.rng.IntN(n) }

func (w *vpWorld) chance(p float64) bool { return w.rng.Float64() < p }

// newDir returns a fresh table root under the test's directory, with a
// name that needs escaping in a URI.
func (w *vpWorld) newDir() (name, dir string) {
	name = fmt.Sprintf("%s%d", vpRootNames[w.pick(len(vpRootNames))], len(w.tables))
	return name, filepath.Join(w.base, name)
}

func (w *vpWorld) props() map[string]string {
	p := map[string]string{
		"delta.checkpointInterval":   strconv.Itoa(2 + w.pick(5)),
		"delta.logRetentionDuration": fmt.Sprintf("interval %d days", 1+w.pick(4)),
	}
	if w.chance(0.5) {
		p["delta.enableDeletionVectors"] = "true"
	}
	if w.chance(0.3) {
		p["delta.enableChangeDataFeed"] = "true"
	}
	if w.chance(0.2) {
		p["delta.enableInCommitTimestamps"] = "true"
	}
	if w.chance(0.2) {
		p["delta.checkpointPolicy"] = "v2" // sidecars in _delta_log/_sidecars
	}
	return p
}

func (w *vpWorld) partition() *string {
	if w.chance(0.1) {
		return nil
	}
	return &vpPartitions[w.pick(len(vpPartitions))]
}

func (w *vpWorld) newRows(n int) []vpRow {
	rows := make([]vpRow, n)
	for i := range rows {
		w.nextID++
		rows[i] = vpRow{id: w.nextID, v: w.rng.Int64N(100), p: w.partition()}
	}
	return rows
}

func vpValues(rows []vpRow) [][]schema.Value {
	out := make([][]schema.Value, len(rows))
	for i, r := range rows {
		p := schema.Value{} // null
		if r.p != nil {
			p = schema.StringValue(*r.p)
		}
		out[i] = []schema.Value{schema.LongValue(r.id), schema.LongValue(r.v), p}
	}
	return out
}

func vpSchema(pcol string) *schema.StructType {
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "v", Type: schema.Long, Nullable: true},
		{Name: pcol, Type: schema.String, Nullable: true},
	}}
}

// vpPartitionColumn names the partition column of a partitioned table:
// sometimes "_p", whose directories (_p=a) VACUUM and CONVERT must walk
// although their names start with '_'.
func (w *vpWorld) vpPartitionColumn(partitioned bool) string {
	if partitioned && w.chance(0.4) {
		return "_p"
	}
	return "p"
}

// run is one iteration: the operations, then the three VACUUM rounds.
func (w *vpWorld) run() {
	w.create()
	if w.chance(0.5) {
		w.tick()
		w.convert()
	}
	n := 10 + w.pick(14)
	if w.maxOps >= 0 {
		n = min(n, w.maxOps)
	}
	for range n {
		w.tick()
		w.figs.ops++
		w.step()
	}
	w.figs.tables = len(w.tables)
	for _, tb := range w.tables {
		w.figs.versions += len(tb.read)
	}
	w.vacuumRounds()
}

// step runs one random operation on a random table whose latest version
// reads (a clone whose source's VACUUM deleted files it needs is left
// alone).
func (w *vpWorld) step() {
	var live []*vpTable
	for _, tb := range w.tables {
		if tb.intact[tb.latest] {
			live = append(live, tb)
		}
	}
	tb := live[w.pick(len(live))]
	switch r := w.pick(100); {
	case r < 28:
		w.append(tb)
	case r < 42:
		w.delete(tb)
	case r < 56:
		w.update(tb)
	case r < 66:
		w.optimize(tb)
	case r < 74 && len(w.tables) < 7:
		w.cloneOf(tb)
	case r < 78 && len(w.tables) < 7:
		w.convert()
	case r < 84:
		w.vacuumOp(tb)
	case r < 92:
		w.logf("%s: CHECKPOINT", tb.name)
		if _, err := tb.tbl.Checkpoint(w.ctx); err != nil {
			w.t.Fatalf("checkpoint of %s: %v", tb.name, err)
		}
		w.after(tb)
	default:
		res, err := tb.tbl.CleanupLog(w.ctx, false)
		if err != nil {
			w.t.Fatalf("log cleanup of %s: %v", tb.name, err)
		}
		w.figs.logDeleted += len(res.Deleted)
		w.logf("%s: CLEANUP LOG (real time): kept from checkpoint %d, deleted %d log files", tb.name, res.CheckpointVersion, len(res.Deleted))
		w.after(tb)
	}
}

func (w *vpWorld) create() {
	name, dir := w.newDir()
	tb := &vpTable{name: name, dir: dir, partitioned: w.chance(0.6)}
	tb.pcol = w.vpPartitionColumn(tb.partitioned)
	props := w.props()
	if w.chance(0.25) {
		props["delta.columnMapping.mode"] = "name"
	}
	tb.dv = props["delta.enableDeletionVectors"] == "true"
	spec := delta.TableSpec{Schema: vpSchema(tb.pcol), Properties: props}
	if tb.partitioned {
		spec.PartitionColumns = []string{tb.pcol}
	}
	var err error
	if tb.tbl, err = delta.Create(w.ctx, dir, spec); err != nil {
		w.t.Fatalf("create %s: %v", name, err)
	}
	w.logf("%s: CREATE partitioned=%v (by %s) %v", name, tb.partitioned, tb.pcol, props)
	w.adopt(tb)
	w.tick()
	w.append(tb)
}

// adopt registers a new table, whose version 0 was just committed.
func (w *vpWorld) adopt(tb *vpTable) {
	tb.latest = -1
	tb.ts, tb.read, tb.refs, tb.intact = map[int64]time.Time{}, map[int64][]string{}, map[int64]map[string]bool{}, map[int64]bool{}
	tb.gone = map[int64]bool{}
	w.tables = append(w.tables, tb)
	w.after(tb)
}

func (w *vpWorld) append(tb *vpTable) {
	rows := w.newRows(1 + w.pick(12))
	opts := delta.WriteOptions{Txn: delta.TxnOptions{Clock: w.clock()}}
	if w.chance(0.3) {
		opts.TargetFileSize = 1 // a file per row group of rows
	}
	if _, err := tb.tbl.AppendRows(w.ctx, vpValues(rows), opts); err != nil {
		w.t.Fatalf("append to %s: %v", tb.name, err)
	}
	tb.model = append(slices.Clone(tb.model), rows...)
	w.logf("%s: APPEND %d rows", tb.name, len(rows))
	w.after(tb)
}

// vpPred is a predicate in the expression language and in Go, with SQL's
// null semantics (a comparison with null is not true).
type vpPred struct {
	sql   string
	match func(vpRow) bool
}

func vpSQLString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (w *vpWorld) pred(tb *vpTable) vpPred {
	pc := tb.pcol
	n := w.rng.Int64N(100)
	part := vpPartitions[w.pick(len(vpPartitions))]
	k := 2 + w.rng.Int64N(3)
	switch w.pick(8) {
	case 0:
		return vpPred{fmt.Sprintf("v < %d", n), func(r vpRow) bool { return r.v < n }}
	case 1:
		return vpPred{fmt.Sprintf("v >= %d", n), func(r vpRow) bool { return r.v >= n }}
	case 2:
		return vpPred{pc + " = " + vpSQLString(part), func(r vpRow) bool { return r.p != nil && *r.p == part }}
	case 3:
		return vpPred{pc + " IS NULL", func(r vpRow) bool { return r.p == nil }}
	case 4:
		return vpPred{fmt.Sprintf("id %% %d = 0", k), func(r vpRow) bool { return r.id%k == 0 }}
	case 5:
		return vpPred{fmt.Sprintf("v < %d OR %s = %s", n/2, pc, vpSQLString(part)), func(r vpRow) bool { return r.v < n/2 || r.p != nil && *r.p == part }}
	case 6:
		return vpPred{fmt.Sprintf("%s <> %s AND v > %d", pc, vpSQLString(part), n), func(r vpRow) bool { return r.p != nil && *r.p != part && r.v > n }}
	default:
		if w.chance(0.3) {
			return vpPred{"", func(vpRow) bool { return true }}
		}
		return vpPred{fmt.Sprintf("v = %d", n), func(r vpRow) bool { return r.v == n }}
	}
}

func (w *vpWorld) dmlOptions(tb *vpTable) (delta.DMLOptions, string) {
	clock := w.clock()
	opts := delta.DMLOptions{Options: write.Options{Now: clock}, Txn: delta.TxnOptions{Clock: clock}}
	strategies := []delta.DMLStrategy{delta.StrategyAuto, delta.StrategyCopyOnWrite}
	if tb.dv {
		strategies = append(strategies, delta.StrategyMergeOnRead, delta.StrategyMergeOnRead)
	}
	opts.Strategy = strategies[w.pick(len(strategies))]
	desc := map[delta.DMLStrategy]string{delta.StrategyAuto: "auto", delta.StrategyCopyOnWrite: "copy-on-write", delta.StrategyMergeOnRead: "deletion vectors"}[opts.Strategy]
	if opts.Strategy != delta.StrategyCopyOnWrite && tb.dv {
		// Small vectors are inline in the log by default: mostly files.
		if w.chance(0.7) {
			opts.InlineDVMax = -1
			desc += ", in files"
		} else {
			desc += ", inline when small"
		}
	}
	return opts, desc
}

func (w *vpWorld) delete(tb *vpTable) {
	pred := w.pred(tb)
	opts, desc := w.dmlOptions(tb)
	res, err := tb.tbl.Delete(w.ctx, pred.sql, opts)
	if err != nil {
		w.t.Fatalf("DELETE FROM %s WHERE %s (%s): %v", tb.name, pred.sql, desc, err)
	}
	tb.model = slices.DeleteFunc(slices.Clone(tb.model), pred.match)
	w.logf("%s: DELETE WHERE %q (%s): committed=%v", tb.name, pred.sql, desc, res.Committed)
	w.after(tb)
}

func (w *vpWorld) update(tb *vpTable) {
	pred := w.pred(tb)
	part := w.partition()
	var set string
	var fn func(vpRow) vpRow
	switch w.pick(5) {
	case 0:
		set, fn = "v = v + 1", func(r vpRow) vpRow { r.v++; return r }
	case 1:
		set, fn = "v = v * 2 + 1", func(r vpRow) vpRow { r.v = r.v*2 + 1; return r }
	case 2:
		set, fn = "v = id", func(r vpRow) vpRow { r.v = r.id; return r }
	default:
		if part == nil {
			set = tb.pcol + " = NULL"
		} else {
			set = tb.pcol + " = " + vpSQLString(*part)
		}
		fn = func(r vpRow) vpRow { r.p = part; return r }
	}
	opts, desc := w.dmlOptions(tb)
	res, err := tb.tbl.UpdateRows(w.ctx, set, pred.sql, opts)
	if err != nil {
		w.t.Fatalf("UPDATE %s SET %s WHERE %s (%s): %v", tb.name, set, pred.sql, desc, err)
	}
	model := slices.Clone(tb.model)
	for i, r := range model {
		if pred.match(r) {
			model[i] = fn(r)
		}
	}
	tb.model = model
	w.logf("%s: UPDATE SET %q WHERE %q (%s): committed=%v", tb.name, set, pred.sql, desc, res.Committed)
	w.after(tb)
}

func (w *vpWorld) optimize(tb *vpTable) {
	opts := delta.OptimizeOptions{Txn: delta.TxnOptions{Clock: w.clock()}}
	desc := "compaction"
	switch w.pick(3) {
	case 0:
		opts.ZOrderBy = []string{"v", "id"}
		desc = "ZORDER BY (v, id)"
	case 1:
		opts.ZOrderBy = []string{"id"}
		desc = "ZORDER BY (id)"
	}
	res, err := tb.tbl.Optimize(w.ctx, opts)
	if err != nil {
		w.t.Fatalf("OPTIMIZE %s %s: %v", tb.name, desc, err)
	}
	w.logf("%s: OPTIMIZE %s: committed=%v", tb.name, desc, res.Committed)
	w.after(tb)
}

// cloneOf makes a shallow clone of a random version of tb that is still
// intact (the latest, more often than not).
func (w *vpWorld) cloneOf(tb *vpTable) {
	v := tb.latest
	if w.chance(0.4) {
		vs := slices.Sorted(stdmaps.Keys(tb.intact))
		v = vs[w.pick(len(vs))]
	}
	snap, err := tb.tbl.SnapshotAt(w.ctx, v)
	if errors.Is(err, delta.ErrVersionNotFound) {
		v = tb.latest
		snap, err = tb.tbl.SnapshotAt(w.ctx, v)
	}
	if err != nil {
		w.t.Fatalf("version %d of %s: %v", v, tb.name, err)
	}
	name, dir := w.newDir()
	c, _, err := tb.tbl.CloneTo(w.ctx, snap, dir, delta.TxnOptions{Clock: w.clock()})
	if err != nil {
		w.t.Fatalf("CLONE %s version %d to %s: %v", tb.name, v, name, err)
	}
	ct := &vpTable{name: name, dir: dir, tbl: c, partitioned: tb.partitioned, pcol: tb.pcol, dv: tb.dv, clone: true}
	ct.model = vpParse(w.t, tb.read[v])
	w.logf("%s: SHALLOW CLONE of %s version %d (of %d)", name, tb.name, v, tb.latest)
	w.figs.clones++
	if tb.clone {
		w.figs.clonesOfClones++
	}
	w.adopt(ct)
}

// vpParse turns rows rendered by vpRow.String back into rows.
func vpParse(t *testing.T, rendered []string) []vpRow {
	out := make([]vpRow, len(rendered))
	for i, s := range rendered {
		f := strings.SplitN(s, "|", 3)
		id, _ := strconv.ParseInt(f[0], 10, 64)
		v, _ := strconv.ParseInt(f[1], 10, 64)
		out[i] = vpRow{id: id, v: v}
		if f[2] != "null" {
			p, err := strconv.Unquote(f[2])
			if err != nil {
				t.Fatal(err)
			}
			out[i].p = &p
		}
	}
	return out
}

// vpHiveEscape escapes a partition value for a directory name as Hive's
// escapePathName does.
func vpHiveEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

type vpParquetRow struct {
	ID int64 `parquet:"id"`
	V  int64 `parquet:"v"`
}

type vpParquetRowP struct {
	ID int64   `parquet:"id"`
	V  int64   `parquet:"v"`
	P  *string `parquet:"p,optional"`
}

// convert writes a directory of Parquet files, partitioned Hive-style or
// not, and converts it (CONVERT TO DELTA).
func (w *vpWorld) convert() {
	name, dir := w.newDir()
	partitioned := w.chance(0.6)
	pcol := w.vpPartitionColumn(partitioned)
	rows := w.newRows(1 + w.pick(20))
	files := map[string][]vpRow{}
	stems := []string{"part-0", "data 1", "x%41", "f#2", "ü"}
	for _, r := range rows {
		sub := ""
		if partitioned {
			sub = pcol + "=__HIVE_DEFAULT_PARTITION__"
			if r.p != nil {
				sub = pcol + "=" + vpHiveEscape(*r.p)
			}
		}
		f := filepath.Join(sub, stems[w.pick(len(stems))]+".parquet")
		files[f] = append(files[f], r)
	}
	for f, rs := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			w.t.Fatal(err)
		}
		var err error
		if partitioned {
			out := make([]vpParquetRow, len(rs))
			for i, r := range rs {
				out[i] = vpParquetRow{ID: r.id, V: r.v}
			}
			err = parquet.WriteFile(p, out)
		} else {
			out := make([]vpParquetRowP, len(rs))
			for i, r := range rs {
				out[i] = vpParquetRowP{ID: r.id, V: r.v, P: r.p}
			}
			err = parquet.WriteFile(p, out)
		}
		if err != nil {
			w.t.Fatal(err)
		}
	}
	props := w.props()
	opts := delta.ConvertOptions{Properties: props, Txn: delta.TxnOptions{Clock: w.clock()}}
	if partitioned {
		opts.PartitionSchema = &schema.StructType{Fields: []schema.StructField{{Name: pcol, Type: schema.String, Nullable: true}}}
	}
	tbl, res, err := delta.Convert(w.ctx, dir, opts)
	if err != nil {
		w.t.Fatalf("CONVERT %s (files %v): %v", name, slices.Sorted(stdmaps.Keys(files)), err)
	}
	tb := &vpTable{name: name, dir: dir, tbl: tbl, partitioned: partitioned, pcol: pcol, dv: props["delta.enableDeletionVectors"] == "true", model: rows}
	w.logf("%s: CONVERT partitioned=%v (by %s) of %d Parquet files %v, %v", name, partitioned, pcol, res.Files, slices.Sorted(stdmaps.Keys(files)), props)
	w.figs.converts++
	w.adopt(tb)
}

// after dates the files the operation wrote in tb's root, and reads the
// versions it committed: their rows (the latest must match the model) and
// the files they need.
func (w *vpWorld) after(tb *vpTable) {
	w.date(tb.dir)
	snap, err := tb.tbl.Snapshot(w.ctx)
	if err != nil {
		w.t.Fatalf("%s: latest snapshot: %v", tb.name, err)
	}
	for v := tb.latest + 1; v <= snap.Version(); v++ {
		s := snap
		if v < snap.Version() {
			if s, err = tb.tbl.SnapshotAt(w.ctx, v); err != nil {
				w.t.Fatalf("%s: version %d, just made: %v", tb.name, v, err)
			}
		}
		rows, err := w.rows(tb, s)
		if err != nil {
			w.t.Fatalf("%s: reading version %d, just made: %v", tb.name, v, err)
		}
		tb.ts[v], tb.read[v], tb.refs[v], tb.intact[v] = w.now, rows, w.files(tb, s), true
	}
	tb.latest = snap.Version()
	if want := vpRender(tb.model); !slices.Equal(tb.read[tb.latest], want) {
		w.t.Fatalf("%s: version %d reads\n\t%v\nwant (model)\n\t%v", tb.name, tb.latest, tb.read[tb.latest], want)
	}
}

// date gives every file under dir written after the simulated time (all
// files this operation wrote: the simulation is in the past) that time.
func (w *vpWorld) date(dir string) {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.ModTime().After(w.now) {
			return os.Chtimes(p, w.now, w.now)
		}
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// rows reads every row of snap, rendered and sorted.
func (w *vpWorld) rows(tb *vpTable, snap *delta.Snapshot) ([]string, error) {
	sc, err := tb.tbl.Scan(snap, delta.ScanOptions{})
	if err != nil {
		return nil, err
	}
	var out []vpRow
	for row, err := range sc.Rows(w.ctx) {
		if err != nil {
			return nil, err
		}
		id, _ := row.Get("id")
		v, _ := row.Get("v")
		p, _ := row.Get(tb.pcol)
		r := vpRow{id: id.Int64(), v: v.Int64()}
		if !p.IsNull() {
			r.p = new(p.Raw())
		}
		out = append(out, r)
	}
	return vpRender(out), nil
}

// files returns the local paths of the files snap needs: its data files
// and their deletion vectors' files, wherever they lie.
func (w *vpWorld) files(tb *vpTable, snap *delta.Snapshot) map[string]bool {
	loc := snap.Location()
	out := map[string]bool{}
	add := func(p string) {
		ref, err := loc.Resolve(w.ctx, p)
		if err != nil {
			w.t.Fatalf("%s version %d: resolving %s: %v", tb.name, snap.Version(), p, err)
		}
		root := tb.dir
		if ref.Root != "" {
			u, err := url.Parse(ref.Root)
			if err != nil {
				w.t.Fatalf("%s: root %s: %v", tb.name, ref.Root, err)
			}
			root = filepath.FromSlash(u.Path)
		}
		out[filepath.Join(root, filepath.FromSlash(ref.Key))] = true
	}
	for a, err := range snap.Files(w.ctx) {
		if err != nil {
			w.t.Fatalf("%s version %d: files: %v", tb.name, snap.Version(), err)
		}
		add(a.Path)
		p, ok, err := location.DVPath(a.DeletionVector)
		if err != nil {
			w.t.Fatalf("%s version %d: the deletion vector of %s: %v", tb.name, snap.Version(), a.Path, err)
		}
		if ok {
			add(p)
		}
	}
	return out
}

// owner returns the table whose root holds the file at local path p.
func (w *vpWorld) owner(p string) *vpTable {
	for _, tb := range w.tables {
		if strings.HasPrefix(p, tb.dir+string(filepath.Separator)) {
			return tb
		}
	}
	return nil
}

// window returns the versions of tb that a VACUUM with cut-off cut must
// keep readable: the newest committed at or before the cut-off, and every
// later one (all of them when none is that old).
func (w *vpWorld) window(tb *vpTable, cut time.Time) []int64 {
	from := int64(0)
	for v, ts := range tb.ts {
		if !ts.After(cut) && v > from {
			from = v
		}
	}
	var out []int64
	for v := range tb.ts {
		if v >= from {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// cutoff draws the cut-off of a VACUUM with a retention window: within the
// last 23 simulated hours, so that the log cleanup that follows the
// VACUUM's own commits (a day at least, at the simulated time) keeps every
// version of the window; at the time of one of tb's commits, or exactly
// now (retention 0), some of the time.
func (w *vpWorld) cutoff(tb *vpTable) time.Time {
	earliest := w.now.Add(-23 * time.Hour)
	switch {
	case w.chance(0.1):
		return w.now
	case w.chance(0.45):
		var at []time.Time
		for _, ts := range tb.ts {
			if !ts.Before(earliest) {
				at = append(at, ts)
			}
		}
		if len(at) > 0 {
			slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
			return at[w.pick(len(at))]
		}
	}
	return earliest.Add(time.Duration(w.rng.Int64N(int64(w.now.Sub(earliest))))).Truncate(time.Millisecond)
}

// vacuumOp is a VACUUM in the middle of the sequence, with a retention
// window, at the simulated time; the tables are written to afterwards.
func (w *vpWorld) vacuumOp(tb *vpTable) {
	now := w.clock()
	cut := w.cutoff(tb)
	opts := delta.VacuumOptions{RetentionSet: true, Retention: now().Sub(cut), Force: true, Lite: w.chance(0.5),
		Now: now, Txn: delta.TxnOptions{Clock: now}}
	w.vacuum(tb, "during the sequence", opts, cut)
	w.checkIntact("a VACUUM during the sequence")
}

// vacuumRounds vacuums every table three times: with a retention window
// at the simulated time, then with retention 0 at the real time, lite and
// then full. The VACUUM commits are dated in the simulation, so that the
// log cleanup after them is the simulation's.
func (w *vpWorld) vacuumRounds() {
	w.checkIntact("before the final VACUUMs")
	rounds := []struct {
		name string
		lite func() bool
		real bool // at the real time, with retention 0
	}{
		{"final, retention window", func() bool { return w.chance(0.5) }, false},
		{"final, RETAIN 0 HOURS", func() bool { return true }, true},
		{"final, RETAIN 0 HOURS", func() bool { return false }, true},
	}
	for _, r := range rounds {
		w.now = w.now.Add(time.Minute)
		order := slices.Clone(w.tables)
		w.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, tb := range order {
			now := w.clock()
			opts := delta.VacuumOptions{RetentionSet: true, Force: true, Lite: r.lite(), Txn: delta.TxnOptions{Clock: now}}
			cut := time.Now()
			if !r.real {
				cut = w.cutoff(tb)
				opts.Now, opts.Retention = now, now().Sub(cut)
			}
			w.vacuum(tb, r.name, opts, cut)
		}
		w.checkIntact("the round " + r.name)
	}
	for _, tb := range w.tables {
		w.noGarbage(tb)
	}
}

// vacuum runs one VACUUM of tb with cut-off cut and checks what it
// deleted: nothing outside tb's root, no file of tb's window. The window's
// versions are read at once; the versions of every table (tb's older
// ones, and the clones') that need a file under tb's root that the window
// does not are no longer asserted to read.
func (w *vpWorld) vacuum(tb *vpTable, round string, opts delta.VacuumOptions, cut time.Time) {
	window := w.window(tb, cut)
	desc := fmt.Sprintf("retention %v, window %v", opts.Retention, window)
	for _, v := range window {
		if !tb.intact[v] || tb.gone[v] {
			continue
		}
		if _, err := tb.tbl.SnapshotAt(w.ctx, v); errors.Is(err, delta.ErrVersionNotFound) {
			w.figs.notLoadable++
			tb.gone[v] = true // CleanupLog deleted it: nothing to read
		} else if err != nil {
			w.t.Fatalf("%s: loading version %d: %v", tb.name, v, err)
		}
	}
	others := map[string]string{}
	for _, o := range w.tables {
		if o != tb {
			stdmaps.Copy(others, w.listing(o.dir))
		}
	}
	res, err := tb.tbl.Vacuum(w.ctx, opts)
	mode := "full"
	if opts.Lite {
		mode = "lite"
	}
	var le *vacuum.LiteError
	if opts.Lite && errors.As(err, &le) {
		// Refused: only when log cleanup deleted commits no VACUUM handled.
		if _, serr := os.Stat(filepath.Join(tb.dir, "_delta_log", fmt.Sprintf("%020d.json", 0))); le.Earliest <= 0 || le.LastVacuumed >= le.Earliest || serr == nil {
			w.t.Fatalf("%s: lite VACUUM refused (%v) though commit 0 is there (%v) or the last VACUUM handled the log", tb.name, err, serr)
		}
		w.figs.liteRefused++
		w.logf("%s: VACUUM (%s, lite) %s: refused: %v", tb.name, round, desc, err)
		opts.Lite, mode = false, "full, as lite was refused"
		res, err = tb.tbl.Vacuum(w.ctx, opts)
	}
	if err != nil {
		w.t.Fatalf("%s: VACUUM (%s, %s) %s: %v", tb.name, round, mode, desc, err)
	}
	w.figs.vacuums++
	w.figs.deleted += int(res.Deleted)
	var names []string
	for _, f := range res.Files {
		names = append(names, f.Key)
	}
	w.logf("%s: VACUUM (%s, %s) %s: deleted %d %v", tb.name, round, mode, desc, res.Deleted, names)

	// Nothing outside tb's root changed.
	for _, o := range w.tables {
		if o == tb {
			continue
		}
		for k, v := range w.listing(o.dir) {
			if others[k] != v {
				w.t.Fatalf("VACUUM of %s changed %s of %s: %q -> %q", tb.name, k, o.name, others[k], v)
			}
			delete(others, k)
		}
	}
	for k := range others {
		w.t.Fatalf("VACUUM of %s deleted %s, outside its root", tb.name, k)
	}
	// Every file under tb's root of a window version still asserted is
	// there, whether the version can still be loaded or not. (A version
	// an earlier VACUUM with a narrower window made unreadable may be back
	// in this window: the files it lost stay lost.)
	protected := map[string]bool{}
	for _, v := range window {
		for f := range tb.refs[v] {
			if w.owner(f) != tb {
				continue
			}
			protected[f] = true
			if _, err := os.Stat(f); err != nil && tb.intact[v] {
				w.t.Fatalf("VACUUM of %s (%s, %s) deleted %s, which version %d in its window needs: %v", tb.name, round, mode, f, v, err)
			}
		}
	}
	// The versions that need other files under tb's root are no longer
	// asserted: tb's own outside the window, and clones' (CLONE is
	// shallow; see the test's doc).
	for _, o := range w.tables {
		for v := range o.intact {
			for f := range o.refs[v] {
				if w.owner(f) == tb && !protected[f] {
					if o != tb && !o.clone {
						w.t.Fatalf("%s (no clone) version %d names %s, a file of %s", o.name, v, f, tb.name)
					}
					if o != tb {
						w.figs.droppedClone++
					}
					delete(o.intact, v)
					break
				}
			}
		}
	}
	// The window reads at once.
	for _, v := range window {
		if !tb.intact[v] || tb.gone[v] {
			continue // a clone's source was vacuumed, or log cleanup deleted it
		}
		w.checkVersion(tb, v, fmt.Sprintf("the VACUUM of %s (%s, %s)", tb.name, round, mode), true)
	}
	w.afterVacuum(tb)
}

// checkVersion reads version v of tb and checks that it reads as it did
// when it was made. A version log cleanup has deleted is marked gone,
// unless mustLoad.
func (w *vpWorld) checkVersion(tb *vpTable, v int64, after string, mustLoad bool) {
	if tb.gone[v] {
		return
	}
	snap, err := tb.tbl.SnapshotAt(w.ctx, v)
	if errors.Is(err, delta.ErrVersionNotFound) && !mustLoad {
		w.figs.notLoadable++
		tb.gone[v] = true
		return
	}
	var rows []string
	if err == nil {
		rows, err = w.rows(tb, snap)
	}
	switch {
	case err != nil:
		w.t.Fatalf("after %s: %s version %d fails to read: %v", after, tb.name, v, err)
	case !slices.Equal(rows, tb.read[v]):
		w.t.Fatalf("after %s: %s version %d reads\n\t%v\nit read, when it was made,\n\t%v", after, tb.name, v, rows, tb.read[v])
	}
	w.figs.checked++
	if tb.clone {
		w.figs.cloneChecked++
	}
}

// checkIntact reads every version still asserted, of every table.
func (w *vpWorld) checkIntact(after string) {
	for _, tb := range w.tables {
		for _, v := range slices.Sorted(stdmaps.Keys(tb.intact)) {
			w.checkVersion(tb, v, after, false)
		}
	}
}

// afterVacuum records the VACUUM START and END commits: new versions with
// the files and rows of the one before, asserted as it is. They are not
// read here: a clone's may not read any more (see vacuum).
func (w *vpWorld) afterVacuum(tb *vpTable) {
	w.date(tb.dir)
	snap, err := tb.tbl.Snapshot(w.ctx)
	if err != nil {
		w.t.Fatalf("%s: latest snapshot: %v", tb.name, err)
	}
	for v := tb.latest + 1; v <= snap.Version(); v++ {
		s := snap
		if v < snap.Version() {
			if s, err = tb.tbl.SnapshotAt(w.ctx, v); err != nil {
				w.t.Fatalf("%s: version %d, just made: %v", tb.name, v, err)
			}
		}
		refs := w.files(tb, s)
		if !stdmaps.Equal(refs, tb.refs[tb.latest]) {
			w.t.Fatalf("%s: the VACUUM commit %d changed the files from\n\t%v\nto\n\t%v", tb.name, v, tb.refs[tb.latest], refs)
		}
		tb.ts[v], tb.read[v], tb.refs[v] = w.now, tb.read[tb.latest], refs
		if tb.intact[tb.latest] {
			tb.intact[v] = true
		}
	}
	tb.latest = snap.Version()
}

// listing returns every file under dir with its size and time.
func (w *vpWorld) listing(dir string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%d bytes at %s", info.Size(), info.ModTime().UTC().Format(time.RFC3339Nano))
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

// noGarbage checks that after a full VACUUM with retention 0 the table's
// root holds, outside hidden paths (_delta_log, and any name starting with
// '_' or '.' but _change_data and partition directories such as _p=a),
// exactly the files its latest version names there.
func (w *vpWorld) noGarbage(tb *vpTable) {
	var got, want []string
	for f := range tb.refs[tb.latest] {
		if w.owner(f) == tb {
			want = append(want, f)
		}
	}
	err := filepath.WalkDir(tb.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		hidden := p != tb.dir && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) && name != "_change_data" &&
			!(d.IsDir() && tb.partitioned && strings.HasPrefix(name, tb.pcol+"="))
		switch {
		case d.IsDir() && hidden:
			return filepath.SkipDir
		case !d.IsDir() && !hidden:
			got = append(got, p)
		}
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		w.t.Fatalf("%s: after a full VACUUM with retention 0 the root holds\n\t%v\nthe latest version (%d) names\n\t%v", tb.name, got, tb.latest, want)
	}
}
