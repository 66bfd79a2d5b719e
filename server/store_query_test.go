package server

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
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
	cluster, err := embedded.Start(embedded.Port(0), embedded.Topics("readings"), embedded.Partitions(4))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	src, err := os.ReadFile("../examples/serve/counts.bpl")
	if err != nil {
		t.Fatal(err)
	}
	var srvs []*Server
	var cs []*client
	for range 2 {
		srv, c := newPeerServer(t, Config{Servers: cluster.Servers(), AccessKey: "k"})
		c.ok("PUT", "/counts", "")
		if got := c.ok("POST", "/counts", string(src)); got != `"counts module defined"` {
			t.Fatalf("the module's file: %s", got)
		}
		c.ok("POST", "/counts", "(module-start)")
		srvs, cs = append(srvs, srv), append(cs, c)
	}
	want := map[string]int{}
	var msgs []kafkabpl.Message
	for i := range 24 {
		s := fmt.Sprintf("s%d", i)
		want[s] = i%4 + 1
		for range i%4 + 1 {
			msgs = append(msgs, kafkabpl.Message{Key: s, Value: "r"})
		}
	}
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	p, err := lib.Create(ctx, kafkabpl.Producer, cluster.Servers())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Send(ctx, p, []string{"readings"}, msgs); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitFor(t, func() bool { // both hold 2 partitions, restored, and processed all
		var processed int64
		for _, srv := range srvs {
			m := srv.Module("counts")
			id, _ := m.Interp().Global("counts")
			st, err := stream.Of(m.Library()).Status(ctx, id.(string))
			if err != nil || st.Store.Partitions != 2 || st.Store.Restoring != 0 {
				return false
			}
			processed += st.Processed
		}
		return processed == int64(len(msgs))
	})
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

// frozenListener accepts connections on loopback and never answers on
// them, as a process stopped with SIGSTOP does (its kernel still
// accepts); it returns its URL.
func frozenListener(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + ln.Addr().String()
}

// TestStoreQueryOwnerFrozen runs examples/serve/counts.bpl, with a
// "query-forward-timeout" of 500 ms, in two servers of one group, one of
// which advertises an endpoint that accepts connections and never answers
// (a frozen process). A query of a key it holds ends, long before the
// evaluation's own deadline, in a NotReady that the script catches,
// naming the owner; once the frozen server's stream leaves the group, the
// same keys are answered.
func TestStoreQueryOwnerFrozen(t *testing.T) {
	cluster, err := embedded.Start(embedded.Port(0), embedded.Topics("readings"), embedded.Partitions(4))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
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
	frozen := frozenListener(t)
	var srvs []*Server
	var cs []*client
	for _, url := range []string{"", frozen + "/"} {
		srv, c := newPeerServer(t, Config{Servers: cluster.Servers(), AccessKey: "k", MaxEvalTime: evalTime, URL: url})
		c.ok("PUT", "/counts", "")
		c.ok("POST", "/counts", module)
		c.ok("POST", "/counts", "(module-start)")
		srvs, cs = append(srvs, srv), append(cs, c)
	}
	want := map[string]int{}
	var msgs []kafkabpl.Message
	for i := range 12 {
		s := fmt.Sprintf("s%d", i)
		want[s] = i%3 + 1
		for range i%3 + 1 {
			msgs = append(msgs, kafkabpl.Message{Key: s, Value: "r"})
		}
	}
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	p, err := lib.Create(ctx, kafkabpl.Producer, cluster.Servers())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Send(ctx, p, []string{"readings"}, msgs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { // both hold 2 partitions, restored, and processed all
		var processed int64
		for _, srv := range srvs {
			m := srv.Module("counts")
			id, _ := m.Interp().Global("counts")
			st, err := stream.Of(m.Library()).Status(ctx, id.(string))
			if err != nil || st.Store.Partitions != 2 || st.Store.Restoring != 0 {
				return false
			}
			processed += st.Processed
		}
		return processed == int64(len(msgs))
	})
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
