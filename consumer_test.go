package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSubscribeIsDeterministic repeats subscribe -> send -> poll on fresh
// topics with the default "latest" reset: not one message may be missed.
func TestSubscribeIsDeterministic(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := newLib(t)
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	const rounds = 60
	for i := range rounds {
		topic := fmt.Sprintf("fresh-%d", i)
		c := mustCall(t, lib, "kafka-create", "consumer", servers)
		if i%2 == 0 {
			mustCall(t, lib, "kafka-subscribe", c, topic)
		} else { // the three-argument poll subscribes too
			if s := Format(mustCall(t, lib, "kafka-poll", c, topic, 0)); s != fmt.Sprintf("(%q => ())", topic) {
				t.Fatalf("round %d: first poll %s", i, s)
			}
		}
		mustCall(t, lib, "kafka-send", p, topic, fmt.Sprintf("m%d", i))
		got := pollUntil(t, lib, c.(string), nil, 1)
		if s := Format(got[topic]); s != fmt.Sprintf(`("m%d")`, i) {
			t.Fatalf("round %d: got %s", i, s)
		}
		mustCall(t, lib, "kafka-destroy", c)
	}
}

// TestSubscribeLatestSkipsOlder checks the other half of "latest": what
// was in a topic before subscribing is not delivered.
func TestSubscribeLatestSkipsOlder(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := newLib(t)
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	mustCall(t, lib, "kafka-send", p, "t", []any{"old1", "old2"})
	c := mustCall(t, lib, "kafka-create", "consumer", servers)
	mustCall(t, lib, "kafka-subscribe", c, "t")
	mustCall(t, lib, "kafka-send", p, "t", "new")
	got := pollUntil(t, lib, c.(string), nil, 1)
	if s := Format(got["t"]); s != `("new")` {
		t.Errorf("got %s, want only the message sent after subscribing", s)
	}
	if s := Format(mustCall(t, lib, "kafka-poll", c, 200)); s != `("t" => ())` {
		t.Errorf("then %s", s)
	}
}

func TestPollRecordsFormat(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	c := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "poll-format": "records", "auto-offset-reset": "earliest"})
	mustCall(t, lib, "kafka-send", p, "t", bplList(t, nv{"k", "v"}), nv{"headers", map[string]any{"h1": "x", "h2": 5}}, nv{"timestamp", 1700000000123})
	got := pollUntil(t, lib, c.(string), []string{"t"}, 1)
	want := `(("topic" => "t" "partition" => 0 "offset" => 0 "timestamp" => 1700000000123 "key" => "k" "value" => "v" "headers" => ("h1" => "x" "h2" => "5")))`
	if s := Format(got["t"]); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

