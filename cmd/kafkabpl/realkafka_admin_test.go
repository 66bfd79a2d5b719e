//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/value"
	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestRealKafka's admin subtests: fresh cluster, admin (with the group's
// lag), admin read-after-write, and re-created topic.

// testRealAdmin runs the admin functions, as TestAdminGoAPI, TestAdminTopics
// and TestAdminGroupLag do on kfake.
func testRealAdmin(t *testing.T, k *realKafka) {
	servers := k.servers
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))

	created := ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"rk-adm-x", "rk-adm-y"}, kafkabpl.TopicOptions{Partitions: 2, Configs: map[string]string{"retention.ms": "86400000"}}))
	if diff := cmp.Diff(map[string]bool{"rk-adm-x": true, "rk-adm-y": true}, created); diff != "" {
		t.Errorf("CreateTopics (-want +got):\n%s", diff)
	}
	// A config is a target too.
	created = ok[map[string]bool](t)(lib.CreateTopics(ctx, servers, []string{"rk-adm-x", "rk-adm-z"}, kafkabpl.TopicOptions{}))
	if diff := cmp.Diff(map[string]bool{"rk-adm-x": false, "rk-adm-z": true}, created); diff != "" {
		t.Errorf("CreateTopics again (-want +got):\n%s", diff)
	}
	// Kafka's metadata follows a create a moment later (the read-after-write
	// subtest shows it): wait for it here.
	names := eventually(t, func() ([]string, error) { return lib.ListTopics(ctx, a) }, func(names []string) bool {
		return slices.Contains(names, "rk-adm-x") && slices.Contains(names, "rk-adm-y") && slices.Contains(names, "rk-adm-z")
	})
	if !slices.IsSorted(names) || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "__") }) {
		t.Errorf("ListTopics = %q: want sorted, no internal topic", names)
	}
	infos := eventually(t, func() ([]kafkabpl.TopicInfo, error) { return lib.DescribeTopics(ctx, a, "rk-adm-x") },
		func(infos []kafkabpl.TopicInfo) bool { return len(infos) == 1 && len(infos[0].Partitions) == 2 })
	want := []kafkabpl.TopicInfo{{Topic: "rk-adm-x", Partitions: []kafkabpl.PartitionInfo{
		{Partition: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}},
		{Partition: 1, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}},
	}}}
	if diff := cmp.Diff(want, infos); diff != "" {
		t.Errorf("DescribeTopics (-want +got):\n%s", diff)
	}
	// A missing topic is an error naming it; describing it does not
	// create it, though the broker creates topics on first use.
	infos, err := lib.DescribeTopics(ctx, a, "rk-adm-x", "rk-adm-ghost")
	if !errors.Is(err, kerr.UnknownTopicOrPartition) || !strings.Contains(err.Error(), `topic "rk-adm-ghost"`) || len(infos) != 1 || infos[0].Topic != "rk-adm-x" {
		t.Errorf("DescribeTopics with a missing topic: %v, %v", infos, err)
	}
	if slices.Contains(ok[[]string](t)(lib.ListTopics(ctx, a)), "rk-adm-ghost") {
		t.Error("describing a missing topic created it")
	}

	info := ok[*kafkabpl.ClusterInfo](t)(lib.DescribeCluster(ctx, a))
	wantInfo := &kafkabpl.ClusterInfo{ClusterID: realClusterID, Controller: 1, Brokers: []kafkabpl.BrokerInfo{{ID: 1, Host: "127.0.0.1", Port: int32(k.port)}}}
	if diff := cmp.Diff(wantInfo, info); diff != "" {
		t.Errorf("DescribeCluster (-want +got):\n%s", diff)
	}

	// create-partitions: grow, the same count (Kafka itself refuses it),
	// shrink, a missing topic.
	if !ok[bool](t)(lib.CreatePartitions(ctx, a, "rk-adm-y", 4)) {
		t.Error("CreatePartitions rk-adm-y to 4 = false")
	}
	eventually(t, func() ([]kafkabpl.TopicInfo, error) { return lib.DescribeTopics(ctx, a, "rk-adm-y") },
		func(infos []kafkabpl.TopicInfo) bool { return len(infos) == 1 && len(infos[0].Partitions) == 4 })
	if ok[bool](t)(lib.CreatePartitions(ctx, servers, "rk-adm-y", 4)) {
		t.Error("CreatePartitions rk-adm-y to 4 again = true")
	}
	if _, err := lib.CreatePartitions(ctx, a, "rk-adm-y", 2); !errors.Is(err, kerr.InvalidPartitions) || !strings.Contains(err.Error(), `topic "rk-adm-y" has 4 partitions, more than 2`) {
		t.Errorf("shrinking: %v", err)
	}
	if _, err := lib.CreatePartitions(ctx, a, "rk-adm-ghost", 2); !errors.Is(err, kerr.UnknownTopicOrPartition) || !strings.Contains(err.Error(), `topic "rk-adm-ghost"`) {
		t.Errorf("growing a missing topic: %v", err)
	}

	testRealLag(t, lib, ctx, a, servers)

	deleted := ok[map[string]bool](t)(lib.DeleteTopics(ctx, a, []string{"rk-adm-y", "rk-adm-z", "rk-adm-y", "rk-adm-never"}))
	if diff := cmp.Diff(map[string]bool{"rk-adm-y": true, "rk-adm-z": true, "rk-adm-never": false}, deleted); diff != "" {
		t.Errorf("DeleteTopics (-want +got):\n%s", diff)
	}
	eventually(t, func() ([]string, error) { return lib.ListTopics(ctx, servers) }, func(names []string) bool {
		return !slices.Contains(names, "rk-adm-y") && !slices.Contains(names, "rk-adm-z") && slices.Contains(names, "rk-adm-x")
	})
}

