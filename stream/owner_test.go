package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/murmur2"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEndpointEnvelope wraps and unwraps the endpoint a member advertises
// in its UserData, and leaves another client's UserData alone.
func TestEndpointEnvelope(t *testing.T) {
	inner := []byte{0, 0, 0, 1, 7, 8}
	ep, got, ok := unwrapEndpoint(wrapEndpoint("http://127.0.0.1:9999/m", inner))
	if !ok || ep != "http://127.0.0.1:9999/m" || !bytes.Equal(got, inner) {
		t.Errorf("round trip: %q %v %v", ep, got, ok)
	}
	if ep, got, ok := unwrapEndpoint(inner); ok || ep != "" || !bytes.Equal(got, inner) {
		t.Errorf("a foreign UserData: %q %v %v", ep, got, ok)
	}
	cut := wrapEndpoint("http://127.0.0.1:9999/m", nil)[:8]
	if _, got, ok := unwrapEndpoint(cut); ok || !bytes.Equal(got, cut) {
		t.Errorf("a truncated envelope read as one: %v", got)
	}
}

// recordingBalancer is cooperative-sticky that keeps the members its
// MemberBalancer was given.
type recordingBalancer struct {
	kgo.GroupBalancer
	seen []kmsg.JoinGroupResponseMember
}

func (b *recordingBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	b.seen = members
	return b.GroupBalancer.MemberBalancer(members)
}

// TestEndpointBalancer checks that the wrapper advertises the endpoint
// around cooperative-sticky's own UserData (its previous assignment), and
// hands cooperative-sticky exactly what it wrote when the leader
// balances.
func TestEndpointBalancer(t *testing.T) {
	rec := &recordingBalancer{GroupBalancer: kgo.CooperativeStickyBalancer()}
	b := &endpointBalancer{GroupBalancer: rec, endpoint: "http://127.0.0.1:1/a"}
	current := map[string][]int32{"in": {0, 2}}
	plain := rec.JoinGroupMetadata([]string{"in"}, current, 3)
	wrapped := b.JoinGroupMetadata([]string{"in"}, current, 3)
	var m kmsg.ConsumerMemberMetadata
	if err := m.ReadFrom(wrapped); err != nil {
		t.Fatal(err)
	}
	ep, _, ok := unwrapEndpoint(m.UserData)
	if !ok || ep != "http://127.0.0.1:1/a" || len(m.Topics) != 1 || m.Topics[0] != "in" {
		t.Fatalf("advertised %q %v, topics %v", ep, ok, m.Topics)
	}
	if _, _, err := b.MemberBalancer([]kmsg.JoinGroupResponseMember{{MemberID: "a", ProtocolMetadata: wrapped}}); err != nil {
		t.Fatal(err)
	}
	if len(rec.seen) != 1 || !bytes.Equal(rec.seen[0].ProtocolMetadata, plain) {
		t.Errorf("the inner balancer read %x, want its own %x", rec.seen[0].ProtocolMetadata, plain)
	}
}

// TestKeyPartitionLikeJava checks that a key's store partition is the
// one the producers place it in: kgo's key hashing (what kafkabpl's
// "murmur2" partitioner hashes keys with) and Java's default one.
func TestKeyPartitionLikeJava(t *testing.T) {
	producer := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for _, k := range []string{"21", "foobar", "a-little-bit-long-string", "abc", "sensor-17", "", "k0000042"} {
		for _, n := range []int{1, 2, 3, 12} {
			want := murmur2.Partition([]byte(k), n)
			if got := producer.Partition(&kgo.Record{Key: []byte(k), Partition: -1}, n); int32(got) != want {
				t.Errorf("the producer puts %q in %d of %d, want %d", k, got, n, want)
			}
		}
	}
}

