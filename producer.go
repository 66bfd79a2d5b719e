package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Message is one message to send. The zero Message is a null value with no
// key, sent to the partition the producer's partitioner picks.
type Message struct {
	// Key is serialized by the producer's key-serializer; nil sends no key.
	// With the default partitioner, messages with the same key go to the
	// same partition, the one Java's client would pick.
	Key any
	// Value is serialized by the producer's value-serializer; nil sends a
	// null value (a tombstone on a compacted topic).
	Value any
	// Partition, when not nil, is the partition to write to, overriding the
	// partitioner. With the "manual" partitioner every message needs one.
	Partition *int32
	// Headers are sent in order; a repeated header key is kept.
	Headers []Header
	// Timestamp is the record's create time; zero means the time of
	// sending.
	Timestamp time.Time
}

// Header is a record header. Kafka header values are bytes; a nil Value is
// a null header value.
type Header struct {
	Key   string
	Value []byte
}

// Send sends every message to every topic, in order, and returns how many
// records the brokers acknowledged: len(topics) * len(messages) on success.
//
// All records are handed to the client at once and sent in batches, so a
// call with 10,000 messages costs a few round trips, not 10,000. Send
// returns when every record is acknowledged or has failed; it never blocks
// longer than the producer's send-timeout (default 30 s) or ctx.
//
// A topic the brokers are creating is waited for, within send-timeout: one
// they list but do not host yet, and, with allow-auto-create-topics on
// (the default), one they do not list yet, since a Kafka broker answers so
// while it creates a topic on first use. Hazard: so a send to a topic the
// brokers will never create (auto-creation off at the broker, a name it
// refuses) waits all of send-timeout before it fails with an [ErrTimeout]
// error naming the topic, as Java's producer waits max.block.ms. With
// allow-auto-create-topics off, the records of a topic the brokers do not
// list fail in about a second with UNKNOWN_TOPIC_OR_PARTITION, and the
// call's other records are still sent. A topic they list whose leader
// keeps refusing records fails at send-timeout with an [ErrTimeout] error
// that says so.
//
// A message the serializers cannot encode fails the call before anything
// is sent, with an [ErrInvalidArgument] error naming its position; but a
// value that does not fit its schema (the Avro serializer's) fails only
// its record, with an error naming the message and the field, and the
// call's other records are sent (the error is then a [*SendError]). A
// schema registry that cannot be asked fails the call with an
// [ErrSchemaRegistry] error naming its URL; the registry is asked within
// ctx and send-timeout too, and when either ends first the call fails
// with that context's error (a deadline's is an [ErrTimeout]). When some
// records fail at the brokers, the error says how many were delivered and
// why the others failed; it wraps [ErrTimeout] when the brokers could not
// be reached in time, or the Kafka error (see kerr) the brokers returned.
func (lib *Library) Send(ctx context.Context, id string, topics []string, messages []Message) (int, error) {
	return lib.SendEach(ctx, id, topics, len(messages), func(i int) (Message, error) { return messages[i], nil })
}

// SendEach is [Library.Send] of n messages that message(i) gives, for
// messages kept in a form of their own (a BPL list): Send asks for each
// once, in order, as it makes its record, and spares the caller a slice
// of n Messages. An error that message returns fails the call before
// anything is sent, as a message the serializers cannot encode does, and
// is the call's error, under kafka-send's name.
func (lib *Library) SendEach(ctx context.Context, id string, topics []string, n int, message func(i int) (Message, error)) (int, error) {
	msgAt := message
	h, err := lib.acquire(id, Producer)
	if err != nil {
		return 0, NewError("kafka-send", err)
	}
	defer h.calls.Done()
	sent, err := h.send(ctx, topics, n, msgAt)
	if err != nil {
		return sent, NewError("kafka-send", err)
	}
	return sent, nil
}

