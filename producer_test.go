package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/murmur2"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// javaPartition is the partition Java's default partitioner picks for a key.
func javaPartition(key string, partitions int) int32 {
	return murmur2.Partition([]byte(key), partitions)
}

// TestKeysLandLikeJava checks that keyed messages go to the partition
// Java's client would choose, and that the same key always goes to the
// same partition.
func TestKeysLandLikeJava(t *testing.T) {
	t.Parallel()
	const parts = 7
	servers := newCluster(t, embedded.Partitions(parts), embedded.Topics("keyed")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "poll-format": "records", "auto-offset-reset": "earliest", "topics": "keyed"}))
	var msgs []Message
	for i := range 100 {
		msgs = append(msgs, Message{Key: fmt.Sprintf("sensor-%d", i%25), Value: fmt.Sprint(i)})
	}
	send(t, lib, p, []string{"keyed"}, msgs...)
	got := pollUntil(t, lib, c, nil, 100)["keyed"]
	for _, r := range got.Values() {
		rec := r.(*value.List)
		key, _ := rec.Get("key")
		part, _ := rec.Get("partition")
		if want := int64(javaPartition(key.(string), parts)); part != want {
			t.Errorf("key %q in partition %v, Java's partitioner picks %d", key, part, want)
		}
	}
}

func TestPartitionChoice(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(3), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "poll-format": "records", "auto-offset-reset": "earliest", "topics": "t"}))
	partitionsOf := func(n int) map[int64]int {
		out := map[int64]int{}
		for _, r := range pollUntil(t, lib, c, nil, n)["t"].Values() {
			p, _ := r.(*value.List).Get("partition")
			out[p.(int64)]++
		}
		return out
	}

	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send(t, lib, p, []string{"t"}, Message{Value: "a", Partition: new(int32(2))}, Message{Value: "b", Partition: new(int32(2))})
	if got := partitionsOf(2); got[2] != 2 {
		t.Errorf("partition 2 went to %v", got)
	}
	// A keyed message with an explicit partition goes there, not to its hash.
	send(t, lib, p, []string{"t"}, Message{Key: "k", Value: "v", Partition: new(int32(1))})
	if got := partitionsOf(1); got[1] != 1 {
		t.Errorf("record with partition 1 went to %v", got)
	}
	_, err := lib.Send(ctx, p, []string{"t"}, []Message{{Value: "x", Partition: new(int32(9))}})
	if err == nil || !strings.Contains(err.Error(), "delivered 0 of 1") {
		t.Errorf("partition 9 of 3: %v", err)
	}

	rr := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "partitioner": "round-robin"}))
	send(t, lib, rr, []string{"t"}, unkeyed("1", "2", "3", "4", "5", "6")...)
	if got := partitionsOf(6); got[0] != 2 || got[1] != 2 || got[2] != 2 {
		t.Errorf("round-robin spread 6 messages as %v", got)
	}

	manual := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "partitioner": "manual"}))
	if _, err := lib.Send(ctx, manual, []string{"t"}, unkeyed("x")); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), `no partition and the partitioner is "manual"`) {
		t.Errorf("manual without partition: %v", err)
	}
	send(t, lib, manual, []string{"t"}, Message{Value: "x", Partition: new(int32(0))})
	if got := partitionsOf(1); got[0] != 1 {
		t.Errorf("manual partition 0 went to %v", got)
	}
}

// TestSendBatches checks that one call with many messages is sent in a few
// produce requests, not one per message.
func TestSendBatches(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Topics("bulk"))
	kc := cluster.Kfake()
	var produces atomic.Int64
	kc.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		produces.Add(1)
		return nil, nil, false
	})
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, cluster.Servers()))
	msgs := make([]Message, 10000)
	for i := range msgs {
		msgs[i].Value = fmt.Sprintf("reading %d", i)
	}
	if n := must[int](t)(lib.Send(ctx, p, []string{"bulk"}, msgs)); n != len(msgs) {
		t.Fatalf("sent %d", n)
	}
	// One request per message would be 10000. How many records a request
	// carries depends on the machine's load (batches fill while a request
	// is in flight), so the bound is loose: ten records per request.
	if n := produces.Load(); n == 0 || n > int64(len(msgs)/10) {
		t.Errorf("10000 messages took %d produce requests", n)
	}
}

