package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Streams: a transform between topics, run by the library on goroutines of
// its own, exactly once through Kafka transactions or at least once.

// Guarantee is what a stream promises about each input's outputs.
type Guarantee int8

const (
	// ExactlyOnce (the default) reads, transforms, writes and commits the
	// input offsets in one Kafka transaction (franz-go's
	// GroupTransactSession): outputs become visible to read_committed
	// consumers when the transaction commits, and a crash or rebalance
	// aborts it and rewinds, so each input is reflected in the output
	// exactly once. The stream reads its inputs read_committed. When the
	// brokers abort a transaction under the stream (it outlasted
	// "transaction-timeout", as a coordinator's failover can), the stream
	// re-initializes its producer, rejoins its group and goes on from the
	// committed offsets, as Kafka Streams does; see [Status].
	ExactlyOnce Guarantee = iota
	// AtLeastOnce writes the outputs, waits for the brokers to acknowledge
	// them, then commits the inputs: a crash may write an input's outputs
	// again, never lose them. It needs no transactions and costs less.
	AtLeastOnce
)

// String returns "exactly-once" or "at-least-once".
func (g Guarantee) String() string {
	if g == AtLeastOnce {
		return "at-least-once"
	}
	return "exactly-once"
}

// OnError is what a stream does with an input it cannot process: one that
// cannot be deserialized, one whose transform fails, or one whose output
// cannot be serialized.
type OnError int8

const (
	// StopOnError (the default) stops the stream: its state becomes
	// failed, with the error, and nothing from that input on is committed
	// (under exactly-once, the open transaction is aborted), so a stream
	// started again after a fix reads it again.
	StopOnError OnError = iota
	// SkipOnError counts the input as skipped and goes on.
	SkipOnError
	// DeadLetterOnError writes the input's original key, value and headers
	// to the dead-letter topic, with headers saying what went wrong (see
	// [Spec]), and goes on. Under exactly-once it is written in the
	// same transaction as the other outputs.
	DeadLetterOnError
)

// String returns "stop", "skip" or "dead-letter".
func (o OnError) String() string {
	switch o {
	case SkipOnError:
		return "skip"
	case DeadLetterOnError:
		return "dead-letter"
	}
	return "stop"
}

// Output is one message a stream's transform writes: to Topic (the
// stream's To when empty), with the key, value, headers, partition and
// timestamp of its Message, serialized by the stream's serializers. An
// output of an input that gives no timestamp takes the input's, as in
// Kafka Streams, so that a stream after it windows by the same event
// time; a timer's takes the time it is written.
type Output struct {
	Topic string
	kafkabpl.Message
}

// Transform is a stream's work on one input record: the messages to write
// for it, in order (none filters the input out), or an error, which the
// stream's OnError policy handles. The transforms of one stream run one at
// a time, in input order within each partition; ctx ends when the stream is
// destroyed without time to finish.
type Transform func(ctx context.Context, in *kafkabpl.Record) ([]Output, error)

