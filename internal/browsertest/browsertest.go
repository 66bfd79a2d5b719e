// Package browsertest drives a real browser, Debian's headless chromium,
// against a server of brain4it's HTTP protocol, to prove what only a
// browser checks: CORS (the preflight a custom header such as monitor
// causes, Access-Control-Expose-Headers for server-time) and a chunked
// monitor stream read as it arrives.
//
// Run serves a page from an origin of its own (another loopback port),
// opens it in headless chromium, and the page, with fetch, creates a
// module (PUT), posts code (POST), calls an exterior function (POST
// /module/@fn), follows a monitor stream until a watched function's change
// arrives, unwatches and destroys the module. The page reports every step
// back to its origin.
//
// Open opens any loopback page and lets a test read it from outside
// through the DevTools protocol (Eval, WaitFor); Dashboard opens one that
// draws a module's dashboard (its @dashboards, display and graph widgets,
// a monitor stream), so that a test can check what the page shows.
package browsertest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed testdata/page.html
var page []byte

// ErrNoChromium is returned by Chromium when no chromium binary is found.
var ErrNoChromium = errors.New("browsertest: chromium not found (apt-get install chromium)")

// ErrPage is wrapped by Run's error when the page reports a failed step
// or never reports.
var ErrPage = errors.New("browsertest: the page failed")

// ErrNotLoopback is returned by Run for a server URL whose host is not a
// loopback address.
var ErrNotLoopback = errors.New("browsertest: not a loopback address")

// Chromium finds the browser: $KAFKABPL_CHROMIUM if set, else Debian's
// binary /usr/lib/chromium/chromium (not the /usr/bin/chromium wrapper,
// which adds flags and API keys for Google's services), else chromium or
// chromium-browser on PATH.
func Chromium() (string, error) {
	if p := os.Getenv("KAFKABPL_CHROMIUM"); p != "" {
		return p, nil
	}
	if st, err := os.Stat("/usr/lib/chromium/chromium"); err == nil && !st.IsDir() {
		return "/usr/lib/chromium/chromium", nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Require is Chromium for a test: without chromium it fails the test
// when the environment variable CI is set, and skips it otherwise.
func Require(t testing.TB) string {
	t.Helper()
	p, err := Chromium()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %v", err)
		}
		t.Skip(err)
	}
	return p
}

// Result is what the page reports: whether every step passed, the first
// failure, and a line per step.
type Result struct {
	OK    bool     `json:"ok"`
	Error string   `json:"error"`
	Steps []string `json:"steps"`
}

// Flags are the chromium flags Run passes, besides --user-data-dir and
// the page's URL and a --host-resolver-rules that resolves no name but
// localhost, 127.0.0.1 and the server's host (the rule applies to IP
// literals too, so each loopback host in use must be excluded from it).
// --headless, --no-sandbox (root, and no user namespace in a container)
// and --disable-gpu are what a headless run on a server needs; the rest
// keep chromium from making background, component-update or sync traffic.
var Flags = []string{
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-dev-shm-usage",
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-extensions",
	"--disable-default-apps",
	"--disable-breakpad",
	"--metrics-recording-only",
}

// Run opens the page in headless chromium against serverURL (http, on a
// loopback address; the page's own origin is another loopback port) and
// waits for its report, up to 60 s or ctx's end. It logs each step with
// t.Logf, and answers nil when every step passed, an error wrapping
// ErrPage otherwise (with the steps done and chromium's output), or
// ErrNoChromium. It never skips: callers use Require first.
func Run(ctx context.Context, t testing.TB, serverURL string) error {
	t.Helper()
	u, err := loopbackURL("browsertest.Run", serverURL)
	if err != nil {
		return err
	}
	bin, err := Chromium()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	results := make(chan Result, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	mux.HandleFunc("POST /result", func(w http.ResponseWriter, r *http.Request) {
		var res Result
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&res); err != nil {
			res = Result{Error: "the page's report is not JSON: " + err.Error()}
		}
		select {
		case results <- res:
		default:
		}
	})
	origin := httptest.NewServer(mux) // 127.0.0.1, a port of its own
	defer origin.Close()
	pageURL := origin.URL + "/?server=" + url.QueryEscape(strings.TrimRight(serverURL, "/"))

	proc, err := startChromium(bin, u.Hostname(), pageURL, nil)
	if err != nil {
		return err
	}
	defer proc.stop()
	t.Logf("browsertest: chromium %s opened %s", bin, pageURL)

	select {
	case res := <-results:
		for _, s := range res.Steps {
			t.Logf("browser: %s", s)
		}
		if !res.OK {
			return fmt.Errorf("%w: %s\nchromium's output:\n%s", ErrPage, res.Error, proc.out.tail())
		}
		return nil
	case err := <-proc.exited:
		return fmt.Errorf("%w: chromium exited (%v) before the page reported\nchromium's output:\n%s", ErrPage, err, proc.out.tail())
	case <-ctx.Done():
		return fmt.Errorf("%w: no report from the page: %v\nchromium's output:\n%s", ErrPage, ctx.Err(), proc.out.tail())
	}
}

// syncBuffer is chromium's output, written by two copying goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 1<<20 {
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	// chromium's complaints that it has no D-Bus are noise here.
	var keep []string
	for _, line := range strings.Split(s.b.String(), "\n") {
		if !strings.Contains(line, "dbus") {
			keep = append(keep, line)
		}
	}
	out := strings.Join(keep, "\n")
	if len(out) > 4000 {
		out = out[len(out)-4000:]
	}
	return out
}
