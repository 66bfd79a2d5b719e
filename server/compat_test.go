package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// The tests in this file hold what brain4it's own clients (the web
// manager, the desktop and Android managers through brain4it-client-java)
// were seen to need when they were run against kafkabpl serve.

// TestHeaderNamesAreLowercase: brain4it's headers are written in lowercase,
// as brain4it's server writes them, since Java's getHeaderFields map, where
// the desktop manager's dashboards look for server-time, is case-sensitive.
func TestHeaderNamesAreLowercase(t *testing.T) {
	_, c := newTestServer(t, Config{})
	c.ok("PUT", "/m", "")
	c.ok("POST", "/m", `(set @v (function (ctx) 1))`)
	for _, tc := range []struct {
		method, path, body string
		hdr                []string
		want               []string
	}{
		{"GET", "/", "", nil, []string{"server-time", "access-control-allow-origin", "access-control-expose-headers"}},
		{"POST", "/m", "(+ 1 2)", nil, []string{"server-time", "access-control-allow-origin", "access-control-expose-headers"}},
		{"POST", "/m/@v", "", nil, []string{"server-time", "access-control-allow-origin"}},
		{"POST", "/m", "(throw \"x\")", nil, []string{"server-time", "access-control-allow-origin"}},
		{"OPTIONS", "/m", "", nil, []string{"allow", "access-control-allow-methods", "access-control-allow-headers", "access-control-allow-origin"}},
		{"POST", "/m", `("@v")`, []string{MonitorHeader, "0"}, []string{"x-content-type-options", "access-control-allow-origin"}},
	} {
		names := c.headerNames(tc.method, tc.path, tc.body, tc.hdr...)
		for _, want := range tc.want {
			if _, ok := names[want]; !ok {
				t.Errorf("%s %s %q: no header spelt %q among %v", tc.method, tc.path, tc.body, want, names)
			}
		}
		for name := range names {
			if l := strings.ToLower(name); l != name && strings.HasPrefix(l, "access-control") || l == ServerTimeHeader && l != name {
				t.Errorf("%s %s: header %q is not lowercase", tc.method, tc.path, name)
			}
		}
	}
}