// Spec is what a stream does.
//
// The dead-letter record of an input carries its original key, value and
// headers, then these headers: "dlq-error" (the error's text),
// "dlq-error-type" (its BPL type: DeserializationError, InvalidArgument, a
// BPL exception's type, ...), "dlq-source-topic", "dlq-source-partition"
// and "dlq-source-offset".
//
// A stream is stateless (Transform) or keeps state in a store: per key
// (Update) or per key and window (Window). A stateful stream reads one
// topic, or several co-partitioned ones (with the same partition count,
// checked when the stream starts, and keyed alike: partition N of each
// input is the store's partition N, held by one member of the group,
// which a stream of several inputs without Rekey balances with the range
// assignor, eager: a rebalance restores each partition again; the classic
// group protocol only). It
// needs keyed inputs (a null key is an input error), and keeps its
// store in memory per input partition and in the compacted changelog
// topic "<group>-<Store>-changelog", with the input's partition count
// (created so, or checked, when the stream starts). Changelog records are
// written in the transaction of the outputs and the input offsets, so the
// state is exactly once too; a batch that aborts leaves no trace in it. A
// partition's state is restored from its changelog (read_committed, to
// its end) when the partition is assigned, before any of its input is
// fetched, while the stream's other partitions go on: each partition is
// restored on a goroutine of its own, its fetching paused until the
// restore ends (a restore first waits for a transaction a previous owner
// left open on the changelog partition to end: up to "transaction-timeout"
// after a crash). Under AtLeastOnce, an input processed again after a crash
// (its changelog record was written, its offset not committed) is counted
// again in the state, as its outputs are written again; the outputs are
// acknowledged before the changelog records are written, so that no
// output is lost. The stream creates the changelog itself (a broker's
// auto-created topic would have its default partition count). Every other
// stateful stream (one input, or a re-keyed one of any inputs, whose state
// comes from its one repartition topic) balances its group with the
// cooperative-sticky strategy unless the config's "assignment-strategy"
// says otherwise, so that a rebalance moves only the partitions it must
// (each moved partition is restored); under "group-protocol" "consumer",
// the broker's assignor does.
//
// Standbys > 0 has other members of the group keep warm copies of each
// store partition by following its changelog (Kafka Streams'
// num.standby.replicas): a member assigned a partition it keeps a copy of
// restores only the changelog's tail, to the state, timers included, that
// a full restore gives. Which members keep which copies, and what they
// cost: [StorePlacement]; their queries: [Runtime.StoreStandbyGet].
type Spec struct {
	From            []string                        // the input topics; at least one (co-partitioned for a stateful stream)
	To              string                          // the output topic of outputs that name none
	Transform       Transform                       // a stateless stream's work; or set Update or Window
	Update          Update                          // a stream with per-key state; with Store
	Window          *Window                         // a windowed aggregation; with Store
	Store           string                          // a stateful stream's store name
	Guarantee       Guarantee                       // ExactlyOnce by default
	OnError         OnError                         // StopOnError by default
	DeadLetterTopic string                          // with DeadLetterOnError; "" writes each input to "<its topic>.dlq"
	Rekey           Rekey                           // a stateful stream's new key for each input, through a repartition topic; nil: the input's
	OnTimer         OnTimer                         // a per-key stateful stream's calls when a key's timer fires or it falls silent
	Silence         time.Duration                   // with OnTimer: a key without input this long (wall clock, from when its last input was processed) gets a Silence call; 0: none
	OnCommit        func(ctx context.Context) error // called after each batch that did something commits, on the stream's goroutine, to tell dashboards; keep it quick; its error is logged
	Tables          []Table                         // compacted topics read whole, for Lookup and Join
	Join            *Join                           // joins each input with a table's value for its key; nil: none
	Interval        *IntervalJoin                   // an interval join of From's two topics (left, right); with Store; nil: none
	Standbys        int                             // a stateful stream's warm copies of each store partition on other members of its group (see above); 0: none
}

// State is where a stream is in its life.
type State string

// The states of a stream.
const (
	Running State = "running"
	Stopped State = "stopped" // destroyed, cleanly
	Failed  State = "failed"  // stopped by an error: see LastError
)

