package write

// PartitionDir returns the Hive-style directory segment col=value of one
// partition value as Spark writes it (raw is the serialized value, "" for
// null, which becomes HiveDefaultPartition); both sides escaped as Hive's
// escapePathName does. It is the layout of data file directories, and of
// the symlink manifests that mirror them.
func PartitionDir(col, raw string) string { return partitionDir(col, raw) }
