package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
)

// testTimeout bounds every wait, so that no test can hang.
const testTimeout = 60 * time.Second

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runT runs a command line that must end by itself.
func runT(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, &out, &errOut) }()
	select {
	case code = <-done:
	case <-time.After(testTimeout):
		t.Fatalf("kafkabpl %q did not return", args)
	}
	return code, out.String(), errOut.String()
}

func TestUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args     []string
		code     int
		inStdout string // "" means stdout must be empty
		inStderr string // "" means stderr must be empty
	}{
		{nil, exitUsage, "", "usage: kafkabpl COMMAND"},
		{[]string{"-h"}, exitOK, "usage: kafkabpl COMMAND", ""},
		{[]string{"--help"}, exitOK, "usage: kafkabpl COMMAND", ""},
		{[]string{"-help"}, exitOK, "usage: kafkabpl COMMAND", ""},
		{[]string{"help"}, exitOK, "usage: kafkabpl COMMAND", ""},
		{[]string{"help", "broker"}, exitOK, "usage: kafkabpl broker", ""},
		{[]string{"help", "nope"}, exitUsage, "", `unknown command "nope"`},
		{[]string{"nope"}, exitUsage, "", `unknown command "nope"`},
		{[]string{"--nope"}, exitUsage, "", `unknown command "--nope"`},
		{[]string{"broker", "--nope"}, exitUsage, "", "flag provided but not defined: -nope"},
		{[]string{"broker", "--port", "x"}, exitUsage, "", `invalid value "x" for flag -port`},
		{[]string{"broker", "--port"}, exitUsage, "", "flag needs an argument: -port"},
		{[]string{"broker", "--port", "0", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"broker", "--port", "0", "--brokers", "0"}, exitUsage, "", "0 brokers"},
		{[]string{"broker", "--port", "0", "--partitions", "0"}, exitUsage, "", "0 partitions"},
		{[]string{"broker", "--port", "70000"}, exitUsage, "", "port 70000"},
		{[]string{"broker", "--port", "0", "--topic", "bad name"}, exitUsage, "", `"bad name"`},
		{[]string{"broker", "--log-level", "loud"}, exitUsage, "", "want none, error, warn, info or debug"},
		{[]string{"version", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"version", "--nope"}, exitUsage, "", "flag provided but not defined"},
		{[]string{"run"}, exitUsage, "", "want exactly one argument, got 0"},
		{[]string{"run", "a.bpl", "b.bpl"}, exitUsage, "", "want exactly one argument, got 2"},
		{[]string{"run", "--port", "0", "a.bpl"}, exitUsage, "", "--port only apply with --embedded"},
		{[]string{"eval", "--brokers", "2", "--data-dir", "d", "(+ 1 2)"}, exitUsage, "", "--brokers, --data-dir only apply with --embedded"},
		{[]string{"eval"}, exitUsage, "", "want exactly one argument"},
	} {
		code, stdout, stderr := runT(t, tc.args...)
		if code != tc.code {
			t.Errorf("kafkabpl %q: exit %d, want %d; stderr:\n%s", tc.args, code, tc.code, stderr)
		}
		for _, s := range []struct{ name, got, want string }{{"stdout", stdout, tc.inStdout}, {"stderr", stderr, tc.inStderr}} {
			if s.want == "" && s.got != "" {
				t.Errorf("kafkabpl %q: %s = %q, want it empty", tc.args, s.name, s.got)
			}
			if !strings.Contains(s.got, s.want) {
				t.Errorf("kafkabpl %q: %s = %q, want it to contain %q", tc.args, s.name, s.got, s.want)
			}
		}
		// A usage error shows the usage too.
		if code == exitUsage && !strings.Contains(stderr, "usage: kafkabpl") {
			t.Errorf("kafkabpl %q: stderr has no usage:\n%s", tc.args, stderr)
		}
	}
}

