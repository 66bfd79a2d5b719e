package server

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
)

// TestKafkaAveragesModule runs examples/serve/averages.bpl: two streams'
// state drawn live. A watcher of @points gets each sensor's latest minute
// as a graph's get-value wants it, (sensor => (average timestamp)), once
// the readings' batch commits; @history gives the graph's history and
// @latest the display's values.
func TestKafkaAveragesModule(t *testing.T) {
	c, send := startAverages(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mon := c.watch(ctx, "averages", 0, "@points")
	send(at("s1", 5, 20), at("s1", 50, 22), at("s2", 10, 30), at("s1", 65, 25))
	want := `("s1" => (25 1767225660000) "s2" => (30 1767225600000))`
	for deadline := time.Now().Add(60 * time.Second); ; {
		ch := mon.next(t, 60*time.Second)
		if ch.text == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("@points never %s; last %s", want, ch.text)
		}
	}
	if got := c.ok("POST", "/averages/@history", ""); got != `("s1" => ((21 1767225600000) (25 1767225660000)) "s2" => ((30 1767225600000)))` {
		t.Errorf("@history: %s", got)
	}
	var latest any
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		got := c.ok("POST", "/averages/@latest", "")
		if latest = got; got == `("s1" => 25 "s2" => 30)` {
			break
		}
	}
	if latest != `("s1" => 25 "s2" => 30)` {
		t.Errorf("@latest: %v", latest)
	}
}

// startAverages runs examples/serve/averages.bpl, started, in a module
// averages of a server on an embedded cluster, and answers a client of
// the server (whose monitors are woken only by module-notify) and a
// function that sends messages to its input topic, temperatures, as JSON
// values.
func startAverages(t *testing.T) (*client, func(...kafkabpl.Message)) {
	t.Helper()
	cluster, err := embedded.Start(embedded.Port(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.Close() })
	src, err := os.ReadFile("../examples/serve/averages.bpl")
	if err != nil {
		t.Fatal(err)
	}
	// With monitor 0, a stream is evaluated again only when told, or at
	// each ping: pings an hour apart leave the tests' monitors nothing but
	// the streams' module-notify, so a change the module fails to tell
	// fails them rather than arriving 30 s late.
	_, c := newTestServer(t, Config{Servers: cluster.Servers(), PingInterval: time.Hour})
	c.ok("PUT", "/averages", "")
	if got := c.ok("POST", "/averages", string(src)); got != `"averages module defined"` {
		t.Fatalf("the module's file: %s", got)
	}
	if got := c.ok("POST", "/averages", "(module-start)"); got != `"Module averages started."` {
		t.Fatalf("module-start: %s", got)
	}
	lib := kafkabpl.New()
	t.Cleanup(func() { lib.Close(context.Background()) })
	ctx := context.Background()
	p, err := lib.Create(ctx, kafkabpl.Producer, map[string]any{"servers": cluster.Servers(), "value-serializer": "JSON"})
	if err != nil {
		t.Fatal(err)
	}
	return c, func(msgs ...kafkabpl.Message) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := lib.Send(ctx, p, []string{"temperatures"}, msgs); err != nil {
			t.Fatal(err)
		}
	}
}

// at is a reading of sensor, seconds after 2026-01-01T00:00:00Z (a
// minute's start), for averages.bpl.
func at(sensor string, seconds int, v float64) kafkabpl.Message {
	t0 := time.UnixMilli(1767225600000)
	return kafkabpl.Message{Key: sensor, Value: v, Timestamp: t0.Add(time.Duration(seconds) * time.Second)}
}
