package kafkabpl

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawMember: see [testkit.RawMember].
type rawMember = testkit.RawMember

// TestDestroyDuringRebalance destroys a consumer while its group waits,
// in a rebalance, for a member that died: destroy must take it out of the
// group at once, with a LeaveGroup the coordinator sees, not wait out the
// dead member's session.
func TestDestroyDuringRebalance(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Partitions(2), embedded.Topics("t"))
	c, servers := cluster.Kfake(), cluster.Servers()
	var mu sync.Mutex
	var left []string
	c.ControlKey(int16(kmsg.LeaveGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		for _, m := range req.(*kmsg.LeaveGroupRequest).Members {
			left = append(left, m.MemberID)
		}
		return nil, nil, false
	})
	lib := newLib(t)
	ctx := testCtx(t)
	// kfake never answers the join the consumer has in flight when it
	// leaves, which would hold kgo's Close until the join timed out
	// (max-poll-interval, 5 minutes, and 10 s): the client's requests are
	// ended instead, and the library's Close, at the end of the test,
	// does not wait for the join.
	a := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": "g", "topics": "t", "auto-offset-reset": "earliest", "heartbeat-interval": 500}))
	sendValues(t, lib, servers, "t", Message{Value: "x"})
	for n := 0; n == 0; {
		n = must[*Polled](t)(lib.Poll(ctx, a, time.Second)).Len()
	}
	h := must[*handle](t)(lib.acquire(a, Consumer))
	aID, _ := h.cl.GroupMetadata()
	h.calls.Done()

	// A member joins and dies: it never heartbeats again.
	raw := must[*kgo.Client](t)(kgo.NewClient(kgo.SeedBrokers(cluster.Addrs()...)))
	defer raw.Close()
	ghost := &rawMember{Client: raw, Group: "g"}
	if err := ghost.Join(ctx, []string{"t"}, 20*time.Second); err != nil {
		t.Fatalf("ghost join: %v", err)
	}
	// Another member joins: the group rebalances and waits for the dead
	// one until its session ends, 20 s from now.
	late := &rawMember{Client: raw, Group: "g"}
	go late.Join(ctx, []string{"t"}, 20*time.Second)
	time.Sleep(time.Second) // the join has begun; nothing to wait on that says so

	start := time.Now()
	ok, err := lib.Destroy(ctx, a)
	took := time.Since(start)
	if !ok || err != nil {
		t.Errorf("destroy: %v %v", ok, err)
	}
	if took > 5*time.Second {
		t.Errorf("destroy took %v: it waited for the rebalance", took)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(left, aID) {
		t.Errorf("the coordinator saw no LeaveGroup from %s (saw %v)", aID, left)
	}
}
