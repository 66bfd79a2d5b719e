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
	cluster, err := embedded.Start(embedded.Port(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	src, err := os.ReadFile("../examples/serve/averages.bpl")
	if err != nil {
		t.Fatal(err)
	}
	_, c := newTestServer(t, Config{Servers: cluster.Servers()})
	c.ok("PUT", "/averages", "")
	if got := c.ok("POST", "/averages", string(src)); got != `"averages module defined"` {
		t.Fatalf("the module's file: %s", got)
	}
	if got := c.ok("POST", "/averages", "(module-start)"); got != `"Module averages started."` {
		t.Fatalf("module-start: %s", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mon := c.watch(ctx, "averages", 0, "@points")

	lib := kafkabpl.New()
	defer lib.Close(context.Background())
	p, err := lib.Create(ctx, kafkabpl.Producer, map[string]any{"servers": cluster.Servers(), "value-serializer": "JSON"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.UnixMilli(1767225600000)
	at := func(sensor string, seconds int, v float64) kafkabpl.Message {
		return kafkabpl.Message{Key: sensor, Value: v, Timestamp: t0.Add(time.Duration(seconds) * time.Second)}
	}
	if _, err := lib.Send(ctx, p, []string{"temperatures"}, []kafkabpl.Message{
		at("s1", 5, 20), at("s1", 50, 22), at("s2", 10, 30), at("s1", 65, 25)}); err != nil {
		t.Fatal(err)
	}
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
