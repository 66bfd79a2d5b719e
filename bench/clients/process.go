package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The measures that take processes of their own, so that the in-process
// broker's work and memory stay out of them: the one-record send loop as
// a whole process (kafkabpl run with a script, against a Go program
// looping over Library.Send), and the handles a process holds in 100 MB.
// The child processes are this program run again with -child.

// childMain runs a child's part and reports it on stdout; it never returns.
func childMain(kind, servers, topic string, n int) {
	var err error
	switch kind {
	case "goloop":
		err = goLoop(servers, topic, n)
	default:
		err = holdHandles(kind, servers, topic, n)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// goLoop is the Go program beside the script: n sends of one message each
// through the library, keys 0, 1, 2 ..., the harness's value.
func goLoop(servers, topic string, n int) error {
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	id, err := lib.Create(ctx, kafkabpl.Producer, servers)
	if err != nil {
		return err
	}
	value := strings.Repeat("v", valueSize)
	topics := []string{topic}
	for i := range n {
		if sent, err := lib.Send(ctx, id, topics, []kafkabpl.Message{{Key: strconv.Itoa(i), Value: value}}); err != nil || sent != 1 {
			return fmt.Errorf("send %d: %d, %v", i, sent, err)
		}
	}
	_, err = lib.Destroy(ctx, id)
	return err
}

// loopScript is goLoop as a script for kafkabpl run.
func loopScript(topic string, n int) string {
	return fmt.Sprintf(`(set p (kafka-create "producer" kafka-servers))
(set value %q)
(set i 0)
(while (< i %d)
  (set m (list))
  (put m (string i) value)                ; put gives the old value, as brain4it's
  (kafka-send p %q m)
  (set i (+ i 1)))
(kafka-destroy p)
null
`, strings.Repeat("v", valueSize), n, topic)
}

// processLoops times, interleaved over rounds, kafkabpl run of loopScript
// and the goLoop child, each sending n records to a topic of its own that
// is then read back and checked, and prints the script's time over the
// Go program's.
func processLoops(ctx context.Context, w io.Writer, adm *kadm.Client, p *params, n, rounds int) error {
	dir, err := os.MkdirTemp("", "bench-clients-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kafkabplBin := filepath.Join(dir, "kafkabpl")
	// Built in kafkabpl's own module, with its go.mod and go.sum: the
	// command users build, whose dependencies this module need not list.
	root, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/brain4it/kafkabpl").Output()
	if err != nil {
		return fmt.Errorf("finding kafkabpl's module: %w", err)
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", kafkabplBin, "./cmd/kafkabpl")
	build.Dir = strings.TrimSpace(string(root))
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building kafkabpl: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var script, goProg []time.Duration
	var ratios []float64
	for r := range rounds {
		times := map[string]time.Duration{}
		for i, kind := range []string{"script", "go"} {
			if r%2 == 1 { // alternate which runs first
				kind = []string{"go", "script"}[i]
			}
			topic := fmt.Sprintf("loop-%s-%d", kind, r)
			if err := createTopics(ctx, adm, topic); err != nil {
				return err
			}
			var cmd *exec.Cmd
			if kind == "script" {
				file := filepath.Join(dir, topic+".bpl")
				if err := os.WriteFile(file, []byte(loopScript(topic, n)), 0o644); err != nil {
					return err
				}
				cmd = exec.CommandContext(ctx, kafkabplBin, "run", "--servers", p.servers, file)
			} else {
				cmd = exec.CommandContext(ctx, self, "-child", "goloop", "-child-servers", p.servers, "-child-topic", topic, "-child-n", strconv.Itoa(n))
			}
			cmd.Stderr = os.Stderr
			start := time.Now()
			out, err := cmd.Output()
			times[kind] = time.Since(start)
			if err != nil {
				return fmt.Errorf("%s: %w (%s)", kind, err, out)
			}
			if err := verifyTopic(ctx, p, topic, n); err != nil {
				return fmt.Errorf("%s: %w", kind, err)
			}
			adm.DeleteTopics(ctx, topic)
		}
		script, goProg = append(script, times["script"]), append(goProg, times["go"])
		ratios = append(ratios, float64(times["script"])/float64(times["go"]))
		fmt.Fprintf(os.Stderr, "loop round %d: script %v, go %v\n", r+1, times["script"].Round(time.Millisecond), times["go"].Round(time.Millisecond))
	}
	slices.Sort(ratios)
	fmt.Fprintf(w, "One-record sends in a loop, as whole processes (start to exit): %d sends, %d rounds, medians\n\n", n, rounds)
	fmt.Fprintln(w, "| process | time | script's time over the Go program's: median [min–max] |")
	fmt.Fprintln(w, "|---|---|---|")
	fmt.Fprintf(w, "| Go program, Library.Send in a loop | %v | |\n", median(goProg).Round(time.Millisecond))
	fmt.Fprintf(w, "| kafkabpl run, the same loop in BPL | %v | %.2f [%.2f–%.2f] |\n", median(script).Round(time.Millisecond), median(ratios), ratios[0], ratios[len(ratios)-1])
	return nil
}

// handleReport is what a holdHandles child reports.
type handleReport struct {
	Handles    int     // handles held when the limit was reached (or the cap)
	PerHandle  float64 // bytes of Go heap in use and stacks per handle, from the first 100
	Goroutines float64 // per handle
	RSS        uint64  // the process's resident set when it stopped
	Capped     bool    // stopped at the cap, not the limit
}

const (
	memLimit   = 100 << 20 // the process's Go heap in use + stacks
	handlesCap = 5000
)

// holdHandles creates idle handles of kind until the process's Go heap in
// use plus goroutine stacks reach memLimit, and reports how many it held.
// An idle producer has sent one record (so it is connected); an idle
// consumer has joined its own group (subscribed to topic) and polled once.
func holdHandles(kind, servers, topic string, _ int) error {
	ctx := context.Background()
	lib := kafkabpl.New()
	lib.SetLogOutput(io.Discard)
	var clients []*kgo.Client
	make1 := func(i int) error {
		switch kind {
		case "producer":
			id, err := lib.Create(ctx, kafkabpl.Producer, servers)
			if err != nil {
				return err
			}
			_, err = lib.Send(ctx, id, []string{topic}, []kafkabpl.Message{{Value: "idle"}})
			return err
		case "consumer":
			id, err := lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "group": fmt.Sprintf("idle-%d", i), "topics": topic})
			if err != nil {
				return err
			}
			_, err = lib.Poll(ctx, id, 10*time.Millisecond)
			return err
		case "kgo-producer":
			cl, err := kgo.NewClient(kgo.SeedBrokers(servers), kgo.ProducerLinger(0))
			if err != nil {
				return err
			}
			clients = append(clients, cl)
			return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("idle")}).FirstErr()
		case "kgo-consumer":
			cl, err := kgo.NewClient(kgo.SeedBrokers(servers), kgo.ConsumerGroup(fmt.Sprintf("idle-kgo-%d", i)), kgo.ConsumeTopics(topic))
			if err != nil {
				return err
			}
			clients = append(clients, cl)
			pctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
			cl.PollFetches(pctx)
			cancel()
			return nil
		}
		return fmt.Errorf("unknown kind %q", kind)
	}
	mem0, g0 := inUse()
	rep := handleReport{}
	for i := 0; ; i++ {
		if err := make1(i); err != nil {
			return fmt.Errorf("handle %d: %w", i, err)
		}
		n := i + 1
		if n == 100 {
			time.Sleep(time.Second) // joins and first fetches settle
			mem, g := inUse()
			rep.PerHandle = float64(mem-mem0) / 100
			rep.Goroutines = float64(g-g0) / 100
		}
		if n%50 == 0 {
			if mem, _ := inUse(); mem >= memLimit {
				rep.Handles = n
				break
			}
		}
		if n >= handlesCap {
			rep.Handles, rep.Capped = n, true
			break
		}
	}
	rep.RSS = rss()
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// rss is the process's resident set in bytes (Linux), 0 when unknown.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

func inUse() (uint64, int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse, runtime.NumGoroutine()
}

// memoryTable runs a holdHandles child for each kind of handle and prints
// what each handle costs and how many one process held in 100 MB.
func memoryTable(ctx context.Context, w io.Writer, adm *kadm.Client, p *params) error {
	if err := createTopics(ctx, adm, "idle"); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Idle handles, each kind in a process of its own (the broker is not in it): Go heap in use + goroutine stacks per handle, over the first 100; then handles created, 50 at a time, until heap + stacks reached %d MB\n\n", memLimit>>20)
	fmt.Fprintln(w, "| handle | per handle | goroutines per handle | handles held at 100 MB | resident set then |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, k := range []struct{ kind, title string }{
		{"producer", "Library producer handle"},
		{"consumer", "Library consumer handle"},
		{"kgo-producer", "raw kgo producer client"},
		{"kgo-consumer", "raw kgo consumer client"},
	} {
		cmd := exec.CommandContext(ctx, self, "-child", k.kind, "-child-servers", p.servers, "-child-topic", "idle")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("%s: %w", k.kind, err)
		}
		var rep handleReport
		if err := json.Unmarshal(out, &rep); err != nil {
			return fmt.Errorf("%s: %w (%s)", k.kind, err, out)
		}
		held := strconv.Itoa(rep.Handles)
		if rep.Capped {
			held = "more than " + held
		}
		fmt.Fprintf(w, "| %s | %.0f KB | %.1f | %s | %d MB |\n", k.title, rep.PerHandle/1024, rep.Goroutines, held, rep.RSS>>20)
	}
	return nil
}
