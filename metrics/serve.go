package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// serveMetrics are the counts of a brain4it server's modules (package
// server), labelled by module name, which the operator chose, and by
// kind, one of a few.
type serveMetrics struct {
	requests, requestErrors *prometheus.CounterVec
	evalDuration            *prometheus.HistogramVec
	evalErrors              *prometheus.CounterVec
	monitors                *prometheus.GaugeVec
}

func newServeMetrics() *serveMetrics {
	opts := func(name, help string) prometheus.CounterOpts {
		return prometheus.CounterOpts{Namespace: ns, Subsystem: "serve", Name: name, Help: help}
	}
	return &serveMetrics{
		requests: prometheus.NewCounterVec(opts("requests_total",
			"HTTP requests to the server, by the module they name (\"\" when none exists of that name) and kind."), []string{"module", "kind"}),
		requestErrors: prometheus.NewCounterVec(opts("request_errors_total",
			"HTTP requests answered with an error."), []string{"module", "kind"}),
		evalDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: "serve", Name: "evaluation_duration_seconds",
			Help:    "Time a module's evaluations took: a POST's body, an exterior function call, a monitor's call, start and stop code.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"module", "kind"}),
		evalErrors: prometheus.NewCounterVec(opts("evaluation_errors_total",
			"A module's evaluations that failed (a BPL exception, a timeout)."), []string{"module", "kind"}),
		monitors: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: "serve", Name: "monitors",
			Help: "Monitor streams being served, by module."}, []string{"module"}),
	}
}

func (m *serveMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.requestErrors, m.evalDuration, m.evalErrors, m.monitors}
}

// ServeRequest counts a request to a brain4it server (package server's
// Observer, which Metrics is): kind is one of server's Request constants,
// module the module the request's path names, "" when none exists of that
// name. Hazard: module becomes a label; a caller must never pass a name
// no module has, or anyone could grow the series without bound (package
// server never does).
func (m *Metrics) ServeRequest(module, kind string) {
	m.serve.requests.WithLabelValues(module, kind).Inc()
}

// ServeRequestFailed counts a request answered with an error, as
// ServeRequest counted it.
func (m *Metrics) ServeRequestFailed(module, kind string) {
	m.serve.requestErrors.WithLabelValues(module, kind).Inc()
}

// ServeEvaluation observes how long an evaluation of module's took, of
// kind (one of package server's Eval constants), and counts it as failed
// when err is not nil.
func (m *Metrics) ServeEvaluation(module, kind string, took time.Duration, err error) {
	m.serve.evalDuration.WithLabelValues(module, kind).Observe(took.Seconds())
	if err != nil {
		m.serve.evalErrors.WithLabelValues(module, kind).Inc()
	}
}

// ServeMonitors adds delta to module's monitor streams being served.
func (m *Metrics) ServeMonitors(module string, delta int) {
	m.serve.monitors.WithLabelValues(module).Add(float64(delta))
}
