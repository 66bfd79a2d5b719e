package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The re-keyed windowed count (issue 34): the windowed count's inputs
// (win.records of win.keys keys over win.windows tumbling windows of one
// second) counted per site, site = key % sites, rather than per key: each
// input goes, with its site as key, to the repartition topic
// "<group>-counts-repartition" (one partition, as the input), and the
// counts are kept from that topic, each step in the same transactions.
// Exactly-once, a new group each run, timed from starting the stream
// until the group's committed offsets reach every input and every
// repartition record (the watcher of the other tables, on both topics).
// The output is read back read_committed and checked: every closed window
// of every site once, with its count. The sides: raw kgo, one
// GroupTransactSession reading the input and the repartition topic,
// writing the repartition records, and counting them as the windowed
// count's loop does, changelog included; Runtime.Start with Rekey and a
// tumbling Window, a Go aggregate.

const (
	rekeyTopic = "rekey-in"
	rekeyStore = winStore
)

var rekeyTitle = map[string]string{
	"kgo":     "raw kgo loop writing the repartition topic and the changelog (franz-go), absolute median",
	"gorekey": "Runtime.Start, Rekey and Window Tumbling, a Go aggregate",
}

// siteOf is an input key's site: key % sites, as text.
func siteOf(key []byte, sites int) string {
	k, _ := strconv.Atoi(string(key))
	return strconv.Itoa(k % sites)
}

// rekeyStreamer is one way of running the re-keyed count.
type rekeyStreamer interface {
	name() string
	start(ctx context.Context, p *params, w *winParams, sites int, out, group string) (stop func() error, err error)
}

// runRekeys runs the re-keyed count's rounds and prints it.
func runRekeys(ctx context.Context, adm *kadm.Client, p *params, w *winParams, sites, rounds int) error {
	if w.keys%sites != 0 {
		return fmt.Errorf("-rekey-sites %d must divide -window-keys %d", sites, w.keys)
	}
	if err := fillWindowTopic(ctx, adm, p, w, rekeyTopic); err != nil {
		return fmt.Errorf("filling %s: %w", rekeyTopic, err)
	}
	streamers := []rekeyStreamer{kgoRekey{}, goRekey{}}
	ws := []workload{{key: "rekey", title: "re-keyed windowed count, exactly-once"}}
	res := newResults(namesOf(streamers), ws)
	res.titles = rekeyTitle
	res.bench = map[string]benchRow{"rekey": {"RekeyWindow", w.records, "rekey"}}
	fails := runSides("rekey", streamers, rounds, res, func(s rekeyStreamer, id string) (time.Duration, uint64, error) {
		return rekeyOnce(ctx, adm, p, w, sites, s, "out-"+id, "g-"+id)
	})
	fmt.Printf("Re-keyed windowed count: %d records (%d keys) from one partition, re-keyed to %d sites through a repartition topic, timestamps over %d tumbling windows of %d ms, %d results (%d closed windows x %d sites) to a new topic, exactly-once, a new group each run, %d rounds\n\n",
		w.records, w.keys, sites, w.windows, winSize, w.closedWindows()*sites, w.closedWindows(), sites, rounds)
	res.print(os.Stdout, fails)
	fmt.Println()
	q := *p
	q.records = w.records
	res.printAllocs(os.Stdout, &q)
	if len(fails) > 0 {
		return fmt.Errorf("%d re-keyed workloads failed (see the table)", len(fails))
	}
	return nil
}