// TestPollUndecodable checks that a message the deserializer cannot read is
// delivered with its position and the reason, and does not stall the
// messages after it.
func TestPollUndecodable(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("nums")).Servers()
	lib := newLib(t)
	p := mustCall(t, lib, "kafka-create", "producer", servers) // String serializer
	c := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "value-deserializer": "Integer", "auto-offset-reset": "earliest"})
	ip := mustCall(t, lib, "kafka-create", "producer", map[string]any{"servers": servers, "value-serializer": "Integer"})
	mustCall(t, lib, "kafka-send", ip, "nums", 7)
	mustCall(t, lib, "kafka-send", p, "nums", "abc")
	mustCall(t, lib, "kafka-send", ip, "nums", 8)
	got := pollUntil(t, lib, c.(string), []string{"nums"}, 3)["nums"]
	if got.At(0) != int64(7) || got.At(2) != int64(8) {
		t.Fatalf("good messages around the bad one: %s", Format(got))
	}
	bad, ok := got.At(1).(*List)
	if !ok {
		t.Fatalf("bad message is %s, want a record list", Format(got.At(1)))
	}
	for name, want := range map[string]any{"topic": "nums", "partition": int64(0), "offset": int64(1), "value": []byte("abc")} {
		if v, _ := bad.Get(name); !equalValues(v, want) {
			t.Errorf("bad message %q = %s, want %s", name, Format(v), Format(want))
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
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	c := mustCall(t, lib, "kafka-create", "consumer", servers)
	mustCall(t, lib, "kafka-subscribe", c, []any{"a", "b"})
	mustCall(t, lib, "kafka-send", p, []any{"a", "b"}, []any{"1", "2", "3"})
	gotA := pollUntil(t, lib, c.(string), []string{"a"}, 3)
	if s := Format(gotA["a"]); s != `("1" "2" "3")` || gotA["b"] != nil {
		t.Fatalf("poll of a returned %v", gotA)
	}
	gotB := pollUntil(t, lib, c.(string), nil, 3)
	if s := Format(gotB["b"]); s != `("1" "2" "3")` {
		t.Errorf("b's messages after polling a: %s", s)
	}
}

func TestSubscribeUnsubscribe(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := newLib(t)
	c := mustCall(t, lib, "kafka-create", "consumer", servers)
	steps := []struct {
		fn   string
		args []any
		want string
	}{
		{"kafka-subscribe", []any{[]any{"b", "a"}}, `("a" "b")`},
		{"kafka-subscribe", []any{[]any{"c", "b"}}, `("b" "c")`},
		{"kafka-unsubscribe", []any{"b"}, `("c")`},
		{"kafka-unsubscribe", []any{"never"}, `("c")`},
		{"kafka-poll", []any{"d", 0}, `("d" => ())`},
		{"kafka-poll", []any{0}, `("c" => () "d" => ())`},
		{"kafka-unsubscribe", nil, `()`},
		{"kafka-subscribe", []any{[]any{"x"}}, `("x")`},
		{"kafka-subscribe", []any{[]any{}}, `()`},
	}
	for _, s := range steps {
		got := mustCall(t, lib, s.fn, append([]any{c}, s.args...)...)
		if Format(got) != s.want {
			t.Errorf("%s %v = %s, want %s", s.fn, s.args, Format(got), s.want)
		}
	}
}

// TestGroupSharesWork checks that consumers of one group split a topic's
// partitions: every message is delivered exactly once among them.
func TestGroupSharesWork(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(4), embedded.Topics("work")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	cfg := map[string]any{"servers": servers, "group": "workers", "topics": "work", "auto-offset-reset": "earliest"}
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
			cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "auto-offset-reset": "earliest", "enable-auto-commit": auto}
			p := mustCall(t, lib, "kafka-create", "producer", servers)
			mustCall(t, lib, "kafka-send", p, "t", []any{"1", "2", "3"})

			c := mustCall(t, lib, "kafka-create", "consumer", cfg)
			pollUntil(t, lib, c.(string), nil, 3)
			if !auto {
				mustCall(t, lib, "kafka-commit", c)
			}
			mustCall(t, lib, "kafka-destroy", c)

			mustCall(t, lib, "kafka-send", p, "t", []any{"4", "5"})
			c = mustCall(t, lib, "kafka-create", "consumer", cfg)
			got := pollUntil(t, lib, c.(string), nil, 2)
			if s := Format(got["t"]); s != `("4" "5")` {
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
	cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "auto-offset-reset": "earliest", "auto-commit": false}
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	mustCall(t, lib, "kafka-send", p, "t", []any{"1", "2"})
	c := mustCall(t, lib, "kafka-create", "consumer", cfg)
	pollUntil(t, lib, c.(string), nil, 2)
	mustCall(t, lib, "kafka-destroy", c)
	c = mustCall(t, lib, "kafka-create", "consumer", cfg)
	if s := Format(pollUntil(t, lib, c.(string), nil, 2)["t"]); s != `("1" "2")` {
		t.Errorf("got %s", s)
	}
}

