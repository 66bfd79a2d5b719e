//go:build unix

package main

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// statusLoopScript starts a stream, feeds it one record, then prints the
// stream's state and processed count in a loop of its own until stopped:
// a script whose top level never ends by itself.
const statusLoopScript = `(set s (kafka-stream (list "servers" => kafka-servers "group" => "upcase")
  "from" => "in" "to" => "out" "transform" => (function (in) (upcase (get in "value")))))
(kafka-send (kafka-create "producer" kafka-servers) "in" "hello")
(while true
  (set st (kafka-stream-status s))
  (print "status" (get st "state") (get st "processed"))
  (sleep 100))
`

// TestRunSignalInterruptsLoop runs a script whose own status loop a
// signal interrupts while its stream is running and has processed its
// input: the command exits 128+N (130 for SIGINT, 143 for SIGTERM), says
// which signal stopped it, and its stream stops cleanly; not 1, which
// says that something failed.
func TestRunSignalInterruptsLoop(t *testing.T) {
	bin := buildBinary(t)
	script := filepath.Join(t.TempDir(), "status.bpl")
	writeFile(t, script, statusLoopScript)
	for _, c := range []struct {
		sig  syscall.Signal
		name string
		code int
	}{{syscall.SIGTERM, "SIGTERM", 143}, {syscall.SIGINT, "SIGINT", 130}} {
		t.Run(c.name, func(t *testing.T) {
			p := startPeer(t, context.Background(), bin, "run", "--embedded", "--port", "0", script)
			deadline := time.Now().Add(testTimeout)
			for !strings.Contains(p.stdout.String(), "status running 1\n") {
				if p.exited() || time.Now().After(deadline) {
					t.Fatalf("the stream did not process its input within %v\n%s", testTimeout, p)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := p.cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			p.wait(ctx)
			if !p.exited() {
				t.Fatalf("still running %v after %s\n%s", testTimeout, c.name, p)
			}
			if code := p.cmd.ProcessState.ExitCode(); code != c.code {
				t.Errorf("exit %d on %s, want %d\n%s", code, c.name, c.code, p)
			}
			stderr := p.stderr.String()
			if !strings.Contains(stderr, "run: "+c.name+" interrupted the script") {
				t.Errorf("stderr does not say that %s interrupted the script\n%s", c.name, p)
			}
			if m := stopLine.FindStringSubmatch(stderr); m == nil || m[1] != "1" {
				t.Errorf("stderr does not say the stream stopped after processing its input (%s)\n%s", stopLine, p)
			}
			if strings.Contains(stderr, "error:") {
				t.Errorf("stderr reports an error\n%s", p)
			}
		})
	}
}
