package kafkabpl

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Tests of the group admin functions: list-groups, describe-group and
// the lag it reports.

// TestAdminGroupLag follows a group's lag down to 0 as a consumer catches
// up and commits.
func TestAdminGroupLag(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	a := must[string](t)(lib.Create(ctx, Admin, servers))
	must[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"lagged"}, TopicOptions{Partitions: 2}))
	_, err := lib.DescribeGroup(ctx, a, "g-lag")
	if !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("describe-group before the group exists: %v", err)
	}

	p := must[string](t)(lib.Create(ctx, Producer, servers))
	var msgs []Message // 6 to partition 0, 4 to partition 1
	for i := range 10 {
		part := int32(0)
		if i >= 6 {
			part = 1
		}
		msgs = append(msgs, Message{Value: fmt.Sprint(i), Partition: new(part)})
	}
	must[int](t)(lib.Send(ctx, p, []string{"lagged"}, msgs))

	cons := must[string](t)(lib.Create(ctx, Consumer, map[string]any{
		"servers": servers, "group": "g-lag", "topics": "lagged", "auto-offset-reset": "earliest",
		"enable-auto-commit": false, "max-poll-records": 3,
	}))

	// describe checks the lag's consistency and returns the group.
	describe := func() *GroupInfo {
		t.Helper()
		g := must[*GroupInfo](t)(lib.DescribeGroup(ctx, a, "g-lag"))
		var total int64
		for _, tl := range g.Lag {
			for _, pl := range tl.Partitions {
				if pl.Err != nil {
					t.Fatalf("partition %d: %v", pl.Partition, pl.Err)
				}
				if pl.Committed >= 0 && pl.Committed+pl.Lag != pl.End || pl.Committed < 0 && pl.Lag != pl.End {
					t.Errorf("partition %d: committed %d, end %d, lag %d", pl.Partition, pl.Committed, pl.End, pl.Lag)
				}
				total += pl.Lag
			}
		}
		if total != g.TotalLag {
			t.Errorf("total-lag %d, the partitions' lags sum to %d", g.TotalLag, total)
		}
		return g
	}

	polled := 0
	for _, m := range pollUntil(t, lib, cons, nil, 1) {
		polled += m.Len()
	}
	if polled > 3 {
		t.Fatalf("polled %d with max-poll-records 3", polled)
	}
	// Polled but not committed: all of it is still lag.
	if g := describe(); g.TotalLag != 10 {
		t.Errorf("before the commit: total lag %d, want 10", g.TotalLag)
	}
	if err := lib.Commit(ctx, cons); err != nil {
		t.Fatal(err)
	}
	g := describe()
	if g.TotalLag != int64(10-polled) || g.TotalLag == 0 {
		t.Errorf("after polling %d and committing: total lag %d, want %d", polled, g.TotalLag, 10-polled)
	}
	if g.State != "Stable" || len(g.Members) != 1 {
		t.Fatalf("group %s", value.Format(g.List()))
	}
	m := g.Members[0]
	if m.ClientID != "kafkabpl" || m.MemberID == "" || m.Host == "" || !cmp.Equal(m.Assignment, []TopicPartitions{{"lagged", []int32{0, 1}}}) {
		t.Errorf("member %+v", m)
	}

	// Catch up and commit: the lag goes to 0.
	for polled < 10 {
		for _, msgs := range pollUntil(t, lib, cons, nil, 1) {
			polled += msgs.Len()
		}
	}
	if err := lib.Commit(ctx, cons); err != nil {
		t.Fatal(err)
	}
	res := must[*GroupInfo](t)(lib.DescribeGroup(ctx, a, "g-lag")).List()
	member := fmt.Sprintf(`("member-id" => %q "client-id" => "kafkabpl" "host" => %q "assignment" => ("lagged" => (0 1)))`, m.MemberID, m.Host)
	wantFormat(t, "describe-group caught up", res,
		`("group" => "g-lag" "state" => "Stable" "members" => (`+member+`) "lag" => ("lagged" => (`+
			`("partition" => 0 "committed" => 6 "end" => 6 "lag" => 0) ("partition" => 1 "committed" => 4 "end" => 4 "lag" => 0))) "total-lag" => 0)`)
	if gs := must[[]GroupListing](t)(lib.ListGroups(ctx, servers)); !cmp.Equal(gs, []GroupListing{{Group: "g-lag", State: "Stable", Type: "classic"}}) {
		t.Errorf("list-groups: %+v", gs)
	}

	// More messages: lag again, until the consumer reads and commits them.
	must[int](t)(lib.Send(ctx, p, []string{"lagged"}, []Message{{Value: "x", Partition: new(int32(1))}}))
	if g := describe(); g.TotalLag != 1 || g.Lag[0].Partitions[1].Lag != 1 {
		t.Errorf("after one more message: %s", value.Format(g.List()))
	}
	pollUntil(t, lib, cons, nil, 1)
	if err := lib.Commit(ctx, cons); err != nil {
		t.Fatal(err)
	}
	if g := describe(); g.TotalLag != 0 {
		t.Errorf("after reading it: %s", value.Format(g.List()))
	}

	// Once the consumer leaves, the group is Empty and keeps its commits.
	must[bool](t)(lib.Destroy(ctx, cons))
	wantFormat(t, "describe-group empty", must[*GroupInfo](t)(lib.DescribeGroup(ctx, a, "g-lag")).List(),
		`("group" => "g-lag" "state" => "Empty" "members" => () "lag" => ("lagged" => (`+
			`("partition" => 0 "committed" => 6 "end" => 6 "lag" => 0) ("partition" => 1 "committed" => 5 "end" => 5 "lag" => 0))) "total-lag" => 0)`)
	if gs := must[[]GroupListing](t)(lib.ListGroups(ctx, a)); !cmp.Equal(gs, []GroupListing{{Group: "g-lag", State: "Empty", Type: "classic"}}) {
		t.Errorf("list-groups empty: %+v", gs)
	}
}