func TestSeek(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	var msgs []Message
	for i := range 10 {
		msgs = append(msgs, Message{Value: fmt.Sprint(i), Partition: new(int32(i % 2)), Timestamp: time.UnixMilli(int64(1000 * (i + 1)))})
	}
	must[int](t)(lib.Send(ctx, p, []string{"t"}, msgs))

	values := func(c string, want int) []string {
		var out []string
		for _, m := range pollUntil(t, lib, c, nil, want)["t"].Values() {
			out = append(out, m.(string))
		}
		slices.Sort(out)
		return out
	}

	// A seek right after subscribing waits for the assignment.
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t"}))
	if err := lib.Seek(ctx, c, "t", SeekBeginning()); err != nil {
		t.Fatal(err)
	}
	if got := values(c, 10); !slices.Equal(got, strings.Fields("0 1 2 3 4 5 6 7 8 9")) {
		t.Fatalf("from the beginning: %v", got)
	}
	// Now owned partitions move at once.
	mustCall(t, lib, "kafka-seek", c, "t", 3, nv{"partition", 1}) // partition 1 holds 1 3 5 7 9 at offsets 0..4
	if got := values(c, 2); !slices.Equal(got, []string{"7", "9"}) {
		t.Errorf("offset 3 of partition 1: %v", got)
	}
	mustCall(t, lib, "kafka-seek", c, "t", map[string]any{"timestamp": 8500})
	if got := values(c, 2); !slices.Equal(got, []string{"8", "9"}) {
		t.Errorf("from timestamp 8500: %v", got)
	}
	mustCall(t, lib, "kafka-seek", c, "t", "end")
	if s := Format(mustCall(t, lib, "kafka-poll", c, 200)); s != `("t" => ())` {
		t.Errorf("after seeking to the end: %s", s)
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
	dirty := mustCall(t, lib, "kafka-create", "consumer", cfg)
	cfg["isolation-level"] = "read_committed"
	clean := mustCall(t, lib, "kafka-create", "consumer", cfg)

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
	if got := Format(pollUntil(t, lib, dirty.(string), nil, 1)["t"]); got != `("pending")` {
		t.Errorf("read_uncommitted got %s", got)
	}
	if got := Format(mustCall(t, lib, "kafka-poll", clean, 300)); got != `("t" => ())` {
		t.Errorf("read_committed saw an open transaction: %s", got)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if got := Format(pollUntil(t, lib, clean.(string), nil, 1)["t"]); got != `("pending")` {
		t.Errorf("read_committed after the commit got %s", got)
	}
}

// checkNoOffset checks that err is a poll's error for partitions with no
// committed offset under auto-offset-reset "none", naming exactly the
// partitions want among the topic's first partitions.
func checkNoOffset(t *testing.T, what string, err error, topic string, partitions int32, want ...int32) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error; want one saying partitions %v have no committed offset", what, want)
		return
	}
	msg := err.Error()
	if !errors.Is(err, errKafka) || ErrorType(err) != "KafkaError" || !strings.HasPrefix(msg, "kafka-poll: ") || !strings.Contains(msg, "no prior committed offset") {
		t.Errorf("%s: %v (%s); want a KafkaError of kafka-poll saying there is no prior committed offset", what, err, ErrorType(err))
	}
	for p := range partitions {
		name := fmt.Sprintf("topic %q partition %d", topic, p)
		if named := strings.Contains(msg, name); named != slices.Contains(want, p) {
			t.Errorf("%s: %v; names %s: %v, want %v", what, err, name, named, !named)
		}
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

// TestOffsetResetNone checks auto-offset-reset "none" in a group with no
// committed offset, as Java's consumer behaves: every poll fails, naming
// the partition, until a seek gives it a position; then it reads from
// there, and what it commits is where the group's next consumer resumes.
func TestOffsetResetNone(t *testing.T) {
	// Not parallel: a poll that has nothing to wait for must end within 2 s, which a loaded machine could stretch.
	servers := newCluster(t, embedded.NoAutoCreate(), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send := func(v string) { must[int](t)(lib.Send(ctx, p, []string{"t"}, []Message{{Value: v}})) }
	cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "auto-offset-reset": "none", "allow-auto-create-topics": false, "enable-auto-commit": false}
	send("before")
	c := must[string](t)(lib.Create(ctx, Consumer, cfg))

	// The first poll fails as soon as the group has assigned the
	// partition, not when its timeout ends.
	start := time.Now()
	res, err := lib.Poll(ctx, c, 15*time.Second)
	checkNoOffset(t, "first poll", err, "t", 1, 0)
	if res != nil && res.Len() > 0 {
		t.Errorf("first poll returned %d records", res.Len())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("first poll took %v", d)
	}

	// So does every poll until a seek, at once rather than after its
	// timeout; a message sent meanwhile does not come.
	send("after")
	for i := range 3 {
		start := time.Now()
		res, err := lib.Poll(ctx, c, 5*time.Second)
		checkNoOffset(t, fmt.Sprintf("poll %d after the first", i+1), err, "t", 1, 0)
		if res != nil && res.Len() > 0 {
			t.Errorf("poll %d after the first returned %d records", i+1, res.Len())
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("poll %d after the first took %v: it has nothing to wait for", i+1, d)
		}
	}
	if _, err := call(t, lib, "kafka-poll", c, 1000); err == nil || ErrorType(err) != "KafkaError" {
		t.Errorf("BPL kafka-poll: %v (%s), want a KafkaError", err, ErrorType(err))
	}

	// A seek to the beginning gives it a position: both messages come,
	// in order, and then nothing and no error.
	if err := lib.Seek(ctx, c, "t", SeekBeginning()); err != nil {
		t.Fatal(err)
	}
	if got := pollValues(t, lib, c, 2, nil); !slices.Equal(got, []string{"before", "after"}) {
		t.Errorf("after seeking to the beginning: %q", got)
	}
	if res, err := lib.Poll(ctx, c, 200*time.Millisecond); err != nil {
		t.Errorf("then %v; want no error", err)
	} else if res.Len() > 0 {
		t.Errorf("then %d records; want none", res.Len())
	}

	// Committed, the group's next consumer resumes there, without error.
	must[struct{}](t)(struct{}{}, lib.Commit(ctx, c))
	must[bool](t)(lib.Destroy(ctx, c))
	send("third")
	c = must[string](t)(lib.Create(ctx, Consumer, cfg))
	if got := pollValues(t, lib, c, 1, nil); !slices.Equal(got, []string{"third"}) {
		t.Errorf("the next consumer of the group: %q", got)
	}
	if res, err := lib.Poll(ctx, c, 200*time.Millisecond); err != nil || res.Len() > 0 {
		t.Errorf("then %v, %v; want nothing more", polledValues(res), err)
	}
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

// TestOffsetResetNoneMixed checks auto-offset-reset "none" when one
// partition has a committed offset and the other none: the first is read
// as usual, never held up by the second, whose error polls report when
// they have no records to return, until a seek gives it a position.
func TestOffsetResetNoneMixed(t *testing.T) {
	// Not parallel: a poll that has nothing to wait for must end within 2 s, which a loaded machine could stretch.
	servers := newCluster(t, embedded.NoAutoCreate(), embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send := func(part int32, v string) {
		must[int](t)(lib.Send(ctx, p, []string{"t"}, []Message{{Value: v, Partition: &part}}))
	}
	cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "allow-auto-create-topics": false, "enable-auto-commit": false}

	// A first consumer of the group commits partition 0 only: partition 1
	// has nothing yet.
	send(0, "p0-a")
	cfg["auto-offset-reset"] = "earliest"
	a := must[string](t)(lib.Create(ctx, Consumer, cfg))
	if got := pollValues(t, lib, a, 1, nil); !slices.Equal(got, []string{"p0-a"}) {
		t.Fatalf("first consumer: %q", got)
	}
	must[struct{}](t)(struct{}{}, lib.Commit(ctx, a))
	must[bool](t)(lib.Destroy(ctx, a))

	send(1, "p1-a")
	send(0, "p0-b")
	cfg["auto-offset-reset"] = "none"
	c := must[string](t)(lib.Create(ctx, Consumer, cfg))
	only1 := func(what string) func(error) {
		return func(err error) { checkNoOffset(t, what, err, "t", 2, 1) }
	}

	// Partition 0 is read from its committed offset; polls may fail
	// meanwhile, naming partition 1 only.
	if got := pollValues(t, lib, c, 1, only1("reading partition 0")); !slices.Equal(got, []string{"p0-b"}) {
		t.Errorf("partition 0 from its committed offset: %q", got)
	}

	// With partition 0 read, a poll fails at once, naming partition 1.
	start := time.Now()
	res, err := lib.Poll(ctx, c, 5*time.Second)
	checkNoOffset(t, "poll with partition 0 read", err, "t", 2, 1)
	if got := polledValues(res); got != nil {
		t.Errorf("poll with partition 0 read: %q", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("poll with partition 0 read took %v: it has nothing to wait for", d)
	}

	// Partition 0 is not held up by partition 1.
	send(0, "p0-c")
	if got := pollValues(t, lib, c, 1, only1("reading partition 0 later")); !slices.Equal(got, []string{"p0-c"}) {
		t.Errorf("partition 0 later: %q", got)
	}

	// A seek gives partition 1 a position; then polls are quiet.
	if err := lib.Seek(ctx, c, "t", SeekBeginning(), 1); err != nil {
		t.Fatal(err)
	}
	if got := pollValues(t, lib, c, 1, nil); !slices.Equal(got, []string{"p1-a"}) {
		t.Errorf("partition 1 after a seek: %q", got)
	}
	if res, err := lib.Poll(ctx, c, 300*time.Millisecond); err != nil || res.Len() > 0 {
		t.Errorf("then %q, %v; want nothing and no error", polledValues(res), err)
	}

	// Committed, the group's next consumer reads both partitions on,
	// without error.
	must[struct{}](t)(struct{}{}, lib.Commit(ctx, c))
	must[bool](t)(lib.Destroy(ctx, c))
	send(0, "p0-d")
	send(1, "p1-b")
	c = must[string](t)(lib.Create(ctx, Consumer, cfg))
	got := pollValues(t, lib, c, 2, nil)
	slices.Sort(got)
	if !slices.Equal(got, []string{"p0-d", "p1-b"}) {
		t.Errorf("the next consumer of the group: %q", got)
	}
	if res, err := lib.Poll(ctx, c, 200*time.Millisecond); err != nil || res.Len() > 0 {
		t.Errorf("then %q, %v; want nothing more", polledValues(res), err)
	}
}

// TestSeekNotReplayed checks that a seek of every partition, made while
// the consumer owns some of them, is not applied again when the group
// rebalances: when the other member leaves, its partitions resume at its
// committed offsets, and the sought ones are not moved back. (Auto-commit
// is on, so the rebalance commits what a polled: with it off, what a
// polled but did not commit may come again after a rebalance, as with
// Java's consumer.)
func TestSeekNotReplayed(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.NoAutoCreate(), embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send := func(prefix string) {
		t.Helper()
		must[int](t)(lib.Send(ctx, p, []string{"t"}, []Message{
			{Value: prefix + "0", Partition: new(int32(0))}, {Value: prefix + "1", Partition: new(int32(1))},
		}))
	}
	cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "auto-offset-reset": "earliest", "auto-commit": true}
	a := must[string](t)(lib.Create(ctx, Consumer, cfg))
	b := must[string](t)(lib.Create(ctx, Consumer, cfg))
	waitAssigned(t, lib, a, b) // one partition each
	send("x")
	for _, c := range []string{a, b} {
		if got := pollValues(t, lib, c, 1, nil); len(got) != 1 {
			t.Fatalf("%s polled %q, want its partition's one message", c, got)
		}
		if err := lib.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// a reads its partition again from the beginning.
	if err := lib.Seek(ctx, a, "t", SeekBeginning()); err != nil {
		t.Fatal(err)
	}
	if got := pollValues(t, lib, a, 1, nil); len(got) != 1 {
		t.Fatalf("after the seek a polled %q, want its partition's message again", got)
	}
	if err := lib.Commit(ctx, a); err != nil {
		t.Fatal(err)
	}
	// b leaves; a gets both partitions and must read only what is new.
	if _, err := lib.Destroy(ctx, b); err != nil {
		t.Fatal(err)
	}
	send("y")
	got := pollValues(t, lib, a, 2, nil)
	slices.Sort(got)
	if !slices.Equal(got, []string{"y0", "y1"}) {
		t.Errorf("after the rebalance a polled %q, want only the new y0 y1 (the old seek applied again?)", got)
	}
	if res, err := lib.Poll(ctx, a, 500*time.Millisecond); err != nil || res.Len() != 0 {
		t.Errorf("then a polled %v (%v), want nothing", polledValues(res), err)
	}
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
	recs, err := h.cons.take(fetched, nil)
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
		return Format(v)
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

// TestSeekPastEnd checks a seek beyond a partition's end: the partition
// resets to its end (auto-offset-reset "latest"), and a message sent then
// comes in the next poll. kgo lets a fetch wait 5 s for data, and the
// partition only joins the next fetch, so it used to come seconds late,
// often after a 3 s poll; the fetch wait is now Java's 500 ms.
func TestSeekPastEnd(t *testing.T) {
	// Not parallel: the message must come within one 3 s poll, which a loaded machine could stretch.
	servers := newCluster(t, embedded.Partitions(4), embedded.Topics("sk")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "sk"}))
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	must[*Polled](t)(lib.Poll(ctx, c, 500*time.Millisecond))
	if err := lib.Seek(ctx, c, "sk", SeekOffset(100), 2); err != nil {
		t.Fatal(err)
	}
	if res := must[*Polled](t)(lib.Poll(ctx, c, time.Second)); res.Len() != 0 {
		t.Fatalf("polled %v from an empty topic", polledValues(res))
	}
	two := int32(2)
	must[int](t)(lib.Send(ctx, p, []string{"sk"}, []Message{{Value: "late", Partition: &two}}))
	if got := polledValues(must[*Polled](t)(lib.Poll(ctx, c, 3*time.Second))); !slices.Equal(got, []string{"late"}) {
		t.Errorf("the poll after the send got %q, want [late]", got)
	}
}

// TestSeekMissingPartition checks that seeking a partition the topic does
// not have fails, naming it, instead of waiting for ever for an
// assignment that cannot come; a topic that does not exist yet may still
// be sought.
func TestSeekMissingPartition(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(4), embedded.Topics("sk")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": "g", "topics": "sk"}))
	err := lib.Seek(ctx, c, "sk", SeekOffset(0), 9)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), `kafka-seek: topic "sk" has 4 partitions (0 to 3); partition 9 does not exist`) {
		t.Errorf("seek of partition 9: %v", err)
	}
	if err := lib.Seek(ctx, c, "sk", SeekOffset(0), 3); err != nil {
		t.Errorf("seek of partition 3: %v", err)
	}
	if err := lib.Seek(ctx, c, "later", SeekBeginning(), 5); err != nil {
		t.Errorf("seek of a topic not created yet: %v", err)
	}
}
