//go:build unix

package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestRealKafka's errors subtest: sends and creates the client or Kafka
// refuses, and auto-offset-reset none without a committed offset.

// testRealErrors checks that what Kafka refuses fails clearly, in time.
func testRealErrors(t *testing.T, servers string) {
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	// A send-timeout of 3 s: a topic the broker does not create looks, to
	// a producer that may ask for it, like one it is still creating, so
	// that send waits send-timeout (30 s by default, as Java's 60 s).
	prod := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, map[string]any{"servers": servers, "send-timeout": 3000}))

	// send checks a send that must fail within 10 s, having delivered
	// nothing, with an error of kind and reason.
	send := func(what, topic, kind string, reason error) {
		t.Helper()
		start := time.Now()
		n, err := lib.Send(ctx, prod, []string{topic}, textMessages("x"))
		took := time.Since(start)
		t.Logf("%s: %v after %v", what, err, took.Round(time.Millisecond))
		if err == nil || n != 0 || value.ErrorType(err) != kind || !errors.Is(err, reason) {
			t.Errorf("%s: delivered %d, %v (%s), want a %s error wrapping %v", what, n, err, value.ErrorType(err), kind, reason)
		}
		if took > 10*time.Second {
			t.Errorf("%s: failed after %v", what, took)
		}
	}
	// The client refuses what no Kafka takes.
	send("a name with a space", "rk bad", "InvalidArgument", kafkabpl.ErrInvalidArgument)
	// Kafka refuses writes to its internal topics (kfake takes them).
	send("the internal __consumer_offsets", "__consumer_offsets", "KafkaError", kerr.InvalidTopicException)
	// A name that collides with an existing one ('.' and '_' are the same
	// in metric names): Kafka refuses to create it; the producer hears
	// only that the topic does not exist, as while it is being created,
	// so it waits send-timeout and says the topic never appeared (kfake
	// creates it).
	ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"rk.err.dot"}, kafkabpl.TopicOptions{}))
	send("a name colliding with rk.err.dot", "rk_err_dot", "Timeout", kerr.UnknownTopicOrPartition)
	if _, err := lib.CreateTopics(ctx, a, []string{"rk_err_dot"}, kafkabpl.TopicOptions{}); !errors.Is(err, kerr.InvalidTopicException) || !strings.Contains(err.Error(), `topic "rk_err_dot"`) {
		t.Errorf("create-topics rk_err_dot colliding with rk.err.dot: %v", err)
	} else {
		t.Logf("create-topics of a colliding name: %v", err)
	}

	// Replication factor 3 on 1 broker: each topic fails, named, with the
	// broker's reason; none is created.
	_, err := lib.CreateTopics(ctx, a, []string{"rk-rf3-a", "rk-rf3-b"}, kafkabpl.TopicOptions{ReplicationFactor: 3})
	t.Logf("replication factor 3: %v", err)
	if !errors.Is(err, kerr.InvalidReplicationFactor) || value.ErrorType(err) != "KafkaError" {
		t.Errorf("replication factor 3 on 1 broker: %v (%s)", err, value.ErrorType(err))
	}
	for _, want := range []string{`kafka-create-topics: 2 of 2 topics failed; topic "rk-rf3-a"`, `topic "rk-rf3-b"`, "INVALID_REPLICATION_FACTOR", "only 1 broker(s) are registered"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("replication factor 3: %v: want it to say %q", err, want)
		}
	}
	if names := ok[[]string](t)(lib.ListTopics(ctx, a)); slices.Contains(names, "rk-rf3-a") || slices.Contains(names, "rk-rf3-b") {
		t.Errorf("a topic that failed was created: %q", names)
	}

	// auto-offset-reset none, a group with no committed offset: a poll
	// fails, naming the topic and partition, once the group has assigned
	// the partition (3 s: Kafka's initial rebalance delay).
	const topic = "rk-none"
	ok[int](t)(lib.Send(ctx, prod, []string{topic}, textMessages("before")))
	c := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "group": "rk-g-none", "topics": topic, "auto-offset-reset": "none"}))
	start := time.Now()
	var pollErr error
	empty := 0
	for time.Since(start) < 20*time.Second {
		res, err := lib.Poll(ctx, c, time.Second)
		if err != nil {
			pollErr = err
			break
		}
		if res.Len() > 0 {
			t.Fatalf("auto-offset-reset none polled %v", polledMsgs(res))
		}
		empty++
	}
	t.Logf("auto-offset-reset none: %d empty polls of 1 s, then after %v: %v (%s)", empty, time.Since(start).Round(time.Millisecond), pollErr, value.ErrorType(pollErr))
	if pollErr == nil || value.ErrorType(pollErr) != "KafkaError" || !strings.Contains(pollErr.Error(), `kafka-poll: topic "rk-none" partition 0`) || !strings.Contains(pollErr.Error(), "no prior committed offset") {
		t.Errorf("auto-offset-reset none with nothing committed: %v after %v, want a KafkaError naming the partition", pollErr, time.Since(start))
	}
	// The partition has no position until a seek gives it one, and no
	// message sent meanwhile can come: each poll until then must say so,
	// as each poll of Java's KafkaConsumer throws
	// NoOffsetForPartitionException, rather than return nothing.
	ok[int](t)(lib.Send(ctx, prod, []string{topic}, textMessages("after")))
	var next []string
	silent := 0
	for range 3 {
		res, err := lib.Poll(ctx, c, time.Second)
		switch {
		case err != nil:
			next = append(next, err.Error())
		default:
			silent++
			next = append(next, fmt.Sprintf("%d records, no error", res.Len()))
		}
	}
	t.Logf("auto-offset-reset none: the next 3 polls of 1 s: %q", next)
	if silent > 0 {
		t.Errorf("auto-offset-reset none: after the first error, %d of the next 3 polls returned nothing and no error, though the partition still has no position: %q", silent, next)
	}
	// A seek to the beginning gives the partition a position: both
	// messages come.
	if err := lib.Seek(ctx, c, topic, kafkabpl.SeekBeginning()); err != nil {
		t.Fatal(err)
	}
	got, err := pollFor(ctx, lib, c, 2, 10*time.Second)
	if err != nil || !slices.Equal(values(got), []string{"before", "after"}) {
		t.Errorf("auto-offset-reset none: after the error, a seek to the beginning: %v, %v; want before and after", got, err)
	}
}
