package memory_test

import (
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
	s := memory.New()
	ctx := t.Context()
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	s.SetClock(func() time.Time { return at })
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
	s.SetClock(nil)
	if err := s.Put(ctx, "c", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if info, _ := s.Stat(ctx, "c"); time.Since(info.ModTime) > time.Minute {
		t.Errorf("after SetClock(nil), ModTime = %v, want about now", info.ModTime)
	}
}
