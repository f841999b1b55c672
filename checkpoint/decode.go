package checkpoint

import (
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
)

// top is one top-level action column of a checkpoint file being decoded.
type top struct {
	set    ActionSet
	g      *group
	yield  bool // hand the actions to fn (else only sidecars are kept)
	decode func(a *actions.Action)

	scratch actions.Action // decoded into when yield is false

	// next is the row, within the row group, that holds the next action
	// of this kind, or -1 when there is none left; valid when ready.
	next  int
	ready bool
}

// slabSize is how many actions of one kind are allocated at once.
const slabSize = 256

// slab hands out pointers to values allocated slabSize at a time.
type slab[T any] struct{ free []T }

func (s *slab[T]) alloc() *T {
	if len(s.free) == 0 {
		s.free = make([]T, slabSize)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// nil-safe typed reads of a leaf that may be absent from the schema.

func optString(l *leaf) string {
	if l == nil {
		return ""
	}
	s, _ := l.str()
	return s
}

func optInt64(l *leaf) (int64, bool) {
	if l == nil {
		return 0, false
	}
	return l.int64()
}

func optInt64Ptr(l *leaf) *int64 {
	x, ok := optInt64(l)
	if !ok {
		return nil
	}
	p := new(int64)
	*p = x
	return p
}

func optBool(l *leaf) (bool, bool) {
	if l == nil {
		return false, false
	}
	return l.boolean()
}

// read decodes the map in the current row, nil when it is null.
//
// Maps with the same entries as one decoded before from the same column of
// the same file are that same map: partition values in particular repeat
// across files, and sharing them saves much memory. The maps are therefore
// read-only.
func (m *mapCols) read() map[string]string {
	if m == nil {
		return nil
	}
	k, v := m.key, m.val
	d := k.Def()
	if d < m.kvDef {
		k.Next()
		v.Need()
		v.Next()
		if d < m.mapDef {
			return nil
		}
		return m.cached(nil, nil)
	}
	keys, vals := m.keys[:0], m.vals[:0]
	for {
		v.Need()
		if v.Rep() != k.Rep() {
			corruptf("columns %s and %s disagree on the entries of a map", k.Name, v.Name)
		}
		key, ok := k.str()
		if !ok {
			corruptf("column %s: map with a null key", k.Name)
		}
		val, _ := v.str()
		keys, vals = append(keys, key), append(vals, val)
		if !k.More() || k.Rep() == 0 {
			break
		}
	}
	if v.More() && v.Rep() != 0 {
		corruptf("columns %s and %s disagree on the entries of a map", k.Name, v.Name)
	}
	m.keys, m.vals = keys, vals
	return m.cached(keys, vals)
}

// cached returns a map of the given entries: one already returned with
// exactly those entries, in that order, or a new one. Duplicate keys keep
// the last value.
func (m *mapCols) cached(keys, vals []string) map[string]string {
	sig := m.sig[:0]
	for i := range keys {
		sig = append(sig, keys[i]...)
		sig = append(sig, 0)
		sig = append(sig, vals[i]...)
		sig = append(sig, 0)
	}
	m.sig = sig
	if c, ok := m.cache[string(sig)]; ok {
		return c
	}
	out := make(map[string]string, len(keys))
	caching := len(m.cache) < maxCachedMaps
	for i, key := range keys {
		if caching {
			// A cached map outlives the page its strings come from
			// (ReadTransient), and need not keep a page string alive.
			key, vals[i] = strings.Clone(key), strings.Clone(vals[i])
		}
		out[key] = vals[i]
	}
	if m.cache == nil {
		m.cache = make(map[string]map[string]string)
	}
	if caching {
		m.cache[string(sig)] = out
	}
	return out
}

// read decodes the list in the current row, nil when it is null. Null
// elements read as "".
func (c *listCols) read() []string {
	if c == nil {
		return nil
	}
	e := c.elem
	d := e.Def()
	if d < c.elemDef {
		e.Next()
		if d < c.listDef {
			return nil
		}
		return []string{}
	}
	var out []string
	for {
		s, _ := e.str()
		out = append(out, s)
		if !e.More() || e.Rep() == 0 {
			return out
		}
	}
}

// read decodes the deletion vector in the current row, nil when it is null.
func (c *dvCols) read() *actions.DeletionVector {
	if c == nil {
		return nil
	}
	if c.leaves[0].Def() < c.def {
		for _, l := range c.leaves {
			l.Need()
			l.Next()
		}
		return nil
	}
	dv := &actions.DeletionVector{
		StorageType:    optString(c.storageType),
		PathOrInlineDv: optString(c.pathOrInline),
	}
	if x, ok := optInt64(c.offset); ok {
		dv.Offset = new(int32)
		*dv.Offset = int32(x)
	}
	if x, ok := optInt64(c.size); ok {
		dv.SizeInBytes = int32(x)
	}
	if x, ok := optInt64(c.card); ok {
		dv.Cardinality = x
	}
	dv.MaxRowIndex = optInt64Ptr(c.maxRowIndex)
	return dv
}

// fileCols are the columns of add or remove.
type fileCols struct {
	path, size, modTime, deletionTime, dataChange, extended *leaf
	stats, baseRowID, rowCommitVersion, clustering          *leaf
	partitions, tags                                        *mapCols
	dv                                                      *dvCols
	statsParsed                                             *parsedStats
	partitionsParsed                                        *parsedPartitions
}

func bindFile(b binder, c *parquet.Column, isAdd bool) *fileCols {
	f := &fileCols{
		path:             b.leaf(c, "path", kindString),
		partitions:       b.stringMap(c, "partitionValues"),
		size:             b.leaf(c, "size", kindInt),
		dataChange:       b.leaf(c, "dataChange", kindBool),
		stats:            b.leaf(c, "stats", kindString),
		tags:             b.stringMap(c, "tags"),
		dv:               b.deletionVector(c),
		baseRowID:        b.leaf(c, "baseRowId", kindInt),
		rowCommitVersion: b.leaf(c, "defaultRowCommitVersion", kindInt),
	}
	if isAdd {
		f.modTime = b.leaf(c, "modificationTime", kindInt)
		f.clustering = b.leaf(c, "clusteringProvider", kindString)
	} else {
		f.deletionTime = b.leaf(c, "deletionTimestamp", kindInt)
		f.extended = b.leaf(c, "extendedFileMetadata", kindBool)
	}
	f.statsParsed = bindParsedStats(b.g.src, child(c, colStatsParsed))
	f.partitionsParsed = bindParsedPartitions(b.g.src, child(c, colPartitionsParsed))
	return f
}

// statsAndPartitions reads the stats string and the partition values of
// the file action at row, falling back on stats_parsed and
// partitionValues_parsed where the string forms are null.
func (f *fileCols) statsAndPartitions(row int) (string, map[string]string) {
	stats := optString(f.stats)
	if f.statsParsed != nil && (stats == "" || testPreferParsed) {
		stats = f.statsParsed.read(row)
	}
	pv := f.partitions.read()
	if f.partitionsParsed != nil && (pv == nil || testPreferParsed) {
		pv = f.partitionsParsed.read(row)
	}
	return stats, pv
}

// testPreferParsed makes tests build the string forms from the parsed ones
// even where both are there, to compare them.
var testPreferParsed = false

// decoders holds what the decoders of one file share.
type decoders struct {
	adds    slab[actions.Add]
	removes slab[actions.Remove]
}

// bindTops builds the decoder of each top-level column of the file that
// want asks for; follow asks for the sidecar column even when want lacks
// Sidecar.
func bindTops(src *source, root *parquet.Column, want ActionSet, follow bool) []*top {
	d := &decoders{}
	var tops []*top
	add := func(set ActionSet, name string, bind func(b binder, c *parquet.Column) func(*actions.Action)) {
		yield := want&set != 0
		if !yield && (set != Sidecar || !follow) {
			return
		}
		c := child(root, name)
		if c == nil {
			return
		}
		if c.Leaf() || c.MaxRepetitionLevel() != 0 {
			corruptf("top-level column %s is not a struct", name)
		}
		g := &group{name: name, def: structDef(c), src: src}
		dec := bind(binder{g}, c)
		if len(g.leaves) == 0 {
			return // a struct with no column we know: nothing to read
		}
		tops = append(tops, &top{set: set, g: g, yield: yield, decode: dec})
	}
	add(Protocol, colProtocol, func(b binder, c *parquet.Column) func(*actions.Action) {
		minR := b.leaf(c, "minReaderVersion", kindInt)
		minW := b.leaf(c, "minWriterVersion", kindInt)
		rf := b.stringList(c, "readerFeatures")
		wf := b.stringList(c, "writerFeatures")
		return func(a *actions.Action) {
			p := &actions.Protocol{}
			if x, ok := optInt64(minR); ok {
				p.MinReaderVersion = int32(x)
			}
			if x, ok := optInt64(minW); ok {
				p.MinWriterVersion = int32(x)
			}
			p.ReaderFeatures = rf.read()
			p.WriterFeatures = wf.read()
			a.Protocol = p
		}
	})
	add(Metadata, colMetadata, func(b binder, c *parquet.Column) func(*actions.Action) {
		id := b.leaf(c, "id", kindString)
		name := b.leaf(c, "name", kindString)
		desc := b.leaf(c, "description", kindString)
		fc := child(c, "format")
		provider := b.leaf(fc, "provider", kindString)
		options := b.stringMap(fc, "options")
		schema := b.leaf(c, "schemaString", kindString)
		partCols := b.stringList(c, "partitionColumns")
		created := b.leaf(c, "createdTime", kindInt)
		conf := b.stringMap(c, "configuration")
		return func(a *actions.Action) {
			m := &actions.Metadata{
				ID:          optString(id),
				Name:        optString(name),
				Description: optString(desc),
			}
			m.Format.Provider = optString(provider)
			m.Format.Options = options.read()
			m.SchemaString = optString(schema)
			m.PartitionColumns = partCols.read()
			if m.PartitionColumns == nil {
				m.PartitionColumns = []string{}
			}
			m.CreatedTime = optInt64Ptr(created)
			m.Configuration = conf.read()
			if m.Configuration == nil {
				m.Configuration = map[string]string{}
			}
			a.Metadata = m
		}
	})
	add(Txn, colTxn, func(b binder, c *parquet.Column) func(*actions.Action) {
		app := b.leaf(c, "appId", kindString)
		ver := b.leaf(c, "version", kindInt)
		last := b.leaf(c, "lastUpdated", kindInt)
		return func(a *actions.Action) {
			t := &actions.Txn{AppID: optString(app)}
			t.Version, _ = optInt64(ver)
			t.LastUpdated = optInt64Ptr(last)
			a.Txn = t
		}
	})
	add(DomainMetadata, colDomainMetadata, func(b binder, c *parquet.Column) func(*actions.Action) {
		dom := b.leaf(c, "domain", kindString)
		conf := b.leaf(c, "configuration", kindString)
		rem := b.leaf(c, "removed", kindBool)
		return func(a *actions.Action) {
			m := &actions.DomainMetadata{Domain: optString(dom), Configuration: optString(conf)}
			m.Removed, _ = optBool(rem)
			a.DomainMetadata = m
		}
	})
	add(CheckpointMetadata, colCheckpointMetadata, func(b binder, c *parquet.Column) func(*actions.Action) {
		ver := b.leaf(c, "version", kindInt)
		tags := b.stringMap(c, "tags")
		return func(a *actions.Action) {
			m := &actions.CheckpointMetadata{}
			m.Version, _ = optInt64(ver)
			m.Tags = tags.read()
			a.CheckpointMetadata = m
		}
	})
	add(Sidecar, colSidecar, func(b binder, c *parquet.Column) func(*actions.Action) {
		p := b.leaf(c, "path", kindString)
		size := b.leaf(c, "sizeInBytes", kindInt)
		mod := b.leaf(c, "modificationTime", kindInt)
		tags := b.stringMap(c, "tags")
		return func(a *actions.Action) {
			s := &actions.Sidecar{Path: optString(p)}
			s.SizeInBytes, _ = optInt64(size)
			s.ModificationTime, _ = optInt64(mod)
			s.Tags = tags.read()
			a.Sidecar = s
		}
	})
	add(Remove, colRemove, func(b binder, c *parquet.Column) func(*actions.Action) {
		f := bindFile(b, c, false)
		g := b.g
		return func(a *actions.Action) {
			r := d.removes.alloc()
			row := g.row
			r.Path = optString(f.path)
			r.DeletionTimestamp = optInt64Ptr(f.deletionTime)
			r.DataChange, _ = optBool(f.dataChange)
			if x, ok := optBool(f.extended); ok {
				r.ExtendedFileMetadata = new(bool)
				*r.ExtendedFileMetadata = x
			}
			r.Size = optInt64Ptr(f.size)
			r.Tags = f.tags.read()
			r.DeletionVector = f.dv.read()
			r.BaseRowID = optInt64Ptr(f.baseRowID)
			r.DefaultRowCommitVersion = optInt64Ptr(f.rowCommitVersion)
			r.Stats, r.PartitionValues = f.statsAndPartitions(row)
			a.Remove = r
		}
	})
	add(Add, colAdd, func(b binder, c *parquet.Column) func(*actions.Action) {
		f := bindFile(b, c, true)
		g := b.g
		return func(a *actions.Action) {
			x := d.adds.alloc()
			row := g.row
			x.Path = optString(f.path)
			x.Size, _ = optInt64(f.size)
			x.ModificationTime, _ = optInt64(f.modTime)
			x.DataChange, _ = optBool(f.dataChange)
			x.Tags = f.tags.read()
			x.DeletionVector = f.dv.read()
			x.BaseRowID = optInt64Ptr(f.baseRowID)
			x.DefaultRowCommitVersion = optInt64Ptr(f.rowCommitVersion)
			x.ClusteringProvider = optString(f.clustering)
			x.Stats, x.PartitionValues = f.statsAndPartitions(row)
			if x.PartitionValues == nil {
				x.PartitionValues = map[string]string{}
			}
			a.Add = x
		}
	})
	return tops
}