func (h *handle) send(ctx context.Context, topics []string, n int, msgAt func(i int) (Message, error)) (int, error) {
	for _, t := range topics {
		if err := topicname.Check(t); err != nil {
			return 0, Errorf(ErrInvalidArgument, "topics: %v", err)
		}
	}
	if len(topics) == 0 || n == 0 {
		return 0, nil
	}
	deadline := time.Now().Add(h.cfg.sendTimeout)
	ectx := ctx
	if h.cfg.keySer.NeedsRegistry() || h.cfg.valSer.NeedsRegistry() {
		// A schema serializer may ask the registry, which counts against
		// send-timeout as the brokers do.
		var cancel context.CancelFunc
		ectx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	recs, failed, err := h.records(ectx, topics, n, msgAt)
	if err != nil {
		return 0, err
	}

	// The records' deadline comes a little before the call's: once it
	// passes, kgo fails what it safely can, and the rest of the time
	// (the margin) collects those failures. (A request already on the
	// wire cannot be failed when idempotent; the call then stops waiting
	// for it.) One context serves the records; the margin's is made only
	// when a record is not delivered, which saves every successful call
	// the allocations of a second context.
	margin := min(time.Second, h.cfg.sendTimeout/10)
	rctx, cancel := context.WithDeadline(ctx, deadline.Add(-margin))
	defer cancel()
	t := &tally{done: make(chan struct{}), deadline: deadline, recs: recs, state: make([]atomic.Uint32, len(recs))}
	t.left.Store(int64(len(recs) - len(failed)))
	t.failBefore(failed)
	if h.cfg.allowAutoCreate {
		promise := t.promise // one func value: a method value in the loop allocates each time
		for i := range recs {
			if failed == nil || failed[i] == nil {
				h.cl.Produce(rctx, &recs[i], promise)
			}
		}
		select {
		case <-t.done:
		case <-rctx.Done():
		}
	} else {
		h.produceListed(rctx, t, topics)
	}
	sent, err := t.finish(ctx, h, deadline)
	if t.left.Load() == 0 {
		// kgo has reported every record, and touches none after its
		// report: the slice can serve another Send.
		putRecords(recs)
	}
	return sent, err
}

// produceListed hands t's records to kgo as send does, each topic's under
// a context of its own, and waits for them. With allow-auto-create-topics
// off, a topic the brokers do not list will not appear by itself, so
// while records are outstanding it asks the brokers every second, and
// fails the records of a topic they do not list with
// UNKNOWN_TOPIC_OR_PARTITION rather than let them wait out send-timeout
// (kgo, told to retry unknown topics, would). A topic they list but do
// not host yet is waited for: an admin may have just created it.
func (h *handle) produceListed(rctx context.Context, t *tally, topics []string) {
	ctxs := make([]context.Context, len(topics))
	cancels := make([]context.CancelCauseFunc, len(topics))
	for i := range topics {
		ctxs[i], cancels[i] = context.WithCancelCause(rctx)
		defer cancels[i](nil)
	}
	promise := t.promise
	for i := range t.recs {
		if recordState(t.state[i].Load()) == recordPending {
			h.cl.Produce(ctxs[i%len(topics)], &t.recs[i], promise) // records go message by message, each to every topic
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-rctx.Done():
			return
		case <-tick.C:
		}
		listed, err := h.listedTopics(rctx, topics)
		if err != nil {
			continue
		}
		for i, topic := range topics {
			if listed[topic] == 0 {
				cancels[i](Wrapf(ErrKafka, kerr.UnknownTopicOrPartition, "topic %q: the brokers do not list it, and allow-auto-create-topics is off", topic))
			}
		}
	}
}

// finish gives a Send's result: at once when every record is delivered,
// else once every record is reported or the call's deadline passes, ctx
// permitting. kgo fails what it can when the records' deadline passes,
// a little before the call's.
func (t *tally) finish(ctx context.Context, h *handle, deadline time.Time) (int, error) {
	if t.allDelivered() {
		return len(t.recs), nil
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	select {
	case <-t.done:
	case <-ctx.Done():
	}
	return t.result(ctx, h, len(t.recs))
}

// producerOnlyOpts are the options a Send relies on, beyond the config's.
//
// kgo retries a record refused with UNKNOWN_TOPIC_OR_PARTITION until its
// context ends, rather than failing it after four refusals: a Kafka broker
// says so of a topic it is creating on first use, and lists a new topic a
// moment before the partition's leader takes records, for longer than
// that on a busy broker. Java's producer waits for the topic up to
// max.block.ms (60 s), librdkafka up to topic.metadata.propagation.max.ms
// (30 s); a Send waits within send-timeout. Retried by kgo, a partition's
// records keep their order; failed and sent again by the caller, the
// first could be failed before the next was handed over, which then went
// first. (A topic that is not listed, with allow-auto-create-topics off,
// is failed by produceListed instead.)
//
// A Send holds all its records in memory anyway, so kgo's buffer is not
// bounded by count: a large Send is not held up handing its records over.
//
// linger is accepted for Java's configs but has no effect on a producer
// handle: a Send waits for its records, so a linger would only add to its
// time, and what one call sends is batched anyway. (A stream, whose
// outputs are flushed at commit, keeps it.) These options come after the
// config's, so they override its linger.
func producerOnlyOpts() []kgo.Opt {
	return []kgo.Opt{kgo.UnknownTopicRetries(-1), kgo.MaxBufferedRecords(math.MaxInt32), kgo.ProducerLinger(0)}
}

// tally counts the outcomes of one Send's records as kgo reports them. A
// delivery, the common case, takes no lock: its record's state is written
// atomically, and left counts down atomically. Failures, and what reads
// them, take mu.
type tally struct {
	left       atomic.Int64 // records not yet reported
	mu         sync.Mutex
	failed     int
	firstErr   error
	firstTopic string        // the topic of the record that failed first
	done       chan struct{} // closed when left reaches 0
	deadline   time.Time     // the call's own: send-timeout after it began

	// recs are the call's records, in the call's order (message by
	// message, each to every topic); state[i] is what became of recs[i],
	// and errs[i] why it failed.
	recs  []kgo.Record
	state []atomic.Uint32 // recordState
	errs  map[int]error
}

// recordState is what became of one record of a Send.
type recordState uint8

const (
	recordPending recordState = iota // not reported yet
	recordDelivered
	recordFailed
)

// index returns r's position in t.recs: kgo hands back the records Send
// gave it, which are t.recs's elements.
func (t *tally) index(r *kgo.Record) int {
	return int((uintptr(unsafe.Pointer(r)) - uintptr(unsafe.Pointer(&t.recs[0]))) / unsafe.Sizeof(t.recs[0]))
}

func (t *tally) promise(r *kgo.Record, err error) {
	if err == nil {
		t.state[t.index(r)].Store(uint32(recordDelivered))
	} else {
		if errors.Is(err, context.Canceled) {
			// produceListed gave up on the record's topic: say why.
			if cause := context.Cause(r.Context); errors.Is(cause, kerr.UnknownTopicOrPartition) {
				err = cause
			}
		}
		t.mu.Lock()
		t.fail(r, err)
		t.mu.Unlock()
	}
	if t.left.Add(-1) == 0 {
		close(t.done)
	}
}

// failBefore counts the records that failed before they were produced
// (values that do not fit their schema), by index; the first in the
// call's order is the error's first.
func (t *tally) failBefore(failed map[int]error) {
	if len(failed) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.recs {
		if err := failed[i]; err != nil {
			t.fail(&t.recs[i], err)
		}
	}
	if t.left.Load() == 0 {
		close(t.done)
	}
}

// allDelivered reports whether every record is delivered.
func (t *tally) allDelivered() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.left.Load() == 0 && t.failed == 0
}

// fail counts r as failed with err; t.mu is held.
func (t *tally) fail(r *kgo.Record, err error) {
	if t.failed++; t.firstErr == nil {
		t.firstErr, t.firstTopic = err, r.Topic
	}
	i := t.index(r)
	t.state[i].Store(uint32(recordFailed))
	if t.errs == nil {
		t.errs = map[int]error{}
	}
	t.errs[i] = err
}

// notTaken is the error of a send whose records the brokers did not take
// within send-timeout (d) although they answer and list the topic: its
// leader kept refusing them, as Kafka does for a topic it does not host
// yet, or was slow. (kgo retries refusals without reporting them, so
// which is not known.)
func notTaken(topic string, cause error, d time.Duration) error {
	return Wrapf(ErrTimeout, cause, "topic %q: the brokers list it, but its leader did not take the records within %v", topic, d)
}

// notAvailable is the error of a send that waited send-timeout for a topic
// the brokers never listed.
func notAvailable(topic string, d time.Duration) error {
	return Wrapf(ErrTimeout, kerr.UnknownTopicOrPartition, "topic %q did not become available within %v (does the broker create topics on first use?)", topic, d)
}

// listedTopics asks the brokers which of topics they list, without asking
// for any to be created, and how many partitions each has.
func (h *handle) listedTopics(ctx context.Context, topics []string) (map[string]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	resp, err := metadata(ctx, h, topics)
	if err != nil {
		return nil, err
	}
	listed := map[string]int{}
	for _, rt := range resp.Topics {
		if rt.ErrorCode == 0 && rt.Topic != nil && len(rt.Partitions) > 0 {
			listed[*rt.Topic] = len(rt.Partitions)
		}
	}
	return listed, nil
}

// result is the count delivered and, unless all were, the error saying how
// many were and why the rest were not.
func (t *tally) result(ctx context.Context, h *handle, total int) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// One look at every record's state, for the counts and the list
	// alike: deliveries may still come in while this runs.
	states := make([]recordState, len(t.state))
	delivered := 0
	for i := range t.state {
		if states[i] = recordState(t.state[i].Load()); states[i] == recordDelivered {
			delivered++
		}
	}
	if delivered == total {
		return total, nil
	}
	pending := total - delivered - t.failed // failures are counted under mu
	cause := t.firstErr
	timedOut := pending > 0 || errors.Is(cause, context.DeadlineExceeded) || errors.Is(cause, kgo.ErrRecordTimeout)
	if timedOut && !errors.Is(context.Cause(ctx), context.Canceled) {
		reached := h.net.unreachable() == nil
		if d, ok := ctx.Deadline(); ok && reached && d.Before(t.deadline) && !time.Now().Before(d) {
			// The caller's deadline came first and ended the call: the
			// brokers were not given send-timeout, so do not blame them.
			cause = Wrapf(ErrTimeout, context.DeadlineExceeded, "the caller's deadline passed before send-timeout (%v)", h.cfg.sendTimeout)
		} else {
			cause = h.net.timeoutError(h.cfg.sendTimeout, cause)
		}
		// The brokers answer: say what they said rather than blame the
		// network. A topic they do not list is not available; one they
		// list kept its records out, kgo retrying them until time ran
		// out: its leader refused them (a topic not hosted yet), or took
		// too long.
		if t.failed > 0 && reached {
			if listed, err := h.listedTopics(ctx, []string{t.firstTopic}); err == nil {
				if listed[t.firstTopic] == 0 {
					cause = notAvailable(t.firstTopic, h.cfg.sendTimeout)
				} else {
					cause = notTaken(t.firstTopic, t.firstErr, h.cfg.sendTimeout)
				}
			}
		}
	} else if cause == nil {
		cause = ctx.Err()
	}
	msg := fmt.Sprintf("delivered %d of %d records", delivered, total)
	if t.failed > 0 {
		msg += fmt.Sprintf("; %d failed, the first to topic %q", t.failed, t.firstTopic)
	}
	if pending > 0 {
		msg += fmt.Sprintf("; %d not confirmed in time (they may still arrive)", pending)
	}
	if errors.Is(cause, kerr.MessageTooLarge) {
		// kgo says so for the producer's own limit as the broker does for
		// its own: name the one the caller can change here.
		msg += fmt.Sprintf(" (a record, key and headers included, must fit in the producer's max-message-bytes, %d, and in the topic's max.message.bytes)", h.cfg.maxMessageBytes)
	}
	return delivered, &SendError{Delivered: delivered, Failed: t.failures(states, len(topicsOf(t.recs))), err: Wrapf(errorKind(cause), cause, "%s", msg)}
}

