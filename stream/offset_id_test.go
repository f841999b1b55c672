package stream_test

import (
	"context"
	"errors"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/stream"
)

// TestOffsetTableID: the offsets of a stream carry the table id, as text
// too, and a stream resumed at an offset of another table is refused. An
// offset without an id (written before ids were kept, or unpacked from a
// txn version) resumes as before.
func TestOffsetTableID(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, "", nil)
	appendBatch(t, tbl, 1, 1)
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := snap.Metadata().ID
	src, err := stream.NewSource(ctx, tbl.Store(), stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, bs := drain(t, src)
	end := bs[len(bs)-1].End
	if end.TableID != id || src.Offset().TableID != id || bs[0].Start.TableID != id {
		t.Fatalf("offsets %+v, %+v, %+v: want table id %s", bs[0].Start, end, src.Offset(), id)
	}
	text := end.String()
	if text != "2:0@"+id {
		t.Errorf("offset text %q", text)
	}
	back, err := stream.ParseOffset(text)
	if err != nil || back != end {
		t.Fatalf("ParseOffset(%q) = %+v, %v; want %+v", text, back, err, end)
	}
	for _, bad := range []string{"2:0@", "2@", "@x"} {
		if _, err := stream.ParseOffset(bad); !errors.Is(err, stream.ErrOffset) {
			t.Errorf("ParseOffset(%q): %v, want ErrOffset", bad, err)
		}
	}
	appendBatch(t, tbl, 2, 1)
	// The same table resumes.
	again, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromOffset(back)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := drain(t, again)
	equalKeys(t, got, want(1, "", 2))
	// Another table is refused, at the start.
	other := newTable(t, "", nil)
	appendBatch(t, other, 7, 1)
	appendBatch(t, other, 8, 1)
	if _, err := stream.NewSource(ctx, other.Store(), stream.Options{Start: stream.FromOffset(end)}); !errors.Is(err, deltaerr.ErrTableReplaced) {
		t.Fatalf("resuming another table: %v, want ErrTableReplaced", err)
	}
	// Without an id, the offset is only a position.
	noID := end
	noID.TableID = ""
	if _, err := stream.NewSource(ctx, other.Store(), stream.Options{Start: stream.FromOffset(noID)}); err != nil {
		t.Fatalf("resuming at an offset without a table id: %v", err)
	}
	if o := stream.OffsetFromSeq(must(end.Seq())); o.TableID != "" || o.Version != end.Version {
		t.Errorf("OffsetFromSeq: %+v", o)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// position is o without its table id.
func position(o stream.Offset) stream.Offset {
	o.TableID = ""
	return o
}
