package stream

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestStreamChangelogNotAutoCreated runs a stateful stream on a cluster
// that creates topics on first use with 1 partition, as Kafka's defaults
// do, over an input of 3 partitions: the changelog must be created by the
// stream, with the input's 3, not by the broker on the stream's first
// look at it (a metadata request through the client's cache asks for
// that when the config allows auto-creation, its default), after which
// the stream failed with the partition counts not matching.
func TestStreamChangelogNotAutoCreated(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	cl, err := kgo.NewClient(kgo.SeedBrokers(servers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(testCtx(t), 3, 1, nil, "in"); err != nil {
		t.Fatal(err)
	}
	lib := streamLib(t)
	sendValues(t, lib, servers, "in", keyed("a", "b", "a")...)
	id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "g"},
		Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "counts"}))
	st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 3 || st.State != Running })
	if st.State != Running || st.Store == nil || st.Store.Partitions != 3 {
		t.Fatalf("status %+v, store %+v: want running, holding 3 partitions", st, st.Store)
	}
	topics, err := adm.ListTopics(testCtx(t), "g-counts-changelog")
	if err != nil || len(topics["g-counts-changelog"].Partitions) != 3 {
		t.Errorf("changelog: %v %v, want 3 partitions", topics, err)
	}
	lib.Destroy(testCtx(t), id)
}

// TestStreamAtLeastOnceChangelogAfterOutputs fails the first produce
// requests that carry an at-least-once windowed stream's output (with a
// retriable error, as a broker short of replicas answers) while its batch
// closes a window: no changelog record of the batch may reach the broker
// before the window's result was acknowledged. A changelog that landed
// while the result did not would, after a crash, restore the window
// closed and the stream time past it, and the result would never come
// (the inputs read again are late); a count would skip the lost outputs'.
func TestStreamAtLeastOnceChangelogAfterOutputs(t *testing.T) {
	t.Parallel()
	c := newCluster(t, embedded.Topics("in", "out"))
	servers := c.Servers()
	lib := streamLib(t)
	cfg := map[string]any{"servers": servers, "group": "w", "value-serializer": "JSON", "value-deserializer": "JSON"}
	sendValues(t, lib, servers, "in", at("a", 10, 1), at("a", 20, 2), at("a", 150, 4))
	// Produce requests may name topics by ID: out's, and the changelog's
	// (the only other topic the stream writes to).
	cl, err := kgo.NewClient(kgo.SeedBrokers(servers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopics(testCtx(t), "out")
	if err != nil || topics["out"].Err != nil {
		t.Fatalf("out: %v %v", topics, err)
	}
	outID := topics["out"].ID
	const changelog = "changelog"
	var mu sync.Mutex
	var order []string // the produce requests the broker took: their topics
	failed := 0
	c.Kfake().ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.Kfake().KeepControl()
		req := kreq.(*kmsg.ProduceRequest)
		var topics []string
		for _, rt := range req.Topics {
			if rt.Topic == "out" || rt.TopicID == outID {
				topics = append(topics, "out")
			} else {
				topics = append(topics, changelog)
			}
		}
		slices.Sort(topics)
		mu.Lock()
		defer mu.Unlock()
		if slices.Contains(topics, "out") && failed < 3 {
			failed++
			resp := req.ResponseKind().(*kmsg.ProduceResponse)
			for _, rt := range req.Topics {
				st := kmsg.NewProduceResponseTopic()
				st.Topic = rt.Topic
				for _, rp := range rt.Partitions {
					sp := kmsg.NewProduceResponseTopicPartition()
					sp.Partition, sp.ErrorCode = rp.Partition, kerr.NotEnoughReplicas.Code
					st.Partitions = append(st.Partitions, sp)
				}
				resp.Topics = append(resp.Topics, st)
			}
			return resp, nil, true
		}
		order = append(order, strings.Join(topics, "+"))
		return nil, nil, false
	})
	id := must[string](t)(Of(lib).Start(testCtx(t), cfg, Spec{From: []string{"in"}, To: "out", Store: "sums", Guarantee: AtLeastOnce,
		Window: &Window{Kind: Tumbling, Size: 100 * time.Millisecond, Aggregate: sumAggregate}}))
	waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 3 })
	if got := windowResults(t, lib, servers, 1); got != "a[0,100)=3" {
		t.Errorf("results %s", got)
	}
	lib.Destroy(testCtx(t), id)
	mu.Lock()
	defer mu.Unlock()
	out := slices.IndexFunc(order, func(s string) bool { return strings.Contains(s, "out") })
	for i, topics := range order {
		if strings.Contains(topics, changelog) && (out < 0 || i <= out) {
			t.Errorf("produce requests taken %q (after %d failed): the changelog's (request %d) before the result's was acknowledged (request %d)", order, failed, i, out)
			break
		}
	}
	if failed != 3 {
		t.Errorf("%d produce requests of the result failed, want 3", failed)
	}
}
