package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestServeHeapFloorPercent(t *testing.T) {
	for _, c := range []struct {
		live, floor uint64
		want        int
	}{
		{0, 16 << 20, 400},       // the runtime's minimum, 4 MiB × 400/100
		{1 << 10, 16 << 20, 400}, // not 1638300: the minimum would be 64 GiB
		{2 << 20, 16 << 20, 400},
		{4 << 20, 16 << 20, 300}, // 4 MiB × (1 + 300/100)
		{6 << 20, 16 << 20, 166},
		{8 << 20, 16 << 20, 100},
		{100 << 20, 16 << 20, 100},
		{0, 1 << 20, 100}, // a floor under the runtime's own minimum
	} {
		if got := percentFor(c.live, c.floor); got != c.want {
			t.Errorf("percentFor(%d, %d) = %d, want %d", c.live, c.floor, got, c.want)
		}
	}
}

// gogc reads GOGC without changing it (for a moment, -1 turns the
// collector off).
func gogc() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// The floor sets GOGC at once, adjusts it after every collection for the
// live heap, and stop restores GOGC; with GOGC set in the environment it
// changes nothing.
func TestServeHeapFloor(t *testing.T) {
	before := gogc()
	if h := newHeapFloor(16<<20, func(string) string { return "50" }); h != nil || gogc() != before {
		t.Fatalf("with GOGC set: %v, GOGC %d, want nothing done", h, gogc())
	}

	h := newHeapFloor(16<<20, func(string) string { return "" })
	if got := gogc(); got != 400 {
		t.Fatalf("before the first collection GOGC %d, want 400 (a 16 MiB goal from 4 MiB)", got)
	}
	// collections run the finalizer, which arms itself again
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		h.mu.Lock()
		n := h.adjusts
		h.mu.Unlock()
		if n >= 3 {
			break
		}
	}
	h.mu.Lock()
	n := h.adjusts
	h.mu.Unlock()
	if n < 3 {
		t.Fatalf("%d adjustments after a minute of collections, want 3", n)
	}
	// another floor: GOGC follows it, within the tenth adjust ignores
	runtime.GC()
	live := liveHeap()
	h.mu.Lock()
	h.floor = 64 << 20
	h.mu.Unlock()
	h.adjust()
	if got, want := gogc(), percentFor(live, 64<<20); got*10 < want*9 || got*10 > want*11 {
		t.Fatalf("a 64 MiB floor, live heap %d: GOGC %d, want about %d", live, got, want)
	}
	h.stop()
	if got := gogc(); got != before {
		t.Fatalf("after stop GOGC %d, want %d restored", got, before)
	}
	runtime.GC()
	runtime.GC()
	if got := gogc(); got != before {
		t.Fatalf("collections after stop changed GOGC to %d", got)
	}
}