// topicsOf returns how the records of a Send go to topics: the distinct
// topics of its first message, in order.
func topicsOf(recs []kgo.Record) []string {
	var topics []string
	for i := range recs {
		if slices.Contains(topics, recs[i].Topic) {
			break
		}
		topics = append(topics, recs[i].Topic)
	}
	return topics
}

// failures lists the records that failed or were not confirmed, in the
// call's order; a message's records are nTopics in a row.
func (t *tally) failures(states []recordState, nTopics int) []SendFailure {
	var out []SendFailure
	for i, st := range states {
		if st == recordDelivered {
			continue
		}
		f := SendFailure{Message: i / nTopics, Topic: t.recs[i].Topic, Err: t.errs[i]}
		if st == recordPending {
			f.Unconfirmed = true
			f.Err = Errorf(ErrTimeout, "not confirmed within send-timeout: it may still arrive")
		}
		out = append(out, f)
	}
	return out
}

// SendError is the error of a [Library.Send] that did not deliver every
// record: Failed says which, so that a retry can send exactly those (in
// Go, errors.As finds it in Send's error). Its message says how many were
// delivered and why the others were not, and it wraps the cause's
// sentinel (ErrTimeout, or the brokers' Kafka error).
//
// Hazard: a record that was not confirmed in time (Unconfirmed) may still
// be written by the brokers; sending it again may write it twice.
type SendError struct {
	Delivered int           // records the brokers acknowledged
	Failed    []SendFailure // the others, in the call's order
	err       error
}

