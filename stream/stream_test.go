package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
)

// readAll reads n records from topics, read_committed, from the beginning,
// and fails the test if they do not come within 20 s or more come.
func readAll(t *testing.T, lib *kafkabpl.Library, servers string, n int, topics ...string) []kafkabpl.Record {
	t.Helper()
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{
		"servers": servers, "topics": topics, "auto-offset-reset": "earliest",
		"isolation-level": "read_committed", "group": groupName("reader"),
	}))
	defer lib.Destroy(ctx, c)
	var recs []kafkabpl.Record
	deadline := time.Now().Add(waitLimit)
	for len(recs) < n && time.Now().Before(deadline) {
		res := must[*kafkabpl.Polled](t)(lib.Poll(ctx, c, 500*time.Millisecond))
		for _, tr := range res.Topics {
			recs = append(recs, tr.Records...)
		}
	}
	if len(recs) != n {
		t.Fatalf("read %d records from %v, want %d", len(recs), topics, n)
	}
	// Nothing more: a short poll finds no extra record.
	if res := must[*kafkabpl.Polled](t)(lib.Poll(ctx, c, 300*time.Millisecond)); res.Len() != 0 {
		t.Fatalf("read %d records more than the %d expected", res.Len(), n)
	}
	return recs
}

// streamLib is newLib with the library's log going to the test's log.
func streamLib(t *testing.T) *kafkabpl.Library {
	lib := newLib(t)
	lib.SetLogOutput(testLog{t})
	return lib
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// waitLimit bounds the stream tests' waits for a state or for records
// (see testkit.WaitLimit).
const waitLimit = testkit.WaitLimit

// waitStream waits until the stream's status satisfies ok, and returns it.
func waitStream(t *testing.T, lib *kafkabpl.Library, id string, ok func(*Status) bool) *Status {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		st := must[*Status](t)(Of(lib).Status(testCtx(t), id))
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream status never as wanted in %v: %+v, store %+v", waitLimit, st, st.Store)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func values(recs []kafkabpl.Record) string {
	var vs []string
	for i := range recs {
		vs = append(vs, fmt.Sprint(recs[i].Value()))
	}
	return strings.Join(vs, " ")
}

func sendValues(t *testing.T, lib *kafkabpl.Library, servers, topic string, msgs ...kafkabpl.Message) {
	t.Helper()
	p := must[string](t)(lib.Create(testCtx(t), kafkabpl.Producer, servers))
	if n, err := lib.Send(testCtx(t), p, []string{topic}, msgs); err != nil || n != len(msgs) {
		t.Fatalf("send: %d, %v", n, err)
	}
	lib.Destroy(testCtx(t), p)
}

// TestStreamForms runs each kind of transform, under both guarantees.
func TestStreamForms(t *testing.T) {
	t.Parallel()
	for _, g := range []Guarantee{ExactlyOnce, AtLeastOnce} {
		t.Run(g.String(), func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t).Servers()
			lib := streamLib(t)
			sendValues(t, lib, servers, "in", kafkabpl.Message{Key: "k1", Value: "a"}, kafkabpl.Message{Key: "k2", Value: "b"}, kafkabpl.Message{Value: "c"})
			upper := func(_ context.Context, r *kafkabpl.Record) ([]Output, error) {
				v := r.Value().(string)
				switch v {
				case "a": // identity with a new value, key kept
					return []Output{{Message: kafkabpl.Message{Key: r.Key(), Value: strings.ToUpper(v)}}}, nil
				case "b": // fan-out, re-keyed, one to another topic
					return []Output{
						{Message: kafkabpl.Message{Key: "x", Value: "b1"}},
						{Topic: "side", Message: kafkabpl.Message{Key: "y", Value: "b2"}},
					}, nil
				}
				return nil, nil // filter
			}
			id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "forms"},
				Spec{From: []string{"in"}, To: "out", Transform: upper, Guarantee: g}))
			st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 3 })
			out := readAll(t, lib, servers, 2, "out")
			if values(out) != "A b1" || out[0].Key() != "k1" || out[1].Key() != "x" {
				t.Errorf("out: %s keys %v %v", values(out), out[0].Key(), out[1].Key())
			}
			side := readAll(t, lib, servers, 1, "side")
			if side[0].Value() != "b2" || side[0].Key() != "y" {
				t.Errorf("side: %v %v", side[0].Key(), side[0].Value())
			}
			if st.Produced != 3 || st.Dropped != 1 || st.Skipped != 0 || st.DeadLettered != 0 || st.State != Running || st.LastError != nil {
				t.Errorf("status %+v", st)
			}
			if g == ExactlyOnce && (st.Transactions < 1 || st.Aborted != 0) {
				t.Errorf("exactly-once: %d transactions, %d aborted", st.Transactions, st.Aborted)
			}
			if ok, err := lib.Destroy(testCtx(t), id); !ok || err != nil {
				t.Errorf("destroy: %v %v", ok, err)
			}
			if _, err := Of(lib).Status(testCtx(t), id); !errors.Is(err, kafkabpl.ErrUnknownHandle) {
				t.Errorf("status after destroy: %v", err)
			}
		})
	}
}

