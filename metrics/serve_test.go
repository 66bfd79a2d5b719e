package metrics_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestServeCounts: what a server tells Metrics lands in its series, under
// Prometheus's naming rules.
func TestServeCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.ServeRequest("m", "evaluate")
	m.ServeRequest("m", "evaluate")
	m.ServeRequestFailed("m", "evaluate")
	m.ServeRequest("", "get")
	m.ServeEvaluation("m", "evaluate", 3*time.Millisecond, nil)
	m.ServeEvaluation("m", "evaluate", 2*time.Second, errors.New("boom"))
	m.ServeMonitors("m", 1)
	m.ServeMonitors("m", 1)
	m.ServeMonitors("m", -1)
	want := `
# HELP kafkabpl_serve_evaluation_errors_total A module's evaluations that failed (a BPL exception, a timeout).
# TYPE kafkabpl_serve_evaluation_errors_total counter
kafkabpl_serve_evaluation_errors_total{kind="evaluate",module="m"} 1
# HELP kafkabpl_serve_monitors Monitor streams being served, by module.
# TYPE kafkabpl_serve_monitors gauge
kafkabpl_serve_monitors{module="m"} 1
# HELP kafkabpl_serve_request_errors_total HTTP requests answered with an error.
# TYPE kafkabpl_serve_request_errors_total counter
kafkabpl_serve_request_errors_total{kind="evaluate",module="m"} 1
# HELP kafkabpl_serve_requests_total HTTP requests to the server, by the module they name ("" when none exists of that name) and kind.
# TYPE kafkabpl_serve_requests_total counter
kafkabpl_serve_requests_total{kind="evaluate",module="m"} 2
kafkabpl_serve_requests_total{kind="get",module=""} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kafkabpl_serve_requests_total",
		"kafkabpl_serve_request_errors_total", "kafkabpl_serve_evaluation_errors_total", "kafkabpl_serve_monitors"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "kafkabpl_serve_evaluation_duration_seconds"); n != 1 {
		t.Errorf("%d evaluation histograms, want 1", n)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
