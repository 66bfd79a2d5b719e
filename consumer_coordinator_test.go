package kafkabpl

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kerr"
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
	ctx := testCtx(t)
	id := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": "g", "topics": "t",
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
