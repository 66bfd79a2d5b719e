package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/embedded"
)

var update = flag.Bool("update", false, "rewrite the examples' expected output (examples/*.out)")

// normalize replaces what differs from run to run (handle ids, member ids,
// client ports) with placeholders.
func normalize(s string) string {
	for _, r := range []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(`"([pcas])[0-9a-f]{32}"`), `"${1}<id>"`},
		{regexp.MustCompile(`\bs[0-9a-f]{32}\b`), `s<id>`},
		{regexp.MustCompile(`kafkabpl-[0-9a-f]{32}`), `kafkabpl-<id>`},
		{regexp.MustCompile(`127\.0\.0\.1:[0-9]+`), `127.0.0.1:<port>`},
	} {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}

// streamLog matches the lines the library logs on stderr about streams,
// which examples that run one print there.
var streamLog = regexp.MustCompile(`(?m)^kafka-stream: stream s[0-9a-f]{32}( running| stopped|: store "[^"]*":? (partition|created)|: table "[^"]*" read from)[^\n]*\n`)

// TestExamples runs every script in examples/ against an embedded cluster
// and compares what it prints with examples/NAME.out. The quickstart names
// localhost:9092 as the user wrote it; the test points it at a cluster on
// a free port instead, and runs it with --servers.
func TestExamples(t *testing.T) {
	scripts, err := filepath.Glob("../../examples/*.bpl")
	if err != nil || len(scripts) < 5 {
		t.Fatalf("examples: %v %v", scripts, err)
	}
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".bpl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"run", "--embedded", "--port", "0", script}
			if strings.Contains(string(src), "localhost:9092") {
				c, err := embedded.Start(embedded.Port(0))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				rewritten := filepath.Join(t.TempDir(), name+".bpl")
				if err := os.WriteFile(rewritten, []byte(strings.ReplaceAll(string(src), "localhost:9092", c.Servers())), 0o644); err != nil {
					t.Fatal(err)
				}
				args = []string{"run", "--servers", c.Servers(), rewritten}
			}
			code, stdout, stderr := runT(t, args...)
			if code != exitOK || streamLog.ReplaceAllString(stderr, "") != "" {
				t.Fatalf("exit %d, stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
			}
			got := normalize(stdout)
			golden := strings.TrimSuffix(script, ".bpl") + ".out"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/kafkabpl -run TestExamples -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("output of %s:\n%s\nwant (%s):\n%s", script, got, golden, want)
			}
		})
	}
}

func TestEvalAndErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, src string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"eval prints non-null results", []string{"eval", `(+ 1 2) (set x null) "two" (list 1 "a" => 2.5)`}, exitOK, "3\n\"two\"\n(1 \"a\" => 2.5)\n", ""},
		{"print writes strings raw", []string{"eval", `(print "a b" 1 (list "c"))`}, exitOK, "a b 1 (\"c\")\n", ""},
		{"uncaught exception", []string{"run", write("boom.bpl", "(print \"before\")\n\n(throw \"Boom\" \"it broke\")\n(print \"after\")\n")}, exitFail, "before\n", "error: Boom: it broke (" + filepath.Join(dir, "boom.bpl") + ":3)\n"},
		{"library error type", []string{"eval", `(kafka-poll "c0123" 10)`}, exitFail, "", `error: UnknownHandle: kafka-poll: unknown consumer id "c0123" (eval:1)` + "\n"},
		{"bad config", []string{"eval", `(kafka-create "producer" (list "servers" => "127.0.0.1:9" "lingr" => 5))`}, exitFail, "", `error: InvalidConfig: kafka-create: unknown config key "lingr" (did you mean "linger"?) (eval:1)` + "\n"},
		{"syntax error", []string{"run", write("syntax.bpl", "(print 1)\n(print \"open")}, exitFail, "", "error: SyntaxError: column 8: unterminated string (" + filepath.Join(dir, "syntax.bpl") + ":2)\n"},
		{"missing file", []string{"run", filepath.Join(dir, "none.bpl")}, exitFail, "", "no such file"},
		{"servers flag", []string{"eval", "--servers", "127.0.0.1:1", "kafka-servers"}, exitOK, "\"127.0.0.1:1\"\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runT(t, tt.args...)
			if code != tt.code || stdout != tt.stdout || !strings.Contains(stderr, tt.stderr) || tt.stderr == "" && stderr != "" {
				t.Errorf("kafkabpl %q:\nexit %d, want %d\nstdout %q\nwant   %q\nstderr %q\nwant   %q", tt.args, code, tt.code, stdout, tt.stdout, stderr, tt.stderr)
			}
		})
	}
}

// TestKafkaServersFromEnv checks the variable's sources: $KAFKA_SERVERS
// when no flag names servers, the embedded cluster's with --embedded.
func TestKafkaServersFromEnv(t *testing.T) {
	t.Setenv("KAFKA_SERVERS", "127.0.0.1:7")
	code, stdout, _ := runT(t, "eval", "kafka-servers")
	if code != exitOK || stdout != "\"127.0.0.1:7\"\n" {
		t.Errorf("from the environment: %d %q", code, stdout)
	}
	code, stdout, _ = runT(t, "eval", "--embedded", "--port", "0", "kafka-servers")
	if code != exitOK || !regexp.MustCompile(`^"127\.0\.0\.1:[0-9]+"\n$`).MatchString(stdout) || strings.Contains(stdout, ":7\"") {
		t.Errorf("with --embedded: %d %q", code, stdout)
	}
}

// TestRunWaitsForExecutors checks that what a script spawns or schedules
// runs on after its last expression, and that the command then ends by
// itself once they have.
func TestRunWaitsForExecutors(t *testing.T) {
	src := `(set n 0)
(spawn (do (sleep 100) (print "spawned done")))
(set task (timer-schedule (function () (set n (+ n 1)) (when (= n 3) (print "timer ran 3 times") (timer-cancel task))) 0 20))
(print "script done")`
	code, stdout, stderr := runT(t, "eval", src)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	for _, want := range []string{"script done", "spawned done", "timer ran 3 times"} {
		if !strings.Contains(stdout, want+"\n") {
			t.Errorf("stdout %q lacks %q", stdout, want)
		}
	}
	if i := strings.Index(stdout, "script done"); i > strings.Index(stdout, "spawned done") || i > strings.Index(stdout, "timer ran") {
		t.Errorf("stdout %q: the script's last expression ran after its executors ended", stdout)
	}
	if !strings.Contains(stderr, "streams, executors and timer tasks run on") {
		t.Errorf("stderr %q does not say the command waits", stderr)
	}
}

// TestRunStreamFails checks that a script whose stream fails makes the
// command exit 1, naming the stream and the error, after saying on stderr
// that the stream ran and stopped.
func TestRunStreamFails(t *testing.T) {
	t.Parallel()
	src := `(set p (kafka-create "producer" kafka-servers))
(kafka-send p "in" ("ok" "poison" "ok"))
(kafka-stream (list "servers" => kafka-servers "group" => "g") "from" => "in" "to" => "out"
  "transform" => (function (r) (if (= (get r "value") "poison") (throw "Poisoned" "cannot digest it") (get r "value"))))
null`
	code, _, stderr := runT(t, "eval", "--embedded", "--port", "0", src)
	if code != exitFail {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFail, stderr)
	}
	for _, want := range []string{
		"kafka-stream: stream s", " running: from [in] to \"out\"",
		"streams, executors and timer tasks run on",
		` failed: topic "in" partition 0 offset 1: Poisoned: cannot digest it`,
		"error: Poisoned: stream s",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