// eventually calls get until its result satisfies done, for 30 s at most,
// and returns that result; it fails the test with the last one otherwise.
//
// The wait is eventuallyWait: 10 s was too short for a consumer's first
// poll of a new group on a real broker while CI ran on a machine loaded
// by other jobs (a join, the broker's first rebalance, a fetch).
func eventually[T any](t *testing.T, get func() (T, error), done func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(eventuallyWait)
	for {
		v, err := get()
		if err == nil && done(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("not so within %v: %+v, %v", eventuallyWait, v, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eventuallyWait bounds eventually's wait.
const eventuallyWait = 30 * time.Second

// testRealReadAfterWrite: once create-topics or create-partitions
// returned, list-topics and describe-topics show what they made, as on
// kfake (and as admin.bpl expects), and once delete-topics returned,
// list-topics no longer lists the topic. Kafka's broker learns of a change
// from its controller a moment after the controller answered: a call that
// asks at once may see the old metadata. 60 rounds, each asking at once.
func testRealReadAfterWrite(t *testing.T, servers string) {
	const rounds = 60
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	var staleTopic, stalePartitions, staleDeleted []string
	for i := range rounds {
		topic := fmt.Sprintf("rk-raw-%d", i)
		ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 2}))
		var infos []kafkabpl.TopicInfo
		var err error
		if i%2 == 0 {
			infos, err = lib.DescribeTopics(ctx, a, topic)
		} else if names, lerr := lib.ListTopics(ctx, a); lerr != nil || !slices.Contains(names, topic) {
			err = fmt.Errorf("list-topics: not listed (%v)", lerr)
		} else {
			infos, err = lib.DescribeTopics(ctx, a, topic)
		}
		if err != nil || len(infos) != 1 || len(infos[0].Partitions) != 2 {
			staleTopic = append(staleTopic, fmt.Sprintf("%s: %+v, %v", topic, infos, err))
			eventually(t, func() ([]kafkabpl.TopicInfo, error) { return lib.DescribeTopics(ctx, a, topic) },
				func(infos []kafkabpl.TopicInfo) bool { return len(infos) == 1 && len(infos[0].Partitions) == 2 })
		}
		if grown, err := lib.CreatePartitions(ctx, a, topic, 4); !grown || err != nil {
			stalePartitions = append(stalePartitions, fmt.Sprintf("%s: create-partitions to 4 right after create-topics: %v, %v", topic, grown, err))
		}
		infos, err = lib.DescribeTopics(ctx, a, topic)
		if err != nil || len(infos) != 1 || len(infos[0].Partitions) != 4 {
			stalePartitions = append(stalePartitions, fmt.Sprintf("%s: %+v after growing to 4 (%v)", topic, infos, err))
		}
		ok[map[string]bool](t)(lib.DeleteTopics(ctx, a, []string{topic}))
		if names, err := lib.ListTopics(ctx, a); err != nil || slices.Contains(names, topic) {
			staleDeleted = append(staleDeleted, fmt.Sprintf("%s: still listed (%v)", topic, err))
		}
	}
	if len(staleTopic) > 0 {
		t.Errorf("describe-topics (even rounds) or list-topics (odd rounds) right after create-topics did not show the topic in %d of %d rounds:\n%s", len(staleTopic), rounds, strings.Join(staleTopic, "\n"))
	}
	if len(stalePartitions) > 0 {
		t.Errorf("right after create-partitions, the new partitions were missing in %d of %d rounds:\n%s", len(stalePartitions), rounds, strings.Join(stalePartitions, "\n"))
	}
	if len(staleDeleted) > 0 {
		t.Errorf("list-topics right after delete-topics still listed the topic in %d of %d rounds:\n%s", len(staleDeleted), rounds, strings.Join(staleDeleted, "\n"))
	}
}

// testRealFresh asks a cluster that no group has used yet about groups:
// it has none. Kafka creates its group coordinator's topic
// (__consumer_offsets) on the first request that needs a coordinator, and
// answers COORDINATOR_NOT_AVAILABLE while it does; Java's admin client
// retries that until its timeout. Runs before anything else uses a group.
func testRealFresh(t *testing.T, servers string) {
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	if gs, err := lib.ListGroups(ctx, a); err != nil || len(gs) != 0 {
		t.Errorf("list-groups on a fresh cluster: %v, %v; want none", gs, err)
	}
	start := time.Now()
	if _, err := lib.DescribeGroup(ctx, a, "rk-g-fresh"); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("describe-group on a fresh cluster: %v (after %v); want GROUP_ID_NOT_FOUND, as once the cluster has a coordinator", err, time.Since(start).Round(time.Millisecond))
	}
}

