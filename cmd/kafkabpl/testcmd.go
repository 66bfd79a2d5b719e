package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/brain4it/kafkabpl/internal/scripttest"
)

var testUsage = usage{
	synopsis: "test [--run PATTERN] [-v] FILE...",
	about: scripttest.About + `

kafkabpl test runs kafkabpl-test, found beside kafkabpl or on the PATH:
virtual time needs franz-go built with the synctests build tag, which
costs kafkabpl's own clients about a third of their produce speed, so
kafkabpl is built without it and kafkabpl-test with it. Install both:

  go install ./cmd/kafkabpl && go install -tags synctests ./cmd/kafkabpl-test

From a checkout, go run -tags synctests ./cmd/kafkabpl-test FILE... runs
it directly. Without kafkabpl-test, kafkabpl test says so and exits 1.`,
}

// companion is the kafkabpl-test command's name.
const companion = "kafkabpl-test"

func runTest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
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
	if _, err := regexp.Compile(*pattern); err != nil {
		return usageError(stderr, fs, testUsage, fmt.Errorf("--run %q: %v", *pattern, err))
	}
	bin, err := findCompanion()
	if err != nil {
		fmt.Fprintf(stderr, "kafkabpl test: %v: install it beside kafkabpl with go install -tags synctests ./cmd/kafkabpl-test (from a checkout: go run -tags synctests ./cmd/kafkabpl-test FILE...)\n", err)
		return exitFail
	}
	// kafkabpl-test parses Go's flag syntax: flags first, then the files.
	cargs := []string{"-run", *pattern}
	if *verbose {
		cargs = append(cargs, "-v")
	}
	cmd := exec.CommandContext(ctx, bin, append(append(cargs, "--"), positional...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	// A signal reaches kafkabpl-test too (the terminal's process group),
	// or is passed on when it was sent to kafkabpl alone.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return exitSignal + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(stderr, "kafkabpl test: %v\n", err)
	return exitFail
}

// findCompanion returns kafkabpl-test's path: beside this executable (go
// install puts both in GOBIN), else on the PATH.
func findCompanion() (string, error) {
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), companion)
		if fi, err := os.Stat(beside); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	path, err := exec.LookPath(companion)
	if err != nil {
		return "", fmt.Errorf("no %s beside kafkabpl or on the PATH", companion)
	}
	return path, nil
}
