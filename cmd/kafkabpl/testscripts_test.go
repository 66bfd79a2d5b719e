//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// failingScript passes one assertion, fails one, then throws.
const failingScript = `(assert-equal (+ 1 2) 3.0 "one and two")
(assert-equal (+ 1 2) 4 "one and two make four")
(throw "boom")
`

// runBinary runs bin with args to its end (testTimeout at most) and
// returns its exit status and output.
func runBinary(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v", cmd, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after %v\nstdout:\n%s\nstderr:\n%s", cmd, testTimeout, &out, &errOut)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// TestTestCommand runs kafkabpl test as installed: kafkabpl built
// without the synctests tag and, beside it, kafkabpl-test built with it,
// which kafkabpl test runs. The examples' test scripts pass, a failing
// script fails the run with its failure and its exception printed, --run
// picks scripts by name, and a --run that matches none, or does not
// compile, is refused.
func TestTestCommand(t *testing.T) {
	dir := t.TempDir()
	bin := buildInto(t, dir, "kafkabpl", ".")
	buildInto(t, dir, "kafkabpl-test", "../kafkabpl-test", "synctests")
	windowed, pipeline := "../../examples/test/windowed.bpl", "../../examples/test/pipeline.bpl"
	fails := filepath.Join(t.TempDir(), "fails.bpl")
	writeFile(t, fails, failingScript)

	t.Run("passing", func(t *testing.T) {
		code, stdout, stderr := runBinary(t, bin, "test", windowed, pipeline)
		if code != 0 {
			t.Errorf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		for _, want := range []string{
			"=== windowed (" + windowed + ")\n",
			"    ok   minute 2's average\n",
			"--- PASS windowed: 3 assertions (",
			"    ok   d2's last reading\n",
			"--- PASS pipeline: 3 assertions (",
			"\nPASS: 2 scripts\n",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
		if strings.Contains(stdout, "kafka-stream:") {
			t.Errorf("stdout holds the library's log, which only -v asks for:\n%s", stdout)
		}
	})

	t.Run("failing", func(t *testing.T) {
		code, stdout, stderr := runBinary(t, bin, "test", fails, windowed)
		if code != 1 {
			t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		for _, want := range []string{
			"    ok   one and two\n",
			"    FAIL one and two make four\n          got 3\n         want 4\n",
			"    error: boom (" + fails + ":3)\n",
			"--- FAIL fails: 1 of 2 assertions failed, 1 error (",
			"--- PASS windowed: 3 assertions (",
			"\nFAIL: 1 of 2 scripts\n",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
	})

	t.Run("run", func(t *testing.T) {
		code, stdout, stderr := runBinary(t, bin, "test", "-run", "^wind", fails, windowed, pipeline)
		if code != 0 {
			t.Errorf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "=== windowed") || strings.Contains(stdout, "=== fails") || strings.Contains(stdout, "=== pipeline") ||
			!strings.Contains(stdout, "PASS: 1 scripts") {
			t.Errorf("-run ^wind ran other scripts than windowed:\n%s", stdout)
		}
	})

	t.Run("run matches none", func(t *testing.T) {
		code, stdout, stderr := runBinary(t, bin, "test", "--run", "nothing", windowed)
		if code != 1 || !strings.Contains(stderr, `-run "nothing" matches none of the 1 scripts given`) || stdout != "" {
			t.Errorf("exit %d, want 1 and a line saying so\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
	})

	t.Run("bad pattern", func(t *testing.T) {
		code, _, stderr := runBinary(t, bin, "test", "--run", "(", windowed)
		if code != 2 || !strings.Contains(stderr, `--run "(": error parsing regexp`) {
			t.Errorf("exit %d, want 2 and the pattern's error\nstderr:\n%s", code, stderr)
		}
	})
}

// TestTestCommandWithoutCompanion runs kafkabpl test with no
// kafkabpl-test beside kafkabpl or on the PATH, and kafkabpl-test built
// without the synctests tag, whose franz-go can deadlock in virtual
// time: each refuses, naming the command that installs what is missing.
func TestTestCommandWithoutCompanion(t *testing.T) {
	dir := t.TempDir()
	bin := buildInto(t, dir, "kafkabpl", ".")
	untagged := buildInto(t, t.TempDir(), "kafkabpl-test", "../kafkabpl-test")
	t.Setenv("PATH", t.TempDir())
	code, stdout, stderr := runBinary(t, bin, "test", "../../examples/test/windowed.bpl")
	if code != 1 || !strings.Contains(stderr, "no kafkabpl-test beside kafkabpl or on the PATH") ||
		!strings.Contains(stderr, "go install -tags synctests ./cmd/kafkabpl-test") || stdout != "" {
		t.Errorf("kafkabpl test: exit %d, want 1 and the install command\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	code, stdout, stderr = runBinary(t, untagged, "../../examples/test/windowed.bpl")
	if code != 1 || !strings.Contains(stderr, "built without franz-go's synctests build tag") ||
		!strings.Contains(stderr, "go install -tags synctests ./cmd/kafkabpl-test") || stdout != "" {
		t.Errorf("untagged kafkabpl-test: exit %d, want 1 and the install command\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