// poisonTransform fails on "poison" and passes other values on.
func poisonTransform(_ context.Context, r *kafkabpl.Record) ([]Output, error) {
	if r.Value() == "poison" {
		return nil, errors.New("cannot digest poison")
	}
	return []Output{{Message: kafkabpl.Message{Key: r.Key(), Value: r.Value()}}}, nil
}

// TestStreamOnError puts a poison message between good ones, under each
// policy and both guarantees.
func TestStreamOnError(t *testing.T) {
	t.Parallel()
	for _, g := range []Guarantee{ExactlyOnce, AtLeastOnce} {
		for _, policy := range []OnError{StopOnError, SkipOnError, DeadLetterOnError} {
			t.Run(g.String()+"/"+policy.String(), func(t *testing.T) {
				t.Parallel()
				servers := newCluster(t, embedded.Topics("in")).Servers()
				lib := streamLib(t)
				sendValues(t, lib, servers, "in",
					kafkabpl.Message{Key: "k", Value: "one"}, kafkabpl.Message{Key: "k", Value: "two"},
					kafkabpl.Message{Key: "p", Value: "poison", Headers: []kafkabpl.Header{{Key: "origin", Value: []byte("sensor-9")}}},
					kafkabpl.Message{Key: "k", Value: "three"})
				id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "g", "max-poll-records": 1},
					Spec{From: []string{"in"}, To: "out", Transform: poisonTransform, Guarantee: g, OnError: policy}))
				switch policy {
				case StopOnError:
					st := waitStream(t, lib, id, func(st *Status) bool { return st.State == Failed })
					if st.Processed != 2 || !strings.Contains(fmt.Sprint(st.LastError), `topic "in" partition 0 offset 2: cannot digest poison`) {
						t.Errorf("stopped: %+v", st)
					}
					if got := values(readAll(t, lib, servers, 2, "out")); got != "one two" {
						t.Errorf("out %s", got)
					}
					// Nothing from the poison on is committed: a new
					// stream in the group starts at it.
					lib.Destroy(testCtx(t), id)
					id2 := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "g"},
						Spec{From: []string{"in"}, To: "out2", Transform: func(_ context.Context, r *kafkabpl.Record) ([]Output, error) {
							return []Output{{Message: kafkabpl.Message{Value: r.Value()}}}, nil
						}, Guarantee: g}))
					waitStream(t, lib, id2, func(st *Status) bool { return st.Processed == 2 })
					if got := values(readAll(t, lib, servers, 2, "out2")); got != "poison three" {
						t.Errorf("after a restart: %s", got)
					}
				case SkipOnError:
					st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 4 })
					if st.Skipped != 1 || st.Produced != 3 || st.State != Running || st.LastError == nil {
						t.Errorf("skipped: %+v", st)
					}
					if got := values(readAll(t, lib, servers, 3, "out")); got != "one two three" {
						t.Errorf("out %s", got)
					}
				case DeadLetterOnError:
					st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 4 })
					if st.DeadLettered != 1 || st.Produced != 3 || st.State != Running {
						t.Errorf("dead-lettered: %+v", st)
					}
					if got := values(readAll(t, lib, servers, 3, "out")); got != "one two three" {
						t.Errorf("out %s", got)
					}
					dl := readAll(t, lib, servers, 1, "in.dlq")[0]
					want := map[string]string{
						"origin": "sensor-9", "dlq-error": "cannot digest poison", "dlq-error-type": "KafkaError",
						"dlq-source-topic": "in", "dlq-source-partition": "0", "dlq-source-offset": "2",
					}
					got := map[string]string{}
					for _, h := range dl.Headers() {
						got[h.Key] = string(h.Value)
					}
					if fmt.Sprint(got) != fmt.Sprint(want) || string(dl.KeyBytes()) != "p" || string(dl.ValueBytes()) != "poison" {
						t.Errorf("dead letter: key %q value %q headers %v", dl.KeyBytes(), dl.ValueBytes(), got)
					}
				}
			})
		}
	}
}