// stream is a running stream: its client and the goroutine that runs it.
type stream struct {
	h    *kafkabpl.Handle
	cfg  *kafkabpl.ClientConfig // the handle's
	spec Spec
	sess *kgo.GroupTransactSession // exactly-once only
	cl   *kgo.Client               // the session's client, or the plain one
	opts []kgo.Opt                 // the session's, to make it again (see reinit)

	pollCtx    context.Context // ends when the stream is told to stop
	stopPoll   context.CancelFunc
	workCtx    context.Context // ends when a stop must not wait any longer
	cancelWork context.CancelFunc
	done       chan struct{}  // closed when run returns
	store      *kafkaStore    // a stateful stream's; nil for a stateless one
	tables     streamTables   // nil: none
	owners     owners         // a stateful stream's: who holds its partitions (stream_owner.go)
	timers     *timers        // nil: none
	followers  sync.WaitGroup // the tables' goroutines, which follow their updates

	// Used by run's goroutine only.
	batch    int              // the next batch's size, when adapted (see batchFirst)
	outs     []*kgo.Record    // transformOne's result, reused
	rekeying bool             // transformOne's input was re-keyed to the repartition topic
	joinSlot *kafkabpl.Joined // where transformOne's join puts what it found
	slab     []kgo.Record     // what newRecord hands out

	totals counts // committed work, under atomic access
	mu     sync.Mutex
	state  State
	err    error // the failure, or the last skipped or dead-lettered error
	log    func(msg string)
}

// counts is a tally of stream work.
type counts struct {
	processed, produced, dropped, skipped, deadLettered, transactions, aborted, reinits atomic.Int64
}

// batchCounts is the work of one batch, added to the totals once it is
// committed.
type batchCounts struct {
	processed, produced, dropped, skipped, deadLettered, late, fired, repartitioned int64
	lastErr                                                                         error
	notHeld                                                                         bool // an input's partition was revoked: abort, under exactly-once
}

// Stream starts a stream that reads spec.From, runs spec.Transform on each
// input and writes its outputs, in a consumer group, and returns its handle
// id ("s" and 32 hex digits).
//
// config is read like a consumer's and a producer's together (servers,
// serializers, deserializers, security, ...). "group" is required: it is
// the stream's application id, and several processes started with the same
// group share the input partitions (Kafka's group protocol distributes
// them), which is how a stream grows past one machine. A stream reads from
// the earliest offset when its group has committed none, unless
// "auto-offset-reset" says otherwise (a consumer's default is "latest"; a
// new stream processes what its inputs already hold). Under exactly-once, "acks" must be
// "all" and idempotence on (the defaults), and "transaction-timeout"
// (default 30 s) bounds both a batch (what was fetched, up to
// "max-poll-records" inputs, with their transforms and writes, in one
// transaction; when the config does not say, 500 at first, then adapted
// to the transform's speed: up to 10,000 while a batch takes under 250
// ms, halved while one takes over 1 s) and how long a crashed process's open transaction
// holds up read_committed readers of the outputs.
//
// Outputs of one input partition are written in input order. The stream
// runs until [kafkabpl.Library.Destroy], which finishes the batch in hand, commits
// it (or aborts it when ctx ends first), and leaves the group; or until it
// fails ([Failed]: an input it could not process under StopOnError,
// or a write the brokers refused); its state and counts are in
// [Runtime.Status]. Starting dials nothing and returns at once.
//
// Hazard: an output the brokers refuse (too large, say, or to a topic that
// cannot be created) fails the stream, whatever OnError says: it is not a
// fault of the input, and the transaction it was in is aborted.
func (rt *Runtime) Start(ctx context.Context, config any, spec Spec) (string, error) {
	const fn = "kafka-stream"
	if err := spec.check(); err != nil {
		return "", kafkabpl.NewError(fn, err)
	}
	cfg, err := rt.lib.ParseConfig(fn, config)
	if err != nil {
		return "", err
	}
	if !cfg.Given("group") {
		return "", kafkabpl.NewError(fn, kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, `config: a stream needs a "group", its application id (processes with the same group share the work)`))
	}
	cfg.StartEarliest()
	if spec.Transform == nil && len(spec.From) > 1 && spec.Rekey == nil {
		// Partition N of each input goes to one member only with an
		// assignor that keeps co-partitioned topics together.
		if cfg.ServerAssigns() {
			return "", kafkabpl.NewError(fn, kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, `config: a stateful stream of several inputs (%v) needs the classic "group-protocol": the broker's assignors do not keep partition N of each input on one member`, spec.From))
		}
		if cfg.Given("assignment-strategy") && (len(cfg.Balancers()) != 1 || cfg.Balancers()[0].ProtocolName() != "range") {
			return "", kafkabpl.NewError(fn, kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, `config: "assignment-strategy": a stateful stream of several inputs (%v) balances with "range", which keeps partition N of each input on one member`, spec.From))
		}
	}
	if err := rt.queryEndpoint(cfg, &spec); err != nil {
		return "", kafkabpl.NewError(fn, err)
	}
	rt.settleStateDir(cfg, &spec)
	if spec.Guarantee == ExactlyOnce && !cfg.Transactional() {
		return "", kafkabpl.NewError(fn, kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, `config: an exactly-once stream needs "acks" "all" and "idempotence" true`))
	}
	s, err := newStream(rt.lib.NewHandle(kafkabpl.Stream, cfg), spec, func(msg string) { rt.lib.Log(fn, msg) })
	if err != nil {
		return "", kafkabpl.NewError(fn, err)
	}
	if err := rt.lib.Register(s.h, s); err != nil {
		s.cl.Close()
		s.h.StopClient()()
		return "", kafkabpl.NewError(fn, err)
	}
	s.log(fmt.Sprintf("stream %s running: from %v to %q, %s, on error %s, group %q", s.h.ID(), spec.From, spec.To, spec.Guarantee, spec.OnError, cfg.Group()))
	go s.run()
	return s.h.ID(), nil
}

