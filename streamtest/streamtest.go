// Package streamtest runs kafkabpl streams in virtual time, for tests: a
// five-minute window or a ten-minute silence takes no time at all.
//
// [Run] starts an in-memory Kafka-compatible cluster (franz-go's kfake on
// its virtual network, no sockets) and a [kafkabpl.Library] connected to
// it, inside a testing/synctest bubble, where the clock moves only when
// every goroutine of the test waits. Streams started there run the
// library's own code, as in production: the same batches and
// transactions, window closing, grace, timers, silences, tables and
// exactly-once. [Driver.Advance] moves the clock; [Driver.Send] writes
// inputs, with the timestamps they give; [Driver.Read] returns what a
// read_committed consumer has read of an output topic.
//
// [Script] runs a BPL test script the same way, with (advance ms),
// (read-topic topic) and (assert-equal got want what).
//
// Tests that use it must be built with the "synctests" build tag
// (go test -tags synctests), which makes franz-go's locks channels that
// synctest can wait on; Run fails the test without it.
//
//	func TestSilence(t *testing.T) {
//		streamtest.Run(t, func(d *streamtest.Driver) {
//			d.Stream(map[string]any{"group": "watch"}, spec)
//			d.Send("readings", kafkabpl.Message{Key: "d1", Value: "20"})
//			d.Advance(10 * time.Minute)
//			if got := d.Read("alarms"); len(got) != 1 { ... }
//		})
//	}
package streamtest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Driver is a test's cluster and library, in virtual time. Its methods
// fail the test on an error; call them from the function given to Run
// only.
type Driver struct {
	T       *testing.T
	Lib     *kafkabpl.Library
	Servers string // the cluster's addresses, for a config's "servers"

	producer string
	readers  map[string]*reader
}

// reader is an output topic's consumer, and what it has read.
type reader struct {
	id   string
	recs []kafkabpl.Record
}

// Run runs fn in a synctest bubble with a fresh cluster (one broker,
// topics created on first use with the given partition count, 1 by
// default) and library, which it closes when fn returns.
func Run(t *testing.T, fn func(d *Driver), opts ...Option) {
	t.Helper()
	if !virtualClock {
		t.Fatal(errNoTag)
	}
	bubble(t, func(t *testing.T, err error) { t.Errorf("streamtest: %v", err) }, fn, opts)
}

// bubble is Run, reporting the cluster's and the library's errors (it
// starts one, closes the other) with fail rather than failing the test.
func bubble(t *testing.T, fail func(t *testing.T, err error), fn func(d *Driver), opts []Option) {
	o := newOptions(opts)
	synctest.Test(t, func(t *testing.T) {
		var network kfake.VirtualNetwork
		c, err := kfake.NewCluster(kfake.ListenFn(network.Listen), kfake.Ports(9092), kfake.NumBrokers(1),
			kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(o.partitions))
		if err != nil {
			fail(t, fmt.Errorf("start the cluster: %w", err))
			return
		}
		defer c.Close()
		lib := kafkabpl.New()
		lib.SetDialer(network.DialContext)
		d := &Driver{T: t, Lib: lib, Servers: strings.Join(c.ListenAddrs(), ","), readers: map[string]*reader{}}
		defer func() {
			if err := lib.Close(context.Background()); err != nil {
				fail(t, fmt.Errorf("close the library: %w", err))
			}
		}()
		fn(d)
	})
}

// errNoTag is why Run refuses to run in a build without the tag.
const errNoTag = `streamtest: build with -tags synctests ("go test -tags synctests", "go install -tags synctests ./cmd/kafkabpl"): without it franz-go's clients can deadlock in virtual time`

// VirtualClock reports whether this build can run streams in virtual
// time: franz-go built with the "synctests" tag, which Run needs.
func VirtualClock() bool { return virtualClock }

// Option is a setting of Run.
type Option func(*options)

type options struct {
	partitions int
	log        io.Writer // the library's log in RunScript; nil: its output
}

