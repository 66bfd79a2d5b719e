//go:build unix

package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
)

// faultShare: two kafkabpl share consumers of one share group under a
// kill of the node that coordinates the group (see TestFaults).
func faultShare(t *testing.T, c *faultCluster) {
	const topic, group = "share", "share-workers"
	start := time.Now()
	ctx := faultCtx(t, 400*time.Second)
	c.createTopics(t, ctx, topic)
	lib := newRealLib(t)
	noErr(t, lib.AlterConfigs(ctx, c.servers(), kafkabpl.GroupConfigs(group), map[string]string{"share.auto.offset.reset": "earliest"}, nil))
	victim := c.coordinator(t, ctx, group)
	config := map[string]any{"servers": c.servers(), "group": group, "topics": topic}
	faultClientLog(t, lib, config)
	var got consumed
	members := []*bplMember{
		startBPLMemberOf(t, ctx, lib, kafkabpl.ShareConsumer, "share consumer 1", config, &got),
		startBPLMemberOf(t, ctx, lib, kafkabpl.ShareConsumer, "share consumer 2", config, &got),
	}
	waitFor(t, c, "both share consumers have partitions", func() bool {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		info, err := lib.DescribeGroup(rctx, c.servers(), group)
		return err == nil && len(info.Members) == 2 && len(info.Members[0].Assignment) == 1 && len(info.Members[1].Assignment) == 1
	})
	pp := startPacedProducer(t, ctx, c, topic, 500)
	waitFor(t, c, "records flow", func() bool { return got.distinct() >= 2500 })
	t.Logf("node %d coordinates share group %s and leads partitions %v of %s", victim, group, c.leads(t, ctx, victim, topic), topic)
	c.kill(t, ctx, victim)
	c.restart(t, ctx, victim)
	from := pp.ackCount()
	waitFor(t, c, "2,000 more records acknowledged after the restart", func() bool { return pp.ackCount() >= from+2000 })
	acked := pp.wait(t, ctx)
	// Every acknowledged record delivered, within faultWait.
	for deadline := time.Now().Add(faultWait); ; time.Sleep(50 * time.Millisecond) {
		var missing []string
		got.mu.Lock()
		for v := range acked {
			if !got.seen[v] {
				missing = append(missing, v)
			}
		}
		got.mu.Unlock()
		if len(missing) == 0 {
			break
		}
		c.checkAlive(t)
		if time.Now().After(deadline) {
			slices.Sort(missing)
			t.Fatalf("%d of %d acknowledged records not delivered %v after the producer stopped, such as %v", len(missing), len(acked), faultWait, missing[:min(10, len(missing))])
		}
	}
	for _, m := range members {
		m.stop(t, ctx, lib)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	dups := len(got.recs) - len(got.seen)
	var extra []string // delivered, not acknowledged: sends that failed and were written
	for v := range got.seen {
		if !acked[v] {
			extra = append(extra, v)
		}
	}
	slices.Sort(extra)
	t.Logf("share consumers: lost 0 of %d acknowledged, duplicates %d, %d delivered that the producer was not told of %v; took %v",
		len(acked), dups, len(extra), extra[:min(5, len(extra))], time.Since(start).Round(time.Millisecond))
}
