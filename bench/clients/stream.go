package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/functions"
	"github.com/brain4it/kafkabpl/internal/benchloop"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The stream workloads: an identity transform from the drain topic to a
// new output topic, with a new group, under each guarantee. Raw kgo runs
// the loop a franz-go program writes (GroupTransactSession for
// exactly-once; poll, produce, flush, commit for at-least-once); the
// library runs Runtime.Start with a Go transform, and kafka-stream with a
// BPL function through the evaluator. A run is timed from starting the
// stream until the group's committed offsets on the input reach every
// record (one watcher for all, kadm every 2 ms); stopping it and the
// checks are not timed. The output is read back and checked record by
// record, as the produce workloads' are.

// streamer is one way of running a stream.
type streamer interface {
	name() string
	// start starts streaming in to out in group and returns a function
	// that stops the stream and says how many outputs it wrote.
	start(ctx context.Context, p *params, in, out, group string, exactlyOnce bool) (stop func() (int64, error), err error)
}

var streamTitle = map[string]string{
	"kgo":       "raw kgo loop (franz-go), absolute median",
	"gostream":  "Runtime.Start, a Go transform",
	"bplstream": "kafka-stream, a BPL function through the evaluator",
}

func streamWorkloads() []workload {
	return []workload{{key: "eos", title: "exactly-once"}, {key: "alo", title: "at-least-once"}}
}

// runStreams runs the stream table's rounds and prints it.
func runStreams(ctx context.Context, adm *kadm.Client, p *params, rounds int) error {
	streamers := []streamer{kgoStream{}, goStream{}, bplStream{}}
	ws := streamWorkloads()
	res := newResults(namesOf(streamers), ws)
	res.titles = streamTitle
	fails := map[string]string{}
	n := 0
	for r := range rounds + 1 { // round 0 warms up, untimed
		for wi, w := range ws {
			for si := range streamers {
				s := streamers[(si+r+wi)%len(streamers)]
				if _, failed := fails[s.name()+"/"+w.key]; failed {
					continue
				}
				n++
				id := fmt.Sprintf("%s-%s-%d", w.key, s.name(), n)
				d, allocs, err := streamOnce(ctx, adm, p, s, "drain", "out-"+id, "g-"+id, w.key == "eos")
				if r == 0 {
					if err != nil {
						fmt.Fprintf(os.Stderr, "warm-up: %s %s: %v\n", s.name(), w.key, err)
					}
					continue
				}
				if err != nil {
					fails[s.name()+"/"+w.key] = err.Error()
					fmt.Fprintf(os.Stderr, "round %d: %s %s: FAILED: %v\n", r, s.name(), w.key, err)
					continue
				}
				res.add(w.key, s.name(), r, d, allocs)
				fmt.Fprintf(os.Stderr, "round %d: %-9s %-4s %v\n", r, s.name(), w.key, d.Round(time.Millisecond))
			}
		}
	}
	fmt.Printf("Streams: %d records of %d bytes (keyed) from one partition to a new topic of one partition, an identity transform, a new group each run, %d rounds\n\n", p.records, valueSize, rounds)
	res.print(os.Stdout, fails)
	fmt.Println()
	res.printAllocs(os.Stdout, p)
	if len(fails) > 0 {
		return fmt.Errorf("%d stream workloads failed (see the table)", len(fails))
	}
	return nil
}

// streamOnce times one stream run and checks what it wrote.
func streamOnce(ctx context.Context, adm *kadm.Client, p *params, s streamer, in, out, group string, eos bool) (time.Duration, uint64, error) {
	if err := createTopics(ctx, adm, out); err != nil {
		return 0, 0, err
	}
	defer adm.DeleteTopics(ctx, out)
	var produced int64
	d, allocs, err := timeRun(ctx, s.name(), guarantee(eos).String(), func(ctx context.Context) (func() error, error) {
		stop, err := s.start(ctx, p, in, out, group, eos)
		if err != nil {
			return nil, err
		}
		return func() (err error) { produced, err = stop(); return err }, nil
	}, func(begin time.Time) error {
		return waitCommitted(ctx, adm, group, in, int64(p.records), begin.Add(60*time.Second))
	})
	if err != nil {
		return 0, 0, err
	}
	if produced != int64(p.records) {
		return 0, 0, fmt.Errorf("the stream says it wrote %d outputs, want %d", produced, p.records)
	}
	return d, allocs, verifyTopic(ctx, p, out, p.records)
}

// kgoStream is the loop a franz-go program writes.
type kgoStream struct{}

func (kgoStream) name() string { return "kgo" }

