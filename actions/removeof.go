package actions

// RemoveOf returns the remove action of the live file a, deleted at now
// (ms since the epoch), carrying the file's metadata as Spark's
// AddFile.removeWithTimestamp does: extendedFileMetadata true, partition
// values, size, stats, tags, deletion vector and row-tracking fields.
func RemoveOf(a *Add, now int64, dataChange bool) Remove {
	size := a.Size
	ext := true
	return Remove{
		Path: a.Path, DeletionTimestamp: &now, DataChange: dataChange, ExtendedFileMetadata: &ext,
		PartitionValues: a.PartitionValues, Size: &size, Stats: a.Stats, Tags: a.Tags,
		DeletionVector: a.DeletionVector, BaseRowID: a.BaseRowID, DefaultRowCommitVersion: a.DefaultRowCommitVersion,
	}
}
