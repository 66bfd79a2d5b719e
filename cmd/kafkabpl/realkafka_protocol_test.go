package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
)

// Consumer groups on a real broker under both group protocols: the
// classic one, where the members balance the group in a JoinGroup and
// SyncGroup round, and KIP-848's ("group-protocol" "consumer"), where the
// broker assigns partitions member by member in its heartbeats.

// joinCfg is the config of a member of group on topic, under protocol:
// no commits, from the start, so that a member that gets a partition
// reads its records at once.
func joinCfg(servers, topic, group, protocol string) map[string]any {
	return map[string]any{"servers": servers, "group": group, "topics": topic, "group-protocol": protocol,
		"auto-offset-reset": "earliest", "enable-auto-commit": false}
}

// thirdMemberJoin fills topic's 6 partitions, lets two members of a new
// group settle, then starts a third while the two poll, and returns how
// long the third took from its creation to its first record: getting
// partitions, and one fetch.
func thirdMemberJoin(tb testing.TB, lib *kafkabpl.Library, servers, protocol string, round int) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	topic, group := fmt.Sprintf("join-%s-%d", protocol, round), fmt.Sprintf("joiners-%s-%d", protocol, round)
	check := func(err error) {
		if err != nil {
			tb.Helper()
			tb.Fatal(err)
		}
	}
	a, err := lib.Create(ctx, kafkabpl.Admin, servers)
	check(err)
	defer lib.Destroy(ctx, a)
	_, err = lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 6})
	check(err)
	p, err := lib.Create(ctx, kafkabpl.Producer, servers)
	check(err)
	msgs := make([]kafkabpl.Message, 600)
	for i := range msgs {
		part := int32(i % 6)
		msgs[i] = kafkabpl.Message{Value: fmt.Sprint(i), Partition: &part}
	}
	_, err = lib.Send(ctx, p, []string{topic}, msgs)
	check(err)

	cfg := joinCfg(servers, topic, group, protocol)
	var members []string
	for range 2 {
		c, err := lib.Create(ctx, kafkabpl.Consumer, cfg)
		check(err)
		members = append(members, c)
	}
	// The two settle: each has read records of its own partitions.
	for _, c := range members {
		deadline := time.Now().Add(testTimeout)
		for {
			res, err := lib.Poll(ctx, c, 100*time.Millisecond)
			check(err)
			if res.Len() > 0 {
				break
			}
			if time.Now().After(deadline) {
				tb.Fatalf("%s: member %s got no records in %v", protocol, c, testTimeout)
			}
		}
	}
	// Both poll on, as a working member does, while the third joins.
	var stop atomic.Bool
	var wg sync.WaitGroup
	for _, c := range members {
		wg.Go(func() {
			for !stop.Load() {
				if _, err := lib.Poll(ctx, c, 100*time.Millisecond); err != nil && !stop.Load() {
					tb.Error(err)
					return
				}
			}
		})
	}
	defer func() {
		stop.Store(true)
		wg.Wait()
		for _, c := range members {
			lib.Destroy(ctx, c)
		}
	}()
	start := time.Now()
	third, err := lib.Create(ctx, kafkabpl.Consumer, cfg)
	check(err)
	members = append(members, third)
	for {
		res, err := lib.Poll(ctx, third, 100*time.Millisecond)
		check(err)
		if res.Len() > 0 {
			return time.Since(start)
		}
		if time.Since(start) > testTimeout {
			tb.Fatalf("%s: the third member got no records in %v", protocol, testTimeout)
		}
	}
}

// testRealThirdMember checks, under both protocols, that a third member
// that joins two working ones gets partitions; the time it took is
// logged (BenchmarkRealKafkaThirdMember measures it).
func testRealThirdMember(t *testing.T, servers string) {
	lib := newRealLib(t)
	for _, protocol := range []string{"classic", "consumer"} {
		took := thirdMemberJoin(t, lib, servers, protocol, 0)
		t.Logf("%s: the third member's first record %v after its creation", protocol, took.Round(time.Millisecond))
	}
}

// BenchmarkRealKafkaThirdMember measures, on one real broker (Apache
// Kafka, testdata/kafka), how long a third member of a group takes to
// get partitions and its first record while two members poll, under the
// classic protocol and KIP-848's; one round per iteration, each on a
// topic and group of its own. Its unit is seconds per join.
//
//	go test -run '^$' -bench RealKafkaThirdMember -benchtime 5x ./cmd/kafkabpl
func BenchmarkRealKafkaThirdMember(b *testing.B) {
	k := startKafka(b, needKafka(b))
	lib := kafkabpl.New()
	defer lib.Close(context.Background())
	round := 0
	for _, protocol := range []string{"classic", "consumer"} {
		b.Run(protocol, func(b *testing.B) {
			var total time.Duration
			for range b.N {
				round++
				total += thirdMemberJoin(b, lib, k.servers, protocol, round)
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "s/join")
			b.ReportMetric(0, "ns/op") // the rounds' setup, not the join, fills ns/op
		})
	}
}
