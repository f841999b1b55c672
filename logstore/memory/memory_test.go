package memory_test

import (
	"errors"
	"testing"
	"time"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/logstore/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) logstore.Store { return memory.New() })
}

func TestSetClock(t *testing.T) {
	d := memory.NewDriver()
	s := logstore.NewPortable(d)
	ctx := t.Context()
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	d.SetClock(func() time.Time { return at })
	if err := s.PutIfAbsent(ctx, "a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	at = at.Add(time.Hour)
	if err := s.Put(ctx, "b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]time.Time{"a": at.Add(-time.Hour), "b": at} {
		info, err := s.Stat(ctx, key)
		if err != nil || !info.ModTime.Equal(want) {
			t.Errorf("Stat(%q).ModTime = %v, %v; want %v", key, info.ModTime, err, want)
		}
	}
	for info, err := range s.List(ctx, "", "") {
		if err != nil {
			t.Fatal(err)
		}
		if info.Key == "a" && !info.ModTime.Equal(at.Add(-time.Hour)) {
			t.Errorf("List: a has ModTime %v", info.ModTime)
		}
	}
	d.SetClock(nil)
	if err := s.Put(ctx, "c", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if info, _ := s.Stat(ctx, "c"); time.Since(info.ModTime) > time.Minute {
		t.Errorf("after SetClock(nil), ModTime = %v, want about now", info.ModTime)
	}
}

// TestNamed checks that memory://NAME handles share one store, that closing
// one handle leaves the others working, and the URIs.
func TestNamed(t *testing.T) {
	ctx := t.Context()
	a, err := logstore.Open(ctx, "memory://TestNamed")
	if err != nil {
		t.Fatal(err)
	}
	b, err := logstore.Open(ctx, "mem://TestNamed/")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, "k"); !errors.Is(err, logstore.ErrClosed) {
		t.Errorf("Get on the closed handle = %v, want ErrClosed", err)
	}
	if got, err := b.Get(ctx, "k"); err != nil || string(got) != "v" {
		t.Errorf("Get on the other handle = %q, %v; want \"v\"", got, err)
	}
	for s, want := range map[logstore.Store]string{b: "memory://TestNamed", memory.New(): "memory://"} {
		if got := s.URI(); got != want {
			t.Errorf("URI() = %q, want %q", got, want)
		}
	}
	if _, err := memory.Open(ctx, "s3://x"); !errors.Is(err, logstore.ErrInvalidKey) {
		t.Errorf("Open(s3://x) = %v, want ErrInvalidKey", err)
	}
}