// TestStreamUndecodable sends a value the stream's deserializer cannot
// read: it goes to the dead-letter topic named in the spec, with its type.
func TestStreamUndecodable(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := streamLib(t)
	ip := must[string](t)(lib.Create(testCtx(t), kafkabpl.Producer, map[string]any{"servers": servers, "value-serializer": "Integer"}))
	must[int](t)(lib.Send(testCtx(t), ip, []string{"nums"}, []kafkabpl.Message{{Value: 1}}))
	sendValues(t, lib, servers, "nums", kafkabpl.Message{Value: "xyz"})
	must[int](t)(lib.Send(testCtx(t), ip, []string{"nums"}, []kafkabpl.Message{{Value: 2}}))
	double := func(_ context.Context, r *kafkabpl.Record) ([]Output, error) {
		return []Output{{Message: kafkabpl.Message{Value: r.Value().(int64) * 2}}}, nil
	}
	id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "g", "value-deserializer": "Integer", "value-serializer": "Integer"},
		Spec{From: []string{"nums"}, To: "doubled", Transform: double, OnError: DeadLetterOnError, DeadLetterTopic: "bad-nums"}))
	waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 3 })
	dl := readAll(t, lib, servers, 1, "bad-nums")[0]
	headers := map[string]string{}
	for _, h := range dl.Headers() {
		headers[h.Key] = string(h.Value)
	}
	if string(dl.ValueBytes()) != "xyz" || headers["dlq-error-type"] != "DeserializationError" || !strings.Contains(headers["dlq-error"], "the Integer deserializer cannot decode 3 bytes") {
		t.Errorf("dead letter %q %v", dl.ValueBytes(), headers)
	}
	if got := readAll(t, lib, servers, 2, "doubled"); fmt.Sprint(got[0].ValueBytes(), got[1].ValueBytes()) != "[0 0 0 2] [0 0 0 4]" {
		t.Errorf("doubled: % x, % x", got[0].ValueBytes(), got[1].ValueBytes())
	}
}

// TestStreamOrder checks that the outputs of each input partition keep
// the input order, with several partitions and a key per partition.
func TestStreamOrder(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(4), embedded.Topics("in", "out")).Servers()
	lib := streamLib(t)
	var msgs []kafkabpl.Message
	for i := range 400 {
		msgs = append(msgs, kafkabpl.Message{Key: fmt.Sprint("k", i%8), Value: fmt.Sprint(i)})
	}
	sendValues(t, lib, servers, "in", msgs...)
	id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "g", "max-poll-records": 37},
		Spec{From: []string{"in"}, To: "out", Transform: poisonTransform}))
	waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 400 })
	last := map[any]int{}
	for i, r := range readAll(t, lib, servers, 400, "out") {
		var n int
		fmt.Sscan(r.Value().(string), &n)
		if prev, ok := last[r.Key()]; ok && n <= prev {
			t.Fatalf("record %d: key %v value %d after %d", i, r.Key(), n, prev)
		}
		last[r.Key()] = n
	}
}

