package kafkabpl

import (
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestHeartbeatOutlastsCoordinatorOutage keeps a group's coordinator
// unavailable to heartbeats for longer than franz-go's default of 20 tries
// lasts at this config's backoff (20 × 20 ms here; about 9 s at the
// defaults of 100 ms doubling to 500 ms, less than a real coordinator's
// failover). The member must keep retrying for its request-timeout, as
// Java's consumer does, and keep its partitions: no new JoinGroup, no
// error from kafka-poll. When the tries ran out, the group session ended,
// the member rejoined, and every partition stalled until then.
func TestHeartbeatOutlastsCoordinatorOutage(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Partitions(2), embedded.Topics("t"))
	c, servers := cluster.Kfake(), cluster.Servers()
	var outage atomic.Bool
	var mu sync.Mutex
	var joins, refused int
	c.ControlKey(int16(kmsg.JoinGroup), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		joins++
		return nil, nil, false
	})
	c.ControlKey(int16(kmsg.Heartbeat), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !outage.Load() {
			return nil, nil, false
		}
		mu.Lock()
		refused++
		mu.Unlock()
		resp := kreq.(*kmsg.HeartbeatRequest).ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp, nil, true
	})
	lib := newLib(t)
	if f := os.Getenv("KAFKABPL_TEST_LOG"); f != "" {
		w, _ := os.Create(f)
		lib.SetLogOutput(w)
	}
	ctx := testCtx(t)
	id := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": "g", "topics": "t", "log-level": "debug",
		"auto-offset-reset": "earliest", "heartbeat-interval": 100, "retry-backoff": 10, "retry-backoff-max": 20}))
	waitAssigned(t, lib, id)
	mu.Lock()
	joinsBefore := joins
	mu.Unlock()

	outage.Store(true)
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if _, err := lib.Poll(ctx, id, 50*time.Millisecond); err != nil {
			t.Fatalf("kafka-poll during the coordinator's outage: %v", err)
		}
	}
	outage.Store(false)
	// A few good heartbeats after it: a session that had ended would
	// rejoin meanwhile.
	for range 10 {
		if _, err := lib.Poll(ctx, id, 50*time.Millisecond); err != nil {
			t.Fatalf("kafka-poll after the outage: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if refused < 21 {
		t.Fatalf("only %d heartbeats were refused: the outage did not outlast 20 tries, so it proves nothing", refused)
	}
	if joins != joinsBefore {
		t.Errorf("the member rejoined the group (%d JoinGroup after the outage began, %d heartbeats refused): its heartbeat gave up before request-timeout", joins-joinsBefore, refused)
	}
	if !hasPartitions(t, lib, id) {
		t.Errorf("the member lost its partitions")
	}
}

// TestGroupOutlastsCoordinatorDown takes a group's coordinator down for
// the client as a kill does (its connections closed, its port refusing),
// while the cluster still names it the coordinator, as Kafka does until it
// fences the node. The member must keep its session through it, as
// Java's does: no error from kafka-poll, no new JoinGroup, its partitions
// kept, and records produced during the outage to partitions on live
// brokers read before it ends.
func TestGroupOutlastsCoordinatorDown(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Brokers(3), embedded.Partitions(6), embedded.Topics("t"))
	c, servers := cluster.Kfake(), cluster.Servers()
	outages.Watch(t, cluster.Addrs()...)
	var joins atomic.Int32
	c.ControlKey(int16(kmsg.JoinGroup), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		joins.Add(1)
		return nil, nil, false
	})
	lib := newLib(t)
	ctx := testCtx(t)
	config := map[string]any{"servers": servers, "group": "g", "topics": "t",
		"auto-offset-reset": "earliest", "heartbeat-interval": 100, "session-timeout": 6000, "request-timeout": 10000,
		"retry-backoff": 10, "retry-backoff-max": 50}
	if f := os.Getenv("KAFKABPL_TEST_LOG"); f != "" { // kgo's debug log, to see why a run failed
		w, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		lib.SetLogOutput(w)
		config["log-level"] = "debug"
	}
	id := must[string](t)(lib.Create(ctx, Consumer, config))
	waitAssigned(t, lib, id)
	// The coordinator, and the partitions that live brokers lead, found
	// by a client the outage does not touch.
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	co := adm.FindGroupCoordinators(ctx, "g")["g"]
	if co.Err != nil {
		t.Fatalf("FindGroupCoordinators: %v", co.Err)
	}
	coordinator := net.JoinHostPort(co.Host, fmt.Sprint(co.Port))
	md, err := adm.Metadata(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	var live []*kgo.Record
	for _, p := range md.Topics["t"].Partitions.Sorted() {
		if p.Leader != co.NodeID {
			live = append(live, &kgo.Record{Topic: "t", Partition: p.Partition, Value: []byte("v")})
		}
	}
	if len(live) == 0 {
		t.Fatalf("the coordinator, node %d, leads every partition", co.NodeID)
	}
	joinsBefore := joins.Load()

	outages.Down(coordinator)
	defer outages.Up(coordinator)
	if err := cl.ProduceSync(ctx, live...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := 0
	deadline := time.Now().Add(3 * time.Second) // 30 heartbeat intervals
	for time.Now().Before(deadline) {
		msgs, err := lib.Poll(ctx, id, 50*time.Millisecond)
		if err != nil {
			t.Fatalf("kafka-poll while the coordinator is down: %v", err)
		}
		got += msgs.Len()
	}
	outages.Up(coordinator)
	if outages.Refuses(coordinator) == 0 {
		t.Fatal("no dial to the coordinator was refused: the outage proves nothing")
	}
	for range 10 { // good heartbeats after it: a session that had ended would rejoin meanwhile
		if _, err := lib.Poll(ctx, id, 50*time.Millisecond); err != nil {
			t.Fatalf("kafka-poll after the outage: %v", err)
		}
	}
	if got != len(live) {
		t.Errorf("read %d of the %d records sent to live brokers' partitions during the outage", got, len(live))
	}
	if n := joins.Load() - joinsBefore; n != 0 {
		t.Errorf("the member rejoined the group (%d JoinGroup): its session ended while the coordinator was down", n)
	}
	if !hasPartitions(t, lib, id) {
		t.Errorf("the member lost its partitions")
	}
}
