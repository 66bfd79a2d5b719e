package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// KAFKABPL_CPUPROFILE=FILE makes serve write a CPU profile (gzip, as
// runtime/pprof writes it) when it stops; a file that cannot be made is
// reported and the server runs on.
func TestServeCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	env := func(name string) string {
		if name == cpuProfileEnv {
			return path
		}
		return ""
	}
	var stderr bytes.Buffer
	stop := startCPUProfile(env, &stderr)
	n := 0
	for i := range 1_000_000 {
		n += i % 7
	}
	stop()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile %s: %d bytes, %v, want a gzip file (stderr %q, %d)", path, len(b), err, stderr.String(), n)
	}

	stderr.Reset()
	bad := func(name string) string {
		if name == cpuProfileEnv {
			return filepath.Join(t.TempDir(), "no-such-dir", "cpu.prof")
		}
		return ""
	}
	startCPUProfile(bad, &stderr)()
	if !strings.Contains(stderr.String(), cpuProfileEnv) {
		t.Fatalf("an uncreatable profile file: stderr %q, want a message naming %s", stderr.String(), cpuProfileEnv)
	}

	stderr.Reset()
	startCPUProfile(func(string) string { return "" }, &stderr)()
	if stderr.Len() != 0 {
		t.Fatalf("no profile asked for: stderr %q", stderr.String())
	}
}
