package kafkabpl

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl/internal/box"
	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Record is one received message. It is a small view of the record the
// client fetched: a poll copies nothing per record, and a key or value is
// checked and decoded only when asked for.
type Record struct {
	r    *kgo.Record
	cfg  *config      // the consumer's deserializers
	memo *decodedMemo // with a schema deserializer: the decoded key and value, once made
	join *Joined      // a stream's join: what the table held for the key
}

// decodedMemo keeps what a schema deserializer made of a record, which
// is the whole decoding (there is no cheaper check): Err, Key and Value
// share it rather than decode the record each.
type decodedMemo struct {
	key, val       any
	keyErr, valErr error
}

// schemaMemo decodes the record once with schema deserializers; nil when
// neither deserializer is one. The poll that returned the record asked the
// registry for its schemas within the poll's context (see
// prepareSchemas); what it could not get then is asked for now, within
// the registry's own timeout, as a Record has no context to take.
func (r *Record) schemaMemo() *decodedMemo {
	if r.memo != nil || !r.cfg.keyDeser.NeedsRegistry() && !r.cfg.valDeser.NeedsRegistry() {
		return r.memo
	}
	m := &decodedMemo{}
	m.key, m.keyErr = r.cfg.keyDeser.Decode(context.Background(), r.r.Topic, r.r.Key, "key")
	if m.keyErr == nil {
		m.val, m.valErr = r.cfg.valDeser.Decode(context.Background(), r.r.Topic, r.r.Value, "value")
	}
	m.keyErr, m.valErr = recordErr(m.keyErr), recordErr(m.valErr)
	r.memo = m
	return m
}

// recordErr is a deserializer's error as this package's, whose
// ExceptionType value.ErrorType finds; nil stays nil.
func recordErr(err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: ErrDeserialization, cause: err}
}

// prepareSchemas asks the schema registry, within ctx, for the schemas
// that recs were written with and that the schema deserializers do not
// know yet, so that decoding them later (Record's Err, Key and Value,
// which have no context) does no I/O: a poll's or a stream's context
// bounds the registry's requests, not only the registry's own timeout.
// The registry is asked once per schema; per record this reads the
// header and finds the schema cached, and builds nothing, so a poll still
// allocates nothing per record.
//
// It returns the first error that says nothing of the records: the
// registry is unavailable ([ErrRegistryUnavailable]), or ctx ended. Such
// records cannot be read yet, and are no bad records: the caller holds
// them back. Other errors (a schema id the registry does not know, bytes
// not in its wire format) are left for the records to report when
// decoded.
func (c *config) prepareSchemas(ctx context.Context, recs []*kgo.Record) error {
	key, val := c.keyDeser.NeedsRegistry(), c.valDeser.NeedsRegistry()
	if !key && !val {
		return nil
	}
	held := func(err error) bool {
		return err != nil && (errors.Is(err, ErrRegistryUnavailable) || ctx.Err() != nil)
	}
	for _, r := range recs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if key {
			if err := c.keyDeser.Prepare(ctx, r.Topic, r.Key); held(err) {
				return err
			}
		}
		if val {
			if err := c.valDeser.Prepare(ctx, r.Topic, r.Value); held(err) {
				return err
			}
		}
	}
	return nil
}

// Topic returns the record's topic.
func (r *Record) Topic() string { return r.r.Topic }

// Partition returns the record's partition.
func (r *Record) Partition() int32 { return r.r.Partition }

// Offset returns the record's offset in its partition.
func (r *Record) Offset() int64 { return r.r.Offset }

// Timestamp returns the record's timestamp (its create time, unless the
// topic is configured for log-append time).
func (r *Record) Timestamp() time.Time { return r.r.Timestamp }

// Headers returns the record's headers, in order; a repeated key is kept.
func (r *Record) Headers() []Header {
	if len(r.r.Headers) == 0 {
		return nil
	}
	hs := make([]Header, len(r.r.Headers))
	for i, h := range r.r.Headers {
		hs[i] = Header{Key: h.Key, Value: h.Value}
	}
	return hs
}

// KeyBytes returns the key as received; nil is Kafka's null. It shares
// memory with the fetched batch: read it, do not modify it.
func (r *Record) KeyBytes() []byte { return r.r.Key }

// ValueBytes returns the value as received; nil is Kafka's null. It shares
// memory with the fetched batch: read it, do not modify it.
func (r *Record) ValueBytes() []byte { return r.r.Value }

