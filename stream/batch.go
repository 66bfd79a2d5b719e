package stream

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A batch of a stream: its inputs transformed into outputs and dead
// letters, and the records that carry them.

// produced collects what the brokers said of a batch's writes.
type produced struct {
	mu    sync.Mutex
	first error
}

// produce returns the function that writes a record of the batch. One
// promise serves every record (a func literal inside the returned one
// allocated once per record).
func (p *produced) produce(s *stream) func(r *kgo.Record) {
	promise := func(r *kgo.Record, err error) {
		if err != nil {
			p.mu.Lock()
			if p.first == nil {
				p.first = kafkabpl.Wrapf(kafkabpl.ErrKafka, err, "write to topic %q", r.Topic)
			}
			p.mu.Unlock()
		}
	}
	return func(r *kgo.Record) { s.cl.Produce(s.workCtx, r, promise) }
}

func (p *produced) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

// waitForSchemas asks the schema registry for the schemas of recs (see
// config.prepareSchemas), again every second while it is unavailable: an
// input the registry cannot answer for is not a bad one, to skip or
// dead-letter, and the batch waits (its transaction holds nothing at the
// brokers until its first output). It fails only when the stream stops.
func (s *stream) waitForSchemas(recs []*kgo.Record) error {
	for said := false; ; {
		err := s.cfg.PrepareSchemas(s.workCtx, recs)
		if err == nil || s.workCtx.Err() != nil {
			return err
		}
		if !said {
			s.log(fmt.Sprintf("stream %s: waiting for the schema registry, which its inputs need: %v", s.h.ID(), err))
			said = true
		}
		select {
		case <-s.workCtx.Done():
			return s.workCtx.Err()
		case <-time.After(time.Second):
		}
	}
}

// process transforms recs in order, handing each output and dead-letter
// record to write. It returns the batch's counts, the records processed
// (for an at-least-once commit), and the error that stops the stream, if
// one did: then the records from that one on are not processed.
func (s *stream) process(recs []*kgo.Record, write func(*kgo.Record)) (batchCounts, []*kgo.Record, error) {
	var b batchCounts
	done := make([]*kgo.Record, 0, len(recs))
	ins := make([]kafkabpl.Record, len(recs)) // one allocation for the batch's inputs
	var joins []kafkabpl.Joined               // and one for their joins' finds
	if s.spec.Join != nil {
		joins = make([]kafkabpl.Joined, len(recs))
	}
	if err := s.waitForSchemas(recs); err != nil {
		return b, done, err
	}
	if err := s.rebuildStale(); err != nil { // before the batch notes its timers
		return b, done, err
	}
	s.store.prefetch(recs)
	for i, kr := range recs {
		in := &ins[i]
		*in = s.cfg.Record(kr)
		if joins != nil {
			s.joinSlot = &joins[i]
		}
		outs, err := s.transformOne(in)
		switch {
		case err == errJoinMiss: // dropped by an inner join, whatever the stream does after it
			b.dropped++
		case err == nil && s.rekeying: // its state comes with its repartition record
			for _, o := range outs {
				write(o)
			}
			b.repartitioned += int64(len(outs))
		case err == nil:
			if len(outs) == 0 && s.spec.Window == nil && s.spec.Interval == nil { // a window's (or join's) results come later
				b.dropped++
			}
			for _, o := range outs {
				write(o)
			}
			b.produced += int64(len(outs))
		case errors.Is(err, errNotHeld):
			b.notHeld = true // not ours to process: the new owner reads it
			continue
		case errors.Is(err, kafkabpl.ErrLate):
			if s.spec.lateRecords() == DeadLetterLate {
				write(s.deadLetter(kr, err))
				b.deadLettered++
			}
			b.late++
		default:
			switch s.spec.OnError {
			case StopOnError:
				return b, done, err
			case SkipOnError:
				b.skipped++
			case DeadLetterOnError:
				write(s.deadLetter(kr, err))
				b.deadLettered++
			}
			b.lastErr = err
		}
		b.processed++
		done = append(done, kr)
	}
	return b, done, nil
}

// errJoinMiss is what transformOne returns for an input an inner join
// drops (its key the table lacks): counted as dropped, in every kind of
// stream, as a stateless one's filtered input is. A windowed stream's or
// a re-keyed one's empty outputs are no drop (a window writes later, a
// re-keyed input goes on through its repartition topic), so the miss must
// be said apart from them.
var errJoinMiss = errors.New("dropped by the inner join")

// transformOne runs the transform on one input and serializes its outputs;
// the error, if any, names the input (but errJoinMiss, which is no error). The slice it returns is reused by
// the next call: write its records out first.
func (s *stream) transformOne(in *kafkabpl.Record) ([]*kgo.Record, error) {
	where := func(err error) error {
		return &streamInputError{topic: in.Topic(), partition: in.Partition(), offset: in.Offset(), err: err}
	}
	if err := in.Err(); err != nil {
		return nil, where(err)
	}
	s.rekeying = s.spec.Rekey != nil && in.Topic() != s.store.inputs[0]
	s.tables.advance(in) // a partitioned table's updates up to in's time come first
	if s.spec.Join != nil && (s.spec.Rekey == nil || s.rekeying) {
		if ok, err := s.join(in, s.joinSlot); err != nil {
			return nil, where(err)
		} else if !ok {
			return nil, errJoinMiss
		}
	}
	if s.rekeying {
		r, err := s.rekeyed(in)
		if err != nil {
			return nil, where(err)
		}
		s.outs = append(s.outs[:0], r)
		return s.outs, nil
	}
	outs, err := s.spec.Transform(s.workCtx, in)
	if err != nil {
		return nil, where(err)
	}
	s.outs = s.outs[:0]
	for i, o := range outs {
		r, err := s.record(o, i+1)
		if err != nil {
			return nil, where(err)
		}
		if o.Timestamp.IsZero() {
			r.Timestamp = in.Timestamp() // event time goes on, as in Kafka Streams
		}
		s.outs = append(s.outs, r)
	}
	return s.outs, nil
}

