// Command clients compares Kafka clients doing the same work on one
// in-process kfake cluster (the project's embedded package: one broker, one
// partition per topic, on 127.0.0.1 only): raw franz-go (kgo), the
// library's Go API, the library's BPL function table, a BPL script run by
// the project's evaluator, IBM sarama and segmentio kafka-go. Every round
// runs every client once per workload, in an order that rotates between
// rounds, and every record read back is checked. It prints, per workload,
// each client's time as a ratio to kgo's in the same round: the median over
// the rounds, and the lowest and highest.
//
// It is a module of its own so that sarama and kafka-go never become
// dependencies of the library. Run it from this directory:
//
//	go run . -rounds 5
//
// The stateful tables alone (a restore of a million keys, a windowed
// count; a stream–table join, a re-keyed windowed count, timers), the
// others skipped:
//
//	go run . -workloads none -streams=false -loop 0 -memory=false
//
// The issue 34 tables alone, each run also written for benchstat:
//
//	go run . -workloads none -streams=false -loop 0 -memory=false -state=false -benchstat runs.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -filter '.name:(Join OR RekeyWindow)' -col '/client@(kgo go bpl)' runs.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -filter .name:Timers -col /timers runs.txt
//
// Two builds side by side (here franz-go's synctests build tag, which
// changes kgo itself, so ratios to kgo cannot show it), their runs
// interleaved, compared in absolute time:
//
//	go build -o /tmp/plain . && go build -tags synctests -o /tmp/tagged .
//	for i in 1 2 3 4 5 6; do for b in plain tagged; do
//	  /tmp/$b -rounds 2 -memory=false -loop 0 -state=false -join=false -rekey=false -timers=false -benchstat /tmp/$b-$i.txt >/dev/null
//	done; done
//	cat /tmp/plain-*.txt >/tmp/plain.txt; cat /tmp/tagged-*.txt >/tmp/tagged.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -filter .name:Run /tmp/plain.txt /tmp/tagged.txt
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// params is one run's workload, the same for every client.
type params struct {
	records  int    // records per produce and per consume
	batch    int    // records per synchronous send call
	sends    int    // one-record sends in the latency workload
	servers  string // the cluster, 127.0.0.1 only
	keys     []string
	keyBytes [][]byte
	// keyAny and valueAny are keys and the value as the library's Go API
	// and a BPL runtime hold them (in interfaces), made before timing as
	// kgo's keyBytes are: each client gets its data in the form its API
	// takes, so that no client's timing pays for converting it.
	keyAny   []any
	value    string // every record's value (valueSize bytes)
	valueB   []byte
	valueAny any
}

const valueSize = 100

// client is one way of talking to Kafka. Each method does the whole
// workload, client creation included, and returns when every record is
// acknowledged (produce, sendOne) or read and checked (consume).
type client interface {
	name() string
	// produce sends p.records records, keys p.keys in order, to topic
	// in synchronous calls of p.batch records, acks all.
	produce(ctx context.Context, p *params, topic string) error
	// consume reads the p.records records of topic from its start with a
	// new consumer group, checking each with chk, then closes.
	consume(ctx context.Context, p *params, topic, group string, chk *checker) error
	// sendOne sends p.sends records one per synchronous call.
	sendOne(ctx context.Context, p *params, topic string) error
}

type workload struct {
	key, title string
	store      bool // false: the broker acknowledges without storing
	run        func(ctx context.Context, c client, p *params, topic string) error
}