// SendFailure is one record of a Send that the brokers did not
// acknowledge.
type SendFailure struct {
	Message     int    // the message's index in Send's messages, from 0
	Topic       string // the topic of this record of the message
	Err         error  // why
	Unconfirmed bool   // time ran out before the brokers answered for it
}

// Error returns the summary: how many were delivered and why the rest
// were not.
func (e *SendError) Error() string { return e.err.Error() }

// Unwrap returns the summary's error, which wraps the cause.
func (e *SendError) Unwrap() error { return e.err }

// ExceptionFields gives a BPL exception of a partial send its failed
// records: ("delivered" => n "failed" => (("message" => 1 "topic" => "t"
// "error" => "..." "unconfirmed" => false) ...)), message positions from 1
// as kafka-send's messages count them, so a script can send exactly those
// again.
func (e *SendError) ExceptionFields() *value.List {
	failed := &value.List{}
	for _, f := range e.Failed {
		l := &value.List{}
		l.AppendNamed("message", int64(f.Message+1))
		l.AppendNamed("topic", f.Topic)
		l.AppendNamed("error", errorValue(f.Err))
		l.AppendNamed("unconfirmed", f.Unconfirmed)
		failed.Append(l)
	}
	out := &value.List{}
	out.AppendNamed("delivered", int64(e.Delivered))
	out.AppendNamed("failed", failed)
	return out
}

