package server

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// countingObserver is an Observer that counts what it is told.
type countingObserver struct {
	mu       sync.Mutex
	requests map[string]int // "module kind"
	failed   map[string]int
	evals    map[string]int
	evalErrs map[string]int
	monitors map[string]int
}

func newCountingObserver() *countingObserver {
	return &countingObserver{requests: map[string]int{}, failed: map[string]int{}, evals: map[string]int{},
		evalErrs: map[string]int{}, monitors: map[string]int{}}
}

func (o *countingObserver) ServeRequest(module, kind string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests[module+" "+kind]++
}

func (o *countingObserver) ServeRequestFailed(module, kind string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failed[module+" "+kind]++
}

func (o *countingObserver) ServeEvaluation(module, kind string, took time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if took < 0 {
		panic(fmt.Sprintf("evaluation of %s %s took %v", module, kind, took))
	}
	o.evals[module+" "+kind]++
	if err != nil {
		o.evalErrs[module+" "+kind]++
	}
}

func (o *countingObserver) ServeMonitors(module string, delta int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.monitors[module] += delta
}

// snapshot returns a copy of one of the counts.
func (o *countingObserver) snapshot(m map[string]int) map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// want fails unless got holds exactly want.
func wantCounts(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// TestObserver: every request is counted once by kind, under the module
// it names only when that module exists; evaluations are timed by kind,
// failures counted, and monitor streams followed while they run.
func TestObserver(t *testing.T) {
	o := newCountingObserver()
	_, c := newTestServer(t, Config{Observer: o})
	c.ok("PUT", "/m", "") // created by it: counted under no module
	c.ok("POST", "/m", `(set v 1) (set @v (function (ctx) v))`)
	c.ok("POST", "/m/@v", "")
	c.ok("POST", "/m/@nothing", "") // no exterior function: null, no evaluation
	c.fails("POST", "/m", `(throw "boom")`, "boom", "")
	c.ok("GET", "/m/v", "")
	c.ok("GET", "/", "")
	c.fails("GET", "/x1", "", "IOException", "Module x1 not found.") // a name no module has is no label
	c.fails("GET", "/x2", "", "IOException", "Module x2 not found.")
	c.ok("PUT", "/m/w", "2")
	c.ok("DELETE", "/m/w", "")
	c.ok("OPTIONS", "/m", "")
	if r := c.do("PATCH", "/m", ""); r.status != 405 {
		t.Fatalf("PATCH: HTTP %d", r.status)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mon := c.watch(ctx, "m", 0, "@v")
	mon.next(t, 10*time.Second)
	if got := o.snapshot(o.monitors); got["m"] != 1 {
		t.Errorf("monitors while one runs: %v", got)
	}
	if got := c.ok("POST", "/m", value.Format(mon.id), MonitorHeader, "0"); got != `"unwatched"` {
		t.Fatalf("unwatch: %s", got)
	}
	for range mon.lines {
	}
	waitFor(t, func() bool { return o.snapshot(o.monitors)["m"] == 0 })

	wantCounts(t, "requests", o.snapshot(o.requests), map[string]int{
		" put": 1, "m evaluate": 2, "m exterior": 2, "m get": 1, " list": 1, " get": 2, "m put": 1, "m delete": 1,
		"m options": 1, "m other": 1, "m monitor": 2,
	})
	wantCounts(t, "failed", o.snapshot(o.failed), map[string]int{"m evaluate": 1, " get": 2, "m other": 1})
	evals := o.snapshot(o.evals)
	if evals["m monitor"] < 1 {
		t.Errorf("no monitor evaluation counted: %v", evals)
	}
	delete(evals, "m monitor") // as many as the stream made
	wantCounts(t, "evaluations", evals, map[string]int{"m evaluate": 2, "m exterior": 1})
	wantCounts(t, "failed evaluations", o.snapshot(o.evalErrs), map[string]int{"m evaluate": 1})

	// start and stop code are evaluations too
	c.ok("PUT", "/m/start", "(quote (set started true))")
	c.ok("PUT", "/m/stop", "(quote (set stopped true))")
	c.ok("POST", "/m", "(module-stop)")
	c.ok("POST", "/m", "(module-start)")
	waitFor(t, func() bool { e := o.snapshot(o.evals); return e["m start"] == 1 && e["m stop"] == 1 })
}
