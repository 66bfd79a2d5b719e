package kafkabpl

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Tests that the admin functions see the brokers' metadata as it is now:
// leader changes, topics deleted and created again, and brokers that
// apply a change late.

// TestAdminLeaderChanges checks that describe-topics shows leaders moved
// by the cluster.
func TestAdminLeaderChanges(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate())
	c, servers := cluster.Kfake(), cluster.Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	a := must[string](t)(lib.Create(ctx, Admin, servers))
	must[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"moving"}, TopicOptions{Partitions: 6}))

	// leaders returns the leaders describe-topics shows, by partition.
	leaders := func() []int32 {
		infos := must[[]TopicInfo](t)(lib.DescribeTopics(ctx, a, "moving"))
		var out []int32
		for _, p := range infos[0].Partitions {
			out = append(out, p.Leader)
		}
		return out
	}
	// waitLeaders polls describe-topics until it shows the cluster's
	// own leaders, or fails after 10 s.
	waitLeaders := func(what string) []int32 {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var want []int32
			for p := range int32(6) {
				want = append(want, c.LeaderFor("moving", p))
			}
			got := leaders()
			if cmp.Equal(got, want) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: describe-topics shows leaders %v, the cluster %v", what, got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	before := waitLeaders("at creation")

	to := (before[3] + 1) % 3
	if err := c.MoveTopicPartition("moving", 3, to); err != nil {
		t.Fatal(err)
	}
	if got := waitLeaders("after MoveTopicPartition"); got[3] != to {
		t.Errorf("partition 3 led by %d, moved to %d", got[3], to)
	}
	// Shuffle until some leader changes (random, so bounded retries).
	changed := false
	for range 20 {
		prev := leaders()
		c.ShufflePartitionLeaders()
		if !cmp.Equal(waitLeaders("after ShufflePartitionLeaders"), prev) {
			changed = true
			break
		}
	}
	if !changed {
		t.Error("20 shuffles changed no leader")
	}
	// The replicas follow the leader: it is always the first.
	for _, p := range must[[]TopicInfo](t)(lib.DescribeTopics(ctx, a, "moving"))[0].Partitions {
		if len(p.Replicas) == 0 || p.Replicas[0] != p.Leader {
			t.Errorf("partition %d: leader %d, replicas %v", p.Partition, p.Leader, p.Replicas)
		}
	}
}

// TestAdminRecreatedTopic deletes a topic a producer and a subscribed
// consumer of the Library know, creates it again, and checks both keep
// working with the new topic.
func TestAdminRecreatedTopic(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	a := must[string](t)(lib.Create(ctx, Admin, servers))
	must[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"re"}, TopicOptions{Partitions: 3}))
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": "g-re", "topics": "re", "auto-offset-reset": "earliest"}))
	must[int](t)(lib.Send(testCtx(t), p, []string{"re"}, []Message{{Value: "early0", Partition: new(int32(0))}, {Value: "early1", Partition: new(int32(1))}}))
	// Another consumer, with the default "latest" and its own group,
	// subscribed by a poll once partitions 0 and 1 hold a message: it
	// starts after them. The topic created again must not start there.
	c2 := must[string](t)(lib.Create(ctx, Consumer, servers))
	must[*Polled](t)(lib.PollTopics(ctx, c2, []string{"re"}, 0))

	send(t, lib, p, []string{"re"}, Message{Key: "k1", Value: "old1"}, Message{Key: "k2", Value: "old2"})
	if n := len(pollUntil(t, lib, c, nil, 4)["re"].Values()); n != 4 {
		t.Fatalf("consumer 1 read %d messages before the delete, want 4", n)
	}
	if s := value.Format(pollUntil(t, lib, c2, nil, 2)["re"]); s != `("k1" => "old1" "k2" => "old2")` && s != `("k2" => "old2" "k1" => "old1")` {
		t.Fatalf("consumer 2 before the delete: %s", s)
	}
	if err := lib.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}

	// Deleted through a config target: the Library's clients are told
	// all the same.
	if done := must[map[string]bool](t)(lib.DeleteTopics(ctx, servers, []string{"re"})); !cmp.Equal(done, map[string]bool{"re": true}) {
		t.Errorf("delete: %v", done)
	}
	if done := must[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"re"}, TopicOptions{Partitions: 2})); !cmp.Equal(done, map[string]bool{"re": true}) {
		t.Errorf("re-create: %v", done)
	}

	zero := new(int32(0))
	if n, err := lib.Send(ctx, p, []string{"re"}, []Message{{Key: "k1", Value: "new1", Partition: zero}, {Key: "k2", Value: "new2", Partition: zero}, {Value: "new3", Partition: zero}}); n != 3 || err != nil {
		t.Fatalf("send to the new topic = %v, %v", n, err)
	}
	for _, id := range []string{c, c2} {
		got := pollUntil(t, lib, id, nil, 3)["re"]
		values := map[string]bool{}
		for _, v := range got.Values() {
			values[v.(string)] = true
		}
		if !cmp.Equal(values, map[string]bool{"new1": true, "new2": true, "new3": true}) {
			t.Errorf("consumer %s after re-creation: %s, want the three new messages", id, value.Format(got))
		}
	}
	// The consumer can commit on the new topic, and its group's lag
	// is that of the new topic.
	if err := lib.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	g := must[*GroupInfo](t)(lib.DescribeGroup(testCtx(t), a, "g-re"))
	if g.TotalLag != 0 || len(g.Lag) != 1 || len(g.Lag[0].Partitions) != 2 {
		t.Errorf("group after re-creation: %s", value.Format(g.List()))
	}
	if sub := must[[]string](t)(lib.Subscribe(ctx, c, []string{"re"})); !cmp.Equal(sub, []string{"re"}) {
		t.Errorf("subscription: %q", sub)
	}
}