// testRealLag mirrors TestAdminGroupLag: a group's lag goes to 0 as its
// consumer catches up and commits; the group is Empty once it left.
func testRealLag(t *testing.T, lib *kafkabpl.Library, ctx context.Context, a, servers string) {
	const topic, group = "rk-lagged", "rk-g-lag"
	ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 2}))
	if _, err := lib.DescribeGroup(ctx, a, group); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("describe-group before the group exists: %v", err)
	}
	prod := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	var msgs []kafkabpl.Message // 6 to partition 0, 4 to partition 1
	for i := range 10 {
		part := int32(0)
		if i >= 6 {
			part = 1
		}
		msgs = append(msgs, kafkabpl.Message{Value: fmt.Sprint(i), Partition: &part})
	}
	ok[int](t)(lib.Send(ctx, prod, []string{topic}, msgs))
	cons := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{
		"servers": servers, "group": group, "topics": topic, "auto-offset-reset": "earliest",
		"enable-auto-commit": false, "max-poll-records": 3,
	}))

	// describe checks the lag's consistency and returns the group.
	describe := func() *kafkabpl.GroupInfo {
		t.Helper()
		g := ok[*kafkabpl.GroupInfo](t)(lib.DescribeGroup(ctx, a, group))
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

	polled := len(ok[[]polledMsg](t)(pollFor(ctx, lib, cons, 1, 20*time.Second)))
	if polled > 3 {
		t.Fatalf("polled %d with max-poll-records 3", polled)
	}
	if g := describe(); g.TotalLag != 10 {
		t.Errorf("polled, not committed: total lag %d, want 10", g.TotalLag)
	}
	noErr(t, lib.Commit(ctx, cons))
	g := describe()
	if g.TotalLag != int64(10-polled) {
		t.Errorf("after polling %d and committing: total lag %d, want %d", polled, g.TotalLag, 10-polled)
	}
	if g.State != "Stable" || len(g.Members) != 1 {
		t.Fatalf("group %s", value.Format(g.List()))
	}
	m := g.Members[0]
	if m.ClientID != "kafkabpl" || !strings.HasPrefix(m.MemberID, "kafkabpl-") || m.Host == "" ||
		!cmp.Equal(m.Assignment, []kafkabpl.TopicPartitions{{Topic: topic, Partitions: []int32{0, 1}}}) {
		t.Errorf("member %+v", m)
	}
	t.Logf("member id %q, host %q", m.MemberID, m.Host)

	for polled < 10 {
		polled += len(ok[[]polledMsg](t)(pollFor(ctx, lib, cons, 1, 20*time.Second)))
	}
	noErr(t, lib.Commit(ctx, cons))
	member := fmt.Sprintf(`("member-id" => %q "client-id" => "kafkabpl" "host" => %q "assignment" => (%q => (0 1)))`, m.MemberID, m.Host, topic)
	lag := `"lag" => ("rk-lagged" => (("partition" => 0 "committed" => 6 "end" => 6 "lag" => 0) ("partition" => 1 "committed" => 4 "end" => 4 "lag" => 0))) "total-lag" => 0`
	if got, want := value.Format(describe().List()), `("group" => "rk-g-lag" "state" => "Stable" "members" => (`+member+`) `+lag+`)`; got != want {
		t.Errorf("describe-group caught up:\n got  %s\n want %s", got, want)
	}
	listed := ok[[]kafkabpl.GroupListing](t)(lib.ListGroups(ctx, servers))
	if !slices.Contains(listed, kafkabpl.GroupListing{Group: group, State: "Stable", Type: "classic"}) {
		t.Errorf("ListGroups = %v, want %s Stable among them", listed, group)
	}

	ok[bool](t)(lib.Destroy(ctx, cons))
	if got, want := value.Format(describe().List()), `("group" => "rk-g-lag" "state" => "Empty" "members" => () `+lag+`)`; got != want {
		t.Errorf("describe-group after the consumer left:\n got  %s\n want %s", got, want)
	}
	listed = ok[[]kafkabpl.GroupListing](t)(lib.ListGroups(ctx, a))
	if !slices.Contains(listed, kafkabpl.GroupListing{Group: group, State: "Empty", Type: "classic"}) {
		t.Errorf("ListGroups = %v, want %s Empty among them", listed, group)
	}
}