// check validates a spec.
func (spec *Spec) check() error {
	if len(spec.From) == 0 {
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"from": want at least one input topic`)
	}
	for _, t := range spec.From {
		if err := topicname.Check(t); err != nil {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"from": %v`, err)
		}
	}
	if err := topicname.Check(spec.To); err != nil {
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"to": %v`, err)
	}
	if spec.DeadLetterTopic != "" {
		if err := topicname.Check(spec.DeadLetterTopic); err != nil {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"dead-letter-topic": %v`, err)
		}
	}
	if err := spec.checkStore(); err != nil {
		return err
	}
	if err := spec.checkTables(); err != nil {
		return err
	}
	if err := spec.checkTimers(); err != nil {
		return err
	}
	if spec.Rekey != nil && spec.Transform != nil {
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"rekey": a new key is a stateful stream's, for its state (a "store" with a "transform" of the input and its state, or a "window"); a stateless one sets its outputs' keys itself`)
	}
	if spec.Standbys < 0 || spec.Standbys > 0 && spec.Transform != nil {
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"standbys" %d: want 0 or more, and a stateful stream's (a stateless one keeps no state to copy)`, spec.Standbys)
	}
	if spec.Guarantee != ExactlyOnce && spec.Guarantee != AtLeastOnce {
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "guarantee %d: want ExactlyOnce or AtLeastOnce", spec.Guarantee)
	}
	if spec.OnError < StopOnError || spec.OnError > DeadLetterOnError {
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "on-error %d: want StopOnError, SkipOnError or DeadLetterOnError", spec.OnError)
	}
	return nil
}

