//go:build unix

package main

// TestRealKafkaStream proves streams against a real Apache Kafka broker
// (startKafka's: Kafka 4.4.0, one KRaft node, with the transaction state
// log's replication factor and min.isr 1, which transactions on one
// broker need, and Kafka's 3 s initial rebalance delay). It starts a
// broker of its own, so that it runs beside TestRealKafka. Without java or
// the jars it skips, saying how to get them; with CI set it fails.
//
//   - exactly-once, dead letter: a stream (JSON in and out, 3 partitions,
//     6 keys) doubles 300 numbers, drops those ending in 7, fans the
//     multiples of 25 out to an alerts topic too, and meets a poison
//     message (text that is no JSON, with a header of its own) under
//     "dead-letter". A read_committed consumer finds each output exactly
//     once, in order per key; the dead-letter record carries the poison's
//     key, value and header and says what went wrong and where; the status
//     counts match. The stream is then destroyed (committing), 30 more
//     numbers sent, and a new stream of the group processes those only.
//   - at-least-once: an identity stream over 200 keyed text messages:
//     all of them, in order per key, duplicates counted (none expected
//     without a crash), and the status counts.
//   - killed and restarted: TestStreamCrash's restart scenario on the real
//     broker, under each guarantee: `kafkabpl run` over 20,000 keyed
//     inputs killed with SIGKILL mid-run and started again. Under
//     exactly-once this takes about a minute: the killed process's open
//     transaction holds back read_committed readers of the output until
//     the broker aborts it, at the client's transaction timeout (franz-go's
//     default 40 s, which streams keep) plus up to Kafka's 10 s sweep.
//   - store queries: TestServeStoreQueries on the real broker: two
//     kafkabpl serve processes of one group answer every key, each
//     forwarding the keys the other holds (the endpoint read back from
//     the broker's description of the group), then one is killed.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestRealKafkaStream(t *testing.T) {
	t.Parallel()
	java := needKafka(t)
	bin := buildBinary(t)
	k := startKafka(t, java)
	tests := map[string]func(*testing.T){
		"exactly-once, dead letter": func(t *testing.T) { testRealStreamExactlyOnce(t, k.servers) },
		"at-least-once":             func(t *testing.T) { testRealStreamAtLeastOnce(t, k.servers) },
		"store queries":             func(t *testing.T) { serveStoreQueries(t, bin, k.servers) }, // two serve processes, one killed
		"partitioned table":         func(t *testing.T) { testRealPartitionedTable(t, k.servers) },
	}
	for _, g := range []string{"exactly-once", "at-least-once"} {
		tests["killed and restarted/"+g] = func(t *testing.T) {
			start := time.Now()
			r := seedCrashRig(t, bin, g, []string{k.servers}, "crash-"+g+"-")
			crashRestart(t, r)
			r.checkOutput(t)
			t.Logf("took %v", time.Since(start).Round(time.Millisecond))
		}
	}
	concurrently(t, tests)
}