// Err, when not nil, says why the key or value cannot be deserialized by
// the consumer's deserializers. Such a record is still delivered (and
// committed), so a bad message never stalls the consumer and is never
// dropped silently.
func (r *Record) Err() error {
	if m := r.schemaMemo(); m != nil {
		if m.keyErr != nil {
			return m.keyErr
		}
		return m.valErr
	}
	if err := r.cfg.keyDeser.Check(context.Background(), r.r.Topic, r.r.Key, "key"); err != nil {
		return recordErr(err)
	}
	return recordErr(r.cfg.valDeser.Check(context.Background(), r.r.Topic, r.r.Value, "value"))
}

// Key returns the key as the consumer's key-deserializer reads it; nil for
// a null key, and the raw bytes when Err is set. It decodes on every call:
// keep the result rather than calling it twice.
//
// A schema deserializer's record is decoded once, by the first of Err, Key
// and Value. The poll that returned the record asked the schema registry,
// within the poll's context, for the schemas its records were written
// with, so decoding does no I/O; only when the registry failed then, or
// the poll's context ended first, do they ask again, bounded by the
// registry's own timeout (request-timeout, at most 10 s), since they take
// no context.
func (r *Record) Key() any {
	if m := r.schemaMemo(); m != nil && m.keyErr == nil && m.valErr == nil {
		return m.key
	}
	return r.decoded(r.cfg.keyDeser, r.r.Key)
}

// Value returns the value as the consumer's value-deserializer reads it;
// nil for a null value, and the raw bytes when Err is set. It decodes on
// every call: keep the result rather than calling it twice.
func (r *Record) Value() any {
	if m := r.schemaMemo(); m != nil && m.keyErr == nil && m.valErr == nil {
		return m.val
	}
	return r.decoded(r.cfg.valDeser, r.r.Value)
}

// decoded is b deserialized by s, or b itself when the record has an
// error (in its key or its value: then neither is decoded).
func (r *Record) decoded(s *serde.Serde, b []byte) any {
	if b == nil {
		return nil
	}
	if r.Err() != nil {
		return b
	}
	if s == serde.String { // the default, and a stream's every input: one allocation, not two
		return box.Text(b)
	}
	v, err := s.Decode(context.Background(), r.r.Topic, b, "")
	if err != nil { // cannot happen: Err checked b with s
		return b
	}
	return v
}

// TopicRecords is one topic's records in a poll, in partition and offset
// order.
type TopicRecords struct {
	Topic   string
	Records []Record
}

// Polled is what a poll returns: every topic asked for, sorted by name, each
// with its new records (none when nothing came).
type Polled struct {
	Topics []TopicRecords
}

// Len returns the number of records in all topics.
func (p *Polled) Len() int {
	n := 0
	for _, t := range p.Topics {
		n += len(t.Records)
	}
	return n
}

// consumerState is what a consumer handle keeps beside its kgo client.
//
// Subscribing is made deterministic with start offsets: under "latest", a
// partition with no committed offset starts where the topic ended when
// kafka-subscribe ran, not where it ends when the group is finally joined,
// so nothing sent after subscribe returns is skipped. A topic that did not
// exist then starts from its beginning.
//
// Under "none", a partition assigned with no committed offset (and no seek
// waiting for it) has no position: it is kept in unpositioned, and paused,
// until a seek gives it one; meanwhile polls report it (see noPosition).
type consumerState struct {
	h     *handle
	subMu sync.Mutex // serializes subscription changes and seeks

	mu           sync.Mutex
	topics       map[string]bool
	sorted       []string               // topics, sorted; nil when topics changed
	start        partitions[int64]      // where partitions with no committed offset start
	seeks        partitions[kgo.Offset] // seeks waiting for adjustOffsets (an assignment); partition -1 = all
	assigned     partitions[uint64]     // what the group gave us, each with its assignment's number
	starting     partitions[bool]       // assigned, offsets not fetched yet: seeks wait for adjustOffsets
	assignments  uint64                 // the number of the latest assignment
	unpositioned partitions[bool]       // "none": assigned, no offset; paused while here
	held         []*kgo.Record          // polled, not yet returned to the caller
	heldErr      error                  // fetched with records; the next fetch returns it

	// wakeCtx ends when a partition loses its position, so a poll waiting
	// for records reports it at once; wake ends it, and a new one starts.
	wakeCtx context.Context
	wake    context.CancelFunc

	// uncommitted holds the partitions the group took from this member
	// (lost, or revoked) while they had records a poll returned and no
	// commit covered, each with the offset after the last such record:
	// those records go to the next owner again. The next commit reports
	// them, once, unless the group gave them back to this member and the
	// commit now covers them (see reclaimed).
	uncommitted partitions[int64]
	// deleted holds the topics deleted through this Library and not
	// assigned since: their records are gone, so losing them is no loss.
	deleted map[string]bool

	// pending is the last record of each partition the latest poll
	// returned. They are marked for commit when the next poll, commit or
	// destroy comes, not when they are returned: as with Java's consumer,
	// a background auto-commit never covers records the caller may still
	// be working on, so a crash then redelivers them (at least once).
	pending []*kgo.Record

	// rv schedules the checks of positions after a leader moved, and
	// gate keeps them apart from polls of kgo: a poll holds it shared, the
	// setting of positions whole (see revalidation).
	rv   *revalidation
	gate sync.RWMutex

	// testHook, set by tests only, is called at the points where a seek
	// and an assignment meet (see consumerState.at).
	testHook atomic.Pointer[func(event string)]
}

