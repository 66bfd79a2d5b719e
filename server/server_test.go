package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

func TestEndpoints(t *testing.T) {
	_, c := newTestServer(t, Config{})
	if got := c.ok("PUT", "/m", ""); got != `"Module m created."` {
		t.Fatalf("create: %s", got)
	}
	c.fails("PUT", "/m", "", "Exception", "Module m already exists.")
	c.fails("PUT", "/bad-name", "", "IOException", "Invalid module name: bad-name")

	// a list body replaces the scope, in its order
	c.ok("PUT", "/m", `("b" => 1 "rules" => (("p" => 1) ("predicate" => "x y")) "a b" => 3 "module-metadata" => ("icon" => "air"))`)
	if got := c.ok("GET", "/m", ""); got != `("b" => 1 "rules" => (("p" => 1) ("predicate" => "x y")) "a b" => 3 "module-metadata" => ("icon" => "air"))` {
		t.Fatalf("GET /m: %s", got)
	}
	c.ok("PUT", "/n", "")
	if got := c.ok("GET", "/", ""); got != `(("m" ("icon" => "air")) "n")` {
		t.Fatalf("GET /: %s", got)
	}
	// paths: / between parts, a part that starts with a digit an index,
	// quoted names, URL-decoded
	for path, want := range map[string]string{
		"/m/b":                    "1",
		"/m/rules/1/predicate":    `"x y"`,
		`/m/"a%20b"`:              "3",
		"/m/rules/7":              "null",
		"/m/module-metadata/icon": `"air"`,
	} {
		if got := c.ok("GET", path, ""); got != want {
			t.Errorf("GET %s = %s, want %s", path, got, want)
		}
	}
	c.fails("GET", "/m/rules/1x", "", "InvalidReference", "rules/1x")
	c.fails("GET", "/m/0/x", "", "InvalidReference", "First element is not a string: 0")
	c.fails("GET", "/nope", "", "IOException", "Module nope not found.")

	// PUT and DELETE of a path give the old value
	if got := c.ok("PUT", "/m/rules/0/p", "(1 2)"); got != "1" {
		t.Fatalf("PUT path: %s", got)
	}
	if got := c.ok("GET", "/m/rules/0", ""); got != `("p" => (1 2))` {
		t.Fatalf("after PUT: %s", got)
	}
	if got := c.ok("DELETE", "/m/b", ""); got != "1" {
		t.Fatalf("DELETE path: %s", got)
	}
	if got := c.ok("GET", "/m/b", ""); got != "null" {
		t.Fatalf("after DELETE: %s", got)
	}

	// POST evaluates, every answer has server-time and CORS headers
	r := c.do("POST", "/m", "(set x 40) (+ x 2)")
	if r.status != 200 || r.text != "42" {
		t.Fatalf("POST: %d %s", r.status, r.text)
	}
	st := r.header.Get(ServerTimeHeader)
	if ms, err := strconv.ParseInt(st, 10, 64); err != nil || time.Since(time.UnixMilli(ms)).Abs() > time.Minute {
		t.Fatalf("server-time %q", st)
	}
	if r.header.Get("Access-Control-Allow-Origin") != "*" || r.header.Get("Access-Control-Expose-Headers") != ServerTimeHeader {
		t.Fatalf("CORS headers: %v", r.header)
	}
	r = c.do("OPTIONS", "/m", "")
	if r.status != 200 || r.header.Get("Access-Control-Allow-Headers") != "access-key,monitor,session-id" ||
		r.header.Get("Access-Control-Allow-Methods") != "GET,PUT,DELETE,POST,OPTIONS" || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("OPTIONS: %d %v", r.status, r.header)
	}
	if r := c.do("PATCH", "/m", ""); r.status != http.StatusMethodNotAllowed {
		t.Fatalf("PATCH: %d", r.status)
	}

	// exterior functions get brain4it's ctx list and the body
	c.ok("POST", "/m", `(set @echo (function (ctx data) (list (get ctx "remote-address") (get (get ctx "request-headers") "x-probe") data)))`)
	if got := c.ok("POST", "/m/@echo", `(1 "two")`, "X-Probe", "p1"); got != `("127.0.0.1" "p1" (1 "two"))` {
		t.Fatalf("@echo: %s", got)
	}
	c.ok("POST", "/m", `(set fns ("@sum" => (function (ctx data) (+ data 1))))`)
	if got := c.ok("POST", "/m/fns/@sum", "41"); got != "42" {
		t.Fatalf("fns/@sum: %s", got)
	}
	if got := c.ok("POST", "/m/x", "1"); got != "null" { // not exterior: null, as brain4it's
		t.Fatalf("POST /m/x: %s", got)
	}
	// the content-type the function sets picks the output
	c.ok("POST", "/m", `(set @json (function (ctx) (set ctx/response-headers ("content-type" => "application/json")) ("a" => 1 "b" => (1 2))))`)
	r = c.do("POST", "/m/@json", "")
	if r.text != `{"a":1,"b":[1,2]}` || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("@json: %s %s", r.header.Get("Content-Type"), r.text)
	}
	c.ok("POST", "/m", `(set @xml (function (ctx) (set ctx/response-headers ("content-type" => "text/xml")) ("p" "class" => "c" "*" => ("hi" ("b" "*" => "there")))))`)
	r = c.do("POST", "/m/@xml", "")
	if r.text != `<p class="c">hi<b>there</b></p>` || !strings.HasPrefix(r.header.Get("Content-Type"), "text/xml") {
		t.Fatalf("@xml: %s %s", r.header.Get("Content-Type"), r.text)
	}
	c.ok("POST", "/m", `(set @html (function (ctx) (set ctx/response-headers ("content-type" => "text/html")) "<b>hi</b>"))`)
	if r = c.do("POST", "/m/@html", ""); r.text != "<b>hi</b>" || r.header.Get("Content-Type") != "text/html" {
		t.Fatalf("@html: %s %s", r.header.Get("Content-Type"), r.text)
	}
	// an exterior function's exception is a 500 with its list
	c.ok("POST", "/m", `(set @bad (function (ctx) (throw "Broken" "it broke")))`)
	c.fails("POST", "/m/@bad", "", "Broken", "it broke")

	if got := c.ok("DELETE", "/m", ""); got != `"Module m destroyed."` {
		t.Fatalf("destroy: %s", got)
	}
	if got := c.ok("GET", "/", ""); got != `("n")` {
		t.Fatalf("after destroy: %s", got)
	}
}