// testRealRecreated mirrors TestAdminRecreatedTopic, whose cluster does not
// create topics on first use, with consumers that do not ask for it
// either: the topic created again has the partition count asked for. With
// consumers that may create topics (the default), as stock Kafka does on
// first use, a consumer still subscribed may create the topic again first,
// with the broker's defaults (1 partition): then create-topics answers
// false, as the package docs warn. Either way the producer and the
// consumers that knew the old topic work with the new one.
func testRealRecreated(t *testing.T, servers string) {
	concurrently(t, map[string]func(*testing.T){
		"consumers may not create topics": func(t *testing.T) { testRealRecreatedTopic(t, servers, "rk-re-strict", false) },
		"consumers may create topics":     func(t *testing.T) { testRealRecreatedTopic(t, servers, "rk-re", true) },
	})
}

func testRealRecreatedTopic(t *testing.T, servers, topic string, autoCreate bool) {
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 3}))
	prod := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	group := "rk-g-" + topic
	c := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "group": group, "topics": topic,
		"auto-offset-reset": "earliest", "allow-auto-create-topics": autoCreate}))
	p0, p1 := int32(0), int32(1)
	ok[int](t)(lib.Send(ctx, prod, []string{topic}, []kafkabpl.Message{{Value: "early0", Partition: &p0}, {Value: "early1", Partition: &p1}}))
	// Another consumer, with the default latest and its own group,
	// subscribed once partitions 0 and 1 hold a message: it starts after
	// them. The topic created again must not start there.
	c2 := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "allow-auto-create-topics": autoCreate}))
	ok[*kafkabpl.Polled](t)(lib.PollTopics(ctx, c2, []string{topic}, 0))

	ok[int](t)(lib.Send(ctx, prod, []string{topic}, []kafkabpl.Message{{Key: "k1", Value: "old1"}, {Key: "k2", Value: "old2"}}))
	if got := ok[[]polledMsg](t)(pollFor(ctx, lib, c, 4, 20*time.Second)); len(got) != 4 {
		t.Fatalf("consumer 1 before the delete: %v, want 4 messages", got)
	}
	if got := values(ok[[]polledMsg](t)(pollFor(ctx, lib, c2, 2, 20*time.Second))); !cmp.Equal(sorted(got), []string{"old1", "old2"}) {
		t.Fatalf("consumer 2 before the delete: %v", got)
	}
	noErr(t, lib.Commit(ctx, c))

	// Deleted through a config target: the Library's clients are told all
	// the same.
	if got := ok[map[string]bool](t)(lib.DeleteTopics(ctx, servers, []string{topic})); !got[topic] {
		t.Fatalf("delete: %v", got)
	}
	partitions := 2
	if got := ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 2})); !got[topic] {
		infos, err := lib.DescribeTopics(ctx, a, topic)
		if !autoCreate {
			t.Fatalf("re-create: %v: the topic existed again (%+v, %v), though no consumer may create it", got, infos, err)
		}
		t.Logf("re-create: %v: a consumer had created the topic again first (%+v, %v)", got, infos, err)
		partitions = 1
	}
	if n, err := lib.Send(ctx, prod, []string{topic}, []kafkabpl.Message{{Key: "k1", Value: "new1", Partition: &p0}, {Key: "k2", Value: "new2", Partition: &p0}, {Value: "new3", Partition: &p0}}); n != 3 || err != nil {
		t.Fatalf("send to the new topic = %d, %v", n, err)
	}
	for i, id := range []string{c, c2} {
		got, errs := pollThrough(ctx, lib, id, 3, 15*time.Second)
		if len(errs) > 0 || !cmp.Equal(sorted(values(got)), []string{"new1", "new2", "new3"}) {
			t.Errorf("consumer %d after re-creation: polled %v in 15 s, want the three new messages; the polls' errors (repeats counted):\n%s", i+1, got, strings.Join(errs, "\n"))
		}
	}
	noErr(t, lib.Commit(ctx, c))
	g := ok[*kafkabpl.GroupInfo](t)(lib.DescribeGroup(ctx, a, group))
	if g.TotalLag != 0 || len(g.Lag) != 1 || len(g.Lag[0].Partitions) != partitions {
		t.Errorf("group after re-creation: %s, want lag 0 on %d partitions", value.Format(g.List()), partitions)
	}
	if sub := ok[[]string](t)(lib.Subscribe(ctx, c, []string{topic})); !slices.Equal(sub, []string{topic}) {
		t.Errorf("subscription %q", sub)
	}
}
