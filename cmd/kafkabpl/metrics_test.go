package main

import (
	"bufio"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunMetrics runs a script whose stream goes on after its last
// expression with --metrics, scrapes the endpoint while the stream runs,
// and checks the counters against what the script sent; Ctrl-C then
// stops it.
func TestRunMetrics(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	script := filepath.Join(t.TempDir(), "metered.bpl")
	writeFile(t, script, `(set p (kafka-create "producer" kafka-servers))
(set i 0)
(while (< i 50) (kafka-send p "in" (string i)) (set i (+ i 1)))
(kafka-stream (list "servers" => kafka-servers "group" => "metered") "from" => "in" "to" => "out"
  "transform" => (function (in) (get in "value")))
`)
	cmd := exec.Command(bin, "run", "--embedded", "--port", "0", "--metrics", "127.0.0.1:0", script)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	urls := make(chan string, 1)
	log := new(syncBuffer)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.Write([]byte(sc.Text() + "\n"))
			if u, ok := strings.CutPrefix(sc.Text(), "metrics on "); ok {
				urls <- u
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(testTimeout):
		t.Fatal("no metrics address printed")
	}
	want := map[string]float64{
		`kafkabpl_produced_records_total{kind="producer",topic="in"}`: 50,
		`kafkabpl_produced_records_total{kind="stream",topic="out"}`:  50,
		`kafkabpl_fetched_records_total{kind="stream",topic="in"}`:    50,
	}
	processed := regexp.MustCompile(`(?m)^kafkabpl_stream_processed_total\{stream="s[0-9a-f]+"\} (\S+)$`)
	var body string
	deadline := time.Now().Add(testTimeout)
	for {
		body = get(t, url)
		done := true
		for series, v := range want {
			if !strings.Contains(body, "\n"+series+" "+strconv.FormatFloat(v, 'g', -1, 64)+"\n") {
				done = false
			}
		}
		if m := processed.FindStringSubmatch(body); done && m != nil && m[1] == "50" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the counters did not reach what was sent in %v:\n%s", testTimeout, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, family := range []string{"go_goroutines", "process_cpu_seconds_total", "kafkabpl_request_duration_seconds_bucket"} {
		if !strings.Contains(body, "\n"+family) {
			t.Errorf("no %s in the scrape", family)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("exit after Ctrl-C: %v\n%s", waitErr, log.String())
		}
	case <-time.After(testTimeout):
		t.Fatal("no exit after Ctrl-C")
	}
}

// get returns url's body.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	b.WriteString("\n")
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}

// TestServeMetrics: a module's clients, its consumer's commits and lag,
// its requests by kind, its evaluations and its monitor streams are
// counted by serve --metrics.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	base, stderr, stop := startServe(t, "--embedded", "--broker-port", "0", "--metrics", "127.0.0.1:0")
	m := regexp.MustCompile(`metrics on (\S+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no metrics address in %q", stderr)
	}
	httpDo(t, "PUT", base+"/m", "")
	httpDo(t, "POST", base+"/m", `(kafka-send (kafka-create "producer" kafka-servers) "readings" ("a" "b" "c"))`)
	httpDo(t, "POST", base+"/m", `(set c (kafka-create "consumer" (list "servers" => kafka-servers "group" => "readers"
  "topics" => "readings" "auto-offset-reset" => "earliest" "enable-auto-commit" => false)))
(set @n (function (ctx) 7))`)
	evaluations := 2
	for read := 0; read < 3; evaluations++ {
		n, err := strconv.Atoi(httpDo(t, "POST", base+"/m", `(size (get (kafka-poll c 1000) "readings"))`))
		if err != nil {
			t.Fatal(err)
		}
		read += n
	}
	httpDo(t, "POST", base+"/m", `(kafka-commit c)`)
	evaluations++
	if got := httpDo(t, "POST", base+"/m/@n", ""); got != "7" {
		t.Fatalf("@n gave %s", got)
	}

	// A monitor stream counts while it runs.
	req, err := http.NewRequest("POST", base+"/m", strings.NewReader(`("@n")`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain; charset=UTF-8")
	req.Header.Set("monitor", "0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for i := 0; i < 2 && lines.Scan(); i++ { // the session id, then @n's value
	}
	want := map[string]float64{
		`kafkabpl_produced_records_total{kind="producer",topic="readings"}`:                      3,
		`kafkabpl_serve_requests_total{kind="put",module=""}`:                                    1,
		`kafkabpl_serve_requests_total{kind="evaluate",module="m"}`:                              float64(evaluations),
		`kafkabpl_serve_requests_total{kind="exterior",module="m"}`:                              1,
		`kafkabpl_serve_requests_total{kind="monitor",module="m"}`:                               1,
		`kafkabpl_serve_evaluation_duration_seconds_count{kind="evaluate",module="m"}`:           float64(evaluations),
		`kafkabpl_serve_evaluation_duration_seconds_count{kind="exterior",module="m"}`:           1,
		`kafkabpl_serve_monitors{module="m"}`:                                                    1,
		`kafkabpl_commits_total{group="readers",kind="consumer"}`:                                1,
		`kafkabpl_rebalances_total{event="assigned",group="readers",kind="consumer"}`:            1,
		`kafkabpl_partition_lag{group="readers",kind="consumer",partition="0",topic="readings"}`: 0,
	}
	// The monitor calls @n again every 30 s: at least once, then.
	if body := waitScrape(t, m[1], want); !strings.Contains(body, "\n"+`kafkabpl_serve_evaluation_duration_seconds_count{kind="monitor",module="m"} `) {
		t.Errorf("the monitor's evaluations are not counted:\n%s", body)
	}
	resp.Body.Close() // the client goes: the stream ends
	waitScrape(t, m[1], map[string]float64{`kafkabpl_serve_monitors{module="m"}`: 0})
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d: %s", code, stderr)
	}
}

// waitScrape scrapes url until every series of want has its value, and
// returns what it got; or fails after testTimeout with that.
func waitScrape(t *testing.T, url string, want map[string]float64) string {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		body := get(t, url)
		var missing []string
		for series, v := range want {
			if !strings.Contains(body, "\n"+series+" "+strconv.FormatFloat(v, 'g', -1, 64)+"\n") {
				missing = append(missing, series)
			}
		}
		if missing == nil {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("not in the scrape after %v: %v\n%s", testTimeout, missing, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
