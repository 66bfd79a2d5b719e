//go:build linux

// Command diskstate measures a stateful stream's state on disk against
// its state in memory (issue 46), as a user runs it: `kafkabpl broker` in
// a process of its own, a per-key count in `kafkabpl run`, with and
// without --state-dir. For each key count it reports, per store:
//
//   - the run: from the process's start until it processed every input
//     (each key once; -passes N: N times, the keys in the same order each
//     time), and its throughput relative to memory's;
//   - the peak RSS of the stream's process (VmHWM);
//   - a restart after a clean stop: from the process's start until the
//     output of an input sent before it started, and the changelog
//     records its restores applied.
//
// With -tails, for the disk store, a restart whose state on disk is
// behind the changelog by each tail size, as after a kill that cost the
// disk its last batches: a run without --state-dir counts that many
// inputs more (over keys already counted, so the state keeps its size),
// and stops; the run with --state-dir started then reads that tail, and
// is timed until the output of an input sent before it started. (The
// run in memory stops cleanly: a killed one's open transaction would
// hold the restore up for its transaction timeout, a wait that neither
// the tail nor the state sets.) With -windows, the count is a windowed
// one: a tumbling window of an hour per key, so every key holds one open
// window, emitting on update (a result per input). With -stores
// memory,disk,kgo it also times kgo's transactional loop counting the
// same inputs in a Go map, in this process, the bound a stream with no
// changelog and no evaluator would reach.
//
// Usage (from the module bench/clients):
//
//	go run ./diskstate -keys 1000000,3000000
//	go run ./diskstate -keys 1000000 -tails 100000,1000000
//	go run ./diskstate -keys 1000000 -windows
//	go run ./diskstate -keys 1000000 -passes 2
//	go run ./diskstate -keys 1000000 -cpuprofile /tmp/prof
//	go run ./diskstate -keys 30000000 -stores disk,kgo
//
// It builds kafkabpl from the module it replaces, and connects only to
// the loopback broker it starts.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// countScript counts inputs per key in "counts", printing "caught up"
// once it processed want inputs; its outputs are "key=count".
const countScript = `(set s (kafka-stream (list "servers" => kafka-servers "group" => "counter")
  "from" => "in" "to" => "out" "store" => "counts"
  "transform" => (function (in state) (kafka-state (+ state 1) (concat (get in "key") "=" (+ state 1))))))
(while (< (get (kafka-stream-status s) "processed") %d) (sleep 50))
"caught up"
`

// windowScript counts inputs per key and tumbling window of an hour,
// emitting each window's count on update.
const windowScript = `(set s (kafka-stream (list "servers" => kafka-servers "group" => "counter" "value-serializer" => "JSON")
  "from" => "in" "to" => "out" "store" => "counts"
  "window" => (list "type" => "tumbling" "size" => 3600000 "emit" => "update")
  "aggregate" => (function (in acc) (+ acc 1))))
(while (< (get (kafka-stream-status s) "processed") %d) (sleep 50))
"caught up"
`

var (
	tails      []int
	windows    bool
	profileDir string
	passes     = 1
)

