package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

// results holds each workload's time and allocations per client per
// round.
type results struct {
	names     []string // the clients', "kgo" (the base) first
	titles    map[string]string
	workloads []workload
	d         map[string]map[string]map[int]time.Duration // workload -> client -> round
	allocs    map[string]map[string][]uint64              // workload -> client -> per round
	bench     map[string]benchRow                         // workload -> its benchmark lines (see -benchstat); nil: none
}

// benchRow names a workload's lines in the Go benchmark format, written
// to -benchstat's file, and says how many records a run handles.
type benchRow struct {
	name    string // BenchmarkName/client=c
	records int
	suffix  string // cut from the clients' names (gojoin: client=go), so that tables share columns
}

// benchOut is -benchstat's file; nil: none.
var benchOut io.Writer

func newResults(names []string, ws []workload) *results {
	r := &results{names: names, titles: rowTitle, workloads: ws, d: map[string]map[string]map[int]time.Duration{},
		allocs: map[string]map[string][]uint64{}}
	for _, w := range ws {
		r.d[w.key] = map[string]map[int]time.Duration{}
		r.allocs[w.key] = map[string][]uint64{}
		for _, name := range names {
			r.d[w.key][name] = map[int]time.Duration{}
		}
	}
	return r
}

func (r *results) add(w, c string, round int, d time.Duration, allocs uint64) {
	r.d[w][c][round] = d
	r.allocs[w][c] = append(r.allocs[w][c], allocs)
	if benchOut == nil {
		return
	}
	if row, ok := r.bench[w]; ok {
		// One line per run, b.N 1, for benchstat -col /client.
		n := float64(row.records)
		fmt.Fprintf(benchOut, "Benchmark%s/client=%s 1 %d ns/op %.1f ns/record %.3f allocs/record\n",
			row.name, strings.TrimSuffix(c, row.suffix), d.Nanoseconds(), float64(d.Nanoseconds())/n, float64(allocs)/n)
		return
	}
	// Every other table's runs, in absolute time: for comparing two builds
	// of this command (benchstat old.txt new.txt), where ratios to kgo
	// would hide what changed kgo too, such as a build tag of franz-go's.
	fmt.Fprintf(benchOut, "BenchmarkRun/workload=%s/client=%s 1 %d ns/op %d allocs/op\n", w, c, d.Nanoseconds(), allocs)
}

// ratios is c's speed as a fraction of kgo's (kgo's time over c's) in
// each round both finished.
func (r *results) ratios(w, c string) []float64 {
	var out []float64
	for round, d := range r.d[w][c] {
		if base, ok := r.d[w]["kgo"][round]; ok && d > 0 {
			out = append(out, float64(base)/float64(d))
		}
	}
	slices.Sort(out)
	return out
}

