package actions

import "slices"

// FeatureNames returns the name of every table feature this library knows,
// sorted.
func FeatureNames() []string {
	out := make([]string, 0, len(features))
	for n := range features {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