// TestSendPartialFailure checks that when some records fail the error says
// how many were delivered and why the others were not, and keeps the Kafka
// error reachable.
func TestSendPartialFailure(t *testing.T) {
	t.Parallel()
	// No auto-creation: "missing" does not exist.
	servers := newCluster(t, embedded.NoAutoCreate(), embedded.Topics("present")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "allow-auto-create-topics": false}))
	n, err := lib.Send(ctx, p, []string{"present", "missing"}, []Message{{Value: "a"}, {Value: "b"}})
	if n != 2 {
		t.Errorf("delivered %d, want 2", n)
	}
	if !errors.Is(err, kerr.UnknownTopicOrPartition) || ErrorType(err) != "KafkaError" || !strings.Contains(err.Error(), "delivered 2 of 4 records; 2 failed, the first to topic \"missing\"") {
		t.Errorf("error %v (%s)", err, ErrorType(err))
	} // Which records failed, so a retry can send exactly those.
	var se *SendError
	if !errors.As(err, &se) {
		t.Fatalf("error %T is not a *SendError", err)
	}
	var failed []string
	for _, f := range se.Failed {
		failed = append(failed, fmt.Sprint(f.Message, f.Topic, f.Unconfirmed, errors.Is(f.Err, kerr.UnknownTopicOrPartition)))
	}
	if se.Delivered != 2 || strings.Join(failed, " ") != "0missingfalse true 1missingfalse true" {
		t.Errorf("delivered %d, failed %v", se.Delivered, failed)
	}
	// BPL's view of it.
	if got := value.Format(se.ExceptionFields()); !strings.HasPrefix(got, `("delivered" => 2 "failed" => (("message" => 1 "topic" => "missing" "error" => `) || !strings.Contains(got, `("message" => 2 "topic" => "missing"`) {
		t.Errorf("exception fields %s", got)
	}
}

// TestUnreachable checks that with no broker listening every call fails in
// bounded time with a Timeout error that names the servers.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	lib := newLib(t)
	ctx := testCtx(t)
	const servers = "127.0.0.1:1" // loopback, where nothing listens
	cfg := map[string]any{"servers": servers, "send-timeout": 1000, "request-timeout": 1000}
	p := must[string](t)(lib.Create(ctx, Producer, cfg))
	c := must[string](t)(lib.Create(ctx, Consumer, cfg))
	earliest := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "request-timeout": 1000, "auto-offset-reset": "earliest", "topics": "t"}))
	checks := map[string]func() error{
		"send": func() error {
			n, err := lib.Send(ctx, p, []string{"t"}, []Message{{Value: "x"}})
			if n != 0 {
				t.Errorf("send delivered %d", n)
			}
			return err
		},
		"subscribe": func() error { _, err := lib.Subscribe(ctx, c, []string{"t"}); return err },
		"poll":      func() error { _, err := lib.Poll(ctx, earliest, 500*time.Millisecond); return err },
		"create with topics": func() error {
			_, err := lib.Create(ctx, Consumer, map[string]any{"servers": servers, "request-timeout": 1000, "topics": "t"})
			return err
		},
	}
	for name, check := range checks {
		start := time.Now()
		err := check()
		took := time.Since(start)
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), servers) {
			t.Errorf("%s: %v (%s), want a Timeout naming %s", name, err, ErrorType(err), servers)
		}
		if took > 5*time.Second {
			t.Errorf("%s took %v", name, took)
		}
	}
	// With nothing assigned a seek needs no broker: it waits for the
	// assignment, and returns at once.
	if err := lib.Seek(ctx, earliest, "t", SeekBeginning()); err != nil {
		t.Errorf("seek with nothing assigned: %v", err)
	}
	for _, id := range []string{p, c, earliest} {
		start := time.Now()
		lib.Destroy(ctx, id)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("destroy took %v", took)
		}
	}
}

