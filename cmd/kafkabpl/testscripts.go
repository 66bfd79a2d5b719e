package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/streamtest"
)

var testUsage = usage{
	synopsis: "test [--run PATTERN] [-v] FILE...",
	about: `Runs BPL test scripts in virtual time, each on a fresh in-memory cluster
whose clock moves only when the script says (package streamtest): an hour
of windows or a ten-minute silence takes a moment. Besides brain4it's core
library and the kafka- functions (kafka-servers names the cluster), a test
script has:

  (advance ms)                    the virtual clock moves on by ms; what the
                                  streams do meanwhile is done
  (read-topic topic [key v ...])  what a read_committed consumer has read of
                                  topic so far, as (key => value ...); config
                                  keys as kafka-create takes them, read at the
                                  first call ("value-deserializer" => "JSON")
  (assert-equal got want [what])  passes when got equals want as BPL's = says
                                  (3 equals 3.0; names are not compared)

It prints a line per assertion ("ok   what", or "FAIL what" with both
values), each script's errors (an exception it threw, a stream that failed)
and a summary line per script, then PASS or FAIL; -v adds the library's
log. A script's name is its
file's base name without .bpl. Exit status: 0 when every script passed, 1
when one failed (an assertion, an exception, a failed stream) or --run
matched none, 2 on a usage error.

Virtual time needs franz-go built with the synctests build tag; a
kafkabpl built without it says so and exits 1
(go install -tags synctests ./cmd/kafkabpl).`,
}

func runTest(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("test")
	pattern := fs.String("run", "", "run only the scripts whose name matches the regular expression `PATTERN`")
	verbose := fs.Bool("v", false, "also print the library's log (streams starting, restoring, stopping)")
	positional, code, done := parse(fs, testUsage, args, stdout, stderr)
	if done {
		return code
	}
	if len(positional) == 0 {
		return usageError(stderr, fs, testUsage, fmt.Errorf("want one test script or more"))
	}
	re, err := regexp.Compile(*pattern)
	if err != nil {
		return usageError(stderr, fs, testUsage, fmt.Errorf("--run %q: %v", *pattern, err))
	}
	var scripts []string
	for _, path := range positional {
		if re.MatchString(scriptName(path)) {
			scripts = append(scripts, path)
		}
	}
	if len(scripts) == 0 {
		fmt.Fprintf(stderr, "kafkabpl test: --run %q matches none of the %d scripts given\n", *pattern, len(positional))
		return exitFail
	}
	if !streamtest.VirtualClock() {
		fmt.Fprintln(stderr, "kafkabpl test: this kafkabpl was built without the synctests build tag, which virtual time needs: build it with go install -tags synctests ./cmd/kafkabpl (or go run -tags synctests ./cmd/kafkabpl test ...)")
		return exitFail
	}
	log := io.Discard
	if *verbose {
		log = stdout
	}
	return inBubbleHost(func(t *testing.T) int { return testScripts(t, scripts, stdout, log) })
}

// count is "1 error", "2 errors".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// scriptName is a test script's name: its file's base name without .bpl.
func scriptName(path string) string { return strings.TrimSuffix(filepath.Base(path), ".bpl") }

// testScripts runs each script and prints what it did, and returns the
// command's exit status.
func testScripts(t *testing.T, scripts []string, stdout, log io.Writer) int {
	failed := 0
	for _, path := range scripts {
		name := scriptName(path)
		fmt.Fprintf(stdout, "=== %s (%s)\n", name, path)
		start := time.Now()
		out := &indented{w: stdout}
		logOut := io.Writer(out)
		if log == io.Discard {
			logOut = log
		}
		res := streamtest.RunScript(t, path, out, streamtest.LogTo(logOut))
		out.flush()
		took := time.Since(start).Round(time.Millisecond)
		if res.OK() {
			fmt.Fprintf(stdout, "--- PASS %s: %d assertions (%v)\n", name, res.Passed, took)
			continue
		}
		failed++
		fmt.Fprintf(stdout, "--- FAIL %s: %d of %d assertions failed, %s (%v)\n", name, res.Failed, res.Passed+res.Failed, count(len(res.Errors), "error"), took)
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "FAIL: %d of %d scripts\n", failed, len(scripts))
		return exitFail
	}
	fmt.Fprintf(stdout, "PASS: %d scripts\n", len(scripts))
	return exitOK
}

// inBubbleHost runs fn as the one test of a testing.Main, the only way a
// program other than a go test binary gets a *testing.T, which
// testing/synctest needs for its bubbles, and exits the process with fn's
// status (testing.Main would exit with its own). fn must not fail t: it
// reports what it does itself.
func inBubbleHost(fn func(t *testing.T) int) int {
	testing.Init()
	// testing.Main parses the command line for its own -test.* flags
	// unless it is parsed already: it is, with none of them.
	if err := flag.CommandLine.Parse(nil); err != nil {
		return exitFail
	}
	tests := []testing.InternalTest{{Name: "kafkabpl-test", F: func(t *testing.T) { os.Exit(fn(t)) }}}
	testing.Main(func(string, string) (bool, error) { return true, nil }, tests, nil, nil)
	return exitFail // not reached: fn's test exits, or testing.Main does
}

// indented writes each line indented by four spaces. Streams log from
// goroutines of their own, so it is safe for concurrent use.
type indented struct {
	mu   sync.Mutex
	w    io.Writer
	part []byte // a line not yet ended
}

func (o *indented) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			o.part = append(o.part, p...)
			break
		}
		line := append(o.part, p[:i]...)
		o.part = o.part[:0]
		if _, err := fmt.Fprintf(o.w, "    %s\n", line); err != nil {
			return 0, err
		}
		p = p[i+1:]
	}
	return n, nil
}

// flush writes a last line that did not end.
func (o *indented) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.part) > 0 {
		fmt.Fprintf(o.w, "    %s\n", o.part)
		o.part = o.part[:0]
	}
}