// newStream makes a stream's handle and client; it dials nothing.
func newStream(h *kafkabpl.Handle, spec Spec, log func(string)) (*stream, error) {
	cfg := h.Config()
	s := &stream{h: h, cfg: cfg, spec: spec, state: Running, done: make(chan struct{}), log: log}
	s.pollCtx, s.stopPoll = context.WithCancel(context.Background())
	var err error
	if s.tables, err = newTables(cfg, spec.Tables, spec.From, log); err != nil {
		s.stopPoll()
		return nil, err
	}
	s.timers = newTimers(&spec)
	work := context.Background()
	if s.tables != nil { // for Lookup
		work = context.WithValue(work, tablesKey{}, s.tables)
	}
	if s.timers != nil { // for SetTimer
		work = context.WithValue(work, timerKey{}, &s.timers.call)
	}
	s.workCtx, s.cancelWork = context.WithCancel(work)
	var opts []kgo.Opt
	// The inputs; a re-keying stream's with its repartition topic, once
	// that exists (see subscribeRepartition).
	if spec.Rekey == nil {
		opts = append(opts, kgo.ConsumeTopics(spec.From...))
	}
	var assigned, revoked rebalanceFn // a stateful stream's store keeps what is assigned
	if spec.Transform == nil {
		if s.store, err = newStore(cfg, &spec, log); err != nil {
			s.stopPoll()
			s.cancelWork()
			s.tables.closeDisks()
			return nil, err
		}
		assigned, revoked = s.store.assign, s.store.revoked
		var bals []kgo.GroupBalancer // nil: the config's
		switch {
		case len(spec.From) > 1 && spec.Rekey == nil:
			// Range gives each member the same partition numbers of
			// co-partitioned topics; the cooperative strategies do not.
			bals = []kgo.GroupBalancer{kgo.RangeBalancer()}
		case !cfg.Given("assignment-strategy") && !cfg.ServerAssigns():
			bals = []kgo.GroupBalancer{kgo.CooperativeStickyBalancer()}
		}
		if bals = advertise(cfg, bals); bals != nil { // its query endpoint, in its membership
			opts = append(opts, kgo.Balancers(bals...))
		}
		if spec.Update != nil {
			update := spec.Update
			if s.timers != nil {
				update = s.timers.update(update)
			}
			s.spec.Transform = s.store.keyedTransform(update)
		} else if spec.Interval != nil {
			s.spec.Transform = s.store.intervalTransform()
		} else {
			s.spec.Transform = s.store.windowedTransform()
		}
	}
	assigned, revoked = s.tables.hooks(s, assigned, revoked) // a partitioned table keeps what is assigned too
	opts = append(h.ClientOpts(assigned, revoked, revoked), opts...)
	var stop context.CancelFunc
	if spec.Guarantee == ExactlyOnce {
		opts = append(opts,
			kgo.TransactionalID(cfg.Group()+"-"+h.ID()),
			// A crashed process's open transaction holds up
			// read_committed readers of the outputs until it times
			// out (kgo's default: 40 s). It must outlast a
			// coordinator's failover too (a broker's 9 s session,
			// then the election and the client's retries: some 12
			// to 15 s), or the brokers abort it under the stream:
			// 30 s.
			kgo.TransactionTimeout(cfg.TransactionTimeout()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		)
		s.opts = opts
		opts, stop = stoppable(opts)
		if s.sess, err = kgo.NewGroupTransactSession(opts...); err == nil {
			s.cl = s.sess.Client()
		}
	} else {
		opts = append(opts, kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll())
		opts, stop = stoppable(opts)
		s.cl, err = kgo.NewClient(opts...)
	}
	if err != nil {
		s.stopPoll()
		s.cancelWork()
		stop()
		s.closeDisks()
		return nil, kafkabpl.Wrapf(kafkabpl.ErrInvalidConfig, err, "config")
	}
	h.SetClient(s.cl, stop)
	return s, nil
}

// run polls, processes and commits batches until the stream stops.
func (s *stream) run() {
	defer close(s.done)
	if err := s.tables.bootstrap(s.pollCtx, s); err != nil {
		if s.pollCtx.Err() == nil {
			s.fail(err)
		}
		s.stopPoll() // no input is processed without its tables
	}
	if s.store != nil && s.store.standby != nil {
		s.followers.Go(s.keepStandbys)
	}
	lost := 0 // producers lost since the last commit
	for s.pollCtx.Err() == nil {
		if s.store != nil {
			if err := s.syncStore(s.pollCtx); err != nil {
				s.fail(err)
				break
			}
		}
		ctx, cancel := s.tables.pollContext(s.pollContext())
		var fetches kgo.Fetches
		size := s.batchSize()
		if s.sess != nil {
			fetches = s.sess.PollRecords(ctx, size)
		} else {
			fetches = s.cl.PollRecords(ctx, size)
		}
		cancel()
		polled := time.Now()
		if fetches.IsClientClosed() || s.pollCtx.Err() != nil && fetches.NumRecords() == 0 {
			break
		}
		s.h.Polled(fetches)
		if err := s.tables.release(time.Now(), s.log); err != nil { // the partitioned tables' updates due
			s.fail(err)
			break
		}
		if s.store != nil {
			// What was revoked since the sync is dropped before the
			// input in hand is processed (an input of it aborts the
			// batch), and what was restored since is adopted.
			if err := s.syncStore(s.pollCtx); err != nil {
				s.fail(err)
				break
			}
			s.store.state.Idle(time.Now())
		}
		fetches.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				s.setErr(kafkabpl.Wrapf(kafkabpl.ErrKafka, err, "topic %q partition %d", t, p))
			}
		})
		var err error
		recs := s.store.ordered(fetches.Records(), time.Now()) // several inputs' in timestamp order
		if s.sess != nil {
			err = s.transact(recs)
			if err != nil && producerLost(err) && s.workCtx.Err() == nil && lost < maxReinits {
				lost++
				err = s.reinit(err)
			} else if err == nil && len(fetches.Records()) > 0 {
				lost = 0
			}
		} else {
			err = s.atLeastOnce(recs)
		}
		if err != nil {
			s.fail(err)
			break
		}
		s.batchTook(len(fetches.Records()), time.Since(polled))
	}
	if s.store != nil {
		s.store.stopRestores()
	}
	if s.sess == nil {
		s.cl.AllowRebalance()
	}
}

