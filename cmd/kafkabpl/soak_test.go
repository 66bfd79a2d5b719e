//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
)

// TestSoak creates and destroys producers, consumers and streams in a
// loop, four at a time, while a producer and a consumer that live
// throughout keep records flowing, against a `kafkabpl broker` process
// (so that the cluster's own goroutines, memory and sockets are not
// counted here). Then it checks that this process's goroutines, heap and
// open files came back to what they were before the loop.
//
// By default it is short (300 handles over 15 s), so that every run of the
// tests checks for leaks. KAFKABPL_SOAK=DURATION (for example 10m) makes it
// the soak test of BENCHMARKS.md: 10,000 handles over DURATION.
func TestSoak(t *testing.T) {
	d, n := 15*time.Second, 300
	if v := os.Getenv("KAFKABPL_SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d <= 0 {
			t.Fatalf("KAFKABPL_SOAK=%q: want a duration such as 10m", v)
		}
		n = 10000
	}
	bin := buildBinary(t)
	b := startBrokerProc(t, bin, "--port", "0", "--brokers", "1", "--log-level", "error")
	servers := strings.Join(b.addrs, ",")
	lib := kafkabpl.New()
	lib.SetLogOutput(io.Discard) // a line for each stream started and stopped
	t.Cleanup(func() { lib.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*d+2*time.Minute)
	defer cancel()

	// The traffic: a producer sending 10 records every 50 ms to soak-in,
	// and a consumer reading them, until the loop is over.
	var sent, polled atomic.Int64
	var errs soakErrors
	trafficDone := make(chan struct{})
	stopTraffic := sync.OnceFunc(func() { close(trafficDone) })
	defer stopTraffic()
	var traffic sync.WaitGroup
	prod := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	cons := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "group": "soak-reader",
		"topics": "soak-in", "auto-offset-reset": "earliest"}))
	traffic.Add(2)
	go func() {
		defer traffic.Done()
		msgs := make([]kafkabpl.Message, 10)
		for i := range msgs {
			msgs[i] = kafkabpl.Message{Key: fmt.Sprintf("k%d", i), Value: "v"}
		}
		for {
			select {
			case <-trafficDone:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := lib.Send(ctx, prod, []string{"soak-in"}, msgs); err != nil {
				errs.add("traffic send", err)
				continue
			}
			sent.Add(int64(len(msgs)))
		}
	}()
	go func() {
		defer traffic.Done()
		for {
			select {
			case <-trafficDone:
				return
			default:
			}
			p, err := lib.Poll(ctx, cons, 100*time.Millisecond)
			if err != nil {
				errs.add("traffic poll", err)
				continue
			}
			polled.Add(int64(p.Len()))
		}
	}()

	upcase := func(_ context.Context, r *kafkabpl.Record) ([]stream.Output, error) {
		return []stream.Output{{Message: kafkabpl.Message{Key: r.Key(), Value: strings.ToUpper(string(r.ValueBytes()))}}}, nil
	}
	// cycle creates and destroys the i-th handle: a producer that sends
	// one record, a consumer that polls once, or a stream.
	cycle := func(i int) {
		var id string
		var err error
		switch i % 3 {
		case 0:
			if id, err = lib.Create(ctx, kafkabpl.Producer, servers); err == nil {
				_, err = lib.Send(ctx, id, []string{"soak-in"}, []kafkabpl.Message{{Value: "p"}})
			}
		case 1:
			if id, err = lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "group": "soak-churn",
				"topics": "soak-in"}); err == nil {
				_, err = lib.Poll(ctx, id, 100*time.Millisecond)
			}
		case 2:
			if id, err = stream.Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "soak-stream"},
				stream.Spec{From: []string{"soak-in"}, To: "soak-out", Transform: upcase}); err == nil {
				time.Sleep(50 * time.Millisecond)
			}
		}
		if err != nil {
			errs.add(fmt.Sprintf("handle %d", i), err)
		}
		if id != "" {
			if ok, err := lib.Destroy(ctx, id); !ok || err != nil {
				errs.add(fmt.Sprintf("destroy handle %d", i), fmt.Errorf("%v %w", ok, err))
			}
		}
	}

	// One of each kind first, so that what is made once per process
	// (pools, kgo's and the runtime's own) is in the baseline.
	for i := range 3 {
		cycle(i)
	}
	waitFor2 := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not so after a minute", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor2("traffic flows", func() bool { return polled.Load() >= 100 })
	before := measure()
	t.Logf("before: %v; traffic: %d records sent, %d polled", before, sent.Load(), polled.Load())

	start := time.Now()
	const workers = 4
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				// Paced so that the n handles span d.
				time.Sleep(time.Until(start.Add(d * time.Duration(i) / time.Duration(n))))
				cycle(3 + i)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("the loop did not end in time: %d of %d handles", next.Load(), n)
	}
	sentBefore := sent.Load()
	waitFor2("traffic flows after the loop", func() bool { return sent.Load() >= sentBefore+100 })

	// Back to the baseline: goroutines and files once the last handles'
	// background work is over (a client closed in the background, a
	// connection draining), the heap after a collection.
	var after procStats
	waitFor2("goroutines and open files back to their baseline", func() bool {
		after = measure()
		return after.goroutines <= before.goroutines+2 && after.files <= before.files+2
	})
	t.Logf("after %d handles in %v: %v; traffic: %d records sent, %d polled", n, took.Round(time.Second), after, sent.Load(), polled.Load())
	if after.heap > before.heap+max(8<<20, before.heap/2) {
		t.Errorf("heap %d bytes after the loop, %d before: more than 8 MB or 50%% up", after.heap, before.heap)
	}
	stopTraffic()
	traffic.Wait()
	if e := errs.get(); len(e) > 0 {
		t.Errorf("%d errors, such as: %v", len(e), strings.Join(e[:min(5, len(e))], "; "))
	}
}

// procStats is what TestSoak watches of its own process.
type procStats struct {
	goroutines, files int
	heap              uint64 // bytes of live heap objects after a collection
}

func (p procStats) String() string {
	return fmt.Sprintf("%d goroutines, %.1f MB heap, %d open files", p.goroutines, float64(p.heap)/(1<<20), p.files)
}

func measure() procStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, _ := os.ReadDir("/proc/self/fd")
	return procStats{goroutines: runtime.NumGoroutine(), files: len(fds), heap: ms.HeapAlloc}
}

// soakErrors collects errors from several goroutines.
type soakErrors struct {
	mu   sync.Mutex
	errs []string
}

func (e *soakErrors) add(what string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, what+": "+err.Error())
}

func (e *soakErrors) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.errs
}