// TestDestroyFinishesSends checks that destroying a producer while a send
// is in flight lets the send deliver everything first.
func TestDestroyFinishesSends(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "linger": 300}))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t"}))
	var sent int
	var sendErr error
	sendDone := make(chan struct{})
	go func() {
		defer close(sendDone)
		sent, sendErr = lib.Send(ctx, p, []string{"t"}, []Message{{Value: "last words"}})
	}()
	// Destroy while the record lingers in the producer's buffer. (Should
	// the machine be so slow that the send finished first, the test
	// still checks the message arrived.)
	waitFor(t, "the send to linger", func() bool {
		select {
		case <-sendDone:
			return true
		default:
		}
		h, err := lib.acquire(p, Producer)
		if err != nil {
			t.Fatal(err)
		}
		defer h.calls.Done()
		return h.cl.BufferedProduceRecords() > 0
	})
	if ok, err := lib.Destroy(ctx, p); !ok || err != nil {
		t.Fatalf("destroy: %v %v", ok, err)
	}
	<-sendDone
	if sent != 1 || sendErr != nil {
		t.Fatalf("send during destroy: %d %v", sent, sendErr)
	}
	if got := pollUntil(t, lib, c, nil, 1)["t"]; value.Format(got) != `("last words")` {
		t.Errorf("got %s", value.Format(got))
	}
}

