//go:build unix

package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/value"
)

// TestRealKafka's consumer subtests: subscribe is deterministic, commit
// then restart, and group shares a topic.

// testRealSubscribe: subscribe, send one message, poll it; with the
// default latest reset and a fresh group each round.
func testRealSubscribe(t *testing.T, servers string) {
	const rounds, parallel = 24, 6
	lib := newRealLib(t)
	ctx := realCtx(t)
	p := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	variants := []string{"existing", "new", "made-by-producer"}

	round := func(i int) error {
		variant := variants[i%3]
		topic := fmt.Sprintf("rk-sub-%d-%s", i, variant)
		want := fmt.Sprintf("m%d", i)
		cfg := map[string]any{"servers": servers}
		switch variant {
		case "existing": // holds an older message, which latest skips
			if _, err := lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{}); err != nil {
				return err
			}
			if _, err := lib.Send(ctx, p, []string{topic}, textMessages("old")); err != nil {
				return err
			}
		case "made-by-producer":
			cfg["allow-auto-create-topics"] = false
		}
		c, err := lib.Create(ctx, kafkabpl.Consumer, cfg)
		if err != nil {
			return err
		}
		defer lib.Destroy(ctx, c)
		how := "Subscribe"
		if i%2 == 0 {
			if _, err := lib.Subscribe(ctx, c, []string{topic}); err != nil {
				return err
			}
		} else {
			how = "PollTopics"
			res, err := lib.PollTopics(ctx, c, []string{topic}, 0)
			if err != nil {
				return err
			}
			if res.Len() != 0 || len(res.Topics) != 1 || res.Topics[0].Topic != topic {
				return fmt.Errorf("first PollTopics returned %v", polledMsgs(res))
			}
		}
		if variant == "made-by-producer" {
			names, err := lib.ListTopics(ctx, a)
			if err != nil {
				return err
			}
			if slices.Contains(names, topic) {
				return fmt.Errorf("a consumer that may not create topics created %s when subscribing", topic)
			}
		}
		start := time.Now()
		if _, err := lib.Send(ctx, p, []string{topic}, textMessages(want)); err != nil {
			return err
		}
		got, err := pollFor(ctx, lib, c, 1, 20*time.Second)
		if err != nil {
			return fmt.Errorf("%s, %s topic: %w", how, variant, err)
		}
		after := time.Since(start)
		more, err := lib.Poll(ctx, c, 200*time.Millisecond)
		if err != nil {
			return err
		}
		got = append(got, polledMsgs(more)...)
		if !slices.Equal(values(got), []string{want}) {
			return fmt.Errorf("%s, %s topic: polled %v, want %s alone", how, variant, got, want)
		}
		t.Logf("round %d (%s, %s topic): the message came %v after the send", i, how, variant, after.Round(time.Millisecond))
		return nil
	}

	var misses atomic.Int32
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range jobs {
				if err := round(i); err != nil {
					misses.Add(1)
					t.Errorf("round %d: %v", i, err)
				}
			}
		})
	}
	for i := range rounds {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if n := misses.Load(); n > 0 {
		t.Errorf("%d of %d rounds missed their message", n, rounds)
	}
}

// testRealCommit mirrors TestCommitThenRestart and TestNoCommitRedelivers.
func testRealCommit(t *testing.T, servers string) {
	tests := map[string]func(*testing.T){}
	for _, mode := range []string{"commit", "auto-commit", "no commit"} {
		tests[mode] = func(t *testing.T) {
			lib := newRealLib(t)
			ctx := realCtx(t)
			topic := "rk-commit-" + strings.ReplaceAll(mode, " ", "-")
			all := strings.Fields("0 1 2 3 4 5 6 7 8 9")
			p := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
			sendStart := time.Now()
			if n := ok[int](t)(lib.Send(ctx, p, []string{topic}, textMessages(all...))); n != 10 {
				t.Fatalf("sent %d of 10", n)
			}
			t.Logf("the first send, which created the topic, took %v", time.Since(sendStart).Round(time.Millisecond))
			cfg := map[string]any{"servers": servers, "group": topic, "topics": topic, "auto-offset-reset": "earliest",
				"enable-auto-commit": mode == "auto-commit", "max-poll-records": 4}
			start := time.Now()
			c := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, cfg))
			first := ok[[]polledMsg](t)(pollFor(ctx, lib, c, 1, 20*time.Second))
			k := len(first)
			if k > 4 || !slices.Equal(values(first), all[:k]) {
				t.Fatalf("first poll %v, want the first messages, 4 at most", first)
			}
			if mode == "commit" {
				if err := lib.Commit(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			ok[bool](t)(lib.Destroy(ctx, c))
			t.Logf("first consumer polled %d and left after %v", k, time.Since(start).Round(time.Millisecond))

			rest := all[k:]
			if mode == "no commit" {
				rest = all
			}
			c = ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, cfg))
			got := ok[[]polledMsg](t)(pollFor(ctx, lib, c, len(rest), 20*time.Second))
			more := ok[*kafkabpl.Polled](t)(lib.Poll(ctx, c, 300*time.Millisecond))
			got = append(got, polledMsgs(more)...)
			t.Logf("the second consumer had them all after %v", time.Since(start).Round(time.Millisecond))
			if !slices.Equal(values(got), rest) {
				t.Errorf("after %d polled and a restart: %v, want %v", k, values(got), rest)
			}
		}
	}
	concurrently(t, tests)
}