// TestMonitorEndedAtTheRoot: brain4it-client-java's Monitor ends its
// session with POST / (the server's URL, no module) carrying the monitor
// header, the session id and no access key, even on a server with a key;
// the stream must end.
func TestMonitorEndedAtTheRoot(t *testing.T) {
	_, anon := newTestServer(t, Config{AccessKey: "server-key"})
	c := anon.withKey("server-key")
	c.ok("PUT", "/m", "")
	c.ok("POST", "/m", `(set @v (function (ctx) 1))`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mon := c.watch(ctx, "m", 0, "@v")
	if ch := mon.next(t, 10*time.Second); ch.fn != "@v" || ch.text != "1" {
		t.Fatalf("first line: %+v", ch)
	}
	if got := anon.ok("POST", "/", value.Format(mon.id), MonitorHeader, "0"); got != `"unwatched"` {
		t.Fatalf("unwatch at the root: %s", got)
	}
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for {
		select {
		case _, ok := <-mon.lines:
			if !ok {
				if n := c.ok("POST", "/m", `(module-notify "@v")`); n != "0" {
					t.Fatalf("module-notify after the unwatch reached %s listeners", n)
				}
				return
			}
		case <-timer.C:
			t.Fatal("the stream did not end after the unwatch at the root")
		}
	}
}

// TestErrorsSayWhichCall: a failed evaluation's 500 names the innermost
// call that raised it with a "code" element, as brain4it's server answers
// (its consoles show it); a thrown value with a code of its own keeps it;
// an exterior function's error and a parse error name none.
func TestErrorsSayWhichCall(t *testing.T) {
	_, c := newTestServer(t, Config{})
	c.ok("PUT", "/m", "")
	c.ok("POST", "/m", `(set fail (function (x) (throw "Inner" "from fail"))) (set @bad (function (ctx) (fail 1)))`)
	for _, tc := range []struct{ body, typ, code string }{
		{`(list 1 (throw "Outer" "m"))`, "Outer", `(throw "Outer" "m")`},
		{`(do (list 2 (fail 1)))`, "Inner", `(throw "Inner" "from fail")`},
		{`(+ 1 (list 2 (number-of "x")))`, "", ""},
		{`(throw ("Mine" "message" => "m" "code" => "mine"))`, "Mine", `"mine"`},
	} {
		r := c.do("POST", "/m", tc.body)
		l, _ := r.value.(*value.List)
		if r.status != 500 || l == nil {
			t.Fatalf("%s: want a 500 exception list, got %d %s", tc.body, r.status, r.text)
		}
		code, ok := l.Get("code")
		if tc.code == "" {
			// whatever failed, the code is a call of the body
			if cl, _ := code.(*value.List); !ok || cl == nil || !strings.Contains(tc.body, value.Format(cl)) {
				t.Errorf("%s: code %v is not a call of the body (answer %s)", tc.body, code, r.text)
			}
			continue
		}
		if l.At(0) != tc.typ || !ok || value.Format(code) != tc.code {
			t.Errorf("%s: want type %s and code %s, got %s", tc.body, tc.typ, tc.code, r.text)
		}
	}
	r := c.do("POST", "/m/@bad", "")
	if l, _ := r.value.(*value.List); r.status != 500 || l == nil || l.At(0) != "Inner" || l.Index("code") >= 0 {
		t.Errorf("exterior error: want Inner without code, got %d %s", r.status, r.text)
	}
	r = c.do("POST", "/m", "(+ 1")
	if l, _ := r.value.(*value.List); r.status != 500 || l == nil || l.Index("code") >= 0 {
		t.Errorf("parse error: want no code, got %d %s", r.status, r.text)
	}
	// a try handler's exception value is the script's, without the code
	if got := c.ok("POST", "/m", `(try (throw "E" "m") (ex "E" => (has ex "code")))`); got != "false" {
		t.Errorf("a handler saw a code: %s", got)
	}
}

// TestColonIsPartOfAName: brain4it's paths have one index syntax, a part
// after / that starts with a digit; a colon is part of a name, so with c
// = (10 20) and a variable c:1, /m/c:1 reads and writes c:1, not c's
// second element.
func TestColonIsPartOfAName(t *testing.T) {
	_, c := newTestServer(t, Config{})
	c.ok("PUT", "/m", `("c" => (10 20) "c:1" => "colon")`)
	if got := c.ok("GET", "/m/c:1", ""); got != `"colon"` {
		t.Errorf("GET /m/c:1 = %s, want \"colon\"", got)
	}
	if got := c.ok("GET", "/m/c/1", ""); got != "20" {
		t.Errorf("GET /m/c/1 = %s, want 20", got)
	}
	if got := c.ok("PUT", "/m/c:1", `"new"`); got != `"colon"` {
		t.Errorf("PUT /m/c:1 gave %s, want the old value \"colon\"", got)
	}
	if got := c.ok("GET", "/m", ""); got != `("c" => (10 20) "c:1" => "new")` {
		t.Errorf("after PUT /m/c:1 the scope is %s", got)
	}
	if got := c.ok("DELETE", "/m/c:1", ""); got != `"new"` {
		t.Errorf("DELETE /m/c:1 gave %s", got)
	}
	if got := c.ok("GET", "/m", ""); got != `("c" => (10 20))` {
		t.Errorf("after DELETE /m/c:1 the scope is %s", got)
	}
}

// TestRequestHeadersHaveHost: an exterior function sees every header of
// its request in ctx/request-headers, host included, as on brain4it's
// server (net/http moves Host out of the header map).
func TestRequestHeadersHaveHost(t *testing.T) {
	_, c := newTestServer(t, Config{})
	c.ok("PUT", "/m", "")
	c.ok("POST", "/m", `(set @host (function (ctx) ctx/request-headers/host)) (set @names (function (ctx) (names ctx/request-headers)))`)
	host := strings.TrimPrefix(c.base, "http://")
	if got := c.ok("POST", "/m/@host", ""); got != value.Format(host) {
		t.Errorf("ctx/request-headers/host = %s, want %q", got, host)
	}
	if got := c.ok("POST", "/m/@names", "", "X-Extra", "1"); !strings.Contains(got, `"x-extra"`) || !strings.Contains(got, `"content-type"`) {
		t.Errorf("header names %s lack x-extra or content-type", got)
	}
}

// TestResponseHeadersStartNull: ctx/response-headers is null until the
// function sets it, as brain4it's getContextList leaves it; brain4it's
// modules set the whole list.
func TestResponseHeadersStartNull(t *testing.T) {
	_, c := newTestServer(t, Config{})
	c.ok("PUT", "/m", "")
	c.ok("POST", "/m", `(set @ctx (function (ctx) ctx))`)
	got := c.ok("POST", "/m/@ctx", "")
	if !strings.HasSuffix(got, `"response-headers" => null)`) || !strings.HasPrefix(got, `("remote-address" => "127.0.0.1" "remote-port" => `) {
		t.Errorf("ctx = %s, want brain4it's order with response-headers null", got)
	}
}

// TestStartIsEvaluated: a module's start and stop hold code, which the
// server evaluates, as brain4it's Module.start and stop do; a function
// there evaluates to itself and is not called, as on brain4it, so that a
// module behaves the same on both servers.
func TestStartIsEvaluated(t *testing.T) {
	dir := t.TempDir()
	srv, c := newTestServer(t, Config{Store: DirStore{Dir: dir}})
	c.ok("PUT", "/code", "")
	c.ok("POST", "/code", `(set start (quote (set started true))) (set stop (quote (set stopped true)))`)
	c.ok("PUT", "/fn", "")
	c.ok("POST", "/fn", `(set start (function () (set started true))) (set stop (function () (set stopped true)))`)
	for _, m := range []string{"code", "fn"} {
		if got := c.ok("POST", "/"+m, "(module-start)"); got != `"Module `+m+` started."` {
			t.Fatalf("module-start: %s", got)
		}
		c.ok("POST", "/"+m, "(module-stop)")
	}
	if got := c.ok("POST", "/code", "(list started stopped)"); got != "(true true)" {
		t.Errorf("start and stop code: %s, want both evaluated", got)
	}
	if got := c.ok("POST", "/fn", "(list started stopped)"); got != "(null null)" {
		t.Errorf("start and stop functions: %s, want neither called", got)
	}
	// and at a restart
	c.ok("POST", "/code", "(set started null)")
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, c2 := newTestServer(t, Config{Store: DirStore{Dir: dir}})
	if got := c2.ok("GET", "/code/started", ""); got != "true" {
		t.Errorf("start at the restart: %s", got)
	}
	if got := c2.ok("GET", "/fn/started", ""); got != "null" {
		t.Errorf("a start function was called at the restart: %s", got)
	}
}

// TestErrorsAsBrain4its: the server's errors have the type and message
// brain4it's server gives (its RestService, ModuleManager, Module,
// MonitorService, FileSystemStore and module functions), as seen
// against brain4it's standalone server built from its sources, since a
// client or a try handler may test them.
func TestErrorsAsBrain4its(t *testing.T) {
	_, c := newTestServer(t, Config{Store: DirStore{Dir: t.TempDir()}})
	c.ok("PUT", "/m", "")
	for _, tc := range []struct {
		method, path, body, typ, msg string
		hdr                          []string
	}{
		{"PUT", "/m", "", "Exception", "Module m already exists.", nil},
		{"PUT", "/bad-name", "", "IOException", "Invalid module name: bad-name", nil},
		{"GET", "/nope", "", "IOException", "Module nope not found.", nil},
		{"POST", "/nope", "(+ 1 2)", "IOException", "Module nope not found.", nil},
		{"DELETE", "/nope", "", "IOException", "Module does not exist: nope", nil},
		{"POST", "/m", "12", "IOException", "Invalid monitor service argument", []string{MonitorHeader, "0"}},
		{"POST", "/m", `("@x")`, "NumberFormatException", `For input string: "abc"`, []string{MonitorHeader, "abc"}},
		{"POST", "/m", `("@x")`, "NumberFormatException", `For input string: "99999999999"`, []string{MonitorHeader, "99999999999"}},
		{"POST", "/", `("@x")`, "IOException", "Module null not found.", []string{MonitorHeader, "0"}},
		{"POST", "/m", `(module-save "x_")`, "IOException", "Invalid path: m/x_.snp", nil},
		{"POST", "/m", `(module-save "a-b")`, "IOException", "Invalid path: m/a-b.snp", nil},
		{"POST", "/m", `(do (set start (quote (throw "boom"))) (module-start))`, "Exception", "Start failed: org.brain4it.lang.BException", nil},
		{"POST", "/m", `(do (set start (quote (throw "Boom" "msg"))) (module-start))`, "Exception", "Start failed: org.brain4it.lang.BException: msg", nil},
		{"POST", "/m", `(do (set start null) (set stop (quote (throw "Boom" "msg"))) (module-stop))`, "Exception", "Stop failed: org.brain4it.lang.BException: msg", nil},
		{"POST", "/m", `(do (set keep 1) (module-init))`, "Exception", "Stop failed: org.brain4it.lang.BException: msg", nil},
	} {
		r := c.do(tc.method, tc.path, tc.body, tc.hdr...)
		l, _ := r.value.(*value.List)
		if r.status != 500 || l == nil {
			t.Errorf("%s %s %s: HTTP %d %s", tc.method, tc.path, tc.body, r.status, r.text)
			continue
		}
		m, _ := l.Get("message")
		if l.At(0) != tc.typ || m != tc.msg {
			t.Errorf("%s %s %s: %s, want (%q \"message\" => %q)", tc.method, tc.path, tc.body, r.text, tc.typ, tc.msg)
		}
	}
	// a module-init whose stop fails keeps the scope, as brain4it's
	if got := c.ok("GET", "/m/keep", ""); got != "1" {
		t.Errorf("the failed module-init emptied the scope: keep = %s", got)
	}
	if got := c.ok("POST", "/m", `(module-save "ok.v2_a")`); got != `"Module m saved."` {
		t.Errorf("module-save of a name brain4it takes: %s", got)
	}
	// remote-call of a name that is no exterior function gives null, as a
	// POST to it does
	if got := c.ok("POST", "/m", `(remote-call ("module" => "m" "function" => "@none"))`); got != "null" {
		t.Errorf("remote-call of no function: %s", got)
	}
	if got := c.ok("POST", "/m", `(do (set @ctx (function (ctx) ctx)) (remote-call ("function" => "@ctx")))`); got != `("remote-address" => "127.0.0.1" "remote-port" => 0 "request-headers" => null "response-headers" => null)` {
		t.Errorf("remote-call's request context: %s", got)
	}
}

// TestCyclicLists: (put r "me" r) builds a list that contains itself, as
// on brain4it's server; it is answered, watched and saved with brain4it's tags,
// and what cannot hold it (JSON, XML, a library function's argument) is
// an error, not a request that never ends.
func TestCyclicLists(t *testing.T) {
	dir := t.TempDir()
	srv, c := newTestServer(t, Config{Store: DirStore{Dir: dir}})
	c.ok("PUT", "/m", "")
	const want = `(<#1> 1 "me" => <@1>)`
	if got := c.ok("POST", "/m", `(do (set r (list 1)) (put r "me" r) r)`); got != want {
		t.Fatalf("(put r \"me\" r): %s, want %s", got, want)
	}
	if got := c.ok("GET", "/m/r/me/me", ""); got != want {
		t.Errorf("GET /m/r/me/me: %s", got)
	}
	c.ok("POST", "/m", `(set @bpl (function (ctx) r))
		(set @json (function (ctx) (set ctx/response-headers ("content-type" => "application/json")) r))
		(set @xml (function (ctx) (set ctx/response-headers ("content-type" => "text/xml")) r))`)
	if got := c.ok("POST", "/m/@bpl", ""); got != want {
		t.Errorf("@bpl: %s", got)
	}
	c.fails("POST", "/m/@json", "", "InvalidArgument", "contains itself")
	c.fails("POST", "/m/@xml", "", "InvalidArgument", "contains itself")
	// the whole scope, and a monitor's line, which is compared with the
	// last one sent before it is sent
	if got := c.ok("GET", "/m", ""); !strings.Contains(got, `"r" => `+want) {
		t.Errorf("GET /m: %s", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mon := c.watch(ctx, "m", 0, "@bpl")
	if ch := mon.next(t, 10*time.Second); ch.fn != "@bpl" || ch.text != want {
		t.Errorf("monitor of @bpl: %+v", ch)
	}
	c.ok("POST", "/m", `(do (push r 2) (module-notify "@bpl"))`)
	if ch := mon.next(t, 10*time.Second); ch.text != `(<#1> 1 "me" => <@1> 2)` {
		t.Errorf("monitor of @bpl after a change: %+v", ch)
	}
	c.ok("POST", "/m", `(remove r 2)`)
	// a library function, kafka's among them, refuses it rather than
	// serialize it without end
	c.fails("POST", "/m", `(kafka-producer "127.0.0.1:1" "client-id" => r)`, "InvalidArgument", "contains itself")
	// saved and loaded again as the same cycle
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, c2 := newTestServer(t, Config{Store: DirStore{Dir: dir}})
	if got := c2.ok("POST", "/m", `(=== r (get r "me"))`); got != "true" {
		t.Errorf("after a restart r is no longer its own element: %s", got)
	}
}

// TestServeExamplesPortable: each examples/serve/*.bpl is one expression
// (brain4it's server evaluates one a request) whose start and stop are
// code, which both servers evaluate; a function there would be called by
// neither, and the module would do nothing on brain4it's server.
func TestServeExamplesPortable(t *testing.T) {
	files, err := filepath.Glob("../examples/serve/*.bpl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no serve examples: %v", err)
	}
	_, c := newTestServer(t, Config{})
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if exprs, err := value.Parse(string(src)); err != nil || len(exprs) != 1 {
			t.Errorf("%s: %d expressions (%v), want one", f, len(exprs), err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".bpl")
		c.ok("PUT", "/"+name, "")
		c.ok("POST", "/"+name, string(src))
		for _, v := range []string{"start", "stop"} {
			if got := c.ok("GET", "/"+name+"/"+v, ""); !strings.HasPrefix(got, "(do ") {
				t.Errorf("%s: %s is %.60s..., want code, (do ...)", f, v, got)
			}
		}
	}
}