// errorKind returns the sentinel cause wraps, or a plain marker so that a
// Kafka error stays a Kafka error.
func errorKind(cause error) error {
	for _, s := range []error{ErrTimeout, ErrClosed, ErrInvalidArgument, ErrSchemaRegistry, context.Canceled} {
		if errors.Is(cause, s) {
			return s
		}
	}
	return ErrKafka
}

// records serializes every message once and lays the records out in one
// slice: message by message, each to every topic. A schema serde's subject
// may depend on the topic, so with one, each record is serialized for its
// topic; a value that does not fit its schema fails that record alone:
// failed holds its index in the slice and why.
func (h *handle) records(ctx context.Context, topics []string, n int, msgAt func(i int) (Message, error)) (recs []kgo.Record, failed map[int]error, err error) {
	recs = getRecords(len(topics) * n)
	perTopic := h.cfg.keySer.NeedsRegistry() || h.cfg.valSer.NeedsRegistry()
	for i := range n {
		m, err := msgAt(i)
		if err != nil {
			return nil, nil, err
		}
		pos := i + 1
		var key, val []byte
		if !perTopic {
			if key, err = h.cfg.keySer.Encode(ctx, "", m.Key, pos, "key"); err != nil {
				return nil, nil, err
			}
			if val, err = h.cfg.valSer.Encode(ctx, "", m.Value, pos, ""); err != nil {
				return nil, nil, err
			}
		}
		partition := int32(-1) // our partitioner's "choose for me"
		if m.Partition != nil {
			if partition = *m.Partition; partition < 0 {
				return nil, nil, Errorf(ErrInvalidArgument, "message %d: partition %d is negative", pos, partition)
			}
		} else if h.cfg.partitioner.manual() {
			return nil, nil, Errorf(ErrInvalidArgument, "message %d has no partition and the partitioner is \"manual\"", pos)
		}
		var headers []kgo.RecordHeader
		if len(m.Headers) > 0 {
			headers = make([]kgo.RecordHeader, len(m.Headers))
			for j, hd := range m.Headers {
				headers[j] = kgo.RecordHeader{Key: hd.Key, Value: hd.Value}
			}
		}
		for _, t := range topics {
			if perTopic {
				if key, val, err = h.encodeFor(ctx, t, m, pos); err != nil {
					re, ok := errors.AsType[*serde.RecordError](err)
					if !ok {
						return nil, nil, err
					}
					if failed == nil {
						failed = map[int]error{}
					}
					failed[len(recs)] = re.Err
				}
			}
			// Set field by field in the zeroed slot: a struct literal
			// is built aside and copied in, twice the work.
			recs = recs[:len(recs)+1]
			r := &recs[len(recs)-1]
			r.Topic, r.Key, r.Value, r.Partition, r.Headers, r.Timestamp = t, key, val, partition, headers, m.Timestamp
		}
	}
	return recs, failed, nil
}