// transact processes one batch in one transaction.
func (s *stream) transact(recs []*kgo.Record) error {
	if len(recs) == 0 && !s.store.closing() && !s.timers.anyDue() {
		return nil
	}
	if err := s.sess.Begin(); err != nil {
		return kafkabpl.Wrapf(kafkabpl.ErrKafka, err, "begin transaction")
	}
	var pr produced
	write := pr.produce(s)
	b, _, stopErr := s.process(recs, write)
	if stopErr == nil {
		stopErr = s.fireDue(&b, s.writeOutput(write))
	}
	if stopErr == nil {
		stopErr = s.endBatch(&b, write, nil)
	}
	flushErr := s.cl.Flush(s.workCtx)
	produceErr := pr.err()
	commit := stopErr == nil && flushErr == nil && produceErr == nil && !b.notHeld
	committed, err := s.sess.End(s.store.commitContext(s.workCtx), kgo.TransactionEndTry(commit)) // not past the inputs held
	if commit {
		s.h.Committed(transactionCommitErr(committed, err))
	}
	switch {
	case committed:
		s.add(b)
		if err := s.store.commit(); err != nil {
			return err // the changelog holds the batch: a restart reads it
		}
		s.totals.transactions.Add(1)
		s.notify(b)
	default:
		s.abortState()
		s.totals.aborted.Add(1)
	}
	switch {
	case stopErr != nil:
		return stopErr
	case produceErr != nil:
		return produceErr
	case flushErr != nil && s.workCtx.Err() != nil:
		return kafkabpl.Errorf(kafkabpl.ErrTimeout, "stopped before the batch in hand could be written; its transaction was aborted")
	case flushErr != nil:
		return kafkabpl.Wrapf(kafkabpl.ErrKafka, flushErr, "write")
	case err != nil:
		return kafkabpl.Wrapf(kafkabpl.ErrKafka, err, "end transaction")
	}
	return nil
}

// transactionCommitErr is the error of a transaction's end that tried to
// commit, as GroupHook.OnGroupCommit is told it: nil once committed.
func transactionCommitErr(committed bool, err error) error {
	switch {
	case committed:
		return nil
	case err != nil:
		return kafkabpl.Wrapf(kafkabpl.ErrKafka, err, "end transaction")
	}
	return kafkabpl.Errorf(kafkabpl.ErrKafka, "transaction aborted: the group rebalanced during the batch")
}