// TestStreamBadSpec checks the errors of a spec or config a stream cannot
// run with.
func TestStreamBadSpec(t *testing.T) {
	t.Parallel()
	lib := streamLib(t)
	id := func(_ context.Context, r *kafkabpl.Record) ([]Output, error) { return nil, nil }
	ok := Spec{From: []string{"in"}, To: "out", Transform: id}
	for _, tt := range []struct {
		name   string
		config any
		spec   Spec
		kind   error
		msg    string
	}{
		{"no group", "127.0.0.1:1", ok, kafkabpl.ErrInvalidConfig, `a stream needs a "group"`},
		{"no from", map[string]any{"servers": "127.0.0.1:1", "group": "g"}, Spec{To: "out", Transform: id}, kafkabpl.ErrInvalidArgument, `"from": want at least one input topic`},
		{"bad to", map[string]any{"servers": "127.0.0.1:1", "group": "g"}, Spec{From: []string{"in"}, To: "a b", Transform: id}, kafkabpl.ErrInvalidArgument, `"to": invalid topic name "a b"`},
		{"no transform", map[string]any{"servers": "127.0.0.1:1", "group": "g"}, Spec{From: []string{"in"}, To: "out"}, kafkabpl.ErrInvalidArgument, `"transform": want a function`},
		{"acks 1", map[string]any{"servers": "127.0.0.1:1", "group": "g", "acks": 1}, ok, kafkabpl.ErrInvalidConfig, `exactly-once stream needs "acks" "all"`},
	} {
		_, err := Of(lib).Start(testCtx(t), tt.config, tt.spec)
		if !errors.Is(err, tt.kind) || !strings.Contains(fmt.Sprint(err), tt.msg) || !strings.HasPrefix(fmt.Sprint(err), "kafka-stream: ") {
			t.Errorf("%s: %v, want %v containing %q", tt.name, err, tt.kind, tt.msg)
		}
	}
	if len(Of(lib).IDs()) != 0 {
		t.Errorf("failed starts left streams: %v", Of(lib).IDs())
	}
}

// TestStreamTransactionTimedOut checks that a stream goes on, exactly once,
// after the brokers abort its transaction: a transform slower than the
// transaction timeout makes the broker abort the transaction and bump the
// producer's epoch, so the batch cannot commit. The stream must
// re-initialize its producer, read the batch again from the committed
// offsets and write each output once.
func TestStreamTransactionTimedOut(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := streamLib(t)
	sendValues(t, lib, servers, "in", kafkabpl.Message{Value: "a"}, kafkabpl.Message{Value: "b"}, kafkabpl.Message{Value: "c"}, kafkabpl.Message{Value: "d"})
	var slowOnce atomic.Bool
	upper := func(_ context.Context, r *kafkabpl.Record) ([]Output, error) {
		v := r.Value().(string)
		if v == "c" && slowOnce.CompareAndSwap(false, true) {
			time.Sleep(2500 * time.Millisecond) // past the 1 s transaction timeout
		}
		return []Output{{Message: kafkabpl.Message{Value: strings.ToUpper(v)}}}, nil
	}
	id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "timed-out", "transaction-timeout": 1000},
		Spec{From: []string{"in"}, To: "out", Transform: upper}))
	st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 4 || st.State != Running })
	if st.State != Running || st.Reinits < 1 || st.Aborted < 1 {
		t.Fatalf("status %+v: want running, after at least one abort and one producer re-initialized", st)
	}
	if out := values(readAll(t, lib, servers, 4, "out")); out != "A B C D" {
		t.Errorf("read_committed out: %s, want A B C D, each once", out)
	}
	if ok, err := lib.Destroy(testCtx(t), id); !ok || err != nil {
		t.Errorf("destroy: %v %v", ok, err)
	}
}

// TestStreamBatchAdapts checks the batch size's rule (see batchFirst):
// full quick batches double it up to batchMost, a slow one halves it down
// to 1, a short one or one between leaves it, and a configured
// "max-poll-records" is kept whatever the batches take.
func TestStreamBatchAdapts(t *testing.T) {
	s := &stream{cfg: testConfig(t, map[string]any{"servers": "127.0.0.1:1"})}
	want := func(n int, what string) {
		t.Helper()
		if got := s.batchSize(); got != n {
			t.Fatalf("%s: batch size %d, want %d", what, got, n)
		}
	}
	want(batchFirst, "at first")
	s.batchTook(batchFirst, time.Millisecond)
	want(2*batchFirst, "after a full quick batch")
	s.batchTook(10, time.Millisecond)
	want(2*batchFirst, "after a short batch")
	s.batchTook(2*batchFirst, batchQuick+time.Millisecond)
	want(2*batchFirst, "after a full batch between quick and slow")
	for range 10 {
		s.batchTook(s.batchSize(), time.Millisecond)
	}
	want(batchMost, "after many full quick batches")
	for range 20 {
		s.batchTook(3, batchSlow+time.Millisecond)
	}
	want(1, "after many slow batches")
	s.cfg = testConfig(t, map[string]any{"servers": "127.0.0.1:1", "max-poll-records": 7})
	s.batchTook(1, time.Millisecond)
	want(7, "with max-poll-records given")
}
