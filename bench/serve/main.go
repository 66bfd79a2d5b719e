// Command serve measures servers of brain4it's HTTP protocol side by side:
// brain4it's own Java server (built from brain4it's sources, not part of
// this repository) and `kafkabpl serve`. It starts each server itself on a
// free loopback port, or takes one already running (-url, loopback only),
// checks that it speaks the protocol, then runs interleaved rounds of four
// workloads with a fixed concurrency:
//
//   - evaluations: POST /bench with a small expression, per second;
//   - exterior calls: POST /bench/@add with a number, per second (these
//     two workloads send with the tool's own HTTP/1.1 client, rawConn,
//     whose cost per request is a third of net/http's client's: on a
//     small machine the client shares the CPU with the servers);
//   - monitor fan-out: -watchers monitor sessions on @v; each change sets v
//     and calls module-notify; the time from the POST to the last watcher
//     reading the new value, median and p99 over every change;
//   - memory: the server process's resident set (VmRSS in
//     /proc/PID/status): idle after the check, peak (the kernel's VmHWM and
//     the highest sample, every 100 ms), and 2 s after the last round.
//
// Every answer is checked, and the tool exits 1 when a server fails. Every
// count is bounded, and -time bounds the whole run. It prints a Markdown
// table with the ratio of kafkabpl's figure to Java's.
//
// Run it from this directory, for example:
//
//	go run . -java brain4it/classes -kafkabpl 'go run ../../cmd/kafkabpl serve --port {port} --data-dir {dir}'
//
// {port} and {dir} in a command are replaced with the free port and a
// fresh data directory. The process whose memory is read is the one that
// owns the listening socket, so a `go run` wrapper is not what is
// measured.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"
)

// opts is one run's configuration, the same for every server.
type opts struct {
	conc, evals, calls, warmup int
	watchers, changes, rounds  int
	wait                       time.Duration
}