// testRealGroup mirrors TestGroupSharesWork, and checks each message came
// from its partition's owner.
func testRealGroup(t *testing.T, servers, protocol string) {
	const n = 400
	topic, group := "rk-work-"+protocol, "rk-workers-"+protocol
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 4}))
	cfg := map[string]any{"servers": servers, "group": group, "topics": topic, "auto-offset-reset": "earliest", "group-protocol": protocol}
	c1 := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, cfg))
	c2 := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, cfg))

	// Send once both own partitions, so that the first does not drain the
	// topic alone before the second joins.
	var owned map[string][]int32 // by member id
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for owned == nil {
		for _, c := range []string{c1, c2} {
			if res := ok[*kafkabpl.Polled](t)(lib.Poll(ctx, c, 50*time.Millisecond)); res.Len() > 0 {
				t.Fatalf("polled %v from an empty topic", polledMsgs(res))
			}
		}
		g, err := lib.DescribeGroup(ctx, a, group)
		if err == nil {
			last = value.Format(g.List())
			if g.State == "Stable" && len(g.Members) == 2 {
				m := map[string][]int32{}
				for _, mem := range g.Members {
					for _, tp := range mem.Assignment {
						m[mem.MemberID] = append(m[mem.MemberID], tp.Partitions...)
					}
				}
				if len(m) == 2 {
					owned = m
				}
			}
		} else {
			last = err.Error()
		}
		if owned == nil && time.Now().After(deadline) {
			t.Fatalf("group %s not stable with 2 members owning partitions in 30 s; last: %s", group, last)
		}
	}
	t.Logf("assignment %v", owned)

	msgs := make([]kafkabpl.Message, n)
	for i := range msgs {
		msgs[i] = kafkabpl.Message{Key: fmt.Sprintf("k%d", i), Value: fmt.Sprint(i)}
	}
	ok[int](t)(lib.Send(ctx, newProducer(t, lib, ctx, servers), []string{topic}, msgs))

	var mu sync.Mutex
	seen := map[string]string{}          // value -> consumer
	parts := map[string]map[int32]bool{} // consumer -> partitions it got records of
	var wg sync.WaitGroup
	for _, c := range []string{c1, c2} {
		wg.Go(func() {
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				mu.Lock()
				done := len(seen) == n
				mu.Unlock()
				if done {
					return
				}
				res, err := lib.Poll(ctx, c, 200*time.Millisecond)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, m := range polledMsgs(res) {
					if prev, dup := seen[m.value]; dup {
						t.Errorf("message %s delivered twice (to %s and %s)", m.value, prev, c)
					}
					seen[m.value] = c
					if parts[c] == nil {
						parts[c] = map[int32]bool{}
					}
					parts[c][m.partition] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("delivered %d of %d", len(seen), n)
	}
	per := map[string]int{}
	for _, c := range seen {
		per[c]++
	}
	if per[c1] == 0 || per[c2] == 0 {
		t.Errorf("work not shared: %v", per)
	}
	// Each consumer read partitions of one member only, and no partition
	// was read by both.
	all := map[int32]string{}
	for c, ps := range parts {
		for p := range ps {
			if other, dup := all[p]; dup {
				t.Errorf("partition %d read by %s and %s", p, other, c)
			}
			all[p] = c
		}
	}
	if len(all) != 4 {
		t.Errorf("records came from %d partitions, want 4", len(all))
	}
}