func TestBadBPLAndBodies(t *testing.T) {
	_, c := newTestServer(t, Config{MaxBody: 1024})
	c.ok("PUT", "/m", "")
	c.fails("POST", "/m", "(+ 1", "ParseException", "missing )")
	c.fails("PUT", "/m/x", `("a"`, "ParseException", "line 1")
	c.fails("POST", "/m", `(throw "Mine" "no")`, "Mine", "no")
	big := "(" + strings.Repeat("1 ", 600) + ")"
	if r := c.do("POST", "/m", big); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over MaxBody: HTTP %d %s", r.status, r.text)
	}
	if got := c.ok("POST", "/m", "(+ 1 2)"); got != "3" { // the server goes on
		t.Fatalf("after: %s", got)
	}
}

func TestAccessKeys(t *testing.T) {
	_, anon := newTestServer(t, Config{AccessKey: "server-key"})
	admin := anon.withKey("server-key")
	wrong := anon.withKey("guess")
	anon.fails("PUT", "/m", "", "SecurityException", "Operation not authorized.")
	wrong.fails("PUT", "/m", "", "SecurityException", "Operation not authorized.")
	admin.ok("PUT", "/m", "")
	// the module keeps the key it was created with
	if got := admin.ok("GET", "/m/access-key", ""); got != `"server-key"` {
		t.Fatalf("access-key: %s", got)
	}
	wrong.fails("GET", "/m", "", "SecurityException", "not authorized")
	wrong.fails("POST", "/m", "(+ 1 2)", "SecurityException", "not authorized")
	wrong.fails("PUT", "/m/x", "1", "SecurityException", "not authorized")
	wrong.fails("DELETE", "/m", "", "SecurityException", "not authorized")
	// the module's own key works for it, and module-metadata, GET / and
	// exterior functions need none
	admin.ok("POST", "/m", `(set access-key "module-key") (set module-metadata ("icon" => "x")) (set @pub (function (ctx) "public"))`)
	mod := anon.withKey("module-key")
	if got := mod.ok("POST", "/m", "(+ 1 2)"); got != "3" {
		t.Fatalf("module key: %s", got)
	}
	if got := anon.ok("GET", "/m/module-metadata", ""); got != `("icon" => "x")` {
		t.Fatalf("metadata: %s", got)
	}
	if got := anon.ok("GET", "/", ""); got != `(("m" ("icon" => "x")))` {
		t.Fatalf("list: %s", got)
	}
	if got := anon.ok("POST", "/m/@pub", ""); got != `"public"` {
		t.Fatalf("@pub: %s", got)
	}
	mod.fails("PUT", "/other", "", "SecurityException", "not authorized") // a module key creates nothing
	// A module without access-key needs the server key (brain4it leaves
	// it open to anyone).
	admin.ok("POST", "/m", "(delete access-key)")
	anon.fails("POST", "/m", "(+ 1 2)", "SecurityException", "not authorized")
	mod.fails("GET", "/m", "", "SecurityException", "not authorized")
	if got := admin.ok("POST", "/m", "(+ 1 2)"); got != "3" {
		t.Fatalf("server key on a module without its own: %s", got)
	}
	if got := anon.ok("POST", "/m/@pub", ""); got != `"public"` {
		t.Fatalf("@pub without the module's key: %s", got)
	}
}