func newConsumerState(h *handle) *consumerState {
	cs := &consumerState{
		h:            h,
		topics:       map[string]bool{},
		start:        partitions[int64]{},
		seeks:        partitions[kgo.Offset]{},
		assigned:     partitions[uint64]{},
		starting:     partitions[bool]{},
		unpositioned: partitions[bool]{},
		uncommitted:  partitions[int64]{},
		rv:           newRevalidation(),
	}
	cs.wakeCtx, cs.wake = context.WithCancel(context.Background())
	return cs
}

// at calls the test hook, if any, with event: "assigning" (kgo has called
// onAssigned), "assigned" (onAssigned recorded the partitions), "adjusted"
// (adjustOffsets applied the waiting seeks; kgo has yet to start the
// partitions there) or "seek placed" (a seek stored what waits for the
// assignment and is about to move what the consumer owns). It is called
// with no lock of the consumer's held.
func (cs *consumerState) at(event string) {
	if hook := cs.testHook.Load(); hook != nil {
		(*hook)(event)
	}
}

// withConsumer runs fn on a live consumer, wording its error for fn name.
func withConsumer[T any](lib *Library, name, id string, fn func(*consumerState) (T, error)) (T, error) {
	h, err := lib.acquire(id, Consumer)
	if err != nil {
		var zero T
		return zero, NewError(name, err)
	}
	defer h.calls.Done()
	v, err := fn(h.cons)
	if err != nil {
		return v, NewError(name, err)
	}
	return v, nil
}

// List returns the poll as BPL shows it: ("topic" => (messages) ...). With
// the default poll-format "values" a message is its value, named by its key
// when the key is not null; with "records" it is ("topic" => t "partition"
// => p "offset" => o "timestamp" => ms "key" => k "value" => v "headers" =>
// ("h" => "v" ...)), and a share consumer's adds "delivery-count" => n
// "acquisition-deadline" => ms (see [Record.DeliveryCount] and
// [Record.AcquisitionDeadline]). A record that could not be deserialized
// is always in the records form, with its raw key and value and an
// "error" element saying why.
//
// The keys and values read as text (with the String deserializer, the
// default) are copied out of the fetched records into one allocation for
// the whole poll, which every message refers into: the lists never hold
// the fetched batches, which can be megabytes, and a poll costs a few
// allocations however many messages it has. Hazard: a message kept after
// the poll (its value or its name, in a variable or another list) keeps
// that whole allocation alive, its poll's every key and value, which
// max-poll-records bounds: with 500 records of 100 bytes, 64 KB per kept
// message (BenchmarkPollKeep), until nothing of its poll is kept. A
// caller that keeps a few messages of many polls copies them first
// (strings.Clone; a script, kafka-copy of package functions; BPL's clone
// does not: it shares text). Calling List again builds new lists.
func (p *Polled) List() *value.List {
	boxes, size := 0, 0
	for _, t := range p.Topics {
		b, s := textRoom(t.Records)
		boxes, size = boxes+b, size+s
	}
	arena := box.NewBoxArena(boxes, size)
	if len(p.Topics) == 1 {
		// The usual poll, one topic: its lists take one allocation.
		one := &struct {
			out, msgs value.List
			value     [1]any
			name      [1]string
		}{}
		fillMessages(&one.msgs, p.Topics[0].Records, &arena)
		one.value[0], one.name[0] = &one.msgs, p.Topics[0].Topic
		one.out.Reset(one.value[:], one.name[:])
		return &one.out
	}
	vals, names := make([]any, len(p.Topics)), make([]string, len(p.Topics))
	for i, t := range p.Topics {
		msgs := &value.List{}
		fillMessages(msgs, t.Records, &arena)
		vals[i], names[i] = msgs, t.Topic
	}
	return value.ListOf(vals, names)
}

// ownBytes is v, or a copy of it when it is a []byte: the raw bytes of a
// record that did not deserialize, or a ByteArray deserializer's value,
// are the fetched batch's own (see [Record.Value]), which a list must
// never hold, lest a script that keeps it keep the batch.
func ownBytes(v any) any {
	if b, ok := v.([]byte); ok {
		return bytes.Clone(b)
	}
	return v
}

// Kgo returns the kgo record the Record views, for a Go program that
// hands it on to franz-go. It is the client's: do not change it.
func (r *Record) Kgo() *kgo.Record { return r.r }

