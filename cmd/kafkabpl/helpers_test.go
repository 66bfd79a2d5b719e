package main

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func newClient(t *testing.T, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	// A topic just created may be unknown to the broker that leads it
	// for a while on a busy machine (Kafka answers UNKNOWN_TOPIC_OR_PARTITION
	// while its metadata spreads): a test's producer waits for it, within
	// the context of its produce, rather than giving up after kgo's four
	// tries. (Not kgo's RecordDeliveryTimeout: it counts from a record's
	// timestamp, and the windows' inputs carry timestamps of the past.)
	defaults := []kgo.Opt{kgo.SeedBrokers(addrs...), kgo.UnknownTopicRetries(-1)}
	cl, err := kgo.NewClient(append(defaults, opts...)...)
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