func TestRunawayEvalIsCancelled(t *testing.T) {
	_, c := newTestServer(t, Config{MaxEvalTime: 300 * time.Millisecond})
	c.ok("PUT", "/m", "")
	c.ok("PUT", "/other", "")
	done := make(chan string, 1)
	go func() { done <- c.fails("POST", "/m", "(while true (set x 1))", "Interrupted", "") }()
	// another module, and the same one, answer meanwhile
	if got := c.ok("POST", "/other", "(+ 1 2)"); got != "3" {
		t.Fatalf("other: %s", got)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the runaway evaluation was not cancelled")
	}
	// a client that goes away cancels its evaluation too
	srv := New(Config{})
	m, err := srv.CreateModule(context.Background(), "m", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := m.EvalText(ctx, "(while true (set x 1))"); err == nil || !strings.Contains(err.Error(), "Interrupted") {
		t.Fatalf("err = %v", err)
	}
	// a panic in a library function is an exception, not a crash
	m.Interp().Define("boom", func(context.Context, *value.List) (any, error) { panic("boom") })
	if _, err := m.EvalText(context.Background(), "(boom)"); err == nil || !strings.Contains(err.Error(), "InternalError") {
		t.Fatalf("panic: %v", err)
	}
	srv.Shutdown(context.Background())
}

func TestMonitor(t *testing.T) {
	_, c := newTestServer(t, Config{PingInterval: 200 * time.Millisecond})
	c.ok("PUT", "/m", "")
	c.ok("POST", "/m", `(set v 1) (set @v (function (ctx) v)) (set @w (function (ctx) (list "w" v)))`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mon := c.watch(ctx, "m", 0, "@v", "@w")
	got := map[string]string{}
	for range 2 {
		ch := mon.next(t, 10*time.Second)
		got[ch.fn] = ch.text
		if time.Since(time.UnixMilli(ch.serverTime)).Abs() > time.Minute {
			t.Fatalf("server time %d", ch.serverTime)
		}
	}
	if got["@v"] != "1" || got["@w"] != `("w" 1)` {
		t.Fatalf("first values: %v", got)
	}
	// module-notify (and module-publish) evaluate at once; an unchanged
	// value sends nothing
	start := time.Now()
	if n := c.ok("POST", "/m", `(set v 2) (module-notify "@v")`); n != "1" {
		t.Fatalf("module-notify gave %s", n)
	}
	if ch := mon.next(t, 10*time.Second); ch.fn != "@v" || ch.text != "2" {
		t.Fatalf("after notify: %+v", ch)
	}
	t.Logf("module-notify to monitor line: %v", time.Since(start))
	c.ok("POST", "/m", `(module-publish "@v" "@w")`)
	if ch := mon.next(t, 10*time.Second); ch.fn != "@w" || ch.text != `("w" 2)` {
		t.Fatalf("after publish: %+v", ch)
	}
	// pings come while idle
	select {
	case line := <-mon.lines:
		if line != "" {
			t.Fatalf("want a ping, got %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no ping")
	}
	// unwatch ends the stream
	if got := c.ok("POST", "/m", value.Format(mon.id), MonitorHeader, "0"); got != `"unwatched"` {
		t.Fatalf("unwatch: %s", got)
	}
	for {
		select {
		case _, ok := <-mon.lines:
			if !ok {
				goto ended
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the stream did not end")
		}
	}
ended:
	// a polled monitor sees a change without notify
	mon = c.watch(ctx, "m", 50, "@v")
	mon.next(t, 10*time.Second)
	c.ok("POST", "/m", "(set v 3)")
	if ch := mon.next(t, 10*time.Second); ch.text != "3" {
		t.Fatalf("polled: %+v", ch)
	}
	c.fails("POST", "/nope", `("@v")`, "IOException", "Module nope not found.", MonitorHeader, "0")
	c.fails("POST", "/m", "12", "IOException", "Invalid monitor service argument", MonitorHeader, "0")
}

// 50 clients at once on one module, under -race: evaluations, exterior
// calls, reads, writes and monitors.
func TestConcurrentClients(t *testing.T) {
	_, c := newTestServer(t, Config{})
	c.ok("PUT", "/m", "")
	c.ok("POST", "/m", `(set n 0) (set log (list)) (set @n (function (ctx) n))
		(set @add (function (ctx k) (sync log (push log k) (set n (+ n 1)) (module-notify "@n") n)))`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mon := c.watch(ctx, "m", 0, "@n")
	const clients, each = 50, 10
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				switch j % 5 {
				case 0:
					c.ok("POST", "/m/@add", fmt.Sprint(i))
				case 1:
					c.ok("POST", "/m", fmt.Sprintf(`(@add null %d)`, i))
				case 2:
					c.ok("GET", "/m", "")
				case 3:
					c.ok("PUT", fmt.Sprintf("/m/k%d", i), fmt.Sprintf("(%d %d)", i, j))
				case 4:
					c.ok("GET", "/m/log", "")
				}
			}
		}()
	}
	wg.Wait()
	if got := c.ok("GET", "/m/n", ""); got != fmt.Sprint(clients*each*2/5) {
		t.Fatalf("n = %s", got)
	}
	// the monitor saw the last value
	want := fmt.Sprint(clients * each * 2 / 5)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case line := <-mon.lines:
			if strings.HasPrefix(line, `("@n" `+want+" ") {
				return
			}
		case <-deadline:
			t.Fatalf("the monitor never sent %s", want)
		}
	}
}
