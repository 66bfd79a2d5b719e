//go:build unix

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/twmb/franz-go/pkg/kgo"
)

// testRealPartitionedTable joins orders with a partitioned table of
// customers on the real broker (a subtest of TestRealKafkaStream): two
// members of one group each hold, restored, the table partition of the
// input partition they are assigned (2 partitions, 20 customers), every
// order is joined with its customer exactly once (read_committed), an
// order for no customer is dropped, and an update of the table written
// before a later order (with an earlier timestamp) is seen by it.
func testRealPartitionedTable(t *testing.T, servers string) {
	const orders, customers, out, group = "pt-orders", "pt-customers", "pt-joined", "pt-join"
	ctx := realCtx(t)
	addrs := []string{servers}
	adm := newAdmin(t, addrs)
	compact := "compact"
	if _, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"cleanup.policy": &compact}, customers); err != nil {
		t.Fatalf("create topic %s: %v", customers, err)
	}
	for _, topic := range []string{orders, out} {
		if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	prod := newClient(t, addrs) // kgo's default partitioner: murmur2 of the key, as the stream's lookups
	var rows []*kgo.Record
	for i := range 20 {
		rows = append(rows, &kgo.Record{Topic: customers, Key: fmt.Appendf(nil, "c%d", i), Value: fmt.Appendf(nil, "name-%d", i)})
	}
	if err := prod.ProduceSync(ctx, rows...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	spec := stream.Spec{From: []string{orders}, To: out,
		Tables: []stream.Table{{Name: "customers", Topic: customers, Partitioned: true}},
		Join:   &stream.Join{Table: "customers"},
		Transform: func(_ context.Context, in *kafkabpl.Record) ([]stream.Output, error) {
			name, _ := in.Joined()
			return []stream.Output{{Message: kafkabpl.Message{Key: in.Key(), Value: fmt.Sprintf("%v@%v", in.Value(), name)}}}, nil
		},
	}
	var libs []*kafkabpl.Library
	var ids []string
	for range 2 {
		lib := newRealLib(t)
		lib.SetLogOutput(logWriter{t})
		libs = append(libs, lib)
		ids = append(ids, ok[string](t)(stream.Of(lib).Start(ctx, map[string]any{"servers": servers, "group": group}, spec)))
	}
	var held int64
	for i, lib := range libs {
		st := waitStreamStatus(t, lib, ids[i], func(st *stream.Status) bool {
			tb := st.Tables[0]
			return tb.Ready && tb.Partitions == 1
		})
		held += st.Tables[0].Keys + st.Tables[0].Pending
	}
	if held != 20 {
		t.Errorf("the members hold %d customers in all, want 20 (each in one)", held)
	}
	var recs []*kgo.Record
	var want []string
	for i := range 20 {
		recs = append(recs, &kgo.Record{Topic: orders, Key: fmt.Appendf(nil, "c%d", i), Value: fmt.Appendf(nil, "o%d", i)})
		want = append(want, fmt.Sprintf("c%d=o%d@name-%d", i, i, i))
	}
	recs = append(recs, &kgo.Record{Topic: orders, Key: []byte("nobody"), Value: []byte("o-x")})
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	joined := func(n int) []string {
		var got []string
		for _, r := range readCommitted(t, ctx, addrs, out, n) {
			got = append(got, string(r.Key)+"="+string(r.Value))
		}
		return sorted(got)
	}
	if got := joined(20); strings.Join(got, " ") != strings.Join(sorted(want), " ") {
		t.Errorf("joined %v, want %v", got, sorted(want))
	}
	// c3 moves at time T; an order for it at T+1 ms, written once the
	// table's update was fetched, sees it.
	now := time.Now()
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: customers, Key: []byte("c3"), Value: []byte("moved"), Timestamp: now}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	// Both members' counts: inputs processed and dropped, table updates
	// applied or fetched.
	var processed, dropped, updates int64
	waitStreamStatus(t, libs[0], ids[0], func(*stream.Status) bool {
		processed, dropped, updates = 0, 0, 0
		for i, lib := range libs {
			st, err := stream.Of(lib).Status(ctx, ids[i])
			if err != nil {
				return false
			}
			processed, dropped = processed+st.Processed, dropped+st.Dropped
			updates += st.Tables[0].Updates + st.Tables[0].Pending
		}
		return processed == 21 && updates == 21
	})
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: orders, Key: []byte("c3"), Value: []byte("o3b"), Timestamp: now.Add(time.Millisecond)}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	want = append(want, "c3=o3b@moved")
	if got := joined(21); strings.Join(got, " ") != strings.Join(sorted(want), " ") {
		t.Errorf("joined %v, want %v", got, sorted(want))
	}
	if dropped != 1 {
		t.Errorf("dropped %d orders, want 1 (nobody's)", dropped)
	}
}
