package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
)

// Tests of the consumer in its group: sharing partitions, commits and
// what a rebalance or a lost broker does to them.

// TestGroupSharesWork checks that consumers of one group split a topic's
// partitions: every message is delivered exactly once among them.
func TestGroupSharesWork(t *testing.T) {
	t.Parallel()
	shareWork(t, newCluster(t, embedded.Partitions(4), embedded.Topics("work")).Servers(), nil)
}

// shareWork is TestGroupSharesWork's body, on the 4 partitions of topic
// "work" of servers, for two consumers of group "workers" with the keys
// of extra besides. It returns their Library, the consumers still in it.
func shareWork(t *testing.T, servers string, extra map[string]any) *Library {
	lib := newLib(t)
	ctx := testCtx(t)
	cfg := map[string]any{"servers": servers, "group": "workers", "topics": "work", "auto-offset-reset": "earliest"}
	maps.Copy(cfg, extra)
	c1 := must[string](t)(lib.Create(ctx, Consumer, cfg))
	c2 := must[string](t)(lib.Create(ctx, Consumer, cfg))
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	// Send only once the group has settled on both members, so that the
	// first does not drain the topic alone before the second joins.
	waitAssigned(t, lib, c1, c2)
	const n = 400
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i] = Message{Key: fmt.Sprint(i), Value: fmt.Sprint(i)}
	}
	must[int](t)(lib.Send(ctx, p, []string{"work"}, msgs))

	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for _, c := range []string{c1, c2} {
		wg.Go(func() {
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				mu.Lock()
				done := len(seen) == n
				mu.Unlock()
				if done {
					return
				}
				res, err := lib.Poll(ctx, c, 200*time.Millisecond)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, r := range res.Topics[0].Records {
					if prev, dup := seen[r.Value().(string)]; dup {
						t.Errorf("message %v delivered twice (to %s and %s)", r.Value(), prev, c)
					}
					seen[r.Value().(string)] = c
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("delivered %d of %d", len(seen), n)
	}
	per := map[string]int{}
	for _, c := range seen {
		per[c]++
	}
	if per[c1] == 0 || per[c2] == 0 {
		t.Errorf("work not shared: %v", per)
	}
	return lib
}

// TestCommitThenRestart checks that a consumer that committed and was
// destroyed is followed by one that resumes right after the committed
// offset, with auto-commit both off (explicit kafka-commit) and on (commit
// at destroy).
func TestCommitThenRestart(t *testing.T) {
	t.Parallel()
	for _, auto := range []bool{false, true} {
		t.Run(fmt.Sprintf("auto-commit=%v", auto), func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t, embedded.Topics("t")).Servers()
			lib := newLib(t)
			ctx := testCtx(t)
			cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "auto-offset-reset": "earliest", "enable-auto-commit": auto}
			p := must[string](t)(lib.Create(ctx, Producer, servers))
			send(t, lib, p, []string{"t"}, unkeyed("1", "2", "3")...)

			c := must[string](t)(lib.Create(ctx, Consumer, cfg))
			pollUntil(t, lib, c, nil, 3)
			if !auto {
				if err := lib.Commit(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			must[bool](t)(lib.Destroy(ctx, c))

			send(t, lib, p, []string{"t"}, unkeyed("4", "5")...)
			c = must[string](t)(lib.Create(ctx, Consumer, cfg))
			got := pollUntil(t, lib, c, nil, 2)
			if s := value.Format(got["t"]); s != `("4" "5")` {
				t.Errorf("after restart got %s, want the two uncommitted messages", s)
			}
		})
	}
}

// TestNoCommitRedelivers checks the other side: without a commit, and with
// auto-commit off, a new consumer of the group reads the messages again.
func TestNoCommitRedelivers(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "auto-offset-reset": "earliest", "auto-commit": false}
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send(t, lib, p, []string{"t"}, unkeyed("1", "2")...)
	c := must[string](t)(lib.Create(ctx, Consumer, cfg))
	pollUntil(t, lib, c, nil, 2)
	must[bool](t)(lib.Destroy(ctx, c))
	c = must[string](t)(lib.Create(ctx, Consumer, cfg))
	if s := value.Format(pollUntil(t, lib, c, nil, 2)["t"]); s != `("1" "2")` {
		t.Errorf("got %s", s)
	}
}

