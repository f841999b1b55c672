// Package buildinfo names this library in what it writes: the created_by
// of its Parquet footers (data files and checkpoints alike), in the one
// form Parquet readers parse, "godelta version <semver> (build <id>)".
// parquet-mr, for one, ignores the byte-array statistics of a file whose
// created_by it cannot parse.
package buildinfo

import (
	"runtime/debug"
	"strings"
	"sync"
)

// modulePath is this module's path, looked up in the binary's build info.
const modulePath = "github.com/godelta/delta"

var (
	once      sync.Once
	version   = "0.0.0"
	build     = "unknown"
	createdBy string
)

func load() {
	if bi, ok := debug.ReadBuildInfo(); ok {
		mod := &bi.Main
		if mod.Path != modulePath {
			mod = nil
			for _, d := range bi.Deps {
				if d.Path == modulePath {
					mod = d
					break
				}
			}
		}
		if mod != nil && mod.Version != "" && mod.Version != "(devel)" {
			version = strings.TrimPrefix(mod.Version, "v")
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" && mod == &bi.Main {
				build = s.Value
			}
		}
	}
	createdBy = "godelta version " + version + " (build " + build + ")"
}

// Version returns the module version of github.com/godelta/delta in this
// binary, without the leading "v"; "0.0.0" when the build does not record
// one (a build inside the module's own checkout, or go test).
func Version() string {
	once.Do(load)
	return version
}

// CreatedBy returns the created_by of the Parquet files this library
// writes: "godelta version <Version> (build <vcs revision or unknown>)".
func CreatedBy() string {
	once.Do(load)
	return createdBy
}