// TestQueryEndpointConfig checks the key's values, and that the consumer
// group protocol, which carries no member metadata of the client's,
// refuses it.
func TestQueryEndpointConfig(t *testing.T) {
	lib := streamLib(t)
	ctx := testCtx(t)
	spec := Spec{From: []string{"in"}, To: "out", Store: "s", Update: countUpdate}
	for _, bad := range []string{"127.0.0.1:9999", "ftp://h/x", "http:///m"} {
		_, err := Of(lib).Start(ctx, map[string]any{"servers": "127.0.0.1:1", "group": "g", "query-endpoint": bad}, spec)
		if !errors.Is(err, kafkabpl.ErrInvalidConfig) || !strings.Contains(err.Error(), `"query-endpoint"`) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	_, err := Of(lib).Start(ctx, map[string]any{"servers": "127.0.0.1:1", "group": "g", "group-protocol": "consumer", "query-endpoint": "http://127.0.0.1:1/m"}, spec)
	if !errors.Is(err, kafkabpl.ErrInvalidConfig) || !strings.Contains(err.Error(), "KIP-848") {
		t.Errorf("under the consumer protocol: %v", err)
	}
	if err := Of(lib).SetQueryEndpoint("localhost"); !errors.Is(err, kafkabpl.ErrInvalidConfig) {
		t.Errorf("SetQueryEndpoint(localhost): %v", err)
	}
}

// queryPeer is one "process" of a stream's group: a library whose
// forwarder calls the other libraries' AnswerStoreQuery directly.
type queryPeer struct {
	lib      *kafkabpl.Library
	id       string
	forwards atomic.Int64
}

// TestStoreQueryOwners runs a per-key stream in two libraries of one
// group on kfake, each advertising an endpoint: every key is answered
// through either, the one that does not hold it forwarding to the owner
// found in the group's description; without a forwarder such a query
// fails with ErrNotHeld. Once one leaves, the other answers every key,
// and in between a query is answered right or refused with ErrNotReady,
// never "not found".
func TestStoreQueryOwners(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(4)).Servers()
	ctx := testCtx(t)
	a, b := startQueryPeers(t, servers, "qg", Spec{From: []string{"in"}, To: "out", Store: "counts", Update: countUpdate})
	want := map[string]int64{}
	var msgs []kafkabpl.Message
	for i := range 40 {
		k := fmt.Sprintf("k%d", i)
		want[k] = int64(i%3 + 1)
		for range i%3 + 1 {
			msgs = append(msgs, kafkabpl.Message{Key: k, Value: "v"})
		}
	}
	sendValues(t, a.lib, servers, "in", msgs...)
	settled(t, a, b, len(msgs))
	for _, p := range []*queryPeer{a, b} {
		askAll(t, p, want, time.Now().Add(30*time.Second))
		if p.forwards.Load() == 0 {
			t.Errorf("%s forwarded no query of the keys the other holds", p.id)
		}
	}

	// Each knows the other as its peer, not itself.
	for _, pp := range [][2]*queryPeer{{a, b}, {b, a}} {
		other := "http://127.0.0.1:1/a"
		if pp[1] == b {
			other = "http://127.0.0.1:1/b"
		}
		if got, err := Of(pp[0].lib).Peers(ctx); err != nil || len(got) != 1 || got[0] != other {
			t.Errorf("%s's peers: %q, %v; want %q", pp[0].id, got, err, other)
		}
	}

	// Without a forwarder, a key held elsewhere is refused, naming its owner.
	Of(b.lib).SetStoreForwarder(nil)
	held := map[int32]bool{}
	hs := streamOf(t, b.lib, b.id)
	for _, p := range hs.store.state.Partitions() {
		held[p] = true
	}
	notHeld := 0
	for k := range want {
		if held[murmur2.Partition([]byte(k), 4)] {
			continue
		}
		_, _, err := Of(b.lib).StoreGet(ctx, b.id, k)
		if !errors.Is(err, kafkabpl.ErrNotHeld) || !strings.Contains(err.Error(), "http://127.0.0.1:1/a") {
			t.Fatalf("%s without a forwarder: %v", k, err)
		}
		notHeld++
	}
	if notHeld == 0 {
		t.Fatal("b holds every key's partition")
	}

	// b leaves: a takes its partitions, restores them, and answers all.
	if _, err := b.lib.Destroy(ctx, b.id); err != nil {
		t.Fatal(err)
	}
	askAll(t, a, want, time.Now().Add(60*time.Second))
	if st := must[*Status](t)(Of(a.lib).Status(ctx, a.id)); st.Store.Partitions != 4 {
		t.Errorf("a holds %d partitions once b left", st.Store.Partitions)
	}
}

