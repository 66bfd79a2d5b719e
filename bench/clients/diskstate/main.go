// Command diskstate measures a stateful stream's state on disk against
// its state in memory (issue 46), as a user runs it: `kafkabpl broker` in
// a process of its own, a per-key count in `kafkabpl run`, with and
// without --state-dir. For each key count it reports, per store:
//
//   - the run: from the process's start until it processed every input
//     (each key once), and its throughput relative to memory's;
//   - the peak RSS of the stream's process (VmHWM);
//   - a restart after a clean stop: from the process's start until the
//     output of an input sent before it started, and the changelog
//     records its restores applied.
//
// Usage (from the module bench/clients):
//
//	go run ./diskstate -keys 1000000,3000000
//
// It builds kafkabpl from the module it replaces, and connects only to
// the loopback broker it starts.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

func main() {
	keysFlag := flag.String("keys", "1000000", "key counts to measure, joined by commas")
	flag.Parse()
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
		var memRun time.Duration
		for _, onDisk := range []bool{false, true} {
			r := measure(ctx, bin, dir, n, onDisk)
			name, ratio := "memory", "1.00"
			if onDisk {
				name, ratio = "disk", fmt.Sprintf("%.2f", memRun.Seconds()/r.run.Seconds())
			} else {
				memRun = r.run
			}
			fmt.Printf("| %d | %s | %.1f s | %s | %d MiB | %.2f s | %d |\n", n, name, r.run.Seconds(), ratio, r.rss>>20, r.restart.Seconds(), r.restored)
		}
	}
}

type result struct {
	run, restart time.Duration
	rss          int64
	restored     int64
}

// measure runs the count over n keys on a broker of its own.
func measure(ctx context.Context, bin, dir string, n int, onDisk bool) result {
	port := "19192"
	broker := exec.Command(bin, "broker", "--port", port, "--brokers", "1", "--partitions", "3")
	broker.Stderr = os.Stderr
	check(broker.Start())
	defer func() { broker.Process.Signal(syscall.SIGTERM); broker.Wait() }()
	servers := "127.0.0.1:" + port
	cl, err := kgo.NewClient(kgo.SeedBrokers(servers), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(5*time.Millisecond))
	check(err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := adm.CreateTopics(ctx, 3, 1, nil, "in", "out"); err == nil {
			break
		} else if time.Now().After(deadline) {
			check(err)
		}
	}
	feed(ctx, cl, 0, n)

	script := filepath.Join(dir, "count.bpl")
	check(os.WriteFile(script, fmt.Appendf(nil, countScript, n), 0o644))
	args := []string{"run", "--servers", servers}
	state := filepath.Join(dir, "state")
	os.RemoveAll(state)
	if onDisk {
		args = append(args, "--state-dir", state)
	}
	args = append(args, script)

	var r result
	start := time.Now()
	p := startRun(bin, args)
	p.waitLine("caught up")
	r.run = time.Since(start)
	r.rss = p.peakRSS()
	p.stop()

	// A restart after the clean stop: one input sent before it starts,
	// timed until its output.
	end := endOffsets(ctx, adm, "out")
	feed(ctx, cl, n, n+1)
	check(os.WriteFile(script, fmt.Appendf(nil, countScript, 1), 0o644))
	start = time.Now()
	p = startRun(bin, args)
	waitOutput(ctx, servers, end)
	r.restart = time.Since(start)
	p.stop()
	r.restored = p.restored()
	return r
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
	log   strings.Builder
}

func startRun(bin string, args []string) *run {
	r := &run{cmd: exec.Command(bin, args...), lines: make(chan string, 1024)}
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

func (r *run) waitLine(want string) {
	for l := range r.lines {
		if strings.Contains(l, want) {
			return
		}
	}
	check(fmt.Errorf("kafkabpl run ended before %q: %s", want, r.log.String()))
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

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "diskstate:", err)
		os.Exit(1)
	}
}
