package optimize

// SetAutoCompactMinNumFiles lowers the threshold of the auto compaction
// hook for a test, until the returned function restores it.
func SetAutoCompactMinNumFiles(n int) (restore func()) {
	old := defaultAutoLimits
	defaultAutoLimits.minNumFiles = n
	return func() { defaultAutoLimits = old }
}
