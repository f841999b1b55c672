package tablecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// checkCommits decodes every commit of the listing.
func checkCommits(ctx context.Context, c *checker) error {
	for _, f := range c.files {
		if f.Kind != deltalog.Commit {
			continue
		}
		data, err := c.store.Get(ctx, f.Key)
		switch {
		case errors.Is(err, logstore.ErrNotFound):
			continue // log cleanup ran beside the check
		case err != nil:
			return err
		}
		if _, err := actions.DecodeCommit(f.Key, data); err != nil {
			if !errors.Is(err, deltaerr.ErrCorrupt) {
				return err
			}
			c.report(KindLog, f.Version, f.Key, "commit cannot be decoded: %v", err)
		}
	}
	return nil
}

// state is what a checkpoint holds, or a replay at its version, in the
// terms the two are compared in.
type state struct {
	protocol []actions.Protocol
	metadata []actions.Metadata
	files    map[string]fileID // canonical path + DV id -> file
	txns     map[string]int64
	// txnExpired holds the txns a checkpoint writer may drop: older than
	// delta.setTransactionRetentionDuration when the checkpoint was written.
	txnExpired map[string]bool
	domains    map[string]string
	numAdds    int64
	fileOrder  []string
}

type fileID struct {
	path string // as the log writes it
	size int64
	dv   string // the deletion vector's unique id, "" for none
}

func newState() *state {
	return &state{files: map[string]fileID{}, txns: map[string]int64{}, txnExpired: map[string]bool{}, domains: map[string]string{}}
}

func fileKey(a *actions.Add) string {
	k := snapshot.CanonicalPath(a.Path)
	if a.DeletionVector != nil {
		k += "\x00" + a.DeletionVector.UniqueID()
	}
	return k
}

func (s *state) addFile(a *actions.Add) {
	id := fileID{path: a.Path, size: a.Size}
	if a.DeletionVector != nil {
		id.dv = a.DeletionVector.UniqueID()
	}
	k := fileKey(a)
	if _, dup := s.files[k]; !dup {
		s.fileOrder = append(s.fileOrder, k)
	}
	s.files[k] = id
	s.numAdds++
}

// readCheckpoint reads every action of a checkpoint into a state.
func readCheckpoint(ctx context.Context, store logstore.Store, cp checkpointSet) (*state, error) {
	st := newState()
	want := checkpoint.Protocol | checkpoint.Metadata | checkpoint.Add | checkpoint.Txn | checkpoint.DomainMetadata
	err := checkpoint.Read(ctx, store, cp.keys(), want, func(batch []actions.Action) error {
		for i := range batch {
			a := &batch[i]
			switch {
			case a.Protocol != nil:
				st.protocol = append(st.protocol, *a.Protocol)
			case a.Metadata != nil:
				st.metadata = append(st.metadata, *a.Metadata)
			case a.Add != nil:
				st.addFile(a.Add)
			case a.Txn != nil:
				st.txns[a.Txn.AppID] = a.Txn.Version
			case a.DomainMetadata != nil && !a.DomainMetadata.Removed:
				st.domains[a.DomainMetadata.Domain] = a.DomainMetadata.Configuration
			}
		}
		return nil
	})
	return st, err
}

// replayState reads the state of a loaded snapshot. writtenAt is when the
// checkpoint it is compared with was written (ms since the epoch).
func replayState(ctx context.Context, snap *snapshot.Snapshot, writtenAt int64) (*state, error) {
	st := newState()
	st.protocol = []actions.Protocol{snap.Protocol()}
	st.metadata = []actions.Metadata{snap.Metadata()}
	for a, err := range snap.Files(ctx) {
		if err != nil {
			return nil, err
		}
		st.addFile(a)
	}
	for t, err := range snap.Txns(ctx) {
		if err != nil {
			return nil, err
		}
		st.txns[t.AppID] = t.Version
		if d, ok := snap.Config().SetTransactionRetention(); ok && t.LastUpdated != nil && *t.LastUpdated < writtenAt-d.Milliseconds() {
			st.txnExpired[t.AppID] = true
		}
	}
	for d, err := range snap.Domains(ctx) {
		if err != nil {
			return nil, err
		}
		st.domains[d.Domain] = d.Configuration
	}
	return st, nil
}

// checkCheckpoints reads each complete checkpoint and compares it with the
// replay of the log it replaces.
func checkCheckpoints(ctx context.Context, c *checker) error {
	for _, cp := range c.checkpoints() {
		c.rep.Checked["checkpoints"]++
		got, err := readCheckpoint(ctx, c.store, cp)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, deltaerr.ErrCorrupt) || errors.Is(err, logstore.ErrNotFound) || errors.Is(err, deltaerr.ErrPathEscapesRoot) {
				c.report(KindCheckpoint, cp.version, cp.name(), "checkpoint cannot be read (readers skip it): %v", err)
				continue
			}
			return err
		}
		if n := len(got.protocol); n != 1 {
			c.report(KindCheckpoint, cp.version, cp.name(), "checkpoint holds %d protocol actions, not 1", n)
		}
		if n := len(got.metadata); n != 1 {
			c.report(KindCheckpoint, cp.version, cp.name(), "checkpoint holds %d metaData actions, not 1", n)
		}
		if int64(len(got.files)) != got.numAdds {
			c.report(KindCheckpoint, cp.version, cp.name(), "checkpoint holds %d add actions for %d distinct files", got.numAdds, len(got.files))
		}
		replay, err := snapshot.LoadWithoutCheckpoints(ctx, c.store, c.files, cp.version, cp.version)
		var want *state
		if err == nil {
			want, err = replayState(ctx, replay, cp.parts[0].ModTime)
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, deltaerr.ErrMissingLogFile), errors.Is(err, deltaerr.ErrVersionNotFound):
			c.skip("checkpoint %s: the commits it replaces are gone (log cleanup)", cp.name())
			continue
		case errors.Is(err, deltaerr.ErrCorrupt), errors.Is(err, logstore.ErrNotFound):
			c.skip("checkpoint %s: the log it replaces cannot be replayed: %v", cp.name(), err)
			continue
		default:
			return err
		}
		c.compare(cp, got, want)
	}
	return nil
}