func (kgoStream) start(_ context.Context, p *params, in, out, group string, eos bool) (func() (int64, error), error) {
	opts := []kgo.Opt{seeds(p), kgo.ConsumerGroup(group), kgo.ConsumeTopics(in),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0)} // as the library sends
	ctx, cancel := context.WithCancel(context.Background())
	var produced atomic.Int64
	done := make(chan error, 1)
	if eos {
		sess, err := kgo.NewGroupTransactSession(append(opts, kgo.TransactionalID(group+"-txn"),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
		if err != nil {
			cancel()
			return nil, err
		}
		go func() { done <- benchloop.Transact(ctx, sess, out, &produced) }()
	} else {
		cl, err := kgo.NewClient(append(opts, kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll())...)
		if err != nil {
			cancel()
			return nil, err
		}
		go func() { done <- benchloop.Commit(ctx, cl, out, &produced) }()
	}
	return func() (int64, error) {
		// The loop counts a batch when End or the commit returns, a
		// moment after the watcher saw it committed.
		for deadline := time.Now().Add(5 * time.Second); produced.Load() < int64(p.records) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
		err := <-done
		return produced.Load(), err
	}, nil
}

func guarantee(eos bool) stream.Guarantee {
	if eos {
		return stream.ExactlyOnce
	}
	return stream.AtLeastOnce
}

// libStop stops the library's stream id once its status shows every
// record processed, and returns what it wrote.
func libStop(lib *kafkabpl.Library, id string, p *params, closeAll func()) func() (int64, error) {
	return func() (int64, error) {
		ctx := context.Background()
		defer closeAll()
		var st *stream.Status
		var err error
		// The counts follow the commit the watcher saw by a moment.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			if st, err = stream.Of(lib).Status(ctx, id); err != nil {
				return 0, err
			}
			if st.Processed >= int64(p.records) || time.Now().After(deadline) {
				break
			}
		}
		if st.State != stream.Running {
			return 0, fmt.Errorf("stream %s: %v", st.State, st.LastError)
		}
		if _, err := lib.Destroy(ctx, id); err != nil {
			return 0, err
		}
		return st.Produced, nil
	}
}

// goStream is Runtime.Start with a Go transform that returns each input's
// key and value, decoded and encoded again by the String serdes: identity
// as a Go program writes it.
type goStream struct{}

func (goStream) name() string { return "gostream" }

func (goStream) start(ctx context.Context, p *params, in, out, group string, eos bool) (func() (int64, error), error) {
	lib := kafkabpl.New()
	lib.SetLogOutput(io.Discard)
	identity := func(_ context.Context, r *kafkabpl.Record) ([]stream.Output, error) {
		return []stream.Output{{Message: kafkabpl.Message{Key: r.Key(), Value: r.Value()}}}, nil
	}
	id, err := stream.Of(lib).Start(ctx, map[string]any{"servers": p.servers, "group": group},
		stream.Spec{From: []string{in}, To: out, Transform: identity, Guarantee: guarantee(eos)})
	if err != nil {
		lib.Close(ctx)
		return nil, err
	}
	return libStop(lib, id, p, func() { lib.Close(context.Background()) }), nil
}

// bplStream is kafka-stream called by a script run by the evaluator, with
// a BPL function as the transform: it returns each input's value, which
// the stream writes with the input's key.
type bplStream struct{}

func (bplStream) name() string { return "bplstream" }

const streamScript = `
(kafka-stream (list "servers" => servers "group" => group)
  "from" => from "to" => to "guarantee" => guarantee
  "transform" => (function (in) (get in "value")))
`

func (bplStream) start(ctx context.Context, p *params, in, out, group string, eos bool) (func() (int64, error), error) {
	lib, id, closeAll, err := runStreamScript(ctx, "stream.bpl", streamScript,
		map[string]any{"servers": p.servers, "group": group, "from": in, "to": out, "guarantee": guarantee(eos).String()})
	if err != nil {
		return nil, err
	}
	return libStop(lib, id, p, closeAll), nil
}

// runStreamScript runs a script whose value is a kafka-stream's id, with
// the library's functions and globals defined, and returns the library,
// the id and what closes both.
func runStreamScript(ctx context.Context, name, script string, globals map[string]any) (*kafkabpl.Library, string, func(), error) {
	lib := kafkabpl.New()
	lib.SetLogOutput(io.Discard)
	interp := bpl.New(io.Discard)
	for name, f := range functions.Table(lib) {
		interp.Define(name, f)
	}
	for k, v := range globals {
		interp.SetGlobal(k, v)
	}
	closeAll := func() { interp.Close(); lib.Close(context.Background()) }
	var id string
	err := interp.Run(ctx, name, script, func(v any) { id, _ = v.(string) })
	if err == nil && id == "" {
		err = errors.New("kafka-stream returned no stream id")
	}
	if err != nil {
		closeAll()
		return nil, "", nil, err
	}
	return lib, id, closeAll, nil
}

// waitCommitted waits, polling every 2 ms, until group's committed offsets
// on topic count want records; more, or the deadline, is an error.
func waitCommitted(ctx context.Context, adm *kadm.Client, group, topic string, want int64, deadline time.Time) error {
	for {
		n, err := benchloop.Committed(ctx, adm, group, topic)
		if err != nil {
			return err
		}
		if n == want {
			return nil
		}
		if n > want || time.Now().After(deadline) {
			return fmt.Errorf("group %s committed %d of %d", group, n, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