// startQueryPeers starts spec's stream in two libraries ("processes") of
// group, each advertising an endpoint and forwarding queries to the other
// by calling its AnswerStoreQuery.
func startQueryPeers(t *testing.T, servers, group string, spec Spec) (a, b *queryPeer) {
	peers := map[string]*queryPeer{}
	for _, name := range []string{"a", "b"} {
		peers["http://127.0.0.1:1/"+name] = &queryPeer{lib: streamLib(t)}
	}
	for ep, p := range peers {
		Of(p.lib).SetStoreForwarder(func(ctx context.Context, endpoint string, q []byte) ([]byte, error) {
			p.forwards.Add(1)
			owner := peers[endpoint]
			if owner == nil {
				return nil, fmt.Errorf("no peer at %s", endpoint)
			}
			return Of(owner.lib).AnswerStoreQuery(ctx, q)
		})
		p.id = must[string](t)(Of(p.lib).Start(testCtx(t), map[string]any{"servers": servers, "group": group, "query-endpoint": ep, "session-timeout": 6000}, spec))
	}
	return peers["http://127.0.0.1:1/a"], peers["http://127.0.0.1:1/b"]
}

// settled waits until a and b hold 2 partitions each, restored, and
// processed n inputs between them.
func settled(t *testing.T, a, b *queryPeer, n int) {
	ctx := testCtx(t)
	waitFor(t, "both streams hold 2 partitions, restored, and processed all", func() bool {
		sa := must[*Status](t)(Of(a.lib).Status(ctx, a.id))
		sb := must[*Status](t)(Of(b.lib).Status(ctx, b.id))
		return sa.Store.Partitions == 2 && sb.Store.Partitions == 2 && sa.Store.Restoring+sb.Store.Restoring == 0 &&
			sa.Processed+sb.Processed == int64(n)
	})
}

// TestStoreWindowsForwarded queries a windowed store's windows through
// both processes of its group: a key the other holds is forwarded, and
// its windows come back with their values and bounds.
func TestStoreWindowsForwarded(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(4)).Servers()
	ctx := testCtx(t)
	count := func(_ context.Context, _ *kafkabpl.Record, acc any) (any, error) {
		n, _ := acc.(int64)
		return n + 1, nil
	}
	a, b := startQueryPeers(t, servers, "wg", Spec{From: []string{"in"}, To: "out", Store: "per-minute",
		Window: &Window{Kind: Tumbling, Size: time.Minute, Grace: time.Hour, Aggregate: count}})
	t0 := time.UnixMilli(1767225600000)
	var msgs []kafkabpl.Message
	for i := range 16 {
		for j := range i%3 + 1 {
			msgs = append(msgs, kafkabpl.Message{Key: fmt.Sprintf("w%d", i), Value: "v", Timestamp: t0.Add(time.Duration(j) * time.Second)})
		}
	}
	sendValues(t, a.lib, servers, "in", msgs...)
	settled(t, a, b, len(msgs))
	for _, p := range []*queryPeer{a, b} {
		for i := range 16 {
			k := fmt.Sprintf("w%d", i)
			ws := must[[]StoreWindow](t)(Of(p.lib).StoreWindows(ctx, p.id, k, t0, t0.Add(time.Hour)))
			if len(ws) != 1 || ws[0].Value != int64(i%3+1) || !ws[0].Start.Equal(t0) || !ws[0].End.Equal(t0.Add(time.Minute)) || ws[0].Key != k {
				t.Fatalf("%s through %s: %+v", k, p.id, ws)
			}
		}
		if p.forwards.Load() == 0 {
			t.Errorf("%s forwarded no query", p.id)
		}
	}
}

