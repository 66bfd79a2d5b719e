package kafkabpl

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestConsumerRevalidatesAfterLeaderMove moves a partition's leader while
// a consumer reads it, and has the new leader answer kgo's check of the
// consumer's position (OffsetForLeaderEpoch) with UNKNOWN_TOPIC_OR_PARTITION,
// as a broker that has not taken the partition up yet does. kgo would ask
// again only a second later; the consumer checks the position itself (its
// request carries no current leader epoch, kgo's does) and reads on. Every
// record comes once, in order.
func TestConsumerRevalidatesAfterLeaderMove(t *testing.T) {
	t.Parallel()
	c := newCluster(t, embedded.Brokers(3), embedded.Topics("moved"), embedded.Partitions(1))
	servers := c.Servers()
	lib := New()
	t.Cleanup(func() { lib.Close(testCtx(t)) })
	ctx := testCtx(t)
	cons := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": "g", "topics": "moved", "auto-offset-reset": "earliest"}))
	var got []string
	read := func(n int) {
		t.Helper()
		for len(got) < n {
			p := must[*Polled](t)(lib.Poll(ctx, cons, 5*time.Second))
			for _, r := range p.Topics[0].Records {
				got = append(got, r.Value().(string))
			}
		}
	}
	sendValues(t, lib, servers, "moved", Message{Key: "a", Value: "1"})
	read(1)

	kc := c.Kfake()
	var mu sync.Mutex
	var kgos, own int // kgo's checks (with the current leader epoch), the consumer's own (without)
	kc.ControlKey(kmsg.OffsetForLeaderEpoch.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		r := req.(*kmsg.OffsetForLeaderEpochRequest)
		mu.Lock()
		defer mu.Unlock()
		if r.Topics[0].Partitions[0].CurrentLeaderEpoch < 0 {
			own++
			return nil, nil, false
		}
		if kgos++; kgos > 1 {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = r.Topics[0].Topic
		rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
		rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	if err := kc.MoveTopicPartition("moved", 0, (kc.LeaderFor("moved", 0)+1)%3); err != nil {
		t.Fatal(err)
	}
	moved := time.Now()
	sendValues(t, lib, servers, "moved", Message{Key: "a", Value: "2"})
	read(2)
	t.Logf("the record sent after the move came %v later", time.Since(moved).Round(time.Millisecond))
	sendValues(t, lib, servers, "moved", Message{Key: "a", Value: "3"})
	read(3)
	mu.Lock()
	defer mu.Unlock()
	if kgos == 0 || own == 0 {
		t.Errorf("%d checks of kgo's and %d of the consumer's own; want both", kgos, own)
	}
	if !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Errorf("read %q; want 1, 2, 3 once each", got)
	}
}

// TestRevalidationSchedule checks the waits between the consumer's own
// checks of a moved partition's position: 25 ms after kgo's check was
// answered, doubling to 100 ms while the leader is not ready, and none
// once a check needs no other.
func TestRevalidationSchedule(t *testing.T) {
	rv := newRevalidation()
	defer rv.stop()
	due := func() int32 {
		t.Helper()
		select {
		case <-rv.waiting().Done():
		case <-time.After(5 * time.Second):
			t.Fatal("no check fell due")
		}
		node, _, ok := rv.take()
		if !ok {
			t.Fatal("a check fell due, and take found none")
		}
		return node
	}
	rv.epochAnswered(2)
	rv.epochAnswered(3) // a check is scheduled already: it stays broker 2's
	var waits []time.Duration
	for range 4 {
		rv.mu.Lock()
		waits = append(waits, rv.wait)
		rv.mu.Unlock()
		if node := due(); node != 2 {
			t.Fatalf("check for broker %d; want 2", node)
		}
		rv.epochAnswered(3) // the check's own answer begins nothing
		rv.done(true)
	}
	want := []time.Duration{25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}
	if !slices.Equal(waits, want) {
		t.Errorf("waits %v; want %v", waits, want)
	}
	due()
	rv.done(false)
	rv.mu.Lock()
	over := rv.began.IsZero() && rv.timer == nil
	rv.mu.Unlock()
	if !over {
		t.Error("a check that needs no other left one scheduled")
	}
	rv.epochAnswered(3) // a new schedule, from the first wait
	rv.mu.Lock()
	w := rv.wait
	rv.mu.Unlock()
	if w != revalidateFirst {
		t.Errorf("a new schedule waits %v; want %v", w, revalidateFirst)
	}
}
