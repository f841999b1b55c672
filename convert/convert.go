// Package convert puts a directory of Parquet files under a new Delta log:
// CONVERT TO DELTA. It writes one commit, version 0, holding the protocol,
// the metaData and one add action per file, with the statistics the
// writer of package write would compute for the same rows
// (write.FileAddConfig); no data file is rewritten, moved or deleted.
//
// The schema is read from the Parquet footers: every file must have the
// same columns with the same types (nullability aside: the table's columns
// are nullable, as Spark makes them), and the first file that does not is
// refused by name (*FileError). Hive-style partitions (a=1/b=x/part.parquet)
// are given as a partition schema ("a INT, b STRING"): every file must lie
// in one directory level per partition column, in that order, named
// column=value; values are unescaped as Hive escapes them
// (__HIVE_DEFAULT_PARTITION__ is null), parsed as the column's type and
// stored as the protocol serializes partition values. Partition columns
// come after the data columns in the schema, as Spark puts them. Hidden
// files and directories (a name starting with '_' or '.', except
// partition directories such as _a=1) are skipped, as Spark skips them:
// _SUCCESS, .crc files, _committed_ markers.
//
// Store converts the files under a store's root on any backend, walking
// its directories with logstore.Walk (the stores' DirLister capability,
// which local, memory, S3, GCS and Azure have); Dir is Store for a local
// directory; Convert takes the keys when the caller lists them itself.
//
// Concurrency: the files' statistics are computed by Options.Concurrency
// workers; the commit is one put-if-absent of version 0, so of two
// conversions of one directory at most one lands, and a directory that
// already has a Delta log is refused (ErrAlreadyDelta) before any work.
//
// Errors match deltaerr.ErrInvalidArgument (a file that does not fit,
// a bad partition directory, no Parquet file at all), ErrAlreadyDelta, or
// carry the store's and the Parquet reader's kinds (deltaerr.ErrCorrupt for
// a file that is not Parquet). Nothing is committed on error.
package convert

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// Operation is the commitInfo operation of a conversion, as Spark writes
// it. Never change it.
const Operation = "CONVERT"

// Errors.
var (
	// ErrAlreadyDelta is a conversion of a directory that has a Delta log.
	ErrAlreadyDelta = fmt.Errorf("convert: the directory is already a Delta table: %w", deltaerr.ErrInvalidArgument)
	// ErrNoFiles is a conversion of a directory without a Parquet file.
	ErrNoFiles = fmt.Errorf("convert: no Parquet data file to convert: %w", deltaerr.ErrInvalidArgument)
	// ErrFile is matched by every *FileError.
	ErrFile = fmt.Errorf("convert: data file does not fit the table: %w", deltaerr.ErrInvalidArgument)
)

// FileError names a file that cannot be converted, and why.
type FileError struct {
	File   string // key under the table root
	Reason string
}

func (e *FileError) Error() string { return "convert: data file " + e.File + ": " + e.Reason }

// Is reports whether target is ErrFile or one of the kinds it wraps.
func (e *FileError) Is(target error) bool { return target == ErrFile || errors.Is(ErrFile, target) }

// Options tune a conversion. The zero value converts an unpartitioned
// directory.
type Options struct {
	// PartitionSchema lists the partition columns, in directory order,
	// with their types; nil or empty for an unpartitioned directory.
	PartitionSchema *schema.StructType
	// Properties are the new table's properties (checked as
	// write.NewTable checks them).
	Properties map[string]string
	// Concurrency is how many files are read at once; 0 means GOMAXPROCS.
	Concurrency int
	// Progress, when set, is called after each file's statistics are
	// done, with the files done and the total, from one goroutine at a
	// time.
	Progress func(done, total int)
	// Txn configures the commit; Operation and OperationParameters are set.
	Txn txn.Options
}

// Result is what a conversion did.
type Result struct {
	txn.CommitResult
	// Files is the number of data files added; Bytes their total size.
	Files int
	Bytes int64
}

// Dir converts the local directory dir (Store over a local store of dir).
func Dir(ctx context.Context, dir string, opts Options) (Result, error) {
	store, err := localStore(dir)
	if err != nil {
		return Result{}, err
	}
	return Store(ctx, store, opts)
}

