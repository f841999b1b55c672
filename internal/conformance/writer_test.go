package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/google/uuid"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/testutil"
)

// appendStep matches the DAT writer steps the harness knows how to run.
var appendStep = regexp.MustCompile(`^after appending (\S+\.parquet)$`)

// checkWriterStep runs a DAT writer test: it copies the table to a
// temporary directory, performs the step there through the public write
// path, and compares a scan of the result with the answer. The one step DAT
// has is an append of a Parquet file the writer brings along: the file is
// placed under the table root and committed as an add action with its
// row count, which is the path for programs that write their own Parquet.
func checkWriterStep(ctx context.Context, tbl IndexTable, dir string, exp Expected) error {
	m := appendStep.FindStringSubmatch(exp.Version)
	if m == nil {
		return fmt.Errorf("unknown writer step %q", exp.Version)
	}
	src := filepath.Join(dir, tbl.TableRoots[0])
	input := filepath.Join(dir, tbl.Folder, m[1])
	tmp, err := os.MkdirTemp("", "godelta-writer-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "table")
	if err := testutil.CopyTree(src, root); err != nil {
		return err
	}

	name := "part-00000-" + uuid.NewString() + ".parquet"
	if err := testutil.CopyFile(input, filepath.Join(root, name)); err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(root, name))
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := datafile.Open(f, st.Size())
	if err != nil {
		return err
	}
	t, err := delta.Open(ctx, root)
	if err != nil {
		return err
	}
	tx, err := t.Begin(ctx, delta.TxnOptions{Operation: "WRITE", OperationParameters: map[string]any{"mode": "Append"}})
	if err != nil {
		return err
	}
	tx.Add(actions.Add{Path: name, Size: st.Size(), ModificationTime: st.ModTime().UnixMilli(), DataChange: true,
		PartitionValues: map[string]string{}, Stats: fmt.Sprintf(`{"numRecords":%d}`, pf.NumRows())})
	if _, err := tx.Commit(ctx); err != nil {
		return err
	}
	return checkParquetAnswer(ctx, root, "latest", filepath.Join(dir, exp.Path))
}
