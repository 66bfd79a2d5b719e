package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// serveProc is a running "kafkabpl serve" process and its base URL.
type serveProc struct {
	*peerProc
	base string
}

// startServeProc starts kafkabpl serve on a free port and waits for
// where it listens.
func startServeProc(t *testing.T, bin string, args ...string) *serveProc {
	t.Helper()
	p := startPeer(t, context.Background(), bin, append([]string{"serve", "--port", "0"}, args...)...)
	deadline := time.Now().Add(testTimeout)
	for {
		line, _, _ := strings.Cut(p.stdout.String(), "\n")
		if addr, ok := strings.CutPrefix(line, "listening on "); ok && strings.Contains(p.stdout.String(), "\n") {
			return &serveProc{peerProc: p, base: "http://" + strings.TrimSpace(addr)}
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("serve did not print where it listens: %v", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// call sends a request with the access key and returns the status and
// the answer's text.
func (s *serveProc) call(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain; charset=UTF-8")
	req.Header.Set("access-key", "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeStoreQueries runs examples/serve/counts.bpl in two kafkabpl
// serve processes of one group, against a kafkabpl broker process: every
// sensor's count is answered through either process (each holds half
// the store's partitions and forwards the other half's keys), then,
// once one is killed (SIGKILL), through the other, which takes its
// partitions over. Once the counts are committed, an answer is the count
// or a NotReady refusal (the group settling, a restore), never null.
func TestServeStoreQueries(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	b := startBrokerProc(t, bin, "--port", "0")
	serveStoreQueries(t, bin, strings.Join(b.addrs, ","))
}

// serveStoreQueries is TestServeStoreQueries against servers (also a
// real Kafka broker's: see TestRealKafkaStream).
func serveStoreQueries(t *testing.T, bin, servers string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(servers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 4, 1, nil, "readings"); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../examples/serve/counts.bpl")
	if err != nil {
		t.Fatal(err)
	}
	var procs []*serveProc
	for range 2 {
		s := startServeProc(t, bin, "--servers", servers, "--access-key", "k")
		for _, req := range [][2]string{{"PUT", ""}, {"POST", string(src)}, {"POST", "(module-start)"}} {
			if code, text := s.call(t, req[0], "/counts", req[1]); code != 200 {
				t.Fatalf("%s /counts: HTTP %d %s\n%v", req[0], code, text, s.peerProc)
			}
		}
		procs = append(procs, s)
	}
	want := map[string]int{}
	var rs []*kgo.Record
	for i := range 32 {
		k := fmt.Sprintf("s%d", i)
		want[k] = i%4 + 1
		for range i%4 + 1 {
			rs = append(rs, &kgo.Record{Topic: "readings", Key: []byte(k), Value: []byte("r")})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// Until every count is committed, a key may read null.
	for _, s := range procs {
		askServe(t, s, want, true)
	}
	// Each holds half the partitions: the other half's keys were
	// forwarded.
	for _, s := range procs {
		for deadline := time.Now().Add(testTimeout); ; time.Sleep(50 * time.Millisecond) {
			code, text := s.call(t, "POST", "/counts", `(get (get (kafka-stream-status counts) "store") "partitions")`)
			if code == 200 && text == "2" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s holds %s partitions (HTTP %d), want 2 of 4", s.base, text, code)
			}
		}
	}
	for _, s := range procs {
		askServe(t, s, want, false)
	}
	procs[1].cmd.Process.Kill()
	<-procs[1].done
	t.Logf("killed the second serve process")
	askServe(t, procs[0], want, false)
}

// askServe asks @count of every sensor through s until each is the
// count. A NotReady refusal is retried; so is null when early is set.
func askServe(t *testing.T, s *serveProc, want map[string]int, early bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for k, n := range want {
		for {
			code, text := s.call(t, "POST", "/counts/@count", fmt.Sprintf("%q", k))
			if code == 200 && text == fmt.Sprint(n) {
				break
			}
			retry := strings.HasPrefix(text, `("NotReady"`) || early && code == 200
			if !retry || time.Now().After(deadline) {
				t.Fatalf("%s through %s: HTTP %d %s, want %d\n%v", k, s.base, code, text, n, s.peerProc)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
