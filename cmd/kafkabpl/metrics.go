package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/brain4it/kafkabpl/metrics"
	"github.com/brain4it/kafkabpl/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics counts serve's requests, evaluations and monitor streams per
// module.
var _ server.Observer = (*metrics.Metrics)(nil)

// metricsFlag is --metrics: where run, eval and serve serve Prometheus's
// text format.
type metricsFlag struct{ addr string }

func (f *metricsFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "metrics", "", "serve Prometheus metrics at http://`ADDR`/metrics (host:port, for example 127.0.0.1:9464)")
}

// start serves the metrics of a new registry, with Go's and the process's
// collectors, until stop; m is nil without --metrics.
func (f *metricsFlag) start(stderr io.Writer) (m *metrics.Metrics, stop func(), err error) {
	if f.addr == "" {
		return nil, func() {}, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if m, err = metrics.New(reg); err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	fmt.Fprintf(stderr, "metrics on http://%s/metrics\n", ln.Addr())
	return m, func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	}, nil
}