// maxReinits is how many times in a row, without a commit between, a
// stream re-initializes its producer before it fails instead.
const maxReinits = 5

// producerLost tells whether err says the brokers took the producer's
// transaction away: they aborted it once it outlasted its timeout, and
// bumped the producer's epoch, so the producer can write no more. A new
// one, with the same transactional id, can. OUT_OF_ORDER_SEQUENCE_NUMBER
// counts too: the brokers and the producer disagree on its sequences, which
// only a new epoch resets (kfake answered so, rarely, under the race
// detector; Kafka brokers have after some failures). The batch's
// transaction is aborted either way, so going on from the committed
// offsets loses and repeats nothing.
func producerLost(err error) bool {
	return errors.Is(err, kerr.InvalidProducerEpoch) || errors.Is(err, kerr.ProducerFenced) ||
		errors.Is(err, kerr.InvalidProducerIDMapping) || errors.Is(err, kerr.InvalidTxnState) ||
		errors.Is(err, kerr.OutOfOrderSequenceNumber)
}

// reinit replaces the stream's client after the brokers aborted its
// transaction: the old one leaves the group and is closed; the new one,
// with the same transactional id, gets a new epoch (fencing anything the
// old one left open), joins the group again and reads from the committed
// offsets, so what the aborted transaction read is read again, once.
func (s *stream) reinit(cause error) error {
	s.log(fmt.Sprintf("stream %s: the brokers aborted its transaction (%v); re-initializing its producer and going on from the committed offsets", s.h.ID(), cause))
	old := s.sess
	if s.store != nil {
		s.store.forget() // the new client's group assigns the partitions anew; they are restored again
	}
	oldStop := s.h.StopClient()
	if detached, _ := s.h.LeaveGroup(s.workCtx); detached {
		s.h.CloseDetached(old, oldStop)
	} else {
		old.Close()
		oldStop()
	}
	opts, stop := stoppable(s.opts)
	sess, err := kgo.NewGroupTransactSession(opts...)
	if err != nil {
		stop()
		return kafkabpl.Wrapf(kafkabpl.ErrKafka, err, "re-initialize the producer after %v", cause)
	}
	s.mu.Lock() // status reads s.cl beside this goroutine
	s.sess, s.cl = sess, sess.Client()
	s.mu.Unlock()
	s.h.SetClient(s.cl, stop)
	s.subscribeRepartition() // it exists: the first client made it
	s.totals.reinits.Add(1)
	return nil
}