// result is one server's figures over the run.
type result struct {
	evals, calls []float64       // per round
	fan          []time.Duration // every change of every round
	idle, after  int64           // KiB
	peak         int64           // KiB: max(VmHWM, samples)
	memErr       error
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		url       = flag.String("url", "", "a brain4it-protocol server already running, loopback only (e.g. http://127.0.0.1:9999); measured under -url-name")
		urlName   = flag.String("url-name", "server", "the column name of -url")
		javaCP    = flag.String("java", "", "classpath of brain4it's standalone server, built from its sources (e.g. brain4it/classes); starts it")
		javaMain  = flag.String("java-main", "org.brain4it.server.standalone.LoopbackRunner", "the Java server's main class (brain4it's own is org.brain4it.server.standalone.Runner, which listens on every interface)")
		javaNoDel = flag.Bool("java-nodelay", true, "pass -tcpNoDelay=true to the Java server's LoopbackRunner: without TCP_NODELAY brain4it's server answers a kept-alive connection about 40 ms late (its many small writes meet Nagle's algorithm and the client's delayed ACK); false measures it as brain4it ships")
		javaOpts  = flag.String("java-opts", "", "JVM options for the Java server, space-separated (default: the JVM's own)")
		kafkabplC = flag.String("kafkabpl", "", "command line that starts kafkabpl's server, run by sh; {port} and {dir} are replaced (e.g. 'go run ../../cmd/kafkabpl serve --port {port} --data-dir {dir}')")
		o         opts
		total     = flag.Duration("time", 10*time.Minute, "bound on the whole run")
		startWait = flag.Duration("start-timeout", 3*time.Minute, "how long a started server has to answer GET /")
		checkOnly = flag.Bool("check", false, "only check the protocol, measure nothing")
		cpuProf   = flag.String("cpuprofile", "", "write this tool's own CPU profile to `FILE` (what the load costs on the client side)")
	)
	flag.IntVar(&o.conc, "conc", 8, "concurrent clients in the evaluation and call workloads")
	flag.IntVar(&o.evals, "evals", 5000, "evaluations per round")
	flag.IntVar(&o.calls, "calls", 5000, "exterior calls per round")
	flag.IntVar(&o.warmup, "warmup", 10000, "evaluations and calls each, and 5 fan-out changes, per server, before the first round (not measured)")
	flag.IntVar(&o.watchers, "watchers", 100, "monitor sessions in the fan-out workload")
	flag.IntVar(&o.changes, "changes", 30, "changes per round in the fan-out workload")
	flag.IntVar(&o.rounds, "rounds", 5, "rounds; the servers take turns in each, in an order that alternates")
	flag.DurationVar(&o.wait, "wait", 10*time.Second, "how long every watcher has to read one change")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if o.conc < 1 || o.evals < 1 || o.calls < 1 || o.watchers < 1 || o.changes < 1 || o.rounds < 1 || o.warmup < 0 {
		return errors.New("-conc, -evals, -calls, -watchers, -changes and -rounds must be at least 1, -warmup at least 0")
	}
	if o.evals > 1e6 || o.calls > 1e6 || o.watchers > 1000 || o.changes > 10000 || o.rounds > 100 || o.conc > 256 {
		return errors.New("counts are bounded: -evals and -calls 1e6, -watchers 1000, -changes 10000, -rounds 100, -conc 256")
	}
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, cancel := context.WithTimeout(context.Background(), *total)
	defer cancel()

	var servers []*server
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	if *javaCP != "" {
		argv := append(strings.Fields(*javaOpts), "-cp", *javaCP, *javaMain, "-port={port}", "-basePath={dir}")
		if *javaNoDel {
			argv = append(argv, "-tcpNoDelay=true")
		}
		s, err := startServer(ctx, "brain4it (Java)", append([]string{"java"}, argv...), *startWait)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	if *kafkabplC != "" {
		if !strings.Contains(*kafkabplC, "{port}") {
			return fmt.Errorf("-kafkabpl %q: the command must contain {port}", *kafkabplC)
		}
		s, err := startServer(ctx, "kafkabpl", []string{"sh", "-c", "exec " + *kafkabplC}, *startWait)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	if *url != "" {
		u, err := checkLoopback(*url)
		if err != nil {
			return err
		}
		s := &server{name: *urlName, url: strings.TrimRight(u.String(), "/")}
		if u.Port() != "" {
			fmt.Sscan(u.Port(), &s.port)
			s.pid, _ = listenerPID(s.port)
		}
		servers = append(servers, s)
	}
	if len(servers) == 0 {
		return errors.New("no server: give -java, -kafkabpl or -url")
	}
	clients := make([]*client, len(servers))
	for i, s := range servers {
		if _, err := checkLoopback(s.url); err != nil {
			return err
		}
		clients[i] = newClient(s.url, o.conc+o.watchers)
		defer clients[i].close()
		if err := check(ctx, clients[i]); err != nil {
			return fmt.Errorf("%s at %s does not speak brain4it's protocol as brain4it's server does:\n%w", s.name, s.url, err)
		}
		fmt.Fprintf(os.Stderr, "%s at %s (pid %d): protocol check passed\n", s.name, s.url, s.pid)
	}
	if *checkOnly {
		return nil
	}
	results := make([]*result, len(servers))
	stopSampling := make(chan struct{})
	var sampling sync.WaitGroup
	for i, s := range servers {
		results[i] = &result{}
		if err := setup(ctx, clients[i]); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if s.pid == 0 {
			results[i].memErr = errNoProcess
			continue
		}
		results[i].idle, _, results[i].memErr = rss(s.pid)
		sampling.Add(1)
		go func(r *result, pid int) {
			defer sampling.Done()
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stopSampling:
					return
				case <-t.C:
					if cur, _, err := rss(pid); err == nil && cur > r.peak {
						r.peak = cur
					}
				}
			}
		}(results[i], s.pid)
	}
	for i, s := range servers {
		if o.warmup > 0 {
			if _, err := evals(ctx, clients[i], o.conc, o.warmup); err != nil {
				return fmt.Errorf("%s: warm-up evaluations: %w", s.name, err)
			}
			if _, err := calls(ctx, clients[i], o.conc, o.warmup); err != nil {
				return fmt.Errorf("%s: warm-up calls: %w", s.name, err)
			}
			if _, err := fanout(ctx, clients[i], o.watchers, 5, o.wait); err != nil {
				return fmt.Errorf("%s: warm-up fan-out: %w", s.name, err)
			}
		}
	}
	for round := 0; round < o.rounds; round++ {
		order := make([]int, len(servers))
		for i := range order {
			order[i] = i
		}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			s, c, r := servers[i], clients[i], results[i]
			ev, err := evals(ctx, c, o.conc, o.evals)
			if err != nil {
				return fmt.Errorf("%s: round %d evaluations: %w", s.name, round+1, err)
			}
			ca, err := calls(ctx, c, o.conc, o.calls)
			if err != nil {
				return fmt.Errorf("%s: round %d exterior calls: %w", s.name, round+1, err)
			}
			fan, err := fanout(ctx, c, o.watchers, o.changes, o.wait)
			if err != nil {
				return fmt.Errorf("%s: round %d fan-out: %w", s.name, round+1, err)
			}
			r.evals, r.calls, r.fan = append(r.evals, ev), append(r.calls, ca), append(r.fan, fan...)
			fmt.Fprintf(os.Stderr, "round %d %-16s evals %8.0f/s  calls %8.0f/s  fan-out median %v p99 %v\n",
				round+1, s.name, ev, ca, percentile(fan, 0.5).Round(10*time.Microsecond), percentile(fan, 0.99).Round(10*time.Microsecond))
		}
	}
	for _, c := range clients {
		c.close()
	}
	time.Sleep(2 * time.Second)
	close(stopSampling)
	sampling.Wait()
	for i, s := range servers {
		r := results[i]
		if s.pid == 0 || r.memErr != nil {
			continue
		}
		cur, hwm, err := rss(s.pid)
		if err != nil {
			r.memErr = err
			continue
		}
		r.after, r.peak = cur, max(r.peak, hwm)
	}
	printTable(os.Stdout, servers, results, o)
	if *javaCP != "" {
		fmt.Printf("Java server: %s, TCP_NODELAY asked for: %v, JVM options: %q.\n", *javaMain, *javaNoDel, *javaOpts)
	}
	return nil
}
