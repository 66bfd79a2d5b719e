package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Tests of subscribing and polling: what a poll returns, in what order and
// when; consumer_group_test.go, consumer_seek_test.go,
// consumer_offsets_test.go and consumer_leave_test.go hold the rest of the
// consumer's tests.

// TestSubscribeIsDeterministic repeats subscribe -> send -> poll on fresh
// topics with the default "latest" reset: not one message may be missed.
func TestSubscribeIsDeterministic(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	const rounds = 60
	for i := range rounds {
		topic := fmt.Sprintf("fresh-%d", i)
		c := must[string](t)(lib.Create(ctx, Consumer, servers))
		if i%2 == 0 {
			must[[]string](t)(lib.Subscribe(ctx, c, []string{topic}))
		} else { // a poll of topics subscribes too
			if s := value.Format(must[*Polled](t)(lib.PollTopics(ctx, c, []string{topic}, 0)).List()); s != fmt.Sprintf("(%q => ())", topic) {
				t.Fatalf("round %d: first poll %s", i, s)
			}
		}
		send(t, lib, p, []string{topic}, unkeyed(fmt.Sprintf("m%d", i))...)
		got := pollUntil(t, lib, c, nil, 1)
		if s := value.Format(got[topic]); s != fmt.Sprintf(`("m%d")`, i) {
			t.Fatalf("round %d: got %s", i, s)
		}
		must[bool](t)(lib.Destroy(ctx, c))
	}
}

// TestSubscribeLatestSkipsOlder checks the other half of "latest": what
// was in a topic before subscribing is not delivered.
func TestSubscribeLatestSkipsOlder(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send(t, lib, p, []string{"t"}, unkeyed("old1", "old2")...)
	c := must[string](t)(lib.Create(ctx, Consumer, servers))
	must[[]string](t)(lib.Subscribe(ctx, c, []string{"t"}))
	send(t, lib, p, []string{"t"}, unkeyed("new")...)
	got := pollUntil(t, lib, c, nil, 1)
	if s := value.Format(got["t"]); s != `("new")` {
		t.Errorf("got %s, want only the message sent after subscribing", s)
	}
	if s := value.Format(must[*Polled](t)(lib.Poll(ctx, c, 200*time.Millisecond)).List()); s != `("t" => ())` {
		t.Errorf("then %s", s)
	}
}

// TestPollUndecodable checks that a message the deserializer cannot read is
// delivered with its position and the reason, and does not stall the
// messages after it.
func TestPollUndecodable(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("nums")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers)) // String serializer
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "value-deserializer": "Integer", "auto-offset-reset": "earliest"}))
	ip := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "value-serializer": "Integer"}))
	send(t, lib, ip, []string{"nums"}, unkeyed(7)...)
	send(t, lib, p, []string{"nums"}, unkeyed("abc")...)
	send(t, lib, ip, []string{"nums"}, unkeyed(8)...)
	got := pollUntil(t, lib, c, []string{"nums"}, 3)["nums"]
	if got.At(0) != int64(7) || got.At(2) != int64(8) {
		t.Fatalf("good messages around the bad one: %s", value.Format(got))
	}
	bad, ok := got.At(1).(*value.List)
	if !ok {
		t.Fatalf("bad message is %s, want a record list", value.Format(got.At(1)))
	}
	for name, want := range map[string]any{"topic": "nums", "partition": int64(0), "offset": int64(1), "value": []byte("abc")} {
		if v, _ := bad.Get(name); !equalValues(v, want) {
			t.Errorf("bad message %q = %s, want %s", name, value.Format(v), value.Format(want))
		}
	}
	if reason, _ := bad.Get("error"); !strings.Contains(fmt.Sprint(reason), "the Integer deserializer cannot decode 3 bytes: want 4 bytes") {
		t.Errorf("error = %v", reason)
	}
}

func TestPollTimeouts(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t"}))
	// 0 returns at once with what is buffered: nothing yet, and the topic.
	res := must[*Polled](t)(lib.Poll(ctx, c, 0))
	if diff := cmp.Diff([]TopicRecords{{Topic: "t"}}, res.Topics); diff != "" {
		t.Errorf("poll 0 (-want +got):\n%s", diff)
	}
	// A deadline is an empty result, not an error.
	res = must[*Polled](t)(lib.Poll(ctx, c, 50*time.Millisecond))
	if res.Len() != 0 || len(res.Topics) != 1 {
		t.Errorf("poll 50ms = %+v", res.Topics)
	}
	if _, err := lib.Poll(ctx, c, -time.Millisecond); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative timeout: %v", err)
	}
	// The caller's own context ending is the caller's error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := lib.Poll(cctx, c, time.Second); !errors.Is(err, context.Canceled) || ErrorType(err) != "Interrupted" {
		t.Errorf("canceled context: %v (type %s), want context.Canceled, Interrupted", err, ErrorType(err))
	}
	// Its deadline passing first is a Timeout, and still the context's
	// error.
	dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err := lib.Poll(dctx, c, time.Minute)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || ErrorType(err) != "Timeout" {
		t.Errorf("deadline: %v (type %s), want ErrTimeout wrapping context.DeadlineExceeded", err, ErrorType(err))
	}
}

// TestPollTopicsKeepsOthers checks that the three-argument poll returns only
// its topics and keeps records of other subscribed topics for later.
func TestPollTopicsKeepsOthers(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	c := must[string](t)(lib.Create(ctx, Consumer, servers))
	must[[]string](t)(lib.Subscribe(ctx, c, []string{"a", "b"}))
	send(t, lib, p, []string{"a", "b"}, unkeyed("1", "2", "3")...)
	gotA := pollUntil(t, lib, c, []string{"a"}, 3)
	if s := value.Format(gotA["a"]); s != `("1" "2" "3")` || gotA["b"] != nil {
		t.Fatalf("poll of a returned %v", gotA)
	}
	gotB := pollUntil(t, lib, c, nil, 3)
	if s := value.Format(gotB["b"]); s != `("1" "2" "3")` {
		t.Errorf("b's messages after polling a: %s", s)
	}
}