func median[T float64 | time.Duration | uint64](s []T) T {
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

var rowTitle = map[string]string{
	"kgo":     "raw kgo (franz-go), absolute median",
	"goapi":   "Library.Send / Library.Poll (Go API)",
	"fn":      "kafka-send / kafka-poll via functions.Table",
	"script":  "BPL script through the evaluator",
	"sarama":  "IBM sarama",
	"kafkago": "segmentio kafka-go",
}

func (r *results) print(w io.Writer, fails map[string]string) {
	fmt.Fprintln(w, "Speed as a fraction of raw kgo's in the same round (kgo's time over the client's: 1.00 = as fast as kgo, 0.50 = twice as long): median [min–max] over the rounds.")
	fmt.Fprintln(w)
	r.header(w)
	for _, name := range r.names {
		fmt.Fprintf(w, "| %s |", r.titles[name])
		for _, wl := range r.workloads {
			if msg, failed := fails[name+"/"+wl.key]; failed {
				fmt.Fprintf(w, " fails: %s |", short(msg))
				continue
			}
			if name == "kgo" {
				var ds []time.Duration
				for _, d := range r.d[wl.key]["kgo"] {
					ds = append(ds, d)
				}
				if len(ds) == 0 {
					fmt.Fprint(w, " – |")
					continue
				}
				fmt.Fprintf(w, " %v |", median(ds).Round(100*time.Microsecond))
				continue
			}
			rs := r.ratios(wl.key, name)
			if len(rs) == 0 {
				fmt.Fprint(w, " – |")
				continue
			}
			fmt.Fprintf(w, " %.2f [%.2f–%.2f] |", median(rs), rs[0], rs[len(rs)-1])
		}
		fmt.Fprintln(w)
	}
}

// printAllocs prints each client's heap allocations per record, median
// over the rounds, and that as a ratio to kgo's. The count is the whole
// process's, so it includes the in-process broker's share, which is about
// the same for every client.
func (r *results) printAllocs(w io.Writer, p *params) {
	fmt.Fprintln(w, "Heap allocations per record (the process's, so the in-process broker's share included), median over the rounds; in brackets, the ratio to kgo's.")
	fmt.Fprintln(w)
	r.header(w)
	for _, name := range r.names {
		fmt.Fprintf(w, "| %s |", r.titles[name])
		for _, wl := range r.workloads {
			n := p.records
			if wl.key == "latency" {
				n = p.sends
			}
			a, base := r.allocs[wl.key][name], r.allocs[wl.key]["kgo"]
			if len(a) == 0 || len(base) == 0 {
				fmt.Fprint(w, " – |")
				continue
			}
			per, basePer := float64(median(a))/float64(n), float64(median(base))/float64(n)
			fmt.Fprintf(w, " %.3f [%.2fx] |", per, per/basePer)
		}
		fmt.Fprintln(w)
	}
}

// header prints the tables' header: a column per workload.
func (r *results) header(w io.Writer) {
	fmt.Fprint(w, "| client |")
	for _, wl := range r.workloads {
		fmt.Fprintf(w, " %s |", wl.title)
	}
	fmt.Fprint(w, "\n|---|")
	for range r.workloads {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
}

func short(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// runRounds runs rounds+1 rounds of workload key (round 0 warms up,
// untimed), each of names once a round, in an order the round rotates; a
// name that fails is left out of the later rounds. once runs name's n-th
// run (n counts the runs of all names, for unique topics and groups). The
// times go to res; the failures come back by "<name>/<key>".
func runRounds(key string, names []string, rounds int, res *results, once func(name string, n int) (time.Duration, uint64, error)) map[string]string {
	fails := map[string]string{}
	n := 0
	for r := range rounds + 1 {
		for i := range names {
			name := names[(i+r)%len(names)]
			if _, failed := fails[name+"/"+key]; failed {
				continue
			}
			n++
			d, allocs, err := once(name, n)
			if r == 0 {
				if err != nil {
					fmt.Fprintf(os.Stderr, "warm-up: %s: %v\n", name, err)
				}
				continue
			}
			if err != nil {
				fails[name+"/"+key] = err.Error()
				fmt.Fprintf(os.Stderr, "round %d: %s %s: FAILED: %v\n", r, name, key, err)
				continue
			}
			res.add(key, name, r, d, allocs)
			fmt.Fprintf(os.Stderr, "round %d: %-9s %s %v\n", r, name, key, d.Round(time.Millisecond))
		}
	}
	return fails
}

// named is a side of a table: its name labels its rows.
type named interface{ name() string }

// namesOf returns the names of sides, in order.
func namesOf[S named](sides []S) []string {
	names := make([]string, len(sides))
	for i, s := range sides {
		names[i] = s.name()
	}
	return names
}

// runSides is runRounds over sides, each run with an id of its own,
// "<key>-<name>-<n>", for its output topic and group.
func runSides[S named](key string, sides []S, rounds int, res *results, once func(s S, id string) (time.Duration, uint64, error)) map[string]string {
	byName := make(map[string]S, len(sides))
	for _, s := range sides {
		byName[s.name()] = s
	}
	return runRounds(key, namesOf(sides), rounds, res, func(name string, n int) (time.Duration, uint64, error) {
		return once(byName[name], fmt.Sprintf("%s-%s-%d", key, name, n))
	})
}

// timeRun times one run of a side, labelled side and workload in the CPU
// profile: from start until wait (given when the run started) returns,
// counting the process's allocations meanwhile. stop, which start
// returned, ends the run once wait returned, or failed.
func timeRun(ctx context.Context, side, workload string, start func(context.Context) (stop func() error, err error), wait func(begin time.Time) error) (time.Duration, uint64, error) {
	runtime.GC()
	m0 := mallocs()
	begin := time.Now()
	var stop func() error
	var err error
	pprof.Do(ctx, pprof.Labels("client", side, "workload", workload), func(ctx context.Context) { stop, err = start(ctx) })
	if err != nil {
		return 0, 0, err
	}
	if err := wait(begin); err != nil {
		stop()
		return 0, 0, err
	}
	d := time.Since(begin)
	allocs := mallocs() - m0
	if err := stop(); err != nil {
		return 0, 0, err
	}
	return d, allocs, nil
}
