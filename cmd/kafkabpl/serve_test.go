package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServeFlags(t *testing.T) {
	t.Parallel()
	code, _, stderr := runT(t, "serve", "--listen", "0.0.0.0")
	if code != exitUsage || !strings.Contains(stderr, "--access-key") {
		t.Errorf("--listen without a key: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runT(t, "serve", "--brokers", "3")
	if code != exitUsage || !strings.Contains(stderr, "--brokers only apply with --embedded") {
		t.Errorf("--brokers without --embedded: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runT(t, "serve", "--advertise", "127.0.0.1:9999")
	if code != exitUsage || !strings.Contains(stderr, "--advertise") {
		t.Errorf("--advertise without a scheme: exit %d, stderr %q", code, stderr)
	}
	code, stdout, _ := runT(t, "serve", "--help")
	if code != exitOK || !strings.Contains(stdout, "--data-dir") || !strings.Contains(stdout, "--broker-port") || !strings.Contains(stdout, "--advertise") {
		t.Errorf("--help: exit %d, %q", code, stdout)
	}
}

// startServe runs serve in process until stop, returning its base URL.
func startServe(t *testing.T, args ...string) (base string, stderr *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	stderr = new(syncBuffer)
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"serve", "--port", "0"}, args...), &out, stderr) }()
	deadline := time.Now().Add(testTimeout)
	for !strings.Contains(out.String(), "\n") {
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve exited %d: %s", code, stderr)
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("serve did not print where it listens")
		}
		time.Sleep(10 * time.Millisecond)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(out.String()), "listening on ")
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		cancel()
		t.Fatalf("serve printed %q", out.String())
	}
	return "http://" + addr, stderr, func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(testTimeout):
			t.Fatal("serve did not stop")
			return -1
		}
	}
}

func httpDo(t *testing.T, method, url, body string) string {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain; charset=UTF-8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: HTTP %d %s", method, url, resp.StatusCode, b)
	}
	return string(b)
}

// serve with --embedded and --data-dir: a module saved at the signal is
// loaded, and its start run, by the next serve.
func TestServeKeepsModules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, stderr, stop := startServe(t, "--data-dir", dir, "--embedded", "--broker-port", "0")
	httpDo(t, "PUT", base+"/m", "")
	if got := httpDo(t, "POST", base+"/m", `(set start (quote (set started true))) kafka-servers`); !strings.HasPrefix(got, `"127.0.0.1:`) {
		t.Fatalf("kafka-servers is not set: %s", got)
	}
	if got := httpDo(t, "POST", base+"/m", `schema-registry-url`); !strings.HasPrefix(got, `"http://127.0.0.1:`) {
		t.Fatalf("schema-registry-url is not set: %s", got)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "module m saved") {
		t.Errorf("stderr %q", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "m", "head.snp")); err != nil {
		t.Fatal(err)
	}
	base, stderr, stop = startServe(t, "--data-dir", dir)
	if got := httpDo(t, "GET", base+"/m/started", ""); got != "true" {
		t.Errorf("start did not run at start: %s", got)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d: %s", code, stderr)
	}
}

func TestServeAddress(t *testing.T) {
	for _, c := range []struct {
		sf   serveFlags
		want string
	}{
		{serveFlags{port: 9999}, "127.0.0.1:9999"},
		{serveFlags{port: 8080, listen: "0.0.0.0"}, "0.0.0.0:8080"},
		{serveFlags{port: 8080, listen: "10.0.0.1:7000"}, "10.0.0.1:7000"},
		{serveFlags{port: 80, listen: "[::1]"}, "[::1]:80"},
	} {
		if got := c.sf.address(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.sf, got, c.want)
		}
	}
}