// encodeFor serializes m's key and value for topic.
func (h *handle) encodeFor(ctx context.Context, topic string, m Message, pos int) (key, val []byte, err error) {
	if key, err = h.cfg.keySer.Encode(ctx, topic, m.Key, pos, "key"); err != nil {
		return nil, nil, err
	}
	val, err = h.cfg.valSer.Encode(ctx, topic, m.Value, pos, "")
	return key, val, err
}

// recordPool holds record slices that Sends are done with: a loop of Sends
// would otherwise allocate its records afresh each call, as many bytes
// again as its messages, and the garbage collector's work that comes with
// them. Slices of more than maxPooledRecords are left to the collector.
var recordPool sync.Pool // of *[]kgo.Record

const maxPooledRecords = 1 << 16

// getRecords returns an empty record slice with room for n records, whose
// slots are zeroed.
func getRecords(n int) []kgo.Record {
	if p, _ := recordPool.Get().(*[]kgo.Record); p != nil && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]kgo.Record, 0, n)
}

// putRecords gives recs back to recordPool, cleared so that the pool does
// not keep the messages' keys and values alive.
func putRecords(recs []kgo.Record) {
	if cap(recs) > maxPooledRecords {
		return
	}
	clear(recs)
	recordPool.Put(&recs)
}

// flush delivers what the producer has buffered, within its send-timeout.
func (h *handle) flush(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.sendTimeout)
	defer cancel()
	if err := h.cl.Flush(ctx); err != nil {
		n := h.cl.BufferedProduceRecords()
		return Wrapf(ErrTimeout, h.net.timeoutError(h.cfg.sendTimeout, err), "%d records still unsent", n)
	}
	return nil
}

// partitioner wraps the configured kgo partitioner so that a record whose
// Partition is set (>= 0) goes there, and any other record is partitioned
// as configured. Records are built with Partition -1 for "choose".
// With no inner partitioner (the config's "manual") every record must
// name its partition.
type partitioner struct{ inner kgo.Partitioner }

// murmur2Partitioner is kgo's default: it hashes keys exactly as Java's
// client does.
func murmur2Partitioner() partitioner {
	return partitioner{kgo.UniformBytesPartitioner(64<<10, true, true, nil)}
}

// manual reports whether records must name their partition.
func (p partitioner) manual() bool { return p.inner == nil }

func (p partitioner) ForTopic(topic string) kgo.TopicPartitioner {
	tp := &topicPartitioner{}
	if p.inner != nil {
		tp.inner = p.inner.ForTopic(topic)
	}
	return tp
}

type topicPartitioner struct{ inner kgo.TopicPartitioner }

func (p *topicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return r.Partition >= 0 || p.inner != nil && p.inner.RequiresConsistency(r)
}

func (p *topicPartitioner) Partition(r *kgo.Record, n int) int {
	if r.Partition >= 0 || p.inner == nil {
		return int(r.Partition)
	}
	return p.inner.Partition(r, n)
}

func (p *topicPartitioner) PartitionByBackup(r *kgo.Record, n int, backup kgo.TopicBackupIter) int {
	if b, ok := p.inner.(kgo.TopicBackupPartitioner); ok && r.Partition < 0 {
		return b.PartitionByBackup(r, n, backup)
	}
	return p.Partition(r, n)
}

func (p *topicPartitioner) OnNewBatch() {
	if b, ok := p.inner.(kgo.TopicPartitionerOnNewBatch); ok {
		b.OnNewBatch()
	}
}