// askAll queries every key through p until each is answered: an answer
// must be right; until the deadline, ErrNotReady is the only error
// allowed.
func askAll(t *testing.T, p *queryPeer, want map[string]int64, deadline time.Time) {
	t.Helper()
	ctx := testCtx(t)
	for k, n := range want {
		for {
			v, found, err := Of(p.lib).StoreGet(ctx, p.id, k)
			if err == nil {
				if !found || v != n {
					t.Fatalf("%s through %s: %v %v, want %d", k, p.id, v, found, n)
				}
				break
			}
			if !errors.Is(err, kafkabpl.ErrNotReady) || kafkabpl.ErrorType(err) != "NotReady" || time.Now().After(deadline) {
				t.Fatalf("%s through %s: %v", k, p.id, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestStoreQueryRestoring holds a partition's restore (a transaction left
// open on its changelog): a key of it is refused with ErrNotReady naming
// the store and partition, as is a range, never read as not found; once
// the restore ends, it is answered.
func TestStoreQueryRestoring(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(2)).Servers()
	ctx := testCtx(t)
	var k1, k0 string // keys of partitions 1 and 0
	for i := 0; k1 == "" || k0 == ""; i++ {
		k := fmt.Sprintf("key%d", i)
		if murmur2.Partition([]byte(k), 2) == 1 {
			k1 = cmpOr(k1, k)
		} else {
			k0 = cmpOr(k0, k)
		}
	}
	cl := must[*kgo.Client](t)(kgo.NewClient(kgo.SeedBrokers(servers), kgo.TransactionalID("dangling-q"), kgo.DefaultProduceTopic("rq-s-changelog"), kgo.RecordPartitioner(kgo.ManualPartitioner())))
	defer cl.Close()
	compact := "compact"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, map[string]*string{"cleanup.policy": &compact}, "rq-s-changelog"); err != nil {
		t.Fatal(err)
	}
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	raw := must[[]byte](t)(store.Encode(nil, int64(100)))
	if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(k1), Value: raw, Partition: 1}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	lib := streamLib(t)
	sendValues(t, lib, servers, "in", kafkabpl.Message{Key: k0, Value: "v"})
	id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "rq"},
		Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s"}))
	waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 1 && st.Store.Restoring == 1 })
	if v, ok := must2(t)(Of(lib).StoreGet(ctx, id, k0)); !ok || v != int64(1) {
		t.Errorf("%s, of the restored partition: %v %v", k0, v, ok)
	}
	_, _, err := Of(lib).StoreGet(ctx, id, k1)
	if !errors.Is(err, kafkabpl.ErrNotReady) || kafkabpl.ErrorType(err) != "NotReady" || !strings.Contains(err.Error(), `store "s" partition 1 is being restored`) {
		t.Errorf("%s, of the partition being restored: %v", k1, err)
	}
	if _, err := Of(lib).StoreRange(ctx, id, nil, nil); !errors.Is(err, kafkabpl.ErrNotReady) || !strings.Contains(err.Error(), "partition 1") {
		t.Errorf("a range while partition 1 restores: %v", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	waitStream(t, lib, id, func(st *Status) bool { return st.Store.Restoring == 0 && st.Store.Partitions == 2 })
	if v, ok := must2(t)(Of(lib).StoreGet(ctx, id, k1)); !ok || v != int64(100) {
		t.Errorf("%s once restored: %v %v, want 100", k1, v, ok)
	}
	if got := entries(must[[]StoreEntry](t)(Of(lib).StoreRange(ctx, id, nil, nil))); got != k0+"=1 "+k1+"=100" && got != k1+"=100 "+k0+"=1" {
		t.Errorf("range once restored: %s", got)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
