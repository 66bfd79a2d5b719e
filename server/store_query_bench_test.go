package server

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/twmb/franz-go/pkg/kgo"
)

// queryRig is the store of BenchmarkStoreQuery: one stream in two
// servers of one group (each a module's Library), over a store of
// queryKeys() keys, made once per test process and shared by every run
// of the benchmark (-count): loading a million keys takes a while.
type queryRig struct {
	lib           *kafkabpl.Library // server a's module's
	id            string            // its stream
	local, remote []string          // keys a holds, and keys b holds
	err           error
}

var (
	rigOnce sync.Once
	rig     queryRig
)

// queryKeys is the store's size: $KAFKABPL_QUERY_KEYS, 1,000,000 by
// default.
func queryKeys() int {
	if n, err := strconv.Atoi(os.Getenv("KAFKABPL_QUERY_KEYS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// setup loads the store: n keys "k0000000"..., each with its number as
// its state, through a kfake cluster; the servers stay up until the
// process ends.
func (r *queryRig) setup(b *testing.B) {
	n := queryKeys()
	cluster, err := embedded.Start(embedded.Port(0), embedded.Topics("bq-in"), embedded.Partitions(4))
	if err != nil {
		r.err = err
		return
	}
	ctx := context.Background()
	var libs [2]*kafkabpl.Library
	var ids [2]string
	var mods [2]*Module
	set := func(_ context.Context, in *kafkabpl.Record, _ any) ([]stream.Output, any, error) {
		v, err := strconv.ParseInt(in.Value().(string), 10, 64)
		return nil, v, err
	}
	for i := range libs {
		srv, _ := newPeerServer(b, Config{Servers: cluster.Servers(), AccessKey: "k"})
		m, err := srv.CreateModule(ctx, "bq", nil)
		if err != nil {
			r.err = err
			return
		}
		libs[i], mods[i] = m.Library(), m
		ids[i], err = stream.Of(libs[i]).Start(ctx, map[string]any{"servers": cluster.Servers(), "group": "bq", "max-poll-records": 20000},
			stream.Spec{From: []string{"bq-in"}, To: "bq-out", Store: "s", Update: set, Guarantee: stream.AtLeastOnce})
		if err != nil {
			r.err = err
			return
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.Servers()), kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(100_000))
	if err != nil {
		r.err = err
		return
	}
	defer cl.Close()
	start := time.Now()
	var perr error
	var mu sync.Mutex
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Topic: "bq-in", Key: fmt.Appendf(nil, "k%07d", i), Value: strconv.AppendInt(nil, int64(i), 10)}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				perr = err
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil || perr != nil {
		r.err = fmt.Errorf("produce: %v %v", err, perr)
		return
	}
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		var processed int64
		settled := true
		for i, lib := range libs {
			st, err := stream.Of(lib).Status(ctx, ids[i])
			if err != nil {
				r.err = err
				return
			}
			processed += st.Processed
			settled = settled && st.Store.Partitions == 2 && st.Store.Restoring == 0
		}
		if settled && processed >= int64(n) {
			break
		}
		if time.Now().After(deadline) {
			r.err = fmt.Errorf("the store never held %d keys: %d processed", n, processed)
			return
		}
	}
	b.Logf("store of %d keys loaded in %v", n, time.Since(start).Round(time.Millisecond))
	// Which keys a holds: those it answers with forwarding off.
	r.lib, r.id = libs[0], ids[0]
	stream.Of(r.lib).SetStoreForwarder(nil)
	for i := 0; i < n && (len(r.local) < 10_000 || len(r.remote) < 10_000); i += max(1, n/40_000) {
		k := fmt.Sprintf("k%07d", i)
		if _, _, err := stream.Of(r.lib).StoreGet(ctx, r.id, k); err == nil {
			r.local = append(r.local, k)
		} else {
			r.remote = append(r.remote, k)
		}
	}
	mods[0].routeStoreQueries(r.lib)
}

// BenchmarkStoreQuery measures point queries (kafka-store-get) of a
// store of a million keys (KAFKABPL_QUERY_KEYS) held by two servers of
// one group, through server a's module: local reads a key a holds;
// forwarded one b holds, which a forwards to b over HTTP (loopback, keep
// alive) with the module's key. Every answer is checked.
func BenchmarkStoreQuery(b *testing.B) {
	rigOnce.Do(func() { rig.setup(b) })
	if rig.err != nil {
		b.Fatal(rig.err)
	}
	for _, c := range []struct {
		name string
		keys []string
	}{{"local", rig.local}, {"forwarded", rig.remote}} {
		b.Run(c.name, func(b *testing.B) {
			if len(c.keys) == 0 {
				b.Fatal("no keys")
			}
			ctx := context.Background()
			var mu sync.Mutex
			next := 0
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				mu.Lock()
				i := next
				next += 997
				mu.Unlock()
				for pb.Next() {
					k := c.keys[i%len(c.keys)]
					i++
					v, found, err := stream.Of(rig.lib).StoreGet(ctx, rig.id, k)
					want, _ := strconv.ParseInt(k[1:], 10, 64)
					if err != nil || !found || v != want {
						b.Fatalf("%s: %v %v %v", k, v, found, err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}
