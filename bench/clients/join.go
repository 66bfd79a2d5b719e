package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/benchloop"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The stream–table join workload (issue 34): joinParams.records inputs
// (key i%keys, the 100-byte value) joined with a compacted table topic of
// joinParams.keys keys (key k's value "t<k>"), each output the input's key
// and "<joined>|<value>", exactly-once, to a new topic, a new group each
// run. Timed from starting the stream until the group's committed offsets
// reach every input, the table's read included on both sides (the library
// reads its tables before its first input, kgo's loop reads the table
// into a map first). The output is read back read_committed and every
// record checked. The sides: kgo, the loop a franz-go program writes (the
// table into a map, then a GroupTransactSession looking each input up and
// producing its output); Runtime.Start with Tables, Join and a Go
// transform; kafka-stream with "tables", "join" and a BPL function
// through the evaluator.

type joinParams struct {
	records, keys int
}

const (
	joinIn    = "join-in"
	joinTable = "join-table"
)

// joinedValue is the output every side writes for key k and value v.
func joinedValue(k, v []byte) []byte {
	out := make([]byte, 0, 1+len(k)+1+len(v))
	out = append(append(append(append(out, 't'), k...), '|'), v...)
	return out
}

// fillJoinTopics writes the table (compacted) and the inputs, once.
func fillJoinTopics(ctx context.Context, adm *kadm.Client, p *params, j *joinParams) error {
	compact := "compact"
	if _, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &compact}, joinTable); err != nil {
		return err
	}
	if err := createTopics(ctx, adm, joinIn); err != nil {
		return err
	}
	cl, err := kgo.NewClient(seeds(p), kgo.ProducerLinger(0))
	if err != nil {
		return err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, 0, 10000)
	flush := func() error {
		err := cl.ProduceSync(ctx, recs...).FirstErr()
		recs = recs[:0]
		return err
	}
	for k := range j.keys {
		key := strconv.Itoa(k)
		recs = append(recs, &kgo.Record{Topic: joinTable, Key: []byte(key), Value: []byte("t" + key)})
		if len(recs) == cap(recs) || k == j.keys-1 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for i := range j.records {
		recs = append(recs, &kgo.Record{Topic: joinIn, Key: []byte(strconv.Itoa(i % j.keys)), Value: p.valueB})
		if len(recs) == cap(recs) || i == j.records-1 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// joinStreamer is one way of running the join.
type joinStreamer interface {
	name() string
	start(ctx context.Context, p *params, j *joinParams, out, group string) (stop func() error, err error)
}

var joinTitle = map[string]string{
	"kgo":     "raw kgo loop: the table into a map, then transactions (franz-go), absolute median",
	"gojoin":  "Runtime.Start, Tables and Join, a Go transform",
	"bpljoin": "kafka-stream \"tables\" and \"join\", a BPL function through the evaluator",
}

// runJoins runs the join table's rounds and prints it.
func runJoins(ctx context.Context, adm *kadm.Client, p *params, j *joinParams, rounds int) error {
	if err := fillJoinTopics(ctx, adm, p, j); err != nil {
		return fmt.Errorf("filling %s and %s: %w", joinTable, joinIn, err)
	}
	streamers := []joinStreamer{kgoJoin{}, goJoin{}, bplJoin{}}
	ws := []workload{{key: "join", title: "stream–table join, exactly-once"}}
	res := newResults(namesOf(streamers), ws)
	res.titles = joinTitle
	res.bench = map[string]benchRow{"join": {"Join", j.records, "join"}}
	fails := runSides("join", streamers, rounds, res, func(s joinStreamer, id string) (time.Duration, uint64, error) {
		return joinOnce(ctx, adm, p, j, s, "out-"+id, "g-"+id)
	})
	fmt.Printf("Stream–table join: %d records of %d bytes (%d keys) from one partition joined with a compacted table of %d keys (read whole first), an output per record to a new topic, exactly-once, a new group each run, %d rounds\n\n",
		j.records, valueSize, j.keys, j.keys, rounds)
	res.print(os.Stdout, fails)
	fmt.Println()
	q := *p
	q.records = j.records
	res.printAllocs(os.Stdout, &q)
	if len(fails) > 0 {
		return fmt.Errorf("%d join workloads failed (see the table)", len(fails))
	}
	return nil
}

// joinOnce times one join run and checks what it wrote.
func joinOnce(ctx context.Context, adm *kadm.Client, p *params, j *joinParams, s joinStreamer, out, group string) (time.Duration, uint64, error) {
	if err := createTopics(ctx, adm, out); err != nil {
		return 0, 0, err
	}
	defer adm.DeleteTopics(ctx, out)
	d, allocs, err := timeRun(ctx, s.name(), "join", func(ctx context.Context) (func() error, error) {
		return s.start(ctx, p, j, out, group)
	}, func(begin time.Time) error {
		return waitCommitted(ctx, adm, group, joinIn, int64(j.records), begin.Add(180*time.Second))
	})
	if err != nil {
		return 0, 0, err
	}
	return d, allocs, verifyJoin(ctx, p, j, out)
}

// verifyJoin reads out read_committed and checks it holds every input's
// output, in order: key i%keys, value "t<key>|<value>".
func verifyJoin(ctx context.Context, p *params, j *joinParams, out string) error {
	cl, err := kgo.NewClient(seeds(p), kgo.ConsumeTopics(out), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return err
	}
	defer cl.Close()
	got := 0
	for got < j.records {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := fs.Err0(); err != nil {
			return fmt.Errorf("verifying %s after %d outputs: %w", out, got, err)
		}
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			key := p.keyBytes[got%j.keys]
			if got >= j.records || !bytes.Equal(r.Key, key) || !bytes.Equal(r.Value, joinedValue(key, p.valueB)) {
				return fmt.Errorf("%s: output %d: key %q value %.30q..., want key %q", out, got, r.Key, r.Value, key)
			}
			got++
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if fs := cl.PollFetches(pctx); fs.NumRecords() > 0 {
		return fmt.Errorf("%s: %d outputs more than the %d inputs", out, fs.NumRecords(), j.records)
	}
	return nil
}

// kgoJoin is the join as a franz-go program writes it.
type kgoJoin struct{}

func (kgoJoin) name() string { return "kgo" }

func (kgoJoin) start(ctx context.Context, p *params, j *joinParams, out, group string) (func() error, error) {
	table, err := benchloop.ReadTable(ctx, seeds(p), joinTable)
	if err != nil {
		return nil, err
	}
	sess, err := kgo.NewGroupTransactSession(seeds(p), kgo.ConsumerGroup(group), kgo.ConsumeTopics(joinIn),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.TransactionalID(group+"-txn"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0)) // as the library sends
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.Background())
	var processed atomic.Int64
	done := make(chan error, 1)
	go func() { done <- benchloop.Join(lctx, sess, table, out, &processed) }()
	return func() error {
		for deadline := time.Now().Add(5 * time.Second); processed.Load() < int64(j.records) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
		return <-done
	}, nil
}

// libJoinStop stops the library's stream id once its status shows every
// input processed, each with an output.
func libJoinStop(lib *kafkabpl.Library, id string, j *joinParams, closeAll func()) func() error {
	return func() error {
		ctx := context.Background()
		defer closeAll()
		var st *stream.Status
		var err error
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			if st, err = stream.Of(lib).Status(ctx, id); err != nil {
				return err
			}
			if st.Processed >= int64(j.records) || time.Now().After(deadline) {
				break
			}
		}
		if st.State != stream.Running {
			return fmt.Errorf("stream %s: %v", st.State, st.LastError)
		}
		if st.Processed != int64(j.records) || st.Produced != int64(j.records) || st.Dropped != 0 {
			return fmt.Errorf("stream processed %d, produced %d, dropped %d; want %d, %d, 0", st.Processed, st.Produced, st.Dropped, j.records, j.records)
		}
		if len(st.Tables) != 1 || st.Tables[0].Keys != int64(j.keys) {
			return fmt.Errorf("tables %+v; want one of %d keys", st.Tables, j.keys)
		}
		_, err = lib.Destroy(ctx, id)
		return err
	}
}

// goJoin is Runtime.Start joining with the table and a Go transform
// writing "<joined>|<value>", decoded and encoded by the String serdes as
// a Go program writes it.
type goJoin struct{}

func (goJoin) name() string { return "gojoin" }

func (goJoin) start(ctx context.Context, p *params, j *joinParams, out, group string) (func() error, error) {
	lib := kafkabpl.New()
	lib.SetLogOutput(io.Discard)
	transform := func(_ context.Context, in *kafkabpl.Record) ([]stream.Output, error) {
		t, _ := in.Joined()
		s, _ := t.(string)
		v, _ := in.Value().(string)
		return []stream.Output{{Message: kafkabpl.Message{Key: in.Key(), Value: s + "|" + v}}}, nil
	}
	id, err := stream.Of(lib).Start(ctx, map[string]any{"servers": p.servers, "group": group},
		stream.Spec{From: []string{joinIn}, To: out, Guarantee: stream.ExactlyOnce, Transform: transform,
			Tables: []stream.Table{{Name: "t", Topic: joinTable}}, Join: &stream.Join{Table: "t"}})
	if err != nil {
		lib.Close(ctx)
		return nil, err
	}
	return libJoinStop(lib, id, j, func() { lib.Close(context.Background()) }), nil
}

// bplJoin is kafka-stream with "tables" and "join", its transform a BPL
// function, called by a script the evaluator runs.
type bplJoin struct{}

func (bplJoin) name() string { return "bpljoin" }

const joinScript = `
(kafka-stream (list "servers" => servers "group" => group)
  "from" => from "to" => to "guarantee" => "exactly-once"
  "tables" => (list "t" => table) "join" => "t"
  "transform" => (function (in) (concat (get in "joined") "|" (get in "value"))))
`

func (bplJoin) start(ctx context.Context, p *params, j *joinParams, out, group string) (func() error, error) {
	lib, id, closeAll, err := runStreamScript(ctx, "join.bpl", joinScript,
		map[string]any{"servers": p.servers, "group": group, "from": joinIn, "to": out, "table": joinTable})
	if err != nil {
		return nil, err
	}
	return libJoinStop(lib, id, j, closeAll), nil
}
