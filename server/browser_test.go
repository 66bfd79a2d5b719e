package server

import (
	"context"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/internal/browsertest"
)

// TestBrowser is brain4it's web client's way in, in a real browser:
// headless chromium loads a page from another origin, which creates a
// module, posts code, calls an exterior function and follows a monitor
// stream with fetch, so that CORS (the preflight the monitor header
// causes, server-time exposed) and chunked streaming are proven where
// only a browser checks them. It fails without chromium when CI is set.
func TestBrowser(t *testing.T) {
	browsertest.Require(t)
	_, c := newTestServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := browsertest.Run(ctx, t, c.base); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserDashboard draws examples/serve/averages.bpl's dashboard (a
// graph and a display, following two streams' stores) in headless
// chromium, sends readings to its input topic, and reads each new value
// from the rendered page: the display's text and the graph's legend, the
// DOM read from outside the page through the DevTools protocol. It fails
// without chromium when CI is set.
func TestBrowserDashboard(t *testing.T) {
	browsertest.Require(t)
	c, send := startAverages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	page, err := browsertest.Dashboard(ctx, t, c.base, "averages")
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	wait := func(what, expr string, ok func(string) bool) string {
		t.Helper()
		wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
		defer wcancel()
		got, err := page.WaitFor(wctx, expr, ok)
		if err != nil {
			log, _ := page.Eval(ctx, `document.getElementById("log").textContent`)
			t.Fatalf("%s: %v\nthe page's log:\n%v\nchromium's output:\n%s", what, err, log, page.Output())
		}
		t.Logf("seen: %s: %s", what, got)
		return got
	}
	const (
		state   = `document.body.dataset.state`
		display = `document.querySelector("#widget-latest .display-value").textContent`
		legend  = `[...document.querySelectorAll("#widget-graph .legend li")].map(e => e.textContent).join("; ")`
		lines   = `String(document.querySelectorAll("#widget-graph svg polyline").length)`
	)
	if got := wait("the dashboard's monitor", state, func(s string) bool { return s != "loading" }); got != "watching" {
		log, _ := page.Eval(ctx, `document.getElementById("log").textContent`)
		t.Fatalf("the dashboard: %s\nthe page's log:\n%v", got, log)
	}
	// the monitor's first line: no readings yet
	wait("the empty display", display, equals("()"))

	send(at("s1", 5, 20), at("s2", 10, 30))
	wait("the first readings on the display", display, equals(`("s1" => 20 "s2" => 30)`))
	wait("the first averages on the graph", legend, equals("s1: 20; s2: 30"))

	// a new reading moves s1's latest value and its minute's average
	send(at("s1", 50, 24))
	wait("the new reading on the display", display, equals(`("s1" => 24 "s2" => 30)`))
	wait("the new average on the graph", legend, equals("s1: 22; s2: 30"))

	// and one in the next minute adds a point to s1's line
	send(at("s1", 65, 26))
	wait("the next minute on the display", display, equals(`("s1" => 26 "s2" => 30)`))
	wait("the next minute on the graph", legend, equals("s1: 26; s2: 30"))
	if got := wait("the graph's lines", lines, func(string) bool { return true }); got != "2" {
		t.Errorf("the graph draws %s lines, want one per sensor", got)
	}
	points := `document.querySelector('#widget-graph polyline[data-dataset="s1"]').getAttribute("points").split(" ").length + ""`
	if got := wait("s1's points", points, func(string) bool { return true }); got != "2" {
		t.Errorf("s1's line has %s points, want 2 (a minute each)", got)
	}
}

// equals is a WaitFor condition: the value is want.
func equals(want string) func(string) bool {
	return func(s string) bool { return s == want }
}
