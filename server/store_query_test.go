package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/stream"
)

// newPeerServer serves a server that knows its own URL, as kafkabpl serve
// does, on a loopback listener; a cfg.URL given is advertised instead.
func newPeerServer(t testing.TB, cfg Config) (*Server, *client) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.URL == "" {
		cfg.URL = "http://" + ln.Addr().String()
	}
	srv := New(cfg)
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(func() {
		srv.CloseMonitors()
		srv.Shutdown(context.Background())
		hs.Close()
	})
	return srv, &client{t: t, base: hs.URL, key: cfg.AccessKey}
}

// TestStoreQueryForwarded runs examples/serve/counts.bpl in two servers of
// one group: @count answers every sensor through either, each server
// holding half the store's partitions and forwarding the other half's
// keys with the module's key. A forwarded query without the key is
// refused; once one server's module stops, the other answers all.
func TestStoreQueryForwarded(t *testing.T) {
	src, err := os.ReadFile("../examples/serve/counts.bpl")
	if err != nil {
		t.Fatal(err)
	}
	cluster, srvs, cs := startPeers(t, string(src), Config{AccessKey: "k"}, Config{AccessKey: "k"})
	want, msgs := countedReadings(24)
	sendReadings(t, cluster, msgs...)
	start := time.Now()
	settledPeers(t, srvs, int64(len(msgs)))
	t.Logf("both servers settled in %v", time.Since(start))
	for _, c := range cs {
		askCounts(t, c, want)
	}

	// The route needs the module's (or the server's) key.
	cs[0].withKey("").fails("POST", "/counts", `{}`, "SecurityException", "not authorized", StoreQueryHeader, "1")
	cs[0].fails("POST", "/counts", `{"op":"get"}`, "UnknownHandle", `no stream of group "" with store ""`, StoreQueryHeader, "1")
	cs[0].fails("POST", "/counts", `(+ 1 2)`, "InvalidArgument", "not a forwarded store query", StoreQueryHeader, "1")

	cs[1].ok("POST", "/counts", "(module-stop)")
	askCounts(t, cs[0], want)
}

// askCounts asks @count of every sensor until each is answered: an
// answer must be the count; in between, only a NotReady error (a
// rebalance, a restore) may come.
func askCounts(t *testing.T, c *client, want map[string]int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for s, n := range want {
		for {
			r := c.do("POST", "/counts/@count", fmt.Sprintf("%q", s))
			if r.status == 200 {
				if r.text != fmt.Sprint(n) {
					t.Fatalf("%s through %s: %s, want %d", s, c.base, r.text, n)
				}
				break
			}
			if !strings.HasPrefix(r.text, `("NotReady"`) || time.Now().After(deadline) {
				t.Fatalf("%s through %s: HTTP %d %s", s, c.base, r.status, r.text)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// startPeers starts an embedded cluster whose topic "readings" has 4
// partitions, and a server for each of cfgs (with the cluster's servers)
// in which module, a module "counts" whose stream is its global counts,
// is defined and started. It returns the cluster's servers.
func startPeers(t *testing.T, module string, cfgs ...Config) (string, []*Server, []*client) {
	t.Helper()
	cluster, err := embedded.Start(embedded.Port(0), embedded.Topics("readings"), embedded.Partitions(4))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.Close() })
	var srvs []*Server
	var cs []*client
	for _, cfg := range cfgs {
		cfg.Servers = cluster.Servers()
		srv, c := newPeerServer(t, cfg)
		c.ok("PUT", "/counts", "")
		c.ok("POST", "/counts", module)
		c.ok("POST", "/counts", "(module-start)")
		srvs, cs = append(srvs, srv), append(cs, c)
	}
	return cluster.Servers(), srvs, cs
}

// settledPeers waits until each server's counts stream holds 2 partitions,
// restored, and they processed n inputs between them (n < 0: any).
func settledPeers(t *testing.T, srvs []*Server, n int64) {
	t.Helper()
	waitFor(t, func() bool {
		var processed int64
		for _, srv := range srvs {
			m := srv.Module("counts")
			id, _ := m.Interp().Global("counts")
			st, err := stream.Of(m.Library()).Status(context.Background(), id.(string))
			if err != nil || st.Store.Partitions != 2 || st.Store.Restoring != 0 {
				return false
			}
			processed += st.Processed
		}
		return n < 0 || processed == n
	})
}

// sendReadings sends msgs to the cluster's topic "readings".
func sendReadings(t *testing.T, servers string, msgs ...kafkabpl.Message) {
	t.Helper()
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	p, err := lib.Create(ctx, kafkabpl.Producer, servers)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Send(ctx, p, []string{"readings"}, msgs); err != nil {
		t.Fatal(err)
	}
}

// countedReadings is readings of n sensors, s0 to s(n-1), sensor i's
// i%4+1 times, and the count each has then.
func countedReadings(n int) (map[string]int, []kafkabpl.Message) {
	want := map[string]int{}
	var msgs []kafkabpl.Message
	for i := range n {
		s := fmt.Sprintf("s%d", i)
		want[s] = i%4 + 1
		for range i%4 + 1 {
			msgs = append(msgs, kafkabpl.Message{Key: s, Value: "r"})
		}
	}
	return want, msgs
}

// frozenServer is an HTTP server on loopback that reads each request and
// never answers it, as a process stopped with SIGSTOP after accepting
// the connection, or one cut off by a half-broken network; it returns
// its URL.
func frozenServer(t *testing.T) string {
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done(): // the asker gave up
		case <-release:
		}
	}))
	t.Cleanup(func() {
		close(release)
		hs.Close()
	})
	return hs.URL
}