// Joined is what a stream's join found for a record's key (package
// stream sets it, with [Record.SetJoined]; a record a consumer polled has
// none).
type Joined struct {
	Raw    []byte           // the table's value, as written (nil: the table held none)
	Decode func([]byte) any // reads Raw as the stream's value deserializer does
}

// SetJoined sets what a stream's join found for the record's key, which
// [Record.Joined], [Record.JoinedBytes] and the "joined" element of
// [Record.List] give; j is kept, not copied.
func (r *Record) SetJoined(j *Joined) { r.join = j }

// Joined returns the value a stream's join found for the record's key,
// read with the stream's value deserializer, and whether the table held
// the key. It is nil, false for a record no join gave a value to.
func (r *Record) Joined() (any, bool) {
	if r.join == nil || r.join.Raw == nil {
		return nil, false
	}
	return r.join.Decode(r.join.Raw), true
}

// JoinedBytes returns the bytes of the value a stream's join found for
// the record's key, as written to the table's topic (nil: none), for a
// transform that reads them itself: it saves Joined's decoding. The bytes
// are the table's: do not change them.
func (r *Record) JoinedBytes() []byte {
	if r.join == nil {
		return nil
	}
	return r.join.Raw
}

// keyName is the text a key names its message with.
func keyName(k any) string {
	switch k := k.(type) {
	case string:
		return k
	case []byte:
		return string(k)
	}
	return value.Format(k)
}

// inlineText is the room for a record list's key and value kept in the
// list's own allocation: a small message's list is one allocation.
const inlineText = 128

// recordNames are the names of a record list's elements, shared by every
// record list (value.List.ResetShared): a list costs no names of its own
// until a script renames or removes one of its elements. A join's input
// has "joined" after the seven others; any other element is appended.
var (
	recordNames       = []string{"topic", "partition", "offset", "timestamp", "key", "value", "headers"}
	joinedRecordNames = append(recordNames[:len(recordNames):len(recordNames)], "joined")
)

// List returns the record in its BPL records form (see [Polled.List]).
// A stream's BPL transform gets one per input, so it is built in one
// allocation when key and value together have at most 128 bytes of text,
// else two, the text and the rest, not one per element (see
// box.InPlace); headers, rare, take their own.
func (r *Record) List() *value.List {
	one := &struct {
		l, headers value.List
		values     [8]any
		ints       [3]int64  // partition, offset, timestamp
		texts      [3]string // topic, key, value
		text       [inlineText]byte
	}{}
	l := &one.l
	vals := one.values[:len(recordNames)]
	size := 0
	if r.cfg.keyDeser == serde.String {
		size += len(r.r.Key)
	}
	if r.cfg.valDeser == serde.String {
		size += len(r.r.Value)
	}
	arena := box.TextArenaOn(one.text[:])
	if size > len(one.text) {
		arena = box.NewTextArena(size)
	}
	failed := r.Err() != nil
	// text sets element i to the text of b, as the String deserializer
	// reads it (and not when the record failed: its raw bytes then).
	text := func(i, slot int, b []byte, s *serde.Serde) {
		switch {
		case b == nil:
		case s == serde.String && !failed:
			one.texts[slot] = arena.Text(b)
			box.InPlace(&vals[i], &one.texts[slot])
		default:
			vals[i] = ownBytes(r.decoded(s, b))
		}
	}
	one.texts[0] = r.r.Topic
	box.InPlace(&vals[0], &one.texts[0])
	one.ints = [3]int64{int64(r.r.Partition), r.r.Offset, r.r.Timestamp.UnixMilli()}
	for k := range one.ints {
		box.InPlace(&vals[1+k], &one.ints[k])
	}
	text(4, 1, r.r.Key, r.cfg.keyDeser)
	text(5, 2, r.r.Value, r.cfg.valDeser)
	for _, h := range r.r.Headers {
		var v any
		if h.Value != nil {
			v = string(h.Value)
		}
		one.headers.AppendNamed(h.Key, v)
	}
	vals[6] = &one.headers
	n := r.DeliveryCount() // a share consumer's record when above 0
	switch {
	case r.join != nil && n == 0: // a join's input
		v, _ := r.Joined()
		l.ResetShared(append(vals, v), joinedRecordNames)
	default:
		l.ResetShared(vals, recordNames)
		if n > 0 {
			l.AppendNamed("delivery-count", int64(n))
			l.AppendNamed("acquisition-deadline", r.AcquisitionDeadline().UnixMilli())
		}
		if r.join != nil {
			v, _ := r.Joined()
			l.AppendNamed("joined", v)
		}
	}
	if failed {
		l.AppendNamed("error", r.Err().Error())
	}
	return l
}
