package stream

import (
	"context"
	"testing"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConsumerProtocolStream runs a stateful exactly-once stream under
// group-protocol "consumer", then a second instance of it in the group:
// the broker splits the partitions between them, each restores what it
// takes over, and every count comes out once and right.
func TestConsumerProtocolStream(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Topics("in"), embedded.Partitions(3))
	servers := cluster.Servers()
	lib := streamLib(t)
	cfg := map[string]any{"servers": servers, "group": "counter", "group-protocol": "consumer", "max-poll-records": 4}
	spec := Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "counts"}
	sendValues(t, lib, servers, "in", keyed("a", "b", "a", "c", "a", "b")...)
	first := must[string](t)(Of(lib).Start(testCtx(t), cfg, spec))
	waitStream(t, lib, first, func(st *Status) bool { return st.Processed == 6 })
	second := must[string](t)(Of(lib).Start(testCtx(t), cfg, spec))
	waitFor(t, "both instances hold partitions", func() bool {
		a := must[*Status](t)(Of(lib).Status(testCtx(t), first))
		b := must[*Status](t)(Of(lib).Status(testCtx(t), second))
		return a.Store.Partitions > 0 && b.Store.Partitions > 0 && a.Store.Partitions+b.Store.Partitions == 3 && b.Store.Restoring == 0
	})
	sendValues(t, lib, servers, "in", keyed("a", "c", "d", "b")...)
	if got := lastPerKey(readAll(t, lib, servers, 10, "out")); got != "a=4 b=3 c=2 d=1" {
		t.Errorf("counts %s", got)
	}
	cl := must[*kgo.Client](t)(kgo.NewClient(kgo.SeedBrokers(cluster.Addrs()...)))
	defer cl.Close()
	g := must[kadm.DescribedConsumerGroups](t)(kadm.NewClient(cl).DescribeConsumerGroups(context.Background(), "counter"))["counter"]
	if g.Err != nil || len(g.Members) != 2 {
		t.Errorf("the broker's view of the group: err %v, %d members; want a consumer group of 2", g.Err, len(g.Members))
	}
	lib.Destroy(testCtx(t), first)
	lib.Destroy(testCtx(t), second)
}