// newOptions is the options opts set, over the defaults.
func newOptions(opts []Option) options {
	o := options{partitions: 1}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Partitions sets the partition count of topics created on first use.
func Partitions(n int) Option { return func(o *options) { o.partitions = n } }

// LogTo sends the library's log (streams starting, restoring, stopping)
// to w, in [RunScript], rather than to its output.
func LogTo(w io.Writer) Option { return func(o *options) { o.log = w } }

// Stream starts a stream with config (its "servers" are the cluster's,
// when it gives none) and spec, and returns its handle id. A stream's
// first batch waits for its group to form: Advance or Read after sending.
func (d *Driver) Stream(config map[string]any, spec stream.Spec) string {
	d.T.Helper()
	cfg := map[string]any{"servers": d.Servers}
	for k, v := range config {
		cfg[k] = v
	}
	id, err := stream.Of(d.Lib).Start(context.Background(), cfg, spec)
	if err != nil {
		d.T.Fatalf("streamtest: %v", err)
	}
	return id
}

// Send writes msgs to topic, each with its own timestamp when it gives
// one (the virtual clock's time when not), and waits for the brokers'
// acknowledgement.
func (d *Driver) Send(topic string, msgs ...kafkabpl.Message) {
	d.T.Helper()
	ctx := context.Background()
	if d.producer == "" {
		p, err := d.Lib.Create(ctx, kafkabpl.Producer, map[string]any{"servers": d.Servers})
		if err != nil {
			d.T.Fatalf("streamtest: %v", err)
		}
		d.producer = p
	}
	if _, err := d.Lib.Send(ctx, d.producer, []string{topic}, msgs); err != nil {
		d.T.Fatalf("streamtest: send to %q: %v", topic, err)
	}
}

// Advance moves the virtual clock on by dur, and returns once every
// goroutine of the test waits again: what the streams do in that time is
// done.
func (d *Driver) Advance(dur time.Duration) {
	time.Sleep(dur)
	synctest.Wait()
}

// Read returns every record a read_committed consumer of topic has read
// since the test began, in offset order per partition, after giving the
// streams a virtual second to commit what they have in hand.
func (d *Driver) Read(topic string) []kafkabpl.Record { return d.ReadWith(topic, nil) }

// ReadWith is Read with the consumer's config keys (deserializers, say),
// which the first read of topic sets.
func (d *Driver) ReadWith(topic string, config map[string]any) []kafkabpl.Record {
	d.T.Helper()
	recs, err := d.read(topic, config)
	if err != nil {
		d.T.Fatalf("streamtest: %v", err)
	}
	return recs
}

// read is ReadWith, returning its error.
func (d *Driver) read(topic string, config map[string]any) ([]kafkabpl.Record, error) {
	ctx := context.Background()
	r := d.readers[topic]
	if r == nil {
		cfg := map[string]any{"servers": d.Servers, "topics": topic,
			"auto-offset-reset": "earliest", "isolation-level": "read_committed", "group": "streamtest-" + topic}
		for k, v := range config {
			cfg[k] = v
		}
		id, err := d.Lib.Create(ctx, kafkabpl.Consumer, cfg)
		if err != nil {
			return nil, err
		}
		r = &reader{id: id}
		d.readers[topic] = r
	}
	d.Advance(time.Second)
	for {
		polled, err := d.Lib.Poll(ctx, r.id, 100*time.Millisecond)
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", topic, err)
		}
		if polled.Len() == 0 {
			return r.recs, nil
		}
		for _, tr := range polled.Topics {
			r.recs = append(r.recs, tr.Records...)
		}
	}
}

// Status returns stream id's status.
func (d *Driver) Status(id string) *stream.Status {
	d.T.Helper()
	st, err := stream.Of(d.Lib).Status(context.Background(), id)
	if err != nil {
		d.T.Fatalf("streamtest: %v", err)
	}
	return st
}

// Values returns the records' values, as their deserializer read them,
// each as fmt's %v prints it.
func Values(recs []kafkabpl.Record) []string {
	out := make([]string, len(recs))
	for i := range recs {
		out[i] = fmt.Sprint(recs[i].Value())
	}
	return out
}
