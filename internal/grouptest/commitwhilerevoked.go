package grouptest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/testkit"
)

// CommitWhileRevoked is issue 47's false "lost" report: a KIP-848 member
// polls 10 records from each of a topic's 2 partitions and commits them
// while the group revokes one of its partitions for a second member (the
// commit is written as the revocation arrives, and answered once the
// member heartbeats again, or after a second: see CommitRace). The commit covers what was
// polled, so it must succeed, reporting no partition lost, and nothing
// polled before it may be delivered again: the next records either
// member gets are the 20 sent after it, once each. (Before the fix the
// member's revoke callback noted the revoked partition's polled records,
// still marked while the commit was in flight, and the commit reported
// them lost, "delivered again", though it had committed them.) servers
// is the cluster; topic and group must be new.
func CommitWhileRevoked(t *testing.T, servers, topic, group string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	race := NewCommitRace(t, time.Second)
	lib, other := newLib(t), newLib(t)
	lib.SetDialer(race.Dial)

	if _, err := other.CreateTopics(ctx, servers, []string{topic}, kafkabpl.TopicOptions{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	p := must[string](t)(other.Create(ctx, kafkabpl.Producer, servers))
	send := func(prefix string) {
		t.Helper()
		var msgs []kafkabpl.Message
		for i := range 20 {
			part := int32(i % 2)
			msgs = append(msgs, kafkabpl.Message{Value: fmt.Sprintf("%s-%d", prefix, i), Partition: &part})
		}
		if _, err := other.Send(ctx, p, []string{topic}, msgs); err != nil {
			t.Fatal(err)
		}
	}
	send("before")
	cfg := map[string]any{"servers": servers, "group": group, "topics": topic, "auto-offset-reset": "earliest",
		"enable-auto-commit": false, "group-protocol": "consumer"}
	a := must[string](t)(lib.Create(ctx, kafkabpl.Consumer, cfg))
	polled := map[string]int{}
	for len(polled) < 20 {
		collect(t, ctx, lib, a, polled)
	}

	race.Arm(2)
	b := must[string](t)(other.Create(ctx, kafkabpl.Consumer, cfg))
	for waiting := true; waiting; {
		select {
		case <-race.Revocation():
			waiting = false
		case <-ctx.Done():
			t.Fatal("the group never took a partition from the first member")
		default:
			collect(t, ctx, other, b, polled) // b joins as it polls
		}
	}
	if err := lib.Commit(ctx, a); err != nil {
		t.Fatalf("the commit of all the first member polled, in flight as the group revoked a partition: %v", err)
	}
	if !race.Happened() {
		t.Fatal("the commit was not in flight as the member learned of the revocation: the scenario did not run")
	}

	send("after")
	got := map[string]int{}
	after := func() (n int) {
		for v := range got {
			if strings.HasPrefix(v, "after-") {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(30 * time.Second); after() < 20 && time.Now().Before(deadline); {
		collect(t, ctx, lib, a, got)
		collect(t, ctx, other, b, got)
	}
	for v, n := range got {
		if n != 1 || !strings.HasPrefix(v, "after-") {
			t.Errorf("after the commit the members got %q %d times; want only the 20 sent after it, once each", v, n)
		}
	}
	if n := after(); n != 20 {
		t.Errorf("after the commit the members got %d of the 20 records sent after it", n)
	}
}

// collect polls consumer c once, briefly, and counts the values it got.
func collect(t *testing.T, ctx context.Context, lib *kafkabpl.Library, c string, into map[string]int) {
	t.Helper()
	got, err := lib.Poll(ctx, c, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range got.Topics {
		for _, r := range tr.Records {
			into[fmt.Sprint(r.Value())]++
		}
	}
	if ctx.Err() != nil {
		t.Fatal(ctx.Err())
	}
}

func newLib(t *testing.T) *kafkabpl.Library {
	lib := kafkabpl.New()
	t.Cleanup(func() {
		if err := lib.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return lib
}

func must[T any](t *testing.T) func(T, error) T { return testkit.Must[T](t) }