// atLeastOnce processes one batch: it writes the outputs, waits for the
// brokers to acknowledge them, then commits the inputs it processed.
func (s *stream) atLeastOnce(recs []*kgo.Record) error {
	defer s.cl.AllowRebalance()
	if len(recs) == 0 && !s.store.closing() && !s.timers.anyDue() {
		return nil
	}
	var pr produced
	write := pr.produce(s)
	b, done, stopErr := s.process(recs, write)
	if stopErr == nil {
		stopErr = s.fireDue(&b, s.writeOutput(write))
	}
	flush := func() error {
		if err := s.cl.Flush(s.workCtx); err != nil {
			return kafkabpl.Errorf(kafkabpl.ErrTimeout, "stopped before the outputs of the batch in hand were acknowledged; their inputs stay uncommitted")
		}
		return pr.err()
	}
	if stopErr == nil || len(done) > 0 {
		if err := s.endBatch(&b, write, flush); err != nil {
			s.abortState()
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if len(done) > 0 {
		ctx, cancel := context.WithTimeout(s.workCtx, s.cfg.RequestTimeout())
		defer cancel()
		if err := s.cl.CommitRecords(ctx, done...); err != nil {
			err = s.h.RequestError(ctx, err)
			s.h.Committed(err)
			return err
		}
		s.h.Committed(nil)
		s.totals.transactions.Add(1)
	}
	if err := s.store.commit(); err != nil {
		return err
	}
	s.add(b)
	s.notify(b)
	return stopErr
}

// notify calls the spec's OnCommit after a batch that did something
// committed.
func (s *stream) notify(b batchCounts) {
	if s.spec.OnCommit != nil && b.processed+b.produced+b.fired > 0 {
		if err := s.spec.OnCommit(s.workCtx); err != nil {
			s.log(fmt.Sprintf("stream %s: on-commit: %v", s.h.ID(), err))
		}
	}
}

// add adds a committed batch to the totals.
func (s *stream) add(b batchCounts) {
	s.totals.processed.Add(b.processed)
	s.totals.produced.Add(b.produced)
	s.totals.dropped.Add(b.dropped)
	s.totals.skipped.Add(b.skipped)
	s.totals.deadLettered.Add(b.deadLettered)
	if s.timers != nil {
		s.timers.fired.Add(b.fired)
	}
	if s.store != nil {
		s.store.repartitioned.Add(b.repartitioned)
		s.store.late.Add(b.late)
	}
	if b.lastErr != nil {
		s.setErr(b.lastErr)
	}
}

func (s *stream) setErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == Running {
		s.err = err
	}
}

// fail stops the stream with err. An error that comes of destroy having
// given up waiting for the batch in hand is no failure: that batch was
// abandoned, and is only logged.
func (s *stream) fail(err error) {
	s.mu.Lock()
	abandoned := s.workCtx.Err() != nil
	if s.state == Running && !abandoned {
		s.state, s.err = Failed, err
	}
	s.mu.Unlock()
	if abandoned {
		s.log(fmt.Sprintf("stream %s: the batch in hand was abandoned: %v", s.h.ID(), err))
		return
	}
	s.log(fmt.Sprintf("stream %s failed: %v", s.h.ID(), err))
}

// Stop stops the stream for destroy (it is the handle's
// kafkabpl.Extension): it finishes and commits the batch in
// hand, then leaves the group, each within request-timeout or until ctx
// ends (then the open transaction is aborted). A stream that had failed
// stops too; its failure stays in its status.
func (s *stream) Stop(ctx context.Context) (detached bool, err error) {
	s.stopPoll()
	wait := time.NewTimer(s.cfg.RequestTimeout())
	defer wait.Stop()
	select {
	case <-s.done:
	case <-ctx.Done():
	case <-wait.C:
	}
	s.cancelWork() // a batch still in hand is aborted now
	<-s.done
	s.followers.Wait()
	s.closeDisks()
	s.mu.Lock()
	failed := s.state == Failed
	if !failed {
		s.state = Stopped
	}
	failure := s.err
	s.mu.Unlock()
	s.h.CloseDialer()
	detached, _ = s.h.LeaveGroup(context.WithoutCancel(ctx))
	st := fmt.Sprintf("processed %d, produced %d, dropped %d, skipped %d, dead-lettered %d, %d transactions, %d aborted",
		s.totals.processed.Load(), s.totals.produced.Load(), s.totals.dropped.Load(), s.totals.skipped.Load(),
		s.totals.deadLettered.Load(), s.totals.transactions.Load(), s.totals.aborted.Load())
	if n := s.totals.reinits.Load(); n > 0 {
		st += fmt.Sprintf(", producer re-initialized %d times", n)
	}
	if failed {
		s.log(fmt.Sprintf("stream %s stopped after failing (%v): %s", s.h.ID(), failure, st))
		return detached, nil
	}
	s.log(fmt.Sprintf("stream %s stopped: %s", s.h.ID(), st))
	return detached, nil
}

// rebalanceFn is a kgo group callback (kgo.OnPartitionsAssigned's).
type rebalanceFn = func(context.Context, *kgo.Client, map[string][]int32)

// stoppable adds to a kgo client's opts a context of its own, and returns
// what ends it (see kafkabpl.Handle.SetClient).
func stoppable(opts []kgo.Opt) ([]kgo.Opt, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	return append(opts[:len(opts):len(opts)], kgo.WithContext(ctx)), cancel
}