func TestHelpOfEveryCommand(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		for _, h := range []string{"-h", "--help", "-help"} {
			code, stdout, stderr := runT(t, c.name, h)
			if code != exitOK || stderr != "" {
				t.Errorf("kafkabpl %s %s: exit %d, stderr %q", c.name, h, code, stderr)
			}
			if !strings.HasPrefix(stdout, "usage: kafkabpl "+c.name) {
				t.Errorf("kafkabpl %s %s: stdout = %q, want its usage", c.name, h, stdout)
			}
		}
		// The top-level usage lists it.
		if _, stdout, _ := runT(t, "--help"); !strings.Contains(stdout, "  "+c.name+" ") {
			t.Errorf("top-level usage does not list %s:\n%s", c.name, stdout)
		}
	}
	// The shared flags appear in run's and eval's usage, written --flag.
	for _, name := range []string{"run", "eval"} {
		_, stdout, _ := runT(t, name, "--help")
		for _, f := range []string{"--servers LIST", "--embedded", "--port PORT", "--brokers N", "--data-dir DIR"} {
			if !strings.Contains(stdout, "  "+f+"\n") {
				t.Errorf("%s --help lacks %q:\n%s", name, f, stdout)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runT(t, "version")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	var prefixes []string
	for _, l := range lines {
		name, v, ok := strings.Cut(l, " ")
		if !ok || v == "" {
			t.Errorf("line %q is not NAME VERSION", l)
		}
		prefixes = append(prefixes, name)
	}
	if want := []string{"kafkabpl", "franz-go", "kfake", "go"}; !slices.Equal(prefixes, want) {
		t.Errorf("version prints %q, want lines for %q", stdout, want)
	}
	// A test binary carries its dependencies' versions too.
	if !strings.Contains(stdout, "franz-go v1.") {
		t.Errorf("no franz-go version in %q", stdout)
	}
}

// startBroker runs "kafkabpl broker args..." in-process and returns its
// servers once it listens; cancel stops it and returns its exit status.
func startBroker(t *testing.T, args ...string) (servers string, stderr *syncBuffer, cancel func() int) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr = new(syncBuffer)
	done := make(chan int, 1)
	go func() {
		code := run(ctx, append([]string{"broker"}, args...), pw, stderr)
		pw.Close()
		done <- code
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, pr)
	}()
	var stopped bool
	cancel = func() int {
		if stopped {
			return -1
		}
		stopped = true
		stop()
		select {
		case code := <-done:
			return code
		case <-time.After(testTimeout):
			t.Fatal("broker did not stop")
			return -1
		}
	}
	t.Cleanup(func() { cancel() })
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatalf("broker printed no line; exit %d, stderr:\n%s", cancel(), stderr)
		}
		servers, ok := strings.CutPrefix(line, "listening on ")
		if !ok {
			t.Fatalf("first line %q, want listening on ...", line)
		}
		return servers, stderr, cancel
	case <-time.After(testTimeout):
		t.Fatal("broker did not print where it listens")
		return "", nil, nil
	}
}

func TestBrokerInProcess(t *testing.T) {
	t.Parallel()
	servers, stderr, stop := startBroker(t, "--port", "0", "--topic", "a,b", "--topic", "c")
	addrs := strings.Split(servers, ",")
	if len(addrs) != 3 { // SPEC 9: broker defaults to 3 brokers
		t.Errorf("listening on %q, want 3 brokers by default", servers)
	}
	for _, a := range addrs {
		if !strings.HasPrefix(a, "127.0.0.1:") {
			t.Errorf("address %q is not on 127.0.0.1", a)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	adm := newAdmin(t, addrs)
	tds, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := tds.Names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("topics %q, want a b c", got)
	}
	if code := stop(); code != exitOK {
		t.Errorf("broker exit %d after cancel, want 0; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "stopping") {
		t.Errorf("stderr %q does not say it stops", stderr)
	}
}

func TestBrokerPortInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	code, stdout, stderr := runT(t, "broker", "--brokers", "1", "--port", fmt.Sprint(port))
	if code != exitFail || stdout != "" {
		t.Errorf("exit %d, stdout %q; want 1 and nothing", code, stdout)
	}
	if !strings.Contains(stderr, "port in use") || !strings.Contains(stderr, "--port 0") {
		t.Errorf("stderr %q does not say the port is in use and suggest --port 0", stderr)
	}
}

func TestParseInterspersed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args, positional []string
		embedded         bool
		servers          string
	}{
		{[]string{"f.bpl"}, []string{"f.bpl"}, false, ""},
		{[]string{"f.bpl", "--embedded"}, []string{"f.bpl"}, true, ""},
		{[]string{"--servers", "h:1", "-", "--embedded"}, []string{"-"}, true, "h:1"},
		{[]string{"--embedded", "--", "--servers", "x"}, []string{"--servers", "x"}, true, ""},
		{[]string{"a", "--servers=h:2", "b"}, []string{"a", "b"}, false, "h:2"},
		{[]string{"a", "--", "-"}, []string{"a", "-"}, false, ""},
	} {
		fs := newFlagSet("test")
		var cf clusterFlags
		cf.register(fs)
		pos, err := parseInterspersed(fs, tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !slices.Equal(pos, tc.positional) || cf.embedded != tc.embedded || cf.servers != tc.servers {
			t.Errorf("%q: positional %q embedded %v servers %q; want %q %v %q",
				tc.args, pos, cf.embedded, cf.servers, tc.positional, tc.embedded, tc.servers)
		}
	}
	fs := newFlagSet("test")
	if _, err := parseInterspersed(fs, []string{"a", "-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h after an argument: err = %v, want flag.ErrHelp", err)
	}
}

