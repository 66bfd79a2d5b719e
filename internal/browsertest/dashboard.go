package browsertest

import (
	"context"
	_ "embed"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

//go:embed testdata/dashboard.html
var dashboardPage []byte

// Dashboard draws the first dashboard of module, on the brain4it-protocol
// server at serverURL (http, on a loopback address), in headless chromium:
// a page from an origin of its own asks the module's @dashboards function
// for its dashboards, lays out its widgets (a display shows its get-value
// as printed BPL in .display-value; a graph draws its get-history and
// get-value datasets and names each one's latest value in a ul.legend
// item), and follows their get-value functions with a monitor stream.
// body's data-state is "watching" once that stream is open, "error: ..."
// if anything failed. Widgets have the id widget-NAME. Read the page with
// the answer's Eval and WaitFor, and Close it. Without chromium it answers
// ErrNoChromium: callers use Require first.
func Dashboard(ctx context.Context, t testing.TB, serverURL, module string) (*Page, error) {
	t.Helper()
	if _, err := loopbackURL("browsertest.Dashboard", serverURL); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(dashboardPage)
	})
	origin := httptest.NewServer(mux) // 127.0.0.1, a port of its own
	q := url.Values{"server": {strings.TrimRight(serverURL, "/")}, "module": {module}}
	p, err := Open(ctx, t, origin.URL+"/?"+q.Encode())
	if err != nil {
		origin.Close()
		return nil, err
	}
	p.closers = append(p.closers, origin.Close)
	return p, nil
}