// waitAssigned polls consumers until each owns at least one partition.
func waitAssigned(t *testing.T, lib *Library, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, id := range ids {
		for !hasPartitions(t, lib, id) {
			if time.Now().After(deadline) {
				t.Fatalf("consumer %s got no partitions", id)
			}
			for _, other := range ids { // polling drives the group
				if _, err := lib.Poll(context.Background(), other, 50*time.Millisecond); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// hasPartitions reports whether the group has assigned consumer id any
// partitions.
func hasPartitions(t *testing.T, lib *Library, id string) bool {
	t.Helper()
	h, err := lib.acquire(id, Consumer)
	if err != nil {
		t.Fatal(err)
	}
	defer h.calls.Done()
	h.cons.mu.Lock()
	defer h.cons.mu.Unlock()
	for _, ps := range h.cons.assigned {
		if len(ps) > 0 {
			return true
		}
	}
	return false
}

// TestCommitAfterRebalanceSaysNotCommitted checks kafka-commit's promise
// ("true after offsets of everything polled are committed") when it cannot
// keep it: with auto-commit off, a consumer polls, a second member joins,
// and the group takes the partitions back before the commit. The commit
// must fail naming them (as Java's CommitFailedException does), not
// return true; and the records it polled are delivered again, as it says.
func TestCommitAfterRebalanceSaysNotCommitted(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "auto-offset-reset": "earliest", "enable-auto-commit": false}
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	msgs := make([]Message, 20)
	for i := range msgs {
		msgs[i] = Message{Key: fmt.Sprint(i), Value: fmt.Sprint(i)}
	}
	must[int](t)(lib.Send(ctx, p, []string{"t"}, msgs))

	c1 := must[string](t)(lib.Create(ctx, Consumer, cfg))
	first := pollValues(t, lib, c1, len(msgs), nil)

	// A second member joins; c1 is not polling, but kgo rejoins in the
	// background and gives up its partitions (eager range assignor).
	// What c2 polls meanwhile counts as delivered again.
	c2 := must[string](t)(lib.Create(ctx, Consumer, cfg))
	again := map[string]bool{}
	add := func(c string, wait time.Duration) {
		for _, v := range polledValues(must[*Polled](t)(lib.Poll(ctx, c, wait))) {
			again[v] = true
		}
	}
	for deadline := time.Now().Add(20 * time.Second); !hasPartitions(t, lib, c2); {
		if time.Now().After(deadline) {
			t.Fatal("the second consumer got no partitions")
		}
		add(c2, 50*time.Millisecond)
	}

	err := lib.Commit(ctx, c1)
	if !errors.Is(err, ErrNotCommitted) || ErrorType(err) != "KafkaError" ||
		!strings.Contains(err.Error(), `kafka-commit: topic "t" partitions [0 1]`) || !strings.Contains(err.Error(), "will be delivered again") {
		t.Fatalf("commit after the rebalance: %v (%s); want ErrNotCommitted naming topic t partitions [0 1]", err, ErrorType(err))
	}
	// Said once: the next commit has nothing outstanding.
	if err := lib.Commit(ctx, c1); err != nil {
		t.Errorf("second commit: %v", err)
	}
	// Nothing of the group's was committed, so every message c1 polled is
	// delivered again, to one member or the other.
	for deadline := time.Now().Add(20 * time.Second); len(again) < len(first) && time.Now().Before(deadline); {
		add(c1, 100*time.Millisecond)
		add(c2, 100*time.Millisecond)
	}
	if len(again) != len(first) {
		t.Errorf("%d of the %d messages c1 polled were delivered again", len(again), len(first))
	}
}

// TestCommitAfterRebalanceAutoCommit is the control: with auto-commit on,
// what the consumer has come back from (it polled again) is committed as
// the partitions are revoked, so the commit after the rebalance succeeds
// and nothing is delivered again.
func TestCommitAfterRebalanceAutoCommit(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "auto-offset-reset": "earliest"}
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	must[int](t)(lib.Send(ctx, p, []string{"t"}, []Message{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}, {Key: "c", Value: "3"}}))
	c1 := must[string](t)(lib.Create(ctx, Consumer, cfg))
	pollValues(t, lib, c1, 3, nil)
	if res := must[*Polled](t)(lib.Poll(ctx, c1, 100*time.Millisecond)); res.Len() != 0 {
		t.Fatalf("polled %v more", polledValues(res))
	}
	c2 := must[string](t)(lib.Create(ctx, Consumer, cfg))
	waitAssigned(t, lib, c2)
	if err := lib.Commit(ctx, c1); err != nil {
		t.Fatalf("commit: %v", err)
	}
	for _, c := range []string{c1, c2} {
		if res := must[*Polled](t)(lib.Poll(ctx, c, 500*time.Millisecond)); res.Len() != 0 {
			t.Errorf("%s polled %v again", c, polledValues(res))
		}
	}
}

// TestAutoCommitWaitsForTheNextPoll checks that auto-commit, like Java's,
// commits what a poll returned only once the caller comes back (the next
// poll, a commit, a seek or destroy), never while it may still be working
// on it: a crash then redelivers those records instead of losing them.
func TestAutoCommitWaitsForTheNextPoll(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	must[int](t)(lib.Send(ctx, p, []string{"t"}, []Message{{Value: "1"}, {Value: "2"}, {Value: "3"}}))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": "g", "topics": "t",
		"auto-offset-reset": "earliest", "auto-commit-interval": 100}))
	pollValues(t, lib, c, 3, nil)
	committed := func() any {
		g := must[*GroupInfo](t)(lib.DescribeGroup(ctx, servers, "g"))
		v, _ := g.List().Get("lag")
		return value.Format(v)
	}
	// Twenty auto-commit intervals while the caller "works": nothing
	// committed. A fixed sleep, not a wait for a condition: what it shows
	// is that nothing happens, and no event marks the moment after which
	// an auto-commit can no longer come.
	time.Sleep(2 * time.Second)
	if got := committed(); got != `("t" => (("partition" => 0 "committed" => null "end" => 3 "lag" => 3)))` {
		t.Errorf("while the caller works on what it polled: %s; want nothing committed", got)
	}
	// It comes back: the next interval commits all three.
	must[*Polled](t)(lib.Poll(ctx, c, 0))
	want := `("t" => (("partition" => 0 "committed" => 3 "end" => 3 "lag" => 0)))`
	got := committed()
	for deadline := time.Now().Add(10 * time.Second); got != want && time.Now().Before(deadline); got = committed() {
		time.Sleep(20 * time.Millisecond)
	}
	if got != want {
		t.Errorf("after the next poll: %s; want %s", got, want)
	}
}