func TestClusterFlagsConnect(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "KAFKA_SERVERS" {
				return v
			}
			return ""
		}
	}
	parsed := func(args ...string) *clusterFlags {
		fs := newFlagSet("test")
		var cf clusterFlags
		cf.register(fs)
		if _, err := parseInterspersed(fs, args); err != nil {
			t.Fatal(err)
		}
		if err := cf.check(fs); err != nil {
			t.Fatal(err)
		}
		return &cf
	}

	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{nil, "", ""},
		{nil, "e:1", "e:1"},
		{[]string{"--servers", "s:1,s:2"}, "e:1", "s:1,s:2"},
	} {
		servers, c, err := parsed(tc.args...).connect(env(tc.env))
		if err != nil || c != nil || servers != tc.want {
			t.Errorf("%q with KAFKA_SERVERS=%q: %q, %v, %v; want %q and no cluster", tc.args, tc.env, servers, c, err, tc.want)
		}
	}

	// --embedded starts a cluster whose servers win over the environment.
	dir := t.TempDir()
	servers, c, err := parsed("--embedded", "--port", "0", "--brokers", "2", "--data-dir", dir).connect(env("e:1"))
	if err != nil {
		t.Fatal(err)
	}
	if servers != c.Servers() || len(c.Addrs()) != 2 {
		t.Errorf("servers %q, cluster %q; want the cluster's 2", servers, c.Servers())
	}
	// The data dir is in use while the cluster runs.
	if _, _, err := parsed("--embedded", "--port", "0", "--data-dir", dir).connect(env("")); !errors.Is(err, embedded.ErrDataDirInUse) {
		t.Errorf("second cluster on one data dir: err = %v, want ErrDataDirInUse", err)
	}
	c.Close()

	// --servers still wins over the embedded cluster.
	servers, c, err = parsed("--embedded", "--port", "0", "--servers", "s:1").connect(env(""))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if servers != "s:1" {
		t.Errorf("servers %q, want s:1", servers)
	}

	if _, _, err := parsed("--embedded", "--brokers", "0").connect(env("")); !errors.Is(err, errUsage) || !errors.Is(err, embedded.ErrInvalidOption) {
		t.Errorf("--brokers 0: err = %v, want errUsage and ErrInvalidOption", err)
	}
}

// TestPrintCloseErrors checks the report of handles a script left that
// could not be destroyed cleanly: SPEC 9's "error: TYPE: message" form,
// one line per handle, each naming it.
func TestPrintCloseErrors(t *testing.T) {
	t.Parallel()
	err := errors.Join(
		&kafkabpl.Error{Func: "kafka-destroy", Err: fmt.Errorf("producer %q: 1 records still unsent: %w", "p1", kafkabpl.ErrTimeout)},
		&kafkabpl.Error{Func: "kafka-destroy", Err: fmt.Errorf("consumer %q: %w", "c2", errors.New("COORDINATOR_NOT_AVAILABLE"))},
	)
	var out bytes.Buffer
	printCloseErrors(&out, "job.bpl", err)
	want := `error: Timeout: kafka-destroy: producer "p1": 1 records still unsent: timeout (job.bpl: at the end of the run)
error: KafkaError: kafka-destroy: consumer "c2": COORDINATOR_NOT_AVAILABLE (job.bpl: at the end of the run)
`
	if out.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", &out, want)
	}
}
