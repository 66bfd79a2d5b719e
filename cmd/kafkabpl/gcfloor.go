package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// serveHeapFloor is the smallest heap goal serve lets the garbage
// collector aim at. A server's live heap is small (2 MiB with a few
// modules), and with the default GOGC=100 the collector then runs once
// every 2 to 4 MiB allocated: under bench/serve's load, 45 times a
// second, each cycle taking one of two cores for its marking. With the
// goal at 16 MiB or more it runs about five times less often, for some
// 10 MiB more resident memory; a server whose live heap is 8 MiB or
// more collects exactly as with GOGC=100.
const serveHeapFloor = 16 << 20

// heapFloor keeps the collector's heap goal at floor bytes at least:
// after each collection it sets GOGC so that the goal for the live heap
// is about floor (percentFor), and GOGC=100 once the live heap is half
// of floor or more. It reads the live heap from runtime/metrics in a
// finalizer that each collection runs and that arms itself again.
type heapFloor struct {
	floor  uint64
	sample []metrics.Sample

	mu      sync.Mutex
	percent int  // the GOGC set last
	adjusts int  // collections seen
	stopped bool // stop was called: no more changes, no more arming
	prev    int  // GOGC before start, restored by stop
}

// startHeapFloor starts keeping the heap goal at floor, unless the GOGC
// environment variable is set (whoever set it chose the collector's
// pace). It returns the function that stops it and restores the GOGC it
// found.
func startHeapFloor(floor uint64, getenv func(string) string) (stop func()) {
	if h := newHeapFloor(floor, getenv); h != nil {
		return h.stop
	}
	return func() {}
}

// newHeapFloor is startHeapFloor's heapFloor, nil when it does nothing.
func newHeapFloor(floor uint64, getenv func(string) string) *heapFloor {
	if getenv("GOGC") != "" || floor == 0 {
		return nil
	}
	h := &heapFloor{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	// Before the first collection there is no live heap to read.
	h.percent = percentFor(0, floor)
	h.prev = debug.SetGCPercent(h.percent)
	h.arm()
	return h
}

// gcTick is the object whose finalizer runs after a collection.
type gcTick struct{ h *heapFloor }

func (h *heapFloor) arm() {
	runtime.SetFinalizer(&gcTick{h: h}, func(t *gcTick) {
		if t.h.adjust() {
			t.h.arm()
		}
	})
}

// runtimeHeapMinimum is the Go runtime's smallest heap goal at GOGC=100;
// it scales with GOGC (4 MiB times GOGC/100, as the Go GC guide says).
const runtimeHeapMinimum = 4 << 20

// percentFor is the GOGC that makes the heap goal of a live heap of live
// bytes floor, about, and 100 when GOGC=100 reaches floor. The goal is
// the larger of live times (1 + GOGC/100) and the runtime's minimum,
// which grows with GOGC: the smaller of the two percentages that make
// each of them floor.
func percentFor(live, floor uint64) int {
	if live*2 >= floor {
		return 100
	}
	p := int(floor * 100 / runtimeHeapMinimum)
	if live > 0 {
		p = min(p, int(floor*100/live)-100)
	}
	return max(100, p)
}

// adjust sets GOGC for the live heap the last collection left, and
// reports whether to go on.
func (h *heapFloor) adjust() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return false
	}
	h.adjusts++
	metrics.Read(h.sample)
	if h.sample[0].Value.Kind() != metrics.KindUint64 {
		return false // a runtime without the metric: leave GOGC as it is
	}
	p := percentFor(h.sample[0].Value.Uint64(), h.floor)
	// a change of less than a tenth is not worth the collector's
	// recomputing its pace
	if d := p - h.percent; d*10 > h.percent || -d*10 > h.percent {
		h.percent = p
		debug.SetGCPercent(p)
	}
	return true
}

func (h *heapFloor) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.stopped {
		h.stopped = true
		debug.SetGCPercent(h.prev)
	}
}