func main() {
	keysFlag := flag.String("keys", "1000000", "key counts to measure, joined by commas")
	tailsFlag := flag.String("tails", "", "tail sizes of the restarts after a kill, joined by commas (none: none)")
	storesFlag := flag.String("stores", "memory,disk", "what to measure, joined by commas: memory, disk, and kgo (kgo's transactional loop counting in a map, in this process)")
	flag.DurationVar(&limitWait, "wait", limitWait, "the longest wait for a run to catch up")
	flag.StringVar(&profileDir, "cpuprofile", "", "write a CPU profile of each measured run (not the restarts) to `DIR`/STORE-KEYS.prof")
	flag.IntVar(&passes, "passes", passes, "inputs per key in the measured run: past the first, each reads a key the store holds")
	flag.BoolVar(&windows, "windows", false, "a windowed count (one open window per key) instead of a per-key count")
	flag.Parse()
	for _, t := range strings.Split(*tailsFlag, ",") {
		if t != "" {
			n, err := strconv.Atoi(t)
			check(err)
			tails = append(tails, n)
		}
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "diskstate")
	check(err)
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "kafkabpl")
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/brain4it/kafkabpl").Output()
	check(err)
	build := exec.Command("go", "build", "-o", bin, "./cmd/kafkabpl")
	build.Dir = strings.TrimSpace(string(root))
	build.Stderr = os.Stderr
	check(build.Run())

	fmt.Println("| keys | store | run | throughput vs memory | peak RSS | restart to first output | records restored |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, k := range strings.Split(*keysFlag, ",") {
		n, err := strconv.Atoi(k)
		check(err)
		var memRun time.Duration // the memory store's run, for the disk's ratio
		for _, onDisk := range []bool{false, true} {
			if !slices.Contains(strings.Split(*storesFlag, ","), map[bool]string{false: "memory", true: "disk"}[onDisk]) {
				continue
			}
			r := measure(ctx, bin, dir, n, onDisk, memRun)
			if !onDisk {
				memRun = r.run
			}
		}
		if slices.Contains(strings.Split(*storesFlag, ","), "kgo") {
			took := measureKgo(ctx, bin, n)
			ratio := "-"
			if memRun > 0 {
				ratio = fmt.Sprintf("%.2f", memRun.Seconds()/took.Seconds())
			}
			fmt.Printf("| %d | kgo's loop, a map | %.1f s | %s | | | |\n", n, took.Seconds(), ratio)
		}
	}
}

// measureKgo runs, in this process, the loop a franz-go program writes
// for the same count, and returns its time until it processed every
// input: a GroupTransactSession that reads "in" from its start,
// read_committed, counts each key in a Go map and writes "key=count" to
// "out" in the transaction that commits the inputs' offsets. Its state
// has no changelog: it is the map's, lost with the process.
func measureKgo(ctx context.Context, bin string, n int) time.Duration {
	if windows {
		check(errors.New("-stores kgo: a per-key count only, not -windows"))
	}
	servers, _, _, stop := startBroker(ctx, bin, n)
	defer stop()
	start := time.Now()
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(servers), kgo.ConsumerGroup("kgo-counter"), kgo.ConsumeTopics("in"),
		kgo.TransactionalID("kgo-counter"), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.RequireStableFetchOffsets(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DefaultProduceTopic("out"))
	check(err)
	defer sess.Close()
	counts := map[string]int64{}
	for processed := 0; processed < n*passes; {
		fs := sess.PollFetches(ctx)
		for _, e := range fs.Errors() {
			check(e.Err)
		}
		check(sess.Begin())
		fs.EachRecord(func(r *kgo.Record) {
			counts[string(r.Key)]++
			out := &kgo.Record{Key: r.Key, Value: fmt.Appendf(nil, "%s=%d", r.Key, counts[string(r.Key)])}
			sess.Produce(ctx, out, func(_ *kgo.Record, err error) { check(err) })
			processed++
		})
		committed, err := sess.End(ctx, kgo.TryCommit)
		check(err)
		if !committed {
			check(errors.New("kgo's loop: a transaction aborted (its counts would count again)"))
		}
	}
	return time.Since(start)
}

// script is the stream's script, done once it processed want inputs.
func script(want int) []byte {
	if windows {
		return fmt.Appendf(nil, windowScript, want)
	}
	return fmt.Appendf(nil, countScript, want)
}

type result struct {
	run, restart time.Duration
	rss          int64
	restored     int64
}