// Store converts the Parquet files under the root of store, on any
// backend: it walks the root (logstore.Walk, through the store's
// directory listing) without entering hidden directories, skips hidden
// files, and converts the rest (Convert). The table's root is then the
// store's root.
func Store(ctx context.Context, store logstore.Store, opts Options) (Result, error) {
	var nested string // a directory below the root that holds a table
	enter := func(sub string) bool {
		name := strings.TrimSuffix(sub, "/")
		parent := name[:strings.LastIndexByte(name, '/')+1]
		name = name[len(parent):]
		if name+"/" == deltalog.LogDir && parent != "" && nested == "" {
			nested = parent
		}
		return !hidden(name, true)
	}
	var keys []string
	for info, err := range logstore.Walk(ctx, store, "", enter) {
		if err != nil {
			return Result{}, fmt.Errorf("convert: listing %s: %w", logstore.RedactURI(store.URI()), err)
		}
		if !hidden(info.Key[strings.LastIndexByte(info.Key, '/')+1:], false) {
			keys = append(keys, info.Key)
		}
	}
	if nested != "" {
		// Its files would become this table's, for this table's VACUUM
		// to delete.
		return Result{}, fmt.Errorf("convert: %s holds the Delta table %s: %w",
			logstore.RedactURI(store.URI()), strings.TrimSuffix(nested, "/"), deltaerr.ErrRootsOverlap)
	}
	slices.Sort(keys)
	return Convert(ctx, store, keys, opts)
}

// hidden reports whether Spark's file index skips a file or directory:
// a name starting with '_' or '.', except a partition directory (_a=1).
func hidden(name string, dir bool) bool {
	if !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, ".") {
		return false
	}
	return !(dir && strings.Contains(name, "="))
}

// Convert writes version 0 of a Delta table at the root of store, whose
// data files are the Parquet files at keys (relative to the root; hidden
// ones are skipped as Dir skips them). See the package doc.
func Convert(ctx context.Context, store logstore.Store, keys []string, opts Options) (Result, error) {
	for _, err := range store.List(ctx, deltalog.LogDir, "") {
		if err != nil && !errors.Is(err, logstore.ErrNotFound) {
			return Result{}, err
		}
		if err == nil {
			return Result{}, ErrAlreadyDelta
		}
		break
	}
	parts := opts.PartitionSchema
	if parts == nil {
		parts = &schema.StructType{}
	}
	var files []string
	var pvs []map[string]string
	for _, k := range keys {
		segs := strings.Split(k, "/")
		if slices.ContainsFunc(segs[:len(segs)-1], func(s string) bool { return hidden(s, true) }) || hidden(segs[len(segs)-1], false) {
			continue
		}
		pv, err := partitionValues(k, segs[:len(segs)-1], parts)
		if err != nil {
			return Result{}, err
		}
		files = append(files, k)
		pvs = append(pvs, pv)
	}
	if len(files) == 0 {
		return Result{}, ErrNoFiles
	}
	data, err := fileSchema(ctx, store, files, parts, opts.Concurrency)
	if err != nil {
		return Result{}, err
	}
	sch := &schema.StructType{Fields: append(slices.Clone(data.Fields), parts.Fields...)}
	partNames := make([]string, len(parts.Fields))
	for i, f := range parts.Fields {
		partNames[i] = f.Name
		sch.Fields[len(data.Fields)+i].Nullable = true
	}
	p, m, err := write.NewTable(write.TableSpec{Schema: sch, PartitionColumns: partNames, Properties: opts.Properties})
	if err != nil {
		return Result{}, err
	}
	if mode := m.Configuration[tableconfig.KeyColumnMappingMode]; mode != "" && !strings.EqualFold(mode, "none") {
		// Files written without physical names and ids cannot be read
		// under a new mapping; Spark refuses it too.
		return Result{}, fmt.Errorf("convert: %s cannot be set at conversion: %w", tableconfig.KeyColumnMappingMode, deltaerr.ErrInvalidArgument)
	}
	cfg, err := tableconfig.New(p, m)
	if err != nil {
		return Result{}, err
	}
	adds, err := fileAdds(ctx, store, cfg, files, pvs, opts)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for i := range adds {
		res.Bytes += adds[i].Size
	}
	res.Files = len(adds)
	to := opts.Txn
	to.Operation = Operation
	pj, _ := actions.EncodeJSON(partNames)
	to.OperationParameters = map[string]any{"numFiles": len(adds), "partitionedBy": string(pj), "collectStats": true, "sourceFormat": "parquet"}
	// DeltaOperationMetrics.CONVERT.
	to.OperationMetrics = map[string]any{"numConvertedFiles": strconv.Itoa(len(adds))}
	tx := txn.BeginCreate(store, to)
	tx.SetProtocol(p)
	tx.SetMetadata(m)
	tx.Add(adds...)
	cr, err := tx.Commit(ctx)
	if err != nil {
		if errors.Is(err, txn.ErrTableExists) {
			return Result{}, fmt.Errorf("%w: %w", ErrAlreadyDelta, err)
		}
		return Result{}, err
	}
	res.CommitResult = cr
	return res, nil
}