// rekeyOnce times one re-keyed run and checks what it wrote.
func rekeyOnce(ctx context.Context, adm *kadm.Client, p *params, w *winParams, sites int, s rekeyStreamer, out, group string) (time.Duration, uint64, error) {
	if err := createTopics(ctx, adm, out); err != nil {
		return 0, 0, err
	}
	repartition := group + "-" + rekeyStore + "-repartition"
	defer adm.DeleteTopics(ctx, out, group+"-"+rekeyStore+"-changelog", repartition)
	d, allocs, err := timeRun(ctx, s.name(), "rekey", func(ctx context.Context) (func() error, error) {
		return s.start(ctx, p, w, sites, out, group)
	}, func(begin time.Time) error {
		deadline := begin.Add(180 * time.Second)
		if err := waitCommitted(ctx, adm, group, rekeyTopic, int64(w.records), deadline); err != nil {
			return err
		}
		inputs := time.Since(begin) // the inputs' share: their repartition records written
		if err := waitRepartition(ctx, adm, group, repartition, deadline); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s rekey: inputs committed after %v, the repartition topic's records after %v\n",
			s.name(), inputs.Round(time.Millisecond), time.Since(begin).Round(time.Millisecond))
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	bySite := *w
	bySite.keys = sites
	return d, allocs, verifyWindows(ctx, p, &bySite, out)
}

// waitRepartition waits, polling every 2 ms, until group's committed
// offsets on the repartition topic (one partition, written in
// transactions) are past its last record: its end offset less the last
// transaction's commit marker. Called once every input is committed, so
// that no more is written to it.
func waitRepartition(ctx context.Context, adm *kadm.Client, group, topic string, deadline time.Time) error {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return err
	}
	end, ok := ends.Lookup(topic, 0)
	if !ok || end.Err != nil {
		return fmt.Errorf("the end offset of %s: %v", topic, end.Err)
	}
	for {
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return err
		}
		if o, ok := offs.Lookup(topic, 0); ok && o.Err == nil && o.At >= end.Offset-1 {
			return nil
		}
		if time.Now().After(deadline) {
			o, _ := offs.Lookup(topic, 0)
			return fmt.Errorf("group %s committed %d of %s, want %d", group, o.At, topic, end.Offset-1)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// kgoRekey is the re-keyed count as a franz-go program writes it.
type kgoRekey struct{}

func (kgoRekey) name() string { return "kgo" }

func (kgoRekey) start(ctx context.Context, p *params, w *winParams, sites int, out, group string) (func() error, error) {
	changelog := group + "-" + rekeyStore + "-changelog"
	repartition := group + "-" + rekeyStore + "-repartition"
	admCl, err := kgo.NewClient(seeds(p))
	if err != nil {
		return nil, err
	}
	adm := kadm.NewClient(admCl)
	compact := "compact"
	_, err = adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &compact}, changelog)
	if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
		_, err = adm.CreateTopic(ctx, 1, -1, nil, repartition)
	}
	admCl.Close()
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return nil, err
	}
	sess, err := kgo.NewGroupTransactSession(seeds(p), kgo.ConsumerGroup(group), kgo.ConsumeTopics(rekeyTopic, repartition),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.TransactionalID(group+"-txn"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0)) // as the library sends
	if err != nil {
		return nil, err
	}
	rekey := func(r *kgo.Record) *kgo.Record {
		if r.Topic != rekeyTopic {
			return nil
		}
		return &kgo.Record{Topic: repartition, Key: []byte(siteOf(r.Key, sites)), Value: r.Value,
			Headers: r.Headers, Timestamp: r.Timestamp}
	}
	return startCountWindows(sess, out, changelog, rekey, int64(w.records)), nil
}

// goRekey is Runtime.Start with Rekey (the site, as the kgo loop's) and
// a tumbling Window with a Go aggregate counting.
type goRekey struct{}

func (goRekey) name() string { return "gorekey" }

func (goRekey) start(ctx context.Context, p *params, w *winParams, sites int, out, group string) (func() error, error) {
	lib := kafkabpl.New()
	lib.SetLogOutput(io.Discard)
	count := func(_ context.Context, _ *kafkabpl.Record, acc any) (any, error) {
		n, _ := acc.(int64)
		return n + 1, nil
	}
	rekey := func(_ context.Context, in *kafkabpl.Record) (any, error) {
		return siteOf(in.KeyBytes(), sites), nil
	}
	id, err := stream.Of(lib).Start(ctx, map[string]any{"servers": p.servers, "group": group, "value-serializer": "bpl"},
		stream.Spec{From: []string{rekeyTopic}, To: out, Guarantee: stream.ExactlyOnce, Store: rekeyStore, Rekey: rekey,
			Window: &stream.Window{Kind: stream.Tumbling, Size: winSize * time.Millisecond, Aggregate: count}})
	if err != nil {
		lib.Close(ctx)
		return nil, err
	}
	return func() error {
		defer lib.Close(context.Background())
		var st *stream.Status
		want := int64(w.closedWindows() * sites)
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			if st, err = stream.Of(lib).Status(ctx, id); err != nil {
				return err
			}
			// Processed counts each input and its repartition record.
			if st.Processed >= 2*int64(w.records) && st.Produced >= want || time.Now().After(deadline) {
				break
			}
		}
		if st.State != stream.Running {
			return fmt.Errorf("stream %s: %v", st.State, st.LastError)
		}
		if st.Processed != 2*int64(w.records) || st.Produced != want || st.Store == nil || st.Store.Repartitioned != int64(w.records) {
			return fmt.Errorf("stream processed %d, produced %d, store %+v; want %d, %d, %d repartitioned",
				st.Processed, st.Produced, st.Store, 2*w.records, want, w.records)
		}
		_, err = lib.Destroy(ctx, id)
		return err
	}, nil
}