// TestAdminUncommittedLag checks the shape of a partition the group has
// committed nothing to: committed is null and the whole partition is lag.
func TestAdminUncommittedLag(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	must[map[string]bool](t)(lib.CreateTopics(ctx, servers, []string{"u"}, TopicOptions{Partitions: 2}))
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	must[int](t)(lib.Send(ctx, p, []string{"u"}, []Message{{Value: "a", Partition: new(int32(0))}}))
	cons := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": "g-u", "topics": "u", "auto-offset-reset": "earliest", "auto-commit": false}))
	if s := value.Format(pollUntil(t, lib, cons, nil, 1)["u"]); s != `("a")` {
		t.Fatalf("polled %s", s)
	}
	if err := lib.Commit(ctx, cons); err != nil {
		t.Fatal(err)
	}
	// Sent after the commit and never polled: partition 1 has nothing
	// committed.
	must[int](t)(lib.Send(ctx, p, []string{"u"}, []Message{{Value: "b", Partition: new(int32(1))}, {Value: "c", Partition: new(int32(1))}}))
	g := must[*GroupInfo](t)(lib.DescribeGroup(ctx, servers, "g-u"))
	lag, _ := g.List().Get("lag")
	wantFormat(t, "uncommitted partition", lag, `("u" => (("partition" => 0 "committed" => 1 "end" => 1 "lag" => 0) ("partition" => 1 "committed" => null "end" => 2 "lag" => 2)))`)
	if g.TotalLag != 2 {
		t.Errorf("total lag %d, want 2", g.TotalLag)
	}
}

// TestAdminDescribeGroupWaitsForCoordinator checks that describe-group
// asks again while the brokers answer COORDINATOR_NOT_AVAILABLE, as Kafka
// does on a cluster no group has used yet while it creates the offsets
// topic, instead of failing at once.
func TestAdminDescribeGroupWaitsForCoordinator(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate())
	c, servers := cluster.Kfake(), cluster.Servers()
	lib := newLib(t)
	const refusals = 3
	var refused atomic.Int32
	c.ControlKey(int16(kmsg.FindCoordinator), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if refused.Add(1) >= refusals {
			c.DropControl()
		}
		req := kreq.(*kmsg.FindCoordinatorRequest)
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		resp.NodeID = -1
		for _, key := range req.CoordinatorKeys {
			rc := kmsg.NewFindCoordinatorResponseCoordinator()
			rc.Key, rc.NodeID, rc.ErrorCode = key, -1, kerr.CoordinatorNotAvailable.Code
			resp.Coordinators = append(resp.Coordinators, rc)
		}
		return resp, nil, true
	})
	_, err := lib.DescribeGroup(testCtx(t), servers, "nobody")
	if !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("describe-group of a group that does not exist: %v, want GROUP_ID_NOT_FOUND once the coordinator is ready", err)
	}
	if n := refused.Load(); n != refusals {
		t.Errorf("the brokers refused %d times, want %d", n, refusals)
	}
}

// TestGroupMemberHost checks that a member's host reads the same whichever
// broker reported it: Kafka prints it as Java prints an address, kfake
// with the client's port.
func TestGroupMemberHost(t *testing.T) {
	for _, host := range []string{"/127.0.0.1", "127.0.0.1", "127.0.0.1:54321"} {
		info := groupInfo(kadm.DescribedGroupLag{Members: []kadm.DescribedGroupMember{{MemberID: "m", ClientHost: host}}})
		if got := info.Members[0].Host; got != "127.0.0.1" {
			t.Errorf("member host %q reads %q, want 127.0.0.1", host, got)
		}
	}
}