// partitionValues parses the partition directories of key.
func partitionValues(key string, dirs []string, parts *schema.StructType) (map[string]string, error) {
	pv := map[string]string{}
	if len(parts.Fields) == 0 {
		return pv, nil
	}
	if len(dirs) != len(parts.Fields) {
		return nil, &FileError{File: key, Reason: fmt.Sprintf("is not %d partition directories deep (%s)", len(parts.Fields), partitionLayout(parts))}
	}
	for i, d := range dirs {
		f := &parts.Fields[i]
		col, raw, ok := strings.Cut(d, "=")
		if !ok || !strings.EqualFold(unescape(col), f.Name) {
			return nil, &FileError{File: key, Reason: fmt.Sprintf("directory %q is not %s=VALUE (partitions %s)", d, f.Name, partitionLayout(parts))}
		}
		raw = unescape(raw)
		if raw == write.HiveDefaultPartition {
			pv[f.Name] = ""
			continue
		}
		v, err := schema.ParsePartitionValue(f.Type, raw)
		if err != nil {
			return nil, &FileError{File: key, Reason: fmt.Sprintf("partition value %q is not a %s", raw, f.Type)}
		}
		pv[f.Name] = schema.FormatPartitionValue(v)
	}
	return pv, nil
}

func partitionLayout(parts *schema.StructType) string {
	var b []string
	for _, f := range parts.Fields {
		b = append(b, f.Name+"=…")
	}
	return strings.Join(b, "/")
}

// unescape undoes Hive's %XX escapes; a malformed escape stays as is.
func unescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// fileSchema reads every footer and returns the common schema of the
// files, without field metadata, every field nullable.
func fileSchema(ctx context.Context, store logstore.Store, files []string, parts *schema.StructType, conc int) (*schema.StructType, error) {
	schemas := make([]*schema.StructType, len(files))
	err := forEach(ctx, len(files), conc, func(i int) error {
		info, err := store.Stat(ctx, files[i])
		if err != nil {
			return err
		}
		f, err := datafile.OpenObject(ctx, store, files[i], info.Size)
		if err != nil {
			return &FileError{File: files[i], Reason: "is not a readable Parquet file: " + err.Error()}
		}
		s, err := f.Schema()
		if err != nil {
			return &FileError{File: files[i], Reason: err.Error()}
		}
		schemas[i] = normalize(s)
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	want := schemas[0]
	for _, pf := range parts.Fields {
		if want.Fields != nil {
			if _, ok := want.FieldFold(pf.Name); ok {
				return nil, &FileError{File: files[0], Reason: "holds partition column " + pf.Name + " as a data column"}
			}
		}
	}
	ws := want.String()
	for i, s := range schemas[1:] {
		if s.String() != ws {
			return nil, &FileError{File: files[i+1], Reason: fmt.Sprintf("has schema %s, but %s has %s", describe(s), files[0], describe(want))}
		}
	}
	return want, nil
}

// describe prints a schema as column definitions.
func describe(s *schema.StructType) string {
	var b []string
	for _, f := range s.Fields {
		b = append(b, f.Name+" "+f.Type.String())
	}
	return "(" + strings.Join(b, ", ") + ")"
}

// normalize drops field metadata (Parquet field ids) and makes every
// field nullable, at every depth.
func normalize(s *schema.StructType) *schema.StructType {
	out := &schema.StructType{Fields: make([]schema.StructField, len(s.Fields))}
	for i, f := range s.Fields {
		out.Fields[i] = schema.StructField{Name: f.Name, Type: normType(f.Type), Nullable: true}
	}
	return out
}

func normType(t schema.DataType) schema.DataType {
	switch t := t.(type) {
	case *schema.StructType:
		return normalize(t)
	case *schema.ArrayType:
		return &schema.ArrayType{ElementType: normType(t.ElementType), ContainsNull: true}
	case *schema.MapType:
		return &schema.MapType{KeyType: normType(t.KeyType), ValueType: normType(t.ValueType), ValueContainsNull: true}
	}
	return t
}

// fileAdds computes the add of every file, in files' order.
func fileAdds(ctx context.Context, store logstore.Store, cfg *tableconfig.Config, files []string, pvs []map[string]string, opts Options) ([]actions.Add, error) {
	adds := make([]actions.Add, len(files))
	err := forEach(ctx, len(files), opts.Concurrency, func(i int) error {
		a, err := write.FileAddConfig(ctx, store, cfg, files[i])
		if err != nil {
			var fe *write.FileSchemaError
			if errors.As(err, &fe) {
				return &FileError{File: files[i], Reason: fmt.Sprintf("column %s %s", fe.Column, fe.Reason)}
			}
			return err
		}
		a.PartitionValues = pvs[i]
		adds[i] = a
		return nil
	}, opts.Progress)
	return adds, err
}

// forEach runs fn(0..n-1) on conc workers, stopping at the first error
// (the one of the lowest index among those run); progress is called after
// each success.
func forEach(ctx context.Context, n, conc int, fn func(i int) error, progress func(done, total int)) error {
	if conc <= 0 {
		conc = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make([]error, n)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range min(conc, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					errs[i] = err
					cancel()
					continue
				}
				if progress != nil {
					mu.Lock()
					done++
					progress(done, n)
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// localStore opens dir as a store, through the logstore registry.
func localStore(dir string) (logstore.Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("convert: %s is not a directory: %w", dir, deltaerr.ErrInvalidArgument)
	}
	return local.New(abs)
}