// TestStoreQueryOwnerFrozen runs examples/serve/counts.bpl, with a
// "query-forward-timeout" of 500 ms, in two servers of one group, one of
// which advertises an endpoint that accepts connections and never answers
// (a frozen process). A query of a key it holds ends, long before the
// evaluation's own deadline, in a NotReady that the script catches,
// naming the owner; once the frozen server's stream leaves the group, the
// same keys are answered.
func TestStoreQueryOwnerFrozen(t *testing.T) {
	src, err := os.ReadFile("../examples/serve/counts.bpl")
	if err != nil {
		t.Fatal(err)
	}
	const setting = `"session-timeout" => 6000`
	if !strings.Contains(string(src), setting) {
		t.Fatalf("counts.bpl has no %s to add the setting to", setting)
	}
	module := strings.Replace(string(src), setting, setting+` "query-forward-timeout" => 500`, 1)
	const evalTime = 60 * time.Second // the evaluation's own deadline, long
	frozen := frozenServer(t)
	cluster, srvs, cs := startPeers(t, module, Config{AccessKey: "k", MaxEvalTime: evalTime}, Config{AccessKey: "k", MaxEvalTime: evalTime, URL: frozen})
	want, msgs := countedReadings(12)
	sendReadings(t, cluster, msgs...)
	settledPeers(t, srvs, int64(len(msgs)))
	// Through the live server: its own keys are answered, the frozen
	// one's are caught as NotReady naming it.
	caught := 0
	for s, n := range want {
		start := time.Now()
		got := cs[0].ok("POST", "/counts", fmt.Sprintf(`(try (kafka-store-get counts %q) (ex "NotReady" => (list "caught" (get ex "message"))))`, s))
		took := time.Since(start)
		switch {
		case got == fmt.Sprint(n):
		case strings.HasPrefix(got, `("caught"`) && strings.Contains(got, frozen) && strings.Contains(got, `query-forward-timeout`):
			caught++
			t.Logf("%s, in %v: %s", s, took, got)
			if took >= evalTime {
				t.Errorf("%s: caught after %v, not before the evaluation's own deadline", s, took)
			}
		default:
			t.Fatalf("%s: %s", s, got)
		}
	}
	if caught == 0 {
		t.Fatal("no key was held by the frozen server")
	}
	// The frozen server's stream leaves: the group moves its partitions,
	// and the same keys are answered.
	cs[1].ok("POST", "/counts", "(module-stop)")
	askCounts(t, cs[0], want)
}