func main() {
	records := flag.Int("records", 200000, "records per produce and per consume")
	batch := flag.Int("batch", 1000, "records per synchronous send call")
	sends := flag.Int("sends", 2000, "one-record sends in the latency workload")
	rounds := flag.Int("rounds", 5, "interleaved rounds; the table shows medians")
	only := flag.String("clients", "", "comma-separated client names to run besides kgo (default all)")
	memory := flag.Bool("memory", true, "measure idle handles, each kind in a process of its own")
	loop := flag.Int("loop", 2000, "one-record sends of the whole-process loop (kafkabpl run against a Go program; 0: skip)")
	child := flag.String("child", "", "internal: run as a child process of this kind")
	childServers := flag.String("child-servers", "", "internal: the child's servers")
	childTopic := flag.String("child-topic", "", "internal: the child's topic")
	childN := flag.Int("child-n", 0, "internal: the child's count")
	works := flag.String("workloads", "", "comma-separated workloads to run: produce, consume, latency, null (default all)")
	streams := flag.Bool("streams", true, "run the stream table too")
	state := flag.Bool("state", true, "run the stateful tables too: restore and windowed count (issue 20)")
	restoreKeys := flag.Int("restore-keys", 1000000, "keys of the restore table's store")
	win := &winParams{base: 1_700_000_000_000}
	flag.IntVar(&win.records, "window-records", 200000, "inputs of the windowed count")
	flag.IntVar(&win.keys, "window-keys", 1000, "keys of the windowed count's inputs")
	flag.IntVar(&win.windows, "windows", 20, "one-second windows the windowed count's timestamps span")
	join := &joinParams{}
	joins := flag.Bool("join", true, "run the stream–table join table (issue 34)")
	flag.IntVar(&join.records, "join-records", 200000, "stream records of the join")
	flag.IntVar(&join.keys, "join-keys", 20000, "keys of the join's table")
	rekeys := flag.Bool("rekey", true, "run the re-keyed windowed count table (issue 34; its inputs are the windowed count's, -window-*)")
	sites := flag.Int("rekey-sites", 10, "keys the re-keyed count re-keys to (divides -window-keys)")
	tp := &timerParams{}
	timersOn := flag.Bool("timers", true, "run the timer table (issue 34)")
	flag.IntVar(&tp.keys, "timer-keys", 100000, "keys of the timer table, a silence each")
	flag.DurationVar(&tp.silence, "timer-silence", 5*time.Second, "the timer table's silence")
	benchstat := flag.String("benchstat", "", "also write every timed run to this file in the Go benchmark format, for benchstat (see the package comment): the join, re-keyed and timer runs per record, the others as BenchmarkRun/workload=W/client=C in absolute time")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed rounds to this file, each sample labelled with its client and workload")
	flag.Parse()
	if *child != "" {
		childMain(*child, *childServers, *childTopic, *childN)
	}
	if *records <= 0 || *batch <= 0 || *records%*batch != 0 || *rounds <= 0 || *sends <= 0 {
		fmt.Fprintln(os.Stderr, "clients: -records must be a positive multiple of -batch; -rounds and -sends positive")
		os.Exit(2)
	}
	if err := win.check(); *state && err != nil {
		fmt.Fprintln(os.Stderr, "clients:", err)
		os.Exit(2)
	}
	if *joins && (join.records <= 0 || join.keys <= 0 || join.keys > *records || join.keys > join.records) {
		fmt.Fprintln(os.Stderr, "clients: -join-records must be positive, -join-keys positive and at most -records and -join-records")
		os.Exit(2)
	}
	if err := win.check(); *rekeys && (err != nil || *sites <= 0 || win.keys%*sites != 0) {
		fmt.Fprintln(os.Stderr, "clients: -rekey: the -window-* flags must fit (see -state) and -rekey-sites divide -window-keys")
		os.Exit(2)
	}
	if *timersOn && (tp.keys <= 0 || tp.silence <= 0) {
		fmt.Fprintln(os.Stderr, "clients: -timer-keys and -timer-silence must be positive")
		os.Exit(2)
	}
	if *benchstat != "" {
		f, err := os.Create(*benchstat)
		if err != nil {
			fmt.Fprintln(os.Stderr, "clients:", err)
			os.Exit(1)
		}
		defer f.Close()
		fmt.Fprintf(f, "goos: %s\ngoarch: %s\npkg: github.com/brain4it/kafkabpl/bench/clients\n", runtime.GOOS, runtime.GOARCH)
		benchOut = f
	}
	if *state && *restoreKeys < checkKeys {
		fmt.Fprintf(os.Stderr, "clients: -restore-keys %d: want %d or more\n", *restoreKeys, checkKeys)
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "clients:", err)
			os.Exit(1)
		}
		profiling = func(on bool) {
			if on {
				pprof.StartCPUProfile(f)
			} else {
				pprof.StopCPUProfile()
			}
		}
	}
	stateful := func(ctx context.Context, adm *kadm.Client, p *params) error {
		var errs []error
		if *state {
			fmt.Println()
			if err := runRestores(ctx, adm, p, *restoreKeys, *rounds); err != nil {
				return err
			}
			fmt.Println()
			errs = append(errs, runWindows(ctx, adm, p, win, *rounds))
		}
		if *joins {
			fmt.Println()
			errs = append(errs, runJoins(ctx, adm, p, join, *rounds))
		}
		if *rekeys {
			fmt.Println()
			errs = append(errs, runRekeys(ctx, adm, p, win, *sites, *rounds))
		}
		if *timersOn {
			fmt.Println()
			errs = append(errs, runTimers(ctx, adm, p, tp, *rounds))
		}
		return errors.Join(errs...)
	}
	if err := run(*records, *batch, *sends, *rounds, *only, *works, *memory, *loop, *streams, stateful); err != nil {
		fmt.Fprintln(os.Stderr, "clients:", err)
		os.Exit(1)
	}
}

