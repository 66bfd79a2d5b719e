package server

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/browsertest"
	"github.com/brain4it/kafkabpl/value"
)

// groupCounts is a module that counts readings per sensor in a stream's
// store, run by several servers in one group, and draws the total over
// 16 sensors on a dashboard whose monitor is told by module-notify only
// (polling-interval 0). Its stream's on-commit tells @total.
const groupCounts = `(do
  (set counts null)
  (set sensors (list "s0" "s1" "s2" "s3" "s4" "s5" "s6" "s7" "s8" "s9" "s10" "s11" "s12" "s13" "s14" "s15"))
  (set @total (function (ctx)
    (local n c)
    (set n 0)
    (if (!= counts null)
      (for-each sensors s
        (set c (kafka-store-get counts s))
        (if (!= c null) (set n (+ n c)))))
    n))
  (set @dashboards (function (ctx) dashboards))
  (set dashboards
    ("counts" =>
      ("widgets" => ("total" => ("type" => "display" "get-value" => @total))
       "layouts" => (("dimensions" => (4 1) "widgets" => (("total" 0 0 4 1))))
       "polling-interval" => 0)))
  (set start (quote (do
    (set counts (kafka-stream (list "servers" => kafka-servers "group" => "group-counts" "session-timeout" => 6000)
      "from" => "readings" "to" => "readings-counted" "store" => "per-sensor"
      "transform" => (function (in n) (kafka-state (+ (if (= n null) 0 n) 1)))
      "on-commit" => (function () (module-notify "@total"))))
    "started")))
  (set stop (quote (do (kafka-destroy counts) "stopped")))
  "defined")`

// TestBrowserDashboardGroup draws a dashboard, in headless chromium, of a
// module two servers run in one group, on the first server: readings of
// the sensors the second server holds are committed there, and the first
// server's dashboard shows them, told by the second server's
// module-notify (its pings an hour apart, nothing else re-evaluates it).
// It fails without chromium when CI is set.
func TestBrowserDashboardGroup(t *testing.T) {
	browsertest.Require(t)
	cluster, srvs, cs := startPeers(t, groupCounts, Config{PingInterval: time.Hour}, Config{PingInterval: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	send := func(sensors ...string) {
		t.Helper()
		var msgs []kafkabpl.Message
		for _, s := range sensors {
			msgs = append(msgs, kafkabpl.Message{Key: s, Value: "r"})
		}
		sendReadings(t, cluster, msgs...)
	}

	settledPeers(t, srvs, -1) // each holds 2 partitions: the first readings are committed by both
	page, err := browsertest.Dashboard(ctx, t, cs[0].base, "counts")
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	const (
		state   = `document.body.dataset.state`
		display = `document.querySelector("#widget-total .display-value").textContent`
	)
	wait := func(what, expr string, want string) {
		t.Helper()
		wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
		defer wcancel()
		start := time.Now()
		if _, err := page.WaitFor(wctx, expr, equals(want)); err != nil {
			log, _ := page.Eval(ctx, `document.getElementById("log").textContent`)
			t.Fatalf("%s: %v\nthe page's log:\n%v\nchromium's output:\n%s", what, err, log, page.Output())
		}
		t.Logf("seen after %v: %s: %s", time.Since(start), what, want)
	}
	wait("the dashboard's monitor", state, "watching")
	var all []string
	for i := range 16 {
		all = append(all, fmt.Sprintf("s%d", i))
	}
	send(all...)
	wait("the first readings' total", display, "16")

	// The sensors the second server holds: readings of them are
	// committed there only.
	held, err := value.Parse(cs[1].ok("POST", "/counts", `(do (set out (list)) (for-each (kafka-store-range counts) (s n) (push out s)) out)`))
	if err != nil {
		t.Fatal(err)
	}
	var theirs []string
	for _, v := range held[0].(*value.List).Values() {
		theirs = append(theirs, v.(string))
	}
	if len(theirs) == 0 || len(theirs) == 16 {
		t.Fatalf("the second server holds %d of the 16 sensors: want some, not all", len(theirs))
	}
	send(theirs...)
	wait("the total after readings committed by the other server", display, strconv.Itoa(16+len(theirs)))
}