// TestConcurrentUse works one producer and one consumer from many
// goroutines at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(4), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t"}))
	const senders, each = 16, 50
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for i := range each {
				if _, err := lib.Send(ctx, p, []string{"t"}, []Message{{Key: fmt.Sprint(g), Value: fmt.Sprintf("%d-%d", g, i)}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	var pollers sync.WaitGroup
	for range 4 {
		pollers.Go(func() {
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				mu.Lock()
				done := len(seen) == senders*each
				mu.Unlock()
				if done {
					return
				}
				res, err := lib.Poll(ctx, c, 100*time.Millisecond)
				if err != nil {
					t.Error(err)
					return
				}
				lib.Subscribe(ctx, c, []string{"t"}) // no change, but takes the locks
				mu.Lock()
				for _, r := range res.Topics[0].Records {
					if seen[r.Value().(string)] {
						t.Errorf("%v twice", r.Value())
					}
					seen[r.Value().(string)] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	pollers.Wait()
	if len(seen) != senders*each {
		t.Errorf("received %d of %d", len(seen), senders*each)
	}
}

// TestDestroyDuringPoll checks that a poll in flight returns at once when
// its consumer is destroyed, and that the id is unknown afterwards.
func TestDestroyDuringPoll(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t"}))
	errc := make(chan error, 1)
	go func() {
		_, err := lib.Poll(ctx, c, 30*time.Second)
		errc <- err
	}()
	waitInside(t, "(*consumerState).fetch") // the poll waits for records
	start := time.Now()
	if ok, err := lib.Destroy(ctx, c); !ok || err != nil {
		t.Fatalf("destroy: %v %v", ok, err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("poll ended with %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("poll still running 10s after destroy")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("destroy took %v", took)
	}
	if _, err := lib.Poll(ctx, c, 0); !errors.Is(err, ErrUnknownHandle) {
		t.Errorf("poll after destroy: %v", err)
	}
}

// TestCompressionRoundTrip sends and receives with every codec.
func TestCompressionRoundTrip(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		topic := "c-" + codec
		c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": topic}))
		p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "compression": codec}))
		big := strings.Repeat("compressible ", 500)
		send(t, lib, p, []string{topic}, unkeyed(big, "small")...)
		if got := pollUntil(t, lib, c, nil, 2)[topic]; got.Len() != 2 || got.At(0) != big || got.At(1) != "small" {
			t.Errorf("%s: got %d messages", codec, got.Len())
		}
	}
}

// TestAcksWithoutIdempotence sends with acks 1 and 0, which need the
// producer's idempotence off: the config turns it off, and the messages
// arrive.
func TestAcksWithoutIdempotence(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t"}))
	for _, acks := range []any{1, 0} {
		p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "acks": acks}))
		if n, err := lib.Send(ctx, p, []string{"t"}, unkeyed(fmt.Sprint("acks ", acks))); n != 1 || err != nil {
			t.Errorf("acks %v: sent %v, %v", acks, n, err)
		}
	}
	if got := value.Format(pollUntil(t, lib, c, nil, 2)["t"]); got != `("acks 1" "acks 0")` {
		t.Errorf("got %s", got)
	}
}

// TestSendWaitsForNewTopic checks that a send to a topic the broker is
// still creating succeeds. A Kafka broker lists a new topic in its metadata
// a moment before the partition's leader hosts it, and answers produce
// requests with UNKNOWN_TOPIC_OR_PARTITION meanwhile, for seconds when it
// is busy; kgo gives up after four such answers. kfake creates topics at
// once, so a control function plays the slow broker. (A topic the
// metadata does not list fails at once: TestSendPartialFailure.)
func TestSendWaitsForNewTopic(t *testing.T) {
	t.Parallel()
	// Its order check caught records handed to kgo one by one: the first
	// refused and failed before the next was buffered, which then went
	// first (see producerOnlyOpts).
	for _, autoCreate := range []bool{true, false} {
		t.Run(fmt.Sprintf("allow-auto-create-topics=%v", autoCreate), func(t *testing.T) {
			cluster := newCluster(t, embedded.Partitions(2), embedded.Topics("new"))
			const refusals = 8
			refused := refuseProduce(cluster.Kfake(), refusals)
			lib := newLib(t)
			ctx := testCtx(t)
			servers := cluster.Servers()
			p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "allow-auto-create-topics": autoCreate}))
			msgs := []Message{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}, {Key: "a", Value: "3"}, {Key: "b", Value: "4"}}
			if n, err := lib.Send(ctx, p, []string{"new"}, msgs); err != nil || n != len(msgs) {
				t.Fatalf("sent %d: %v", n, err)
			}
			if got := refused.Load(); got <= refusals {
				t.Errorf("the broker refused %d produce requests, want more than %d", got, refusals)
			}
			// Each message once, each key's messages in order.
			cons := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "auto-offset-reset": "earliest"}))
			got := map[string][]string{}
			for n := 0; n < len(msgs); {
				res := must[*Polled](t)(lib.PollTopics(ctx, cons, []string{"new"}, 5*time.Second))
				if res.Len() == 0 {
					t.Fatalf("no more records after %d: %v", n, got)
				}
				for _, r := range res.Topics[0].Records {
					got[r.Key().(string)] = append(got[r.Key().(string)], r.Value().(string))
					n++
				}
			}
			if want := map[string][]string{"a": {"1", "3"}, "b": {"2", "4"}}; !reflect.DeepEqual(got, want) {
				t.Errorf("consumed %v, want %v", got, want)
			}
		})
	}
}

// TestSendTopicNeverHosted checks the error when the brokers list a topic
// but its leader refuses records until send-timeout: a Timeout that says
// so. (kgo retries the refusals without reporting them, so the error
// cannot name them.)
func TestSendTopicNeverHosted(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Topics("stuck"))
	refused := refuseProduce(cluster.Kfake(), -1)
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": cluster.Servers(), "send-timeout": 6000}))
	n, err := lib.Send(ctx, p, []string{"stuck"}, []Message{{Value: "a"}})
	if n != 0 || !errors.Is(err, ErrTimeout) ||
		!strings.Contains(err.Error(), `topic "stuck": the brokers list it, but its leader did not take the records within 6s`) {
		t.Errorf("sent %d: %v (%s)", n, err, ErrorType(err))
	}
	if got := refused.Load(); got <= 4 {
		t.Errorf("the broker was asked %d times, want more than kgo's 4", got)
	}
}