// measure runs the count over n keys on a broker of its own.
func measure(ctx context.Context, bin, dir string, n int, onDisk bool, memRun time.Duration) result {
	servers, cl, adm, stop := startBroker(ctx, bin, n)
	defer stop()

	scriptFile := filepath.Join(dir, "count.bpl")
	check(os.WriteFile(scriptFile, script(n*passes), 0o644))
	args := []string{"run", "--servers", servers}
	state := filepath.Join(dir, "state")
	os.RemoveAll(state)
	memArgs := append(slices.Clone(args), scriptFile)
	if onDisk {
		args = append(args, "--state-dir", state)
	}
	args = append(args, scriptFile)

	var r result
	start := time.Now()
	var env []string
	if profileDir != "" {
		name := map[bool]string{false: "memory", true: "disk"}[onDisk]
		env = []string{"KAFKABPL_CPUPROFILE=" + filepath.Join(profileDir, fmt.Sprintf("%s-%d.prof", name, n))}
	}
	p := startRun(bin, args, env...)
	p.waitLine("caught up")
	r.run = time.Since(start)
	r.rss = p.peakRSS()
	p.stop()

	// A restart after the clean stop: one input sent before it starts,
	// timed until its output.
	end := endOffsets(ctx, adm, "out")
	feed(ctx, cl, n, n+1)
	r.restart, r.restored = restart(ctx, bin, scriptFile, args, servers, end)
	// The run's row, before its tails' (a tail's run in memory may not
	// fit where the disk's did).
	name, ratio := "memory", "1.00"
	if onDisk {
		name, ratio = "disk", "-"
		if memRun > 0 {
			ratio = fmt.Sprintf("%.2f", memRun.Seconds()/r.run.Seconds())
		}
	}
	fmt.Printf("| %d | %s | %.1f s | %s | %d MiB | %.2f s | %d |\n", n, name, r.run.Seconds(), ratio, r.rss>>20, r.restart.Seconds(), r.restored)
	if !onDisk {
		return r
	}
	for _, size := range tails {
		// The changelog moves on by size records without the disk:
		// a run in memory counts size inputs more over keys already
		// counted.
		feed(ctx, cl, 0, size)
		check(os.WriteFile(scriptFile, script(size), 0o644))
		p := startRun(bin, memArgs)
		p.waitLine("caught up")
		p.stop()
		end := endOffsets(ctx, adm, "out")
		feed(ctx, cl, n, n+1)
		took, restored := restart(ctx, bin, scriptFile, args, servers, end)
		fmt.Printf("| %d | disk, %d records behind | | | | %.2f s | %d |\n", n, size, took.Seconds(), restored)
	}
	return r
}

// startBroker starts `kafkabpl broker` on port 19192, with the topics
// "in" and "out" (three partitions), and feeds "in" passes times over n
// keys. stop closes the client and stops the broker.
func startBroker(ctx context.Context, bin string, n int) (servers string, cl *kgo.Client, adm *kadm.Client, stop func()) {
	port := "19192"
	if l, err := net.Listen("tcp", "127.0.0.1:"+port); err != nil {
		check(fmt.Errorf("port %s is taken (a broker an earlier run left?): %w", port, err))
	} else {
		l.Close()
	}
	broker := exec.Command(bin, "broker", "--port", port, "--brokers", "1", "--partitions", "3")
	broker.Stderr = os.Stderr
	broker.SysProcAttr = orphanKill()
	check(broker.Start())
	servers = "127.0.0.1:" + port
	cl, err := kgo.NewClient(kgo.SeedBrokers(servers), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(5*time.Millisecond))
	check(err)
	stop = func() {
		cl.Close()
		broker.Process.Signal(syscall.SIGTERM)
		broker.Wait()
	}
	adm = kadm.NewClient(cl)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := adm.CreateTopics(ctx, 3, 1, nil, "in", "out"); err == nil {
			break
		} else if time.Now().After(deadline) {
			check(err)
		}
	}
	for range passes {
		feed(ctx, cl, 0, n)
	}
	return servers, cl, adm, stop
}

