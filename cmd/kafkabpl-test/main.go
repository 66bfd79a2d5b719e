// Command kafkabpl-test runs BPL test scripts in virtual time:
//
//	kafkabpl-test [-run PATTERN] [-v] FILE...
//
// It is what kafkabpl test runs, and must be built with franz-go's
// synctests build tag, which virtual time needs:
//
//	go install -tags synctests ./cmd/kafkabpl-test
//
// kafkabpl test --help says what a test script may call and what the
// command prints.
package main

import (
	"bytes"
	"errors"
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

	"github.com/brain4it/kafkabpl/internal/scripttest"
	"github.com/brain4it/kafkabpl/streamtest"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the command: args are its flags (-run PATTERN,
// -v), then the scripts. It returns the exit status, or does not return:
// the scripts run in testing's machinery, which exits the process.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kafkabpl-test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pattern := fs.String("run", "", "run only the scripts whose name matches the regular expression `PATTERN`")
	verbose := fs.Bool("v", false, "also print the library's log (streams starting, restoring, stopping)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: kafkabpl-test [-run PATTERN] [-v] FILE...\n\n%s\n\nflags:\n", scripttest.About)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "kafkabpl-test: want one test script or more")
		return 2
	}
	re, err := regexp.Compile(*pattern)
	if err != nil {
		fmt.Fprintf(stderr, "kafkabpl-test: -run %q: %v\n", *pattern, err)
		return 2
	}
	var scripts []string
	for _, path := range fs.Args() {
		if re.MatchString(scriptName(path)) {
			scripts = append(scripts, path)
		}
	}
	if len(scripts) == 0 {
		fmt.Fprintf(stderr, "kafkabpl-test: -run %q matches none of the %d scripts given\n", *pattern, fs.NArg())
		return 1
	}
	if !streamtest.VirtualClock() {
		fmt.Fprintln(stderr, scripttest.NoTag)
		return 1
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
		return 1
	}
	fmt.Fprintf(stdout, "PASS: %d scripts\n", len(scripts))
	return 0
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
		return 1
	}
	tests := []testing.InternalTest{{Name: "kafkabpl-test", F: func(t *testing.T) { os.Exit(fn(t)) }}}
	testing.Main(func(string, string) (bool, error) { return true, nil }, tests, nil, nil)
	return 1 // not reached: fn's test exits, or testing.Main does
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