// refuseProduce makes c answer the first n produce requests (every one,
// with n -1) with UNKNOWN_TOPIC_OR_PARTITION: see [testkit.RefuseProduce].
func refuseProduce(c *kfake.Cluster, n int32) *atomic.Int32 {
	return testkit.RefuseProduce(c, n, kerr.UnknownTopicOrPartition, nil)
}

// TestSendTooLarge checks the error for a message larger than the
// producer's max-message-bytes: a KafkaError wrapping MESSAGE_TOO_LARGE
// that names the setting and its value, since kgo words its own limit as
// if the broker had refused the record.
func TestSendTooLarge(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "max-message-bytes": 1000}))
	n, err := lib.Send(ctx, p, []string{"t"}, []Message{{Value: "small"}, {Value: strings.Repeat("x", 2000)}})
	if !errors.Is(err, kerr.MessageTooLarge) || ErrorType(err) != "KafkaError" || !strings.Contains(err.Error(), "max-message-bytes, 1000") {
		t.Errorf("sent %d: %v (%s)", n, err, ErrorType(err))
	}
}

// producerHandle returns the handle of a new producer on a new cluster
// that has topic, for tests of Send's parts.
func producerHandle(t *testing.T, topic string) *handle {
	servers := newCluster(t, embedded.Topics(topic)).Servers()
	lib := newLib(t)
	p := must[string](t)(lib.Create(testCtx(t), Producer, servers))
	h, err := lib.acquire(p, Producer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.calls.Done)
	return h
}

// TestSendResultCounts checks a Send's result when its time ran out with
// records in every state: delivered (reported without a lock), failed,
// refused as unknown and not sent again, and not reported at all. Each
// record is counted once, the refused one as failed rather than
// delivered, and the failure list agrees with the count.
func TestSendResultCounts(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	h := producerHandle(t, "t")
	recs := make([]kgo.Record, 5)
	for i := range recs {
		recs[i] = kgo.Record{Topic: "t", Partition: -1}
	}
	tl := &tally{done: make(chan struct{}), recs: recs, state: make([]atomic.Uint32, len(recs))}
	tl.left.Store(int64(len(recs)))
	tl.promise(&recs[0], nil)
	tl.promise(&recs[1], kerr.InvalidRecord)
	tl.promise(&recs[2], nil)
	tl.promise(&recs[3], kerr.UnknownTopicOrPartition)
	// recs[4] is never reported.
	n, err := tl.result(ctx, h, len(recs))
	var se *SendError
	if n != 2 || !errors.As(err, &se) || se.Delivered != 2 || len(se.Failed) != 3 {
		t.Fatalf("result: %d, %v", n, err)
	}
	var got []string
	for _, f := range se.Failed {
		got = append(got, fmt.Sprintf("%d unconfirmed=%v %v", f.Message, f.Unconfirmed, errors.Is(f.Err, kerr.UnknownTopicOrPartition)))
	}
	want := []string{"1 unconfirmed=false false", "3 unconfirmed=false true", "4 unconfirmed=true false"}
	if !slices.Equal(got, want) || !strings.Contains(err.Error(), "delivered 2 of 5 records; 2 failed") || !strings.Contains(err.Error(), "1 not confirmed") {
		t.Errorf("failures %q, want %q; error: %v", got, want, err)
	}
}

// TestSendWaitsWhileTopicIsCreated checks the other half of a first send
// to a new topic: while a Kafka broker creates a topic on first use, its
// metadata answers UNKNOWN_TOPIC_OR_PARTITION, as for a topic it will
// never create; kgo gave up after four such answers. With
// allow-auto-create-topics (the default) the producer waits, within
// send-timeout, as Java's does. kfake creates topics at once, so a control
// function plays the busy broker for the first 8 metadata requests.
func TestSendWaitsWhileTopicIsCreated(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t)
	c := cluster.Kfake()
	var answered atomic.Int32
	c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.MetadataRequest)
		if !req.AllowAutoTopicCreation || len(req.Topics) != 1 || req.Topics[0].Topic == nil || *req.Topics[0].Topic != "fresh" {
			return nil, nil, false
		}
		if answered.Add(1) > 8 {
			c.DropControl()
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		for i, addr := range cluster.Addrs() {
			host, port, _ := strings.Cut(addr, ":")
			b := kmsg.NewMetadataResponseBroker()
			b.NodeID, b.Host, b.Port = int32(i), host, int32(must[int](t)(strconv.Atoi(port)))
			resp.Brokers = append(resp.Brokers, b)
		}
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic, rt.ErrorCode = kmsg.StringPtr("fresh"), kerr.UnknownTopicOrPartition.Code
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, cluster.Servers()))
	if n, err := lib.Send(ctx, p, []string{"fresh"}, []Message{{Value: "first"}}); n != 1 || err != nil {
		t.Errorf("sent %d: %v", n, err)
	}
	if got := answered.Load(); got <= 8 {
		t.Errorf("the topic was unknown to %d metadata requests, want more than 8", got)
	}
}