// restart starts the stream (an input was sent before), and returns the
// time until its output, after end, and the changelog records its
// restores applied.
func restart(ctx context.Context, bin, scriptFile string, args []string, servers string, end map[int32]kgo.Offset) (time.Duration, int64) {
	check(os.WriteFile(scriptFile, script(1), 0o644))
	start := time.Now()
	p := startRun(bin, args)
	waitOutput(ctx, servers, end)
	took := time.Since(start)
	// The first output may come before every partition's restore ended
	// (each is logged with its records once it ends).
	for deadline := time.Now().Add(limitWait); len(restoredLine.FindAllString(p.log.String(), -1)) < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			check(fmt.Errorf("the restart's three restores did not end in %v: %s", limitWait, p.log.String()))
		}
	}
	p.stop()
	return took, p.restored()
}

// feed sends keys from..to-1, one input each, 100 bytes of value.
func feed(ctx context.Context, cl *kgo.Client, from, to int) {
	val := []byte(strings.Repeat("x", 100))
	const chunk = 10000
	for i := from; i < to; i += chunk {
		var rs []*kgo.Record
		for j := i; j < min(to, i+chunk); j++ {
			rs = append(rs, &kgo.Record{Topic: "in", Key: []byte("k" + strconv.Itoa(j)), Value: val})
		}
		check(cl.ProduceSync(ctx, rs...).FirstErr())
	}
}

// endOffsets is topic's end offsets.
func endOffsets(ctx context.Context, adm *kadm.Client, topic string) map[int32]kgo.Offset {
	ends, err := adm.ListEndOffsets(ctx, topic)
	check(err)
	out := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = kgo.NewOffset().At(o.Offset) })
	return out
}

// waitOutput waits for one record of "out" after end.
func waitOutput(ctx context.Context, servers string, end map[int32]kgo.Offset) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(servers), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"out": end}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	check(err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for {
		f := cl.PollFetches(ctx)
		check(ctx.Err())
		if f.NumRecords() > 0 {
			return
		}
	}
}

// run is a kafkabpl run process.
type run struct {
	cmd   *exec.Cmd
	lines chan string
	log   syncBuilder // its stderr
}

// syncBuilder is a strings.Builder that a process writes while others
// read it.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRun starts bin with args, its environment this process's and env.
func startRun(bin string, args []string, env ...string) *run {
	r := &run{cmd: exec.Command(bin, args...), lines: make(chan string, 1024)}
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.SysProcAttr = orphanKill()
	out, err := r.cmd.StdoutPipe()
	check(err)
	r.cmd.Stderr = &r.log
	check(r.cmd.Start())
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	return r
}

// limitWait bounds each wait for a run's line.
var limitWait = 30 * time.Minute

// waitLine waits for a line of the run's output that holds want, for
// limitWait at most.
func (r *run) waitLine(want string) {
	limit := time.After(limitWait)
	for {
		select {
		case l, ok := <-r.lines:
			if !ok {
				check(fmt.Errorf("kafkabpl run ended before %q: %s", want, r.log.String()))
			}
			if strings.Contains(l, want) {
				return
			}
		case <-limit:
			r.cmd.Process.Kill()
			check(fmt.Errorf("kafkabpl run printed no %q in %v: %s", want, limitWait, r.log.String()))
		}
	}
}

// peakRSS is the process's VmHWM, in bytes.
func (r *run) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
	check(err)
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

func (r *run) stop() {
	r.cmd.Process.Signal(syscall.SIGTERM)
	for range r.lines {
	}
	r.cmd.Wait()
}

var restoredLine = regexp.MustCompile(`restored: (\d+) changelog records`)

// restored sums the changelog records the process's restores applied.
func (r *run) restored() (n int64) {
	for _, m := range restoredLine.FindAllStringSubmatch(r.log.String(), -1) {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		n += v
	}
	return n
}

// orphanKill has a child process killed when this one ends, however it
// ends: check exits without running the deferred stops, and a broker
// left behind on the port would serve the next run its records.
func orphanKill() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "diskstate:", err)
		os.Exit(1)
	}
}