// staleMetadata makes c answer the next n metadata requests that name only
// topic, without asking to create it, as a broker that has not yet applied
// the controller's last change would: with stale(), the topic as it was.
// It returns how many it answered so.
func staleMetadata(t *testing.T, c *kfake.Cluster, topic string, n int32, stale func() kmsg.MetadataResponseTopic) *atomic.Int32 {
	t.Helper()
	var brokers []kmsg.MetadataResponseBroker
	for i, addr := range c.ListenAddrs() {
		host, port, _ := strings.Cut(addr, ":")
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = int32(i), host, int32(must[int](t)(strconv.Atoi(port)))
		brokers = append(brokers, b)
	}
	var answered atomic.Int32
	c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.MetadataRequest)
		if req.AllowAutoTopicCreation || len(req.Topics) != 1 || req.Topics[0].Topic == nil || *req.Topics[0].Topic != topic {
			return nil, nil, false
		}
		if answered.Add(1) >= n {
			c.DropControl()
		}
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		resp.Brokers = brokers
		resp.ControllerID = 0
		rt := stale()
		rt.Topic = kmsg.StringPtr(topic)
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	return &answered
}

// staleTopic is a topic with partitions 0 to n-1, each led by broker 0;
// with n 0, a topic the broker does not know.
func staleTopic(n int) func() kmsg.MetadataResponseTopic {
	return func() kmsg.MetadataResponseTopic {
		rt := kmsg.NewMetadataResponseTopic()
		if n == 0 {
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		}
		for i := range n {
			p := kmsg.NewMetadataResponseTopicPartition()
			p.Partition, p.Leader, p.Replicas, p.ISR = int32(i), 0, []int32{0}, []int32{0}
			rt.Partitions = append(rt.Partitions, p)
		}
		return rt
	}
}

// TestAdminWaitsForMetadata checks that create-topics, create-partitions
// and delete-topics return only once the brokers' metadata shows what they
// did. A Kafka broker applies the controller's change a moment after the
// call that made it returns; without the wait, a script's next
// describe-topics or list-topics saw the topic missing, the old partition
// count, or the deleted topic still there.
func TestAdminWaitsForMetadata(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate())
	c, servers := cluster.Kfake(), cluster.Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	a := must[string](t)(lib.Create(ctx, Admin, servers))
	const lag = 3 // stale answers before the change shows

	created := staleMetadata(t, c, "w", lag, staleTopic(0))
	if done := must[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"w"}, TopicOptions{Partitions: 2})); !cmp.Equal(done, map[string]bool{"w": true}) {
		t.Errorf("create: %v", done)
	}
	if n := created.Load(); n != lag {
		t.Errorf("create-topics returned after %d stale metadata answers, want %d", n, lag)
	}

	grown := staleMetadata(t, c, "w", lag, staleTopic(2))
	if !must[bool](t)(lib.CreatePartitions(ctx, a, "w", 4)) {
		t.Error("create-partitions 4 did not answer true")
	}
	// create-partitions asks once before growing; that answer is stale too.
	if n := grown.Load(); n != lag {
		t.Errorf("create-partitions returned after %d stale metadata answers, want %d", n, lag)
	}

	deleted := staleMetadata(t, c, "w", lag, staleTopic(4))
	if done := must[map[string]bool](t)(lib.DeleteTopics(ctx, a, []string{"w"})); !cmp.Equal(done, map[string]bool{"w": true}) {
		t.Errorf("delete: %v", done)
	}
	if n := deleted.Load(); n != lag {
		t.Errorf("delete-topics returned after %d stale metadata answers, want %d", n, lag)
	}
	if names := must[[]string](t)(lib.ListTopics(ctx, a)); len(names) != 0 {
		t.Errorf("topics after the delete: %q", names)
	}
}