// TestSendTopicNeverCreated checks the error when the producer may ask for
// a topic to be created but the broker does not create it: the send waits
// send-timeout (the broker could be creating it), then says which topic
// never appeared, as a Timeout that keeps the Kafka error reachable.
func TestSendTopicNeverCreated(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.NoAutoCreate(), embedded.Topics("present")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "send-timeout": 2000}))
	n, err := lib.Send(ctx, p, []string{"nowhere"}, []Message{{Value: "a"}})
	if n != 0 || !errors.Is(err, ErrTimeout) || !errors.Is(err, kerr.UnknownTopicOrPartition) ||
		!strings.Contains(err.Error(), `topic "nowhere" did not become available within 2s (does the broker create topics on first use?)`) {
		t.Errorf("sent %d: %v (%s)", n, err, ErrorType(err))
	}
}

// TestSendCallerDeadline checks the words of a Send cut short by its
// caller's deadline, well before send-timeout: a Timeout that says so and
// keeps context.DeadlineExceeded, not one that says the brokers were silent
// for send-timeout (they answer; the topic is never created).
func TestSendCallerDeadline(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	p := must[string](t)(lib.Create(testCtx(t), Producer, servers))
	ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
	defer cancel()
	n, err := lib.Send(ctx, p, []string{"nowhere"}, []Message{{Value: "a"}})
	if n != 0 || !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "the caller's deadline passed before send-timeout (30s)") || strings.Contains(err.Error(), "no answer") {
		t.Errorf("sent %d: %v (%s)", n, err, ErrorType(err))
	}
}

// TestSendNotTakenAtDeadline checks the words of TestSendTopicNeverHosted's
// ending without its timing: a record failed by the deadline in the
// client, to a topic the brokers answer for and list, was not taken by
// its leader; the brokers are not said to be silent.
func TestSendNotTakenAtDeadline(t *testing.T) {
	t.Parallel()
	h := producerHandle(t, "stuck")
	recs := []kgo.Record{{Topic: "stuck", Partition: -1}}
	tl := &tally{done: make(chan struct{}), recs: recs, state: make([]atomic.Uint32, 1)}
	tl.left.Store(1)
	tl.promise(&recs[0], context.DeadlineExceeded)
	n, err := tl.result(testCtx(t), h, 1)
	if n != 0 || !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), `topic "stuck": the brokers list it, but its leader did not take the records within 30s`) {
		t.Errorf("sent %d: %v", n, err)
	}
}

// TestProducerIgnoresLinger checks that linger, accepted for Java's
// configs, does not reach a producer handle's client, where it would only
// delay every Send: the client is told 0.
func TestProducerIgnoresLinger(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	p := must[string](t)(lib.Create(testCtx(t), Producer, map[string]any{"servers": servers, "linger": 5000}))
	h, err := lib.acquire(p, Producer)
	if err != nil {
		t.Fatal(err)
	}
	defer h.calls.Done()
	if got := h.cl.OptValue(kgo.ProducerLinger); got != time.Duration(0) {
		t.Errorf("the client's linger is %v, want 0", got)
	}
	if h.cfg.linger != 5*time.Second {
		t.Errorf("the config's linger is %v, want it read as 5s", h.cfg.linger)
	}
}
