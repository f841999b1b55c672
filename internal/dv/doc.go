// Package dv reads and writes Delta deletion vectors: the sets of row
// indexes that an add or remove action marks as deleted in its data file.
//
// A deletion vector lets DELETE, UPDATE and MERGE drop rows without
// rewriting a Parquet file: the file stays, and a small bitmap of the
// positions (0-based row index in the file) of its dead rows is attached to
// the file's add action through an actions.DeletionVector descriptor. This
// package owns everything about that bitmap: the in-memory set (Bitmap), its
// serialized form, the DV file framing, Z85 text encoding, and the mapping
// from a descriptor to the bytes it names (Load). It does no log replay and
// never decides which descriptor applies to a file.
//
// # Descriptor storage types
//
//	"u"  pathOrInlineDv = <random prefix><Z85 of a 16-byte UUID, 20 chars>
//	     file at <table root>/<prefix>/deletion_vector_<uuid>.bin
//	     (no prefix: <table root>/deletion_vector_<uuid>.bin); see RelativePath
//	"i"  pathOrInlineDv = Z85 of the serialized bitmap, zero-padded to a
//	     multiple of 4 bytes; sizeInBytes is the length before padding
//	"p"  pathOrInlineDv = absolute URI of a DV file; the caller maps it to a
//	     store key (Load's resolveAbs) or refuses it
//
// # DV file (all integers big-endian)
//
//	offset 0      version      1 byte   = 1
//	per vector, starting at the descriptor's offset (the first one at 1):
//	  +0          dataSize     uint32   = the descriptor's sizeInBytes
//	  +4          bitmapData   dataSize bytes (serialized bitmap, below)
//	  +4+size     checksum     uint32   CRC-32 (IEEE) of bitmapData
//
// So the vectors of one file sit back to back, and the n-th one's offset is
// 1 + sum over earlier vectors of (dataSize + 8).
//
// # Serialized bitmap (all integers little-endian)
//
//	0   magic       uint32  1681511377 (RoaringBitmapArray, portable)
//	4   numBuckets  uint64
//	per bucket, keys strictly increasing, most significant bit 0:
//	    key         uint32  high 32 bits of every row index in the bucket
//	    bitmap      a 32-bit RoaringBitmap in the portable format (below)
//
// A 32-bit portable RoaringBitmap splits its values by their high 16 bits
// into containers of up to 65536 values:
//
//	cookie   uint32  12346: no run containers; followed by count uint32
//	         or      12347 | (count-1)<<16, followed by a run-flag bitset
//	                 of (count+7)/8 bytes (bit i set: container i is a run)
//	header   count × (key uint16, cardinality-1 uint16), keys increasing
//	offsets  count × uint32, byte offset of each container from the cookie;
//	         present with cookie 12346, or with 12347 when count >= 4
//	containers, in header order:
//	  run     nRuns uint16, then nRuns × (start uint16, length-1 uint16)
//	  array   cardinality × uint16, increasing  (cardinality <= 4096)
//	  bitmap  1024 × uint64, bit v set for value v (cardinality > 4096)
//
// Readers here check every structural rule (bounds, ordering, bucket and
// container counts, a bitmap container's population against its header),
// ignore the offsets section like the reference readers do, and reject
// trailing bytes. Spark's older "native" layout (magic 1681511376), which
// the protocol's own inline example still shows (big-endian there), is
// refused as corrupt; kernel-rs does not read it either. Writers pick the
// smallest container kind, as Java's runOptimize does, and write only
// non-empty buckets.
//
// # Errors
//
// Bytes that break the format give an error for which errors.Is(err,
// deltaerr.ErrCorrupt) holds; so do a CRC, size or cardinality that does not
// match the descriptor. No input makes this package panic.
//
// # Concurrency
//
// A Bitmap is not safe for concurrent mutation; concurrent readers
// (Contains, All, MarshalBinary) of a Bitmap nobody changes are fine.
package dv