// compare reports how got, a checkpoint, differs from want, the replay.
func (c *checker) compare(cp checkpointSet, got, want *state) {
	n := 0
	diff := func(format string, args ...any) {
		n++
		if n <= c.opts.MaxPerCheckpoint {
			c.report(KindCheckpoint, cp.version, cp.name(), "checkpoint differs from the replay of its commits: "+format, args...)
		}
	}
	if len(got.protocol) == 1 && !sameProtocol(got.protocol[0], want.protocol[0]) {
		diff("protocol %s, the commits give %s", protocolString(got.protocol[0]), protocolString(want.protocol[0]))
	}
	if len(got.metadata) == 1 {
		if what := metadataDiff(got.metadata[0], want.metadata[0]); what != "" {
			diff("metaData: %s", what)
		}
	}
	for _, k := range want.fileOrder {
		w := want.files[k]
		g, ok := got.files[k]
		switch {
		case !ok:
			diff("live file %s%s is not in the checkpoint", w.path, dvNote(w.dv))
		case g.size != w.size:
			diff("file %s has size %d, the commits give %d", w.path, g.size, w.size)
		}
	}
	for _, k := range got.fileOrder {
		if _, ok := want.files[k]; !ok {
			g := got.files[k]
			diff("file %s%s is in the checkpoint but not live in the commits", g.path, dvNote(g.dv))
		}
	}
	for _, app := range sortedKeys(want.txns, got.txns) {
		w, wok := want.txns[app]
		g, gok := got.txns[app]
		switch {
		case !gok && want.txnExpired[app]:
			// expired: the checkpoint writer may drop it
		case !gok:
			diff("txn of application %q (version %d) is missing", app, w)
		case !wok:
			diff("txn of application %q (version %d) is not in the commits", app, g)
		case g != w:
			diff("txn of application %q has version %d, the commits give %d", app, g, w)
		}
	}
	for _, d := range sortedKeys(want.domains, got.domains) {
		w, wok := want.domains[d]
		g, gok := got.domains[d]
		switch {
		case !gok:
			diff("domain %q is missing", d)
		case !wok:
			diff("domain %q is not in the commits", d)
		case g != w:
			diff("domain %q has configuration %q, the commits give %q", d, g, w)
		}
	}
	if n > c.opts.MaxPerCheckpoint {
		c.report(KindCheckpoint, cp.version, cp.name(), "and %d more differences", n-c.opts.MaxPerCheckpoint)
	}
}

func dvNote(dv string) string {
	if dv == "" {
		return ""
	}
	return " (deletion vector " + dv + ")"
}

func sortedKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func sameProtocol(a, b actions.Protocol) bool {
	return a.MinReaderVersion == b.MinReaderVersion && a.MinWriterVersion == b.MinWriterVersion &&
		sameSet(a.ReaderFeatures, b.ReaderFeatures) && sameSet(a.WriterFeatures, b.WriterFeatures)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func protocolString(p actions.Protocol) string {
	return fmt.Sprintf("(%d, %d, reader %v, writer %v)", p.MinReaderVersion, p.MinWriterVersion, p.ReaderFeatures, p.WriterFeatures)
}

// metadataDiff names the first field in which two metaData actions differ,
// or returns "".
func metadataDiff(g, w actions.Metadata) string {
	switch {
	case g.ID != w.ID:
		return fmt.Sprintf("id %q, the commits give %q", g.ID, w.ID)
	case g.SchemaString != w.SchemaString && !sameSchema(g.SchemaString, w.SchemaString):
		return fmt.Sprintf("schema %s, the commits give %s", clip(g.SchemaString), clip(w.SchemaString))
	case !slices.Equal(g.PartitionColumns, w.PartitionColumns):
		return fmt.Sprintf("partition columns %v, the commits give %v", g.PartitionColumns, w.PartitionColumns)
	case !maps.Equal(g.Configuration, w.Configuration):
		return fmt.Sprintf("configuration %v, the commits give %v", g.Configuration, w.Configuration)
	case g.Format.Provider != w.Format.Provider:
		return fmt.Sprintf("format %q, the commits give %q", g.Format.Provider, w.Format.Provider)
	case g.Name != w.Name || g.Description != w.Description:
		return "name or description differs"
	}
	return ""
}

// sameSchema reports whether two schema strings are one schema written
// two ways (spacing, key order).
func sameSchema(a, b string) bool {
	sa, err1 := schema.Parse(a)
	sb, err2 := schema.Parse(b)
	if err1 != nil || err2 != nil {
		return false
	}
	ja, err1 := json.Marshal(sa)
	jb, err2 := json.Marshal(sb)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// clip shortens s for a message.
func clip(s string) string {
	const n = 200
	if len(s) <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:n]) + "…"
}