// TestBrokerGoneMidGroup checks what a consumer in a group says when its
// brokers go away after it polled: a poll fails with a Timeout naming the
// servers (not a KafkaError about a topic "" and partition 0, as kgo's
// group error reads when taken for a partition's), and the commit does not
// claim success: nothing it polled was committed.
func TestBrokerGoneMidGroup(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.NoAutoCreate(), embedded.Topics("t"))
	servers := cluster.Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	must[int](t)(lib.Send(ctx, p, []string{"t"}, []Message{{Value: "a"}, {Value: "b"}}))
	cons := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": "g", "topics": "t",
		"auto-offset-reset": "earliest", "request-timeout": 3000, "session-timeout": 6000, "heartbeat-interval": 500}))
	pollValues(t, lib, cons, 2, nil)
	cluster.Close()

	var pollErr error
	for deadline := time.Now().Add(20 * time.Second); pollErr == nil && time.Now().Before(deadline); {
		_, pollErr = lib.Poll(ctx, cons, time.Second)
	}
	if ErrorType(pollErr) != "Timeout" || !strings.Contains(pollErr.Error(), servers) || strings.Contains(pollErr.Error(), `topic ""`) {
		t.Errorf("poll with the broker gone: %v (%s); want a Timeout naming %s", pollErr, ErrorType(pollErr), servers)
	}
	if err := lib.Commit(ctx, cons); err == nil {
		t.Error("commit with the broker gone and nothing committed returned no error")
	} else {
		t.Logf("commit: %v (%s)", err, ErrorType(err))
	}
}