// logWriter writes the library's log lines to the test's log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// waitStreamStatus polls a stream's status until done says so, 60 s at
// most, and returns it.
func waitStreamStatus(t *testing.T, lib *kafkabpl.Library, id string, done func(*stream.Status) bool) *stream.Status {
	t.Helper()
	start := time.Now()
	for {
		st, err := stream.Of(lib).Status(realCtx(t), id)
		if err != nil {
			t.Fatalf("stream status: %v", err)
		}
		if done(st) {
			t.Logf("stream status after %v: %+v", time.Since(start).Round(time.Millisecond), *st)
			return st
		}
		if st.State != stream.Running || time.Since(start) > testTimeout {
			t.Fatalf("stream status after %v: %+v", time.Since(start).Round(time.Millisecond), *st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// realStreamDouble is the exactly-once transform: a JSON number n becomes
// 2n, under the input's key; n ending in 7 is dropped; a multiple of 25
// also goes to the alerts topic, as n, under key "alert".
func realStreamDouble(alerts string) stream.Transform {
	return func(_ context.Context, in *kafkabpl.Record) ([]stream.Output, error) {
		n, ok := in.Value().(int64)
		if !ok {
			return nil, fmt.Errorf("value %v is no integer", in.Value())
		}
		if n%10 == 7 {
			return nil, nil
		}
		outs := []stream.Output{{Message: kafkabpl.Message{Key: in.Key(), Value: 2 * n}}}
		if n%25 == 0 {
			outs = append(outs, stream.Output{Topic: alerts, Message: kafkabpl.Message{Key: "alert", Value: n}})
		}
		return outs, nil
	}
}

// numbers are keyed JSON numbers from..to-1, key "kN%6".
func numbers(topic string, from, to int) []*kgo.Record {
	var rs []*kgo.Record
	for n := from; n < to; n++ {
		rs = append(rs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", n%6), Value: strconv.AppendInt(nil, int64(n), 10)})
	}
	return rs
}

func testRealStreamExactlyOnce(t *testing.T, servers string) {
	const in, out, alerts, group = "eos-in", "eos-out", "eos-alerts", "eos-double"
	ctx := realCtx(t)
	addrs := []string{servers}
	adm := newAdmin(t, addrs)
	for _, topic := range []string{in, out} {
		if _, err := adm.CreateTopic(ctx, 3, 1, nil, topic); err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	// 300 numbers, the poison among them (after 150), then the stream.
	prod := newClient(t, addrs)
	if err := prod.ProduceSync(ctx, numbers(in, 0, 150)...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	poison := &kgo.Record{Topic: in, Key: []byte("k-poison"), Value: []byte("{not json"), Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("t-1")}}}
	if err := prod.ProduceSync(ctx, poison).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if err := prod.ProduceSync(ctx, numbers(in, 150, 300)...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}

	lib := newRealLib(t)
	lib.SetLogOutput(logWriter{t})
	config := map[string]any{"servers": servers, "group": group, "value-deserializer": "JSON", "value-serializer": "JSON", "max-poll-records": 50}
	spec := stream.Spec{From: []string{in}, To: out, Transform: realStreamDouble(alerts), OnError: stream.DeadLetterOnError}
	id := ok[string](t)(stream.Of(lib).Start(ctx, config, spec))
	st := waitStreamStatus(t, lib, id, func(st *stream.Status) bool { return st.Processed == 301 && st.Lag == 0 })
	// Dropped: 7, 17, ..., 297. Produced: the other 270, and the 12
	// multiples of 25 to alerts.
	if st.Produced != 282 || st.Dropped != 30 || st.DeadLettered != 1 || st.Skipped != 0 || st.Transactions < 1 || st.Aborted != 0 {
		t.Errorf("status: %+v, want produced 282, dropped 30, dead-lettered 1, skipped 0, 1 transaction or more, none aborted", *st)
	}
	where := fmt.Sprintf(`topic %q partition %d offset %d: `, in, poison.Partition, poison.Offset)
	if st.LastError == nil || !strings.HasPrefix(st.LastError.Error(), where) || value.ErrorType(st.LastError) != "DeserializationError" {
		t.Errorf("last error %v (%s), want one starting %q, a DeserializationError", st.LastError, value.ErrorType(st.LastError), where)
	}

	checkDoubled(t, readCommitted(t, ctx, addrs, out, 270), 300)
	var alerted, want []string
	for _, r := range readCommitted(t, ctx, addrs, alerts, 12) {
		alerted = append(alerted, string(r.Key)+"="+string(r.Value))
	}
	for n := 0; n < 300; n += 25 {
		want = append(want, fmt.Sprintf("alert=%d", n))
	}
	if got := sorted(alerted); fmt.Sprint(got) != fmt.Sprint(sorted(want)) {
		t.Errorf("alerts: %v, want %v, once each", got, sorted(want))
	}

	dead := readCommitted(t, ctx, addrs, in+".dlq", 1)
	if len(dead) != 1 {
		t.Fatalf("dead letters: %d, want 1", len(dead))
	}
	dl := dead[0]
	headers := map[string]string{}
	var order []string
	for _, h := range dl.Headers {
		headers[h.Key] = string(h.Value)
		order = append(order, h.Key)
	}
	wantOrder := "trace dlq-error dlq-error-type dlq-source-topic dlq-source-partition dlq-source-offset"
	if string(dl.Key) != "k-poison" || string(dl.Value) != "{not json" || strings.Join(order, " ") != wantOrder ||
		headers["trace"] != "t-1" || headers["dlq-error-type"] != "DeserializationError" ||
		!strings.Contains(headers["dlq-error"], "the JSON deserializer cannot decode 9 bytes") ||
		headers["dlq-source-topic"] != in || headers["dlq-source-partition"] != fmt.Sprint(poison.Partition) ||
		headers["dlq-source-offset"] != fmt.Sprint(poison.Offset) {
		t.Errorf("dead letter: key %q value %q headers %q %v, want the poison (partition %d offset %d) with headers %s",
			dl.Key, dl.Value, order, headers, poison.Partition, poison.Offset, wantOrder)
	}

	// Destroy commits; a new stream of the group takes up after it.
	if ok, err := lib.Destroy(ctx, id); !ok || err != nil {
		t.Fatalf("destroy: %v %v", ok, err)
	}
	if err := prod.ProduceSync(ctx, numbers(in, 300, 330)...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	id = ok[string](t)(stream.Of(lib).Start(ctx, config, spec))
	st = waitStreamStatus(t, lib, id, func(st *stream.Status) bool { return st.Processed >= 30 && st.Lag == 0 })
	// 27 outputs (307, 317, 327 dropped), and alerts for 300 and 325.
	if st.Processed != 30 || st.Produced != 29 || st.Dropped != 3 || st.DeadLettered != 0 {
		t.Errorf("restarted stream's status: %+v, want processed 30, produced 29, dropped 3", *st)
	}
	checkDoubled(t, readCommitted(t, ctx, addrs, out, 297), 330)
	if got := readCommitted(t, ctx, addrs, alerts, 14); len(got) != 14 {
		t.Errorf("%d alerts after the restart, want 14", len(got))
	}
	if n := readUncommitted(t, ctx, addrs, out, 297); n != 297 {
		t.Errorf("read_uncommitted sees %d outputs, want the 297 committed: no transaction was aborted", n)
	}
}

// checkDoubled checks the exactly-once stream's outputs for inputs
// 0..inputs-1: each 2n once, n not ending in 7, under key "kN%6", in
// order per key.
func checkDoubled(t *testing.T, recs []*kgo.Record, inputs int) {
	t.Helper()
	last := map[string]int{}
	seen := map[int]bool{}
	for _, r := range recs {
		v, err := strconv.Atoi(string(r.Value))
		n := v / 2
		if err != nil || v%2 != 0 || string(r.Key) != fmt.Sprintf("k%d", n%6) || n%10 == 7 || n >= inputs {
			t.Errorf("output %s=%s at %d/%d: not a doubled input under its key", r.Key, r.Value, r.Partition, r.Offset)
			continue
		}
		if seen[n] {
			t.Errorf("output %s=%s at %d/%d: a duplicate", r.Key, r.Value, r.Partition, r.Offset)
		}
		seen[n] = true
		if prev, ok := last[string(r.Key)]; ok && n < prev {
			t.Errorf("output %s=%s at %d/%d: after %d, out of order", r.Key, r.Value, r.Partition, r.Offset, 2*prev)
		}
		last[string(r.Key)] = n
	}
	if want := inputs - inputs/10; len(seen) != want {
		t.Errorf("%d distinct outputs, want %d", len(seen), want)
	}
}

func testRealStreamAtLeastOnce(t *testing.T, servers string) {
	const in, out, group = "alo-in", "alo-out", "alo-identity"
	ctx := realCtx(t)
	addrs := []string{servers}
	adm := newAdmin(t, addrs)
	for _, topic := range []string{in, out} {
		if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	var rs []*kgo.Record
	for i := range 200 {
		rs = append(rs, &kgo.Record{Topic: in, Key: fmt.Appendf(nil, "k%d", i%5), Value: fmt.Appendf(nil, "v%d", i)})
	}
	if err := newClient(t, addrs).ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	lib := newRealLib(t)
	lib.SetLogOutput(logWriter{t})
	identity := func(_ context.Context, in *kafkabpl.Record) ([]stream.Output, error) {
		return []stream.Output{{Message: kafkabpl.Message{Key: in.Key(), Value: in.Value()}}}, nil
	}
	id := ok[string](t)(stream.Of(lib).Start(ctx, map[string]any{"servers": servers, "group": group, "max-poll-records": 30},
		stream.Spec{From: []string{in}, To: out, Transform: identity, Guarantee: stream.AtLeastOnce}))
	st := waitStreamStatus(t, lib, id, func(st *stream.Status) bool { return st.Processed == 200 && st.Lag == 0 })
	if st.Produced != 200 || st.Dropped != 0 || st.Transactions < 1 || st.Aborted != 0 || st.LastError != nil {
		t.Errorf("status: %+v, want produced 200, 1 commit or more, none aborted, no error", *st)
	}
	recs := readCommitted(t, ctx, addrs, out, 200)
	dups := 0
	last := map[string]int{}
	seen := map[int]bool{}
	for _, r := range recs {
		var i int
		if _, err := fmt.Sscanf(string(r.Value), "v%d", &i); err != nil || string(r.Key) != fmt.Sprintf("k%d", i%5) {
			t.Errorf("output %s=%s: not an input", r.Key, r.Value)
			continue
		}
		if seen[i] {
			dups++
			continue
		}
		seen[i] = true
		if prev, ok := last[string(r.Key)]; ok && i < prev {
			t.Errorf("output %s=%s: first seen after v%d, out of order", r.Key, r.Value, prev)
		}
		last[string(r.Key)] = i
	}
	if len(seen) != 200 {
		t.Errorf("%d of the 200 inputs in the output", len(seen))
	}
	t.Logf("at-least-once: %d outputs for 200 inputs, %d duplicates", len(recs), dups)
	if ok, err := lib.Destroy(ctx, id); !ok || err != nil {
		t.Errorf("destroy: %v %v", ok, err)
	}
	if errs := stream.Of(lib).Failed(); len(errs) > 0 {
		t.Errorf("failed streams: %v", errors.Join(errs...))
	}
}