// TestPollOrder checks that a poll lists records by partition and, within
// a partition, in offset order with none missing.
func TestPollOrder(t *testing.T) {
	t.Parallel()
	// Three brokers lead the partitions, so fetches arrive in any order.
	servers := newCluster(t, embedded.Brokers(3), embedded.Partitions(6), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t", "auto-offset-reset": "earliest", "max-poll-records": 700}))
	const n = 3000
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i] = Message{Key: fmt.Sprint(i % 17), Value: fmt.Sprint(i)}
	}
	must[int](t)(lib.Send(ctx, p, []string{"t"}, msgs))
	next := map[int32]int64{}
	for got := 0; got < n; {
		res := must[*Polled](t)(lib.Poll(ctx, c, 5*time.Second))
		recs := res.Topics[0].Records
		if len(recs) == 0 || len(recs) > 700 {
			t.Fatalf("poll returned %d records (max-poll-records 700)", len(recs))
		}
		for i, r := range recs {
			if i > 0 && r.Partition() < recs[i-1].Partition() {
				t.Fatalf("partition %d after %d", r.Partition(), recs[i-1].Partition())
			}
			if r.Offset() != next[r.Partition()] {
				t.Fatalf("partition %d: offset %d, want %d", r.Partition(), r.Offset(), next[r.Partition()])
			}
			next[r.Partition()]++
		}
		got += len(recs)
	}
}

// TestIsolationLevel checks "isolation-level": a read_committed consumer
// does not see a transaction's records until it commits; a
// read_uncommitted one sees them at once.
func TestIsolationLevel(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	cfg := map[string]any{"servers": servers, "topics": "t", "auto-offset-reset": "earliest"}
	dirty := must[string](t)(lib.Create(testCtx(t), Consumer, cfg))
	cfg["isolation-level"] = "read_committed"
	clean := must[string](t)(lib.Create(testCtx(t), Consumer, cfg))

	txn, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(servers, ",")...), kgo.TransactionalID("tx"), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	ctx := testCtx(t)
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, kgo.StringRecord("pending")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if got := value.Format(pollUntil(t, lib, dirty, nil, 1)["t"]); got != `("pending")` {
		t.Errorf("read_uncommitted got %s", got)
	}
	if got := value.Format(must[*Polled](t)(lib.Poll(ctx, clean, 300*time.Millisecond)).List()); got != `("t" => ())` {
		t.Errorf("read_committed saw an open transaction: %s", got)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if got := value.Format(pollUntil(t, lib, clean, nil, 1)["t"]); got != `("pending")` {
		t.Errorf("read_committed after the commit got %s", got)
	}
}

// pollValues polls consumer c, 1 s at a time, until n values came (in
// the order polls return them), or fails the test after 10 s and returns
// what came. A poll's error goes to onErr; with a nil onErr it fails the
// test.
func pollValues(t *testing.T, lib *Library, c string, n int, onErr func(error)) []string {
	t.Helper()
	ctx := testCtx(t)
	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n {
		if time.Now().After(deadline) {
			t.Errorf("polled %q, want %d values", got, n)
			return got
		}
		res, err := lib.Poll(ctx, c, time.Second)
		if err != nil {
			if onErr == nil {
				t.Errorf("poll: %v", err)
				return got
			}
			onErr(err)
			// Such a poll may fail without waiting: pace the next.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		got = append(got, polledValues(res)...)
	}
	return got
}

// polledValues returns the values of a poll's records.
func polledValues(res *Polled) []string {
	var out []string
	if res != nil {
		for _, tr := range res.Topics {
			for _, r := range tr.Records {
				out = append(out, r.Value().(string))
			}
		}
	}
	return out
}

// TestPollKeepsErrorWithRecords checks that an error the client reports in
// the same fetch as records is not dropped: the records come first, and
// the next poll fails with the error, naming its partition.
func TestPollKeepsErrorWithRecords(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.NoAutoCreate(), embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t"}))
	h, err := lib.acquire(c, Consumer)
	if err != nil {
		t.Fatal(err)
	}
	// What a PollRecords may return: records of partition 0, and an error
	// of partition 1 that kgo reports once.
	fetched := kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: "t", Partitions: []kgo.FetchPartition{
		{Partition: 0, Records: []*kgo.Record{{Topic: "t", Partition: 0, Offset: 7, Value: []byte("v")}}},
		{Partition: 1, Err: kerr.TopicAuthorizationFailed},
	}}}}}
	recs, err := h.cons.take(fetched, nil, nil)
	h.calls.Done()
	if err != nil || len(recs) != 1 || len(recs[0].recs) != 1 {
		t.Fatalf("take: %v records, error %v; want the one record and no error yet", recs, err)
	}
	_, err = lib.Poll(ctx, c, time.Second)
	if !errors.Is(err, kerr.TopicAuthorizationFailed) || ErrorType(err) != "KafkaError" || !strings.Contains(err.Error(), `topic "t" partition 1`) {
		t.Errorf("the next poll: %v (%s); want the held TOPIC_AUTHORIZATION_FAILED of partition 1", err, ErrorType(err))
	}
	if _, err := lib.Poll(ctx, c, 100*time.Millisecond); err != nil {
		t.Errorf("the poll after: %v; want the error reported once", err)
	}
}
