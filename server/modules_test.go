package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/functions"
	"github.com/brain4it/kafkabpl/value"
)

// A restart with a data directory keeps the modules, their functions and
// self-referencing scopes, runs stop at shutdown and start at start.
func TestRestartKeepsModules(t *testing.T) {
	dir := t.TempDir()
	srv, c := newTestServer(t, Config{Store: DirStore{Dir: dir}})
	c.ok("PUT", "/m", "")
	c.ok("POST", "/m", `(set starts 0) (set stops 0) (set shared (list 1 2)) (set pair (list shared shared))
		(set start (quote (do (set starts (+ starts 1)) (set ticker (spawn (while true (sleep 10)))))))
		(set stop (quote (set stops (+ stops 1))))
		(set @starts (function (ctx) starts))`)
	old := srv.Module("m").Interp()
	c.ok("POST", "/m", "(module-start)")
	if old.Busy() != 1 {
		t.Fatalf("start spawned %d executors", old.Busy())
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if old.Busy() != 0 {
		t.Fatalf("shutdown left %d executors", old.Busy())
	}
	b, err := os.ReadFile(filepath.Join(dir, "m", "head.snp"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"pair" => (<#1> 1 2) <@1>)`) && !strings.Contains(string(b), `"shared" => (<#1> 1 2)`) {
		t.Fatalf("the snapshot lacks brain4it's tags: %s", b)
	}

	srv2, c2 := newTestServer(t, Config{Store: DirStore{Dir: dir}})
	if got := c2.ok("GET", "/m/stops", ""); got != "1" {
		t.Fatalf("stops = %s", got)
	}
	if got := c2.ok("POST", "/m/@starts", ""); got != "2" { // (module-start) above, then the server's
		t.Fatalf("starts = %s", got)
	}
	if srv2.Module("m").Interp().Busy() != 1 {
		t.Fatalf("the restarted start spawned %d executors", srv2.Module("m").Interp().Busy())
	}
	if got := c2.ok("POST", "/m", "(=== (get pair 0) (get pair 1))"); got != "true" {
		t.Fatalf("shared list after reload: %s", got)
	}
}

func TestModuleFunctions(t *testing.T) {
	srv, c := newTestServer(t, Config{Store: DirStore{Dir: t.TempDir()}})
	c.ok("PUT", "/m", "")
	c.ok("PUT", "/lib", "")
	if got := c.ok("POST", "/m", "(module-name)"); got != `"m"` {
		t.Fatalf("module-name: %s", got)
	}
	c.ok("POST", "/m", "(set x 1)")
	if got := c.ok("POST", "/m", `(module-save "backup1")`); got != `"Module m saved."` {
		t.Fatalf("module-save: %s", got)
	}
	c.ok("POST", "/m", `(module-save "backup2")`)
	c.ok("POST", "/m", "(set x 2)")
	if got := c.ok("POST", "/m", `(module-load "backup1") x`); got != "1" {
		t.Fatalf("module-load: %s", got)
	}
	got := c.ok("POST", "/m", `(module-snapshots "backup*")`)
	if !strings.Contains(got, `("name" => "backup1" "last-modified" => `) || !strings.Contains(got, `"backup2"`) || strings.Contains(got, `"head"`) {
		t.Fatalf("module-snapshots: %s", got)
	}
	c.ok("POST", "/m", `(module-save "backup1" true)`) // the old one is kept as backup1_DATE
	if got := c.ok("POST", "/m", `(size (module-snapshots "backup1_*"))`); got != "1" {
		t.Fatalf("backup: %s", got)
	}
	if got := c.ok("POST", "/m", `(module-delete "backup*") (size (module-snapshots))`); got != "1" {
		t.Fatalf("module-delete left: %s", got) // head
	}
	// module-save inside (sync l ...) prints l: the monitor is the
	// caller's (without that, the save gives up after 30 s)
	if got := c.ok("POST", "/m", `(set l (list 1)) (sync l (push l 2) (module-save "insync"))`); got != `"Module m saved."` {
		t.Fatalf("module-save in sync: %s", got)
	}
	c.ok("POST", "/m", `(module-delete "insync")`)
	c.fails("POST", "/m", `(module-load "nope")`, "FileNotFoundException", "m/nope.snp (No such file or directory)")
	c.fails("POST", "/m", `(module-save "../x")`, "IOException", "Invalid path: m/../x.snp")
	c.fails("POST", "/m", `(module-notify 3)`, "InvalidArgument", "module-notify")

	// stop kills executors and destroys Kafka handles; start runs again
	c.ok("POST", "/m", `(set start (quote (set t (spawn (while true (sleep 10)))))) (eval start)`)
	in, lib := srv.Module("m").Interp(), srv.Module("m").Library()
	if in.Busy() != 1 {
		t.Fatalf("busy %d", in.Busy())
	}
	if got := c.ok("POST", "/m", "(module-stop)"); got != `"Module m stopped."` {
		t.Fatalf("module-stop: %s", got)
	}
	if in.Busy() != 0 {
		t.Fatalf("module-stop left %d executors", in.Busy())
	}
	if _, err := functions.Table(lib)["kafka-producer"](context.Background(), value.NewList("127.0.0.1:1")); err == nil {
		t.Fatal("the stopped module's library still makes handles")
	}
	if got := c.ok("POST", "/m", "(module-start)"); got != `"Module m started."` {
		t.Fatalf("module-start: %s", got)
	}
	if srv.Module("m").Interp().Busy() != 1 {
		t.Fatal("module-start did not run start")
	}
	// an executor may stop its own module
	c.ok("POST", "/m", "(spawn (module-stop))")
	waitFor(t, func() bool { return srv.Module("m").Interp().Busy() == 0 })
	if got := c.ok("POST", "/m", "(module-init) (global-scope)"); got != `()` {
		t.Fatalf("module-init: %s", got)
	}

	// remote-call: another module of this server, and over HTTP
	c.ok("POST", "/lib", `(set fn ("@twice" => (function (ctx x) (* 2 x)) "@sum" => (function (ctx l) (+ (get l 0) (get l 1)))))`)
	if got := c.ok("POST", "/m", `(remote-call ("module" => "lib" "function" => "fn/@twice") 21)`); got != "42" {
		t.Fatalf("remote-call direct: %s", got)
	}
	if got := c.ok("POST", "/m", `(remote-call "`+c.base+`/lib/fn/@sum" 40 2)`); got != "42" {
		t.Fatalf("remote-call url: %s", got)
	}
	c.ok("POST", "/m", `(set setup ("remote-modules" => ("here" => "`+c.base+`/lib")))`)
	if got := c.ok("POST", "/m", `(remote-call "here:fn/@twice" 4)`); got != "8" {
		t.Fatalf("remote-call server name: %s", got)
	}
	c.ok("POST", "/lib", `(set @fail (function (ctx) (throw "Nope" "no way")))`)
	c.fails("POST", "/m", `(remote-call "`+c.base+`/lib/@fail")`, "Nope", "no way")

	// module-monitor follows another module's function
	c.ok("POST", "/lib", `(set v 1) (set @v (function (ctx) v))`)
	if got := c.ok("POST", "/m", `(set seen null) (module-monitor "`+c.base+`" "lib" "@v" (function (fn value time) (set seen value)))`); got != `"registered"` {
		t.Fatalf("module-monitor: %s", got)
	}
	waitFor(t, func() bool { return c.ok("GET", "/m/seen", "") == "1" })
	c.ok("POST", "/lib", `(set v 5) (module-notify "@v")`)
	waitFor(t, func() bool { return c.ok("GET", "/m/seen", "") == "5" })
	if got := c.ok("POST", "/m", `(module-monitor "`+c.base+`" "lib" "@v" null)`); got != `"unregistered"` {
		t.Fatalf("module-monitor null: %s", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ParsePath reads a path as brain4it's PathParser and reader do: : is
// part of a name, an index is a part after / that starts with a digit.
func TestParsePath(t *testing.T) {
	for in, want := range map[string]string{
		"a":                 `("a")`,
		"c:1":               `("c:1")`,
		"rules:2/predicate": `("rules:2" "predicate")`,
		"rules/2/predicate": `("rules" 2 "predicate")`,
		"a/0/b":             `("a" 0 "b")`,
		"a//b/":             `("a" "b")`,
		" a/b ":             `("a" "b")`,
		"/a":                `("a")`,
		`"@x y"/0`:          `("@x y" 0)`,
		`a/"b/c"/3`:         `("a" "b/c" 3)`,
		`"q\"uote"`:         `("q\"uote")`,
		`"a"/"1"`:           `("a" "1")`,
		`"a\u00e9\n"`:       `("aé\n")`,
		`a/"b"c"d"`:         `("a" "bcd")`,
		"-x":                `("-x")`,
		"a/-1":              `("a" "-1")`,
		"a=>b":              `("a=>b")`,
		"<#1":               `("<#1")`,
	} {
		parts, err := ParsePath(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		l := &value.List{}
		for _, p := range parts {
			if n, ok := p.(int); ok {
				l.Append(int64(n))
			} else {
				l.Append(p)
			}
		}
		if got := value.Format(l); got != want {
			t.Errorf("%s = %s, want %s", in, got, want)
		}
	}
	for bad, msg := range map[string]string{
		"":              "",
		"0/a":           "First element is not a string: 0",
		"5":             "5",
		"null":          "null",
		"true":          "true",
		"-2.5":          "-2.5",
		"-1":            "-1",
		"<@1>":          "<@1>",
		"=>":            "=>",
		"a b":           "a b",
		"a/b c":         "a/b c",
		"a(b":           "a(b",
		`"open`:         `/"open`,
		`a"b`:           `a"b`,
		`a/b"c"x`:       `a/b"c"x`,
		"a/1x":          "a/1x",
		"a/99999999999": "a/99999999999",
		`"a\q"`:         `/"a\q"`,
	} {
		_, err := ParsePath(bad)
		var pe *PathError
		if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidPath) {
			t.Errorf("%q: %v, want a *PathError", bad, err)
			continue
		}
		if pe.message() != msg {
			t.Errorf("%q: brain4it's message %q, want %q", bad, pe.message(), msg)
		}
	}
}

// Destroying a module runs its stop, kills its executors and destroys its
// Kafka handles; other modules go on.
func TestDestroyEndsExecutorsAndHandles(t *testing.T) {
	srv, c := newTestServer(t, Config{})
	c.ok("PUT", "/m", "")
	c.ok("PUT", "/other", "")
	c.ok("POST", "/other", "(set t (spawn (while true (sleep 10))))")
	p := c.ok("POST", "/m", `(set stop (quote (set stopped true))) (spawn (while true (sleep 10))) (kafka-producer "127.0.0.1:1")`)
	m := srv.Module("m")
	in, lib := m.Interp(), m.Library()
	if in.Busy() != 1 {
		t.Fatalf("busy %d", in.Busy())
	}
	c.ok("DELETE", "/m", "")
	if in.Busy() != 0 {
		t.Fatalf("destroy left %d executors", in.Busy())
	}
	if stopped, _ := in.Global("stopped"); stopped != true {
		t.Fatal("stop did not run")
	}
	vs, _ := parseOne(p)
	if ok, err := functions.Table(lib)["kafka-destroy"](context.Background(), value.NewList(vs)); err == nil && ok != false {
		t.Fatalf("the handle %s outlived its module", p)
	}
	if srv.Module("other").Interp().Busy() != 1 {
		t.Fatal("destroying m stopped another module's executor")
	}
}

func parseOne(s string) (any, error) {
	vs, err := bplParse(s)
	if err != nil || len(vs) != 1 {
		return nil, err
	}
	return vs[0], nil
}

var bplParse = value.Parse