// profiling starts (true) and stops (false) the CPU profile of the timed
// rounds, when -cpuprofile asks for one.
var profiling = func(bool) {}

func run(records, batch, sends, rounds int, only, works string, memory bool, loop int, streams bool,
	stateful func(context.Context, *kadm.Client, *params) error) error {
	ctx := context.Background()
	null := &nullBroker{}
	cluster, err := embedded.Start(embedded.Port(0), embedded.NoAutoCreate())
	if err != nil {
		return err
	}
	defer cluster.Close()
	null.install(cluster.Kfake())

	p := &params{records: records, batch: batch, sends: sends, servers: cluster.Servers()}
	for i := range max(records, sends) {
		k := strconv.Itoa(i)
		p.keys = append(p.keys, k)
		p.keyBytes = append(p.keyBytes, []byte(k))
		p.keyAny = append(p.keyAny, k)
	}
	p.value = strings.Repeat("v", valueSize)
	p.valueB = []byte(p.value)
	p.valueAny = p.value

	all := []client{&kgoClient{}, &libClient{}, &fnClient{}, &scriptClient{}, &saramaClient{}, &kafkagoClient{}}
	clients := all[:1]
	for _, c := range all[1:] {
		if only == "" || containsName(only, c.name()) {
			clients = append(clients, c)
		}
	}

	admin, err := kgo.NewClient(kgo.SeedBrokers(cluster.Addrs()...))
	if err != nil {
		return err
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)

	// The topic every consume reads: filled once by kgo, checked once.
	if err := createTopics(ctx, adm, "drain"); err != nil {
		return err
	}
	if err := (&kgoClient{}).produce(ctx, p, "drain"); err != nil {
		return fmt.Errorf("filling drain: %w", err)
	}
	if err := verifyTopic(ctx, p, "drain", records); err != nil {
		return err
	}

	workloads := []workload{
		{"produce", "produce", true, func(ctx context.Context, c client, p *params, topic string) error {
			return c.produce(ctx, p, topic)
		}},
		{"consume", "consume", true, nil},
		{"latency", "one-record send", true, func(ctx context.Context, c client, p *params, topic string) error {
			return c.sendOne(ctx, p, topic)
		}},
		{"null", "produce, nothing stored", false, func(ctx context.Context, c client, p *params, topic string) error {
			return c.produce(ctx, p, topic)
		}},
	}

	if works != "" {
		workloads = slices.DeleteFunc(workloads, func(w workload) bool { return !containsName(works, w.key) })
	}
	var names []string
	for _, c := range clients {
		names = append(names, c.name())
	}
	res := newResults(names, workloads)
	fails := map[string]string{} // client/workload -> first error
	group := 0
	// once runs workload w of client c with params q, checks it and
	// gives its time.
	once := func(c client, w workload, q *params, topic string) (time.Duration, uint64, error) {
		// Each run's goroutines, the client's own included, carry its
		// labels, so that a CPU profile tells the clients apart.
		labels := pprof.Labels("client", c.name(), "workload", w.key)
		// Collect the previous run's garbage first, so that no run pays
		// for another client's.
		runtime.GC()
		if w.key == "consume" {
			group++
			chk := newChecker(q, "drain", q.records)
			m0 := mallocs()
			start := time.Now()
			var err error
			pprof.Do(ctx, labels, func(ctx context.Context) {
				err = c.consume(ctx, q, "drain", fmt.Sprintf("g%d", group), chk)
			})
			if err == nil {
				err = chk.done()
			}
			// From creating the consumer to the last record checked:
			// closing (leaving the group, committing, waiting out a
			// fetch) is not part of reading.
			return chk.last.Sub(start), mallocs() - m0, err
		}
		if err := createTopics(ctx, adm, topic); err != nil {
			return 0, 0, err
		}
		null.set(!w.store)
		m0 := mallocs()
		start := time.Now()
		var err error
		pprof.Do(ctx, labels, func(ctx context.Context) { err = w.run(ctx, c, q, topic) })
		d := time.Since(start)
		allocs := mallocs() - m0
		null.set(false)
		switch {
		case err != nil:
		case w.store && w.key == "latency":
			err = verifyTopic(ctx, q, topic, q.sends)
		case w.store:
			err = verifyTopic(ctx, q, topic, q.records)
		case null.count() != int64(q.records):
			err = fmt.Errorf("the null broker acknowledged %d records, want %d", null.count(), q.records)
		}
		if _, derr := adm.DeleteTopics(ctx, topic); derr != nil && err == nil {
			err = derr
		}
		return d, allocs, err
	}

	// A short untimed round first, so that no client pays for the
	// process warming up (heap growth, first connections).
	warm := *p
	warm.records, warm.sends = batch, min(sends, 10)
	for _, w := range workloads {
		for _, c := range clients {
			if _, _, err := once(c, w, &warm, fmt.Sprintf("warm-%s-%s", w.key, c.name())); err != nil {
				fmt.Fprintf(os.Stderr, "warm-up: %s %s: %v\n", c.name(), w.key, err)
			}
		}
	}

	profiling(true)
	defer profiling(false)
	for r := range rounds {
		for wi, w := range workloads {
			// Rotate the order so that no client always runs first.
			for ci := range clients {
				c := clients[(ci+r+wi)%len(clients)]
				if _, failed := fails[c.name()+"/"+w.key]; failed {
					continue
				}
				d, allocs, err := once(c, w, p, fmt.Sprintf("%s-%s-%d", w.key, c.name(), r))
				if err != nil {
					fails[c.name()+"/"+w.key] = err.Error()
					fmt.Fprintf(os.Stderr, "round %d: %s %s: FAILED: %v\n", r+1, c.name(), w.key, err)
					continue
				}
				res.add(w.key, c.name(), r, d, allocs)
				fmt.Fprintf(os.Stderr, "round %d: %-8s %-8s %v\n", r+1, c.name(), w.key, d.Round(time.Millisecond))
			}
		}
	}
	if len(workloads) > 0 {
		fmt.Printf("%d records of %d bytes (keyed), calls of %d, %d one-record sends, acks all, one broker, one partition, %d rounds\n\n",
			records, valueSize, batch, sends, rounds)
		res.print(os.Stdout, fails)
		fmt.Println()
		res.printAllocs(os.Stdout, p)
	}
	var streamErr error
	if streams {
		fmt.Println()
		streamErr = runStreams(ctx, adm, p, rounds)
	}
	if err := stateful(ctx, adm, p); err != nil && streamErr == nil {
		streamErr = err
	}
	if loop > 0 {
		fmt.Println()
		if err := processLoops(ctx, os.Stdout, adm, p, loop, rounds); err != nil {
			return fmt.Errorf("loop: %w", err)
		}
	}
	if memory {
		fmt.Println()
		if err := memoryTable(ctx, os.Stdout, adm, p); err != nil {
			return fmt.Errorf("memory: %w", err)
		}
	}
	if len(fails) > 0 {
		return fmt.Errorf("%d client workloads failed (see the table)", len(fails))
	}
	return streamErr
}

// mallocs is the number of heap allocations the process made so far: the
// clients' and the in-process broker's.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

func containsName(list, name string) bool {
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == name {
			return true
		}
	}
	return false
}

func createTopics(ctx context.Context, adm *kadm.Client, topics ...string) error {
	resp, err := adm.CreateTopics(ctx, 1, 1, nil, topics...)
	if err != nil {
		return err
	}
	return resp.Error()
}

// verifyTopic reads topic back with kgo, outside the timings, and checks
// every record: what a client produced is what it was asked to.
func verifyTopic(ctx context.Context, p *params, topic string, n int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(p.servers, ",")...),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	chk := newChecker(p, topic, n)
	for chk.got < n {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := fs.Err0(); err != nil {
			return fmt.Errorf("verifying %s after %d records: %w", topic, chk.got, err)
		}
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			if err := chk.record(r.Topic, r.Partition, r.Key, r.Value); err != nil {
				return err
			}
		}
	}
	return chk.done()
}
