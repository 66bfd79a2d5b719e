package main

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newClient returns a kgo client of addrs, closed at the test's end. Its
// producer waits for a topic the brokers do not know yet, within the
// context a produce is given, rather than give up after kgo's four tries:
// a real broker answers UNKNOWN_TOPIC_OR_PARTITION while a topic just
// created spreads to it, longer on a loaded machine (a test's feed of a
// new topic gave up so). (Not a RecordDeliveryTimeout: kgo counts it
// from a record's timestamp, and the tests' records carry timestamps of
// the past.) opts come after, and may say otherwise.
func newClient(t *testing.T, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	base := []kgo.Opt{kgo.SeedBrokers(addrs...), kgo.UnknownTopicRetries(-1)}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatalf("kgo.NewClient: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func newAdmin(t *testing.T, addrs []string) *kadm.Client {
	return kadm.NewClient(newClient(t, addrs))
}

// consumeN polls cl until n records came, failing the test at ctx's
// deadline.
func consumeN(t *testing.T, ctx context.Context, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollRecords(ctx, n-len(got))
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(got), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s/%d: %v", topic, p, err)
		})
		got = append(got, fs.Records()...)
	}
	return got
}