// newRecord returns a zeroed record for an output, from a slab that is
// allocated 256 records at a time: kgo keeps each until its write is
// acknowledged, which keeps its slab alive as long.
func (s *stream) newRecord() *kgo.Record {
	if len(s.slab) == 0 {
		s.slab = make([]kgo.Record, 256)
	}
	r := &s.slab[0]
	s.slab = s.slab[1:]
	return r
}

// record serializes output pos of an input.
func (s *stream) record(o Output, pos int) (*kgo.Record, error) {
	topic := o.Topic
	if topic == "" {
		topic = s.spec.To
	} else if err := topicname.Check(topic); err != nil {
		return nil, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "output %d: %v", pos, err)
	}
	key, err := s.cfg.KeySerializer().Encode(s.workCtx, topic, o.Key, pos, "key")
	if err != nil {
		return nil, err
	}
	val, err := s.cfg.ValueSerializer().Encode(s.workCtx, topic, o.Value, pos, "")
	if err != nil {
		return nil, err
	}
	r := s.newRecord()
	*r = kgo.Record{Topic: topic, Key: key, Value: val, Partition: -1, Timestamp: o.Timestamp}
	if o.Partition != nil {
		if r.Partition = *o.Partition; r.Partition < 0 {
			return nil, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "output %d: partition %d is negative", pos, r.Partition)
		}
	} else if s.cfg.ManualPartitioner() {
		return nil, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "output %d has no partition and the partitioner is \"manual\"", pos)
	}
	for _, hd := range o.Headers {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: hd.Key, Value: hd.Value})
	}
	return r, nil
}

// deadLetter is the dead-letter record of input r, which failed with err.
func (s *stream) deadLetter(r *kgo.Record, err error) *kgo.Record {
	topic := s.spec.DeadLetterTopic
	if topic == "" {
		topic = r.Topic + ".dlq"
	}
	cause := err
	var ie *streamInputError
	if errors.As(err, &ie) {
		cause = ie.err
	}
	headers := append([]kgo.RecordHeader(nil), r.Headers...)
	headers = append(headers,
		kgo.RecordHeader{Key: "dlq-error", Value: []byte(cause.Error())},
		kgo.RecordHeader{Key: "dlq-error-type", Value: []byte(kafkabpl.ErrorType(cause))},
		kgo.RecordHeader{Key: "dlq-source-topic", Value: []byte(r.Topic)},
		kgo.RecordHeader{Key: "dlq-source-partition", Value: []byte(strconv.FormatInt(int64(r.Partition), 10))},
		kgo.RecordHeader{Key: "dlq-source-offset", Value: []byte(strconv.FormatInt(r.Offset, 10))},
	)
	return &kgo.Record{Topic: topic, Key: r.Key, Value: r.Value, Headers: headers, Partition: -1}
}

// streamInputError is the failure of one input: where it was, and why.
type streamInputError struct {
	topic     string
	partition int32
	offset    int64
	err       error
}

func (e *streamInputError) Error() string {
	return fmt.Sprintf("topic %q partition %d offset %d: %v", e.topic, e.partition, e.offset, e.err)
}

func (e *streamInputError) Unwrap() error { return e.err }

// A stream's batch, when its config gives no "max-poll-records", adapts
// to its transform's speed: it starts at a consumer's 500 inputs, doubles
// after a full batch that took less than batchQuick, up to batchMost, and
// halves after one that took more than batchSlow, down to 1. A batch is
// one transaction, whose round trips (AddOffsetsToTxn, TxnOffsetCommit,
// EndTxn) a fixed 500 paid every 500 inputs: a re-keyed count, whose
// every input is read twice, took 2 to 4 times as long as a kgo loop
// polling whatever was fetched, and was faster than it at 5,000
// (bench/clients, the re-keyed table). A slow transform (a call out per
// input, say) keeps its batches, and so its transactions, short, well
// inside "transaction-timeout". A batch is only what has been fetched, so
// a slow input still gets small batches, soon.
const (
	batchFirst = 500
	batchMost  = 10000
	batchQuick = 250 * time.Millisecond
	batchSlow  = time.Second
)

// batchSize is how many inputs the next batch takes at most.
func (s *stream) batchSize() int {
	if s.cfg.Given("max-poll-records") {
		return s.cfg.MaxPollRecords()
	}
	if s.batch == 0 {
		s.batch = batchFirst
	}
	return s.batch
}

// batchTook adapts the batch size (see batchFirst) to a batch of n
// inputs, of the size asked, that took d from its poll to its commit.
func (s *stream) batchTook(n int, d time.Duration) {
	switch {
	case d > batchSlow:
		s.batch = max(1, s.batch/2)
	case n >= s.batch && d < batchQuick:
		s.batch = min(batchMost, 2*s.batch)
	}
}
