package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// median of xs, which it sorts.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// printTable writes one row per figure and one column per server; with
// two servers, a last column is the second's figure divided by the
// first's.
func printTable(w io.Writer, servers []*server, results []*result, o opts) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	type row struct {
		name, unit string
		better     string
		get        func(r *result) (float64, bool)
	}
	mem := func(f func(r *result) int64) func(r *result) (float64, bool) {
		return func(r *result) (float64, bool) {
			if r.memErr != nil {
				return 0, false
			}
			return float64(f(r)) / 1024, true
		}
	}
	rows := []row{
		{"evaluations (POST /bench)", "per s", "higher", func(r *result) (float64, bool) { return median(slices.Clone(r.evals)), true }},
		{"exterior calls (POST /bench/@add)", "per s", "higher", func(r *result) (float64, bool) { return median(slices.Clone(r.calls)), true }},
		{fmt.Sprintf("fan-out to %d watchers, median", o.watchers), "ms", "lower", func(r *result) (float64, bool) {
			s := slices.Clone(r.fan)
			slices.Sort(s)
			return ms(percentile(s, 0.5)), true
		}},
		{fmt.Sprintf("fan-out to %d watchers, p99", o.watchers), "ms", "lower", func(r *result) (float64, bool) {
			s := slices.Clone(r.fan)
			slices.Sort(s)
			return ms(percentile(s, 0.99)), true
		}},
		{"RSS idle, after the check", "MiB", "lower", mem(func(r *result) int64 { return r.idle })},
		{"RSS peak", "MiB", "lower", mem(func(r *result) int64 { return r.peak })},
		{"RSS 2 s after the load", "MiB", "lower", mem(func(r *result) int64 { return r.after })},
	}
	head := []string{"figure", "unit"}
	for _, s := range servers {
		head = append(head, s.name)
	}
	if len(servers) == 2 {
		head = append(head, servers[1].name+" ÷ "+servers[0].name, "better")
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", len(head)))
	for _, r := range rows {
		cells := []string{r.name, r.unit}
		var vals []float64
		for _, res := range results {
			v, ok := r.get(res)
			if !ok {
				cells = append(cells, "n/a")
				vals = append(vals, 0)
				continue
			}
			cells = append(cells, format(v))
			vals = append(vals, v)
		}
		if len(servers) == 2 {
			ratio := "n/a"
			if vals[0] > 0 && vals[1] > 0 {
				ratio = fmt.Sprintf("%.2f", vals[1]/vals[0])
			}
			cells = append(cells, ratio, r.better)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintf(w, "\n%d rounds; %d evaluations and %d calls a round from %d clients; %d changes a round to %d watchers.\n",
		o.rounds, o.evals, o.calls, o.conc, o.changes, o.watchers)
}

func format(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
