package kafkabpl

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Tests of share consumers (KIP-932) on the embedded cluster, which
// serves share groups.

// shareConfig is the config of a share consumer of group on servers,
// reading topic from its start.
func shareConfig(servers, group, topic string, extra ...any) map[string]any {
	cfg := map[string]any{"servers": servers, "group": group, "topics": topic, "auto-offset-reset": "earliest", "poll-format": "records"}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i].(string)] = extra[i+1]
	}
	return cfg
}

// waitShareMembers waits until share group has n members, each assigned
// partition 0 of topic.
func waitShareMembers(t *testing.T, lib *Library, servers, group, topic string, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d members in share group %q, each assigned %s partition 0", n, group, topic), func() bool {
		info, err := lib.DescribeGroup(testCtx(t), servers, group)
		if err != nil || info.Type != "share" || len(info.Members) != n {
			return false
		}
		for _, m := range info.Members {
			if len(m.Assignment) != 1 || m.Assignment[0].Topic != topic || fmt.Sprint(m.Assignment[0].Partitions) != "[0]" {
				return false
			}
		}
		return true
	})
}

// TestShareConsumersSplitAPartition checks what a classic group cannot
// do: two share consumers of one group split the records of one
// partition, each record delivered once overall (delivery count 1) when
// every one is accepted, and both get some. The group's description
// then shows both members on the partition and no lag.
func TestShareConsumersSplitAPartition(t *testing.T) {
	t.Parallel()
	const topic, group, n = "jobs", "workers", 300
	servers := newCluster(t, embedded.Topics(topic)).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	cfg := shareConfig(servers, group, topic, "max-poll-records", 5)
	c1 := must[string](t)(lib.Create(ctx, ShareConsumer, cfg))
	c2 := must[string](t)(lib.Create(ctx, ShareConsumer, cfg))
	for _, c := range []string{c1, c2} {
		must[*Polled](t)(lib.Poll(ctx, c, 0)) // joins the group
	}
	waitShareMembers(t, lib, servers, group, topic, 2)

	p := must[string](t)(lib.Create(ctx, Producer, servers))
	var mu sync.Mutex
	seen := map[string]string{} // value -> consumer
	perConsumer := map[string]int{}
	// take notes what c polled, and says when every message came.
	take := func(c string, recs []Record) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range recs {
			v := r.Value().(string)
			if prev, dup := seen[v]; dup {
				t.Errorf("message %s delivered twice (to %s and %s)", v, prev, c)
			}
			if r.DeliveryCount() != 1 || r.AcquisitionDeadline().Before(time.Now().Add(-time.Second)) {
				t.Errorf("message %s: delivery count %d, acquisition deadline %v", v, r.DeliveryCount(), r.AcquisitionDeadline())
			}
			seen[v] = c
			perConsumer[c]++
		}
		return len(seen) == n
	}
	var wg sync.WaitGroup
	for _, c := range []string{c1, c2} {
		wg.Go(func() {
			for range 200 { // 100 ms a poll at most: 20 s
				res, err := lib.Poll(ctx, c, 100*time.Millisecond)
				if err != nil {
					t.Error(err)
					return
				}
				if take(c, res.Topics[0].Records) {
					break
				}
			}
			if err := lib.Commit(ctx, c); err != nil { // accepts the last poll's
				t.Error(err)
			}
		})
	}
	// Sent in small batches while both poll: a broker hands a fetch whole
	// batches, so one batch of 300 would go to one member.
	for i := 0; i < n; i += 5 {
		send(t, lib, p, []string{topic}, unkeyed(fmt.Sprint(i), fmt.Sprint(i+1), fmt.Sprint(i+2), fmt.Sprint(i+3), fmt.Sprint(i+4))...)
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("delivered %d of %d", len(seen), n)
	}
	if perConsumer[c1] == 0 || perConsumer[c2] == 0 {
		t.Errorf("one consumer got everything: %v", perConsumer)
	}
	t.Logf("split %v", perConsumer)

	info := must[*GroupInfo](t)(lib.DescribeGroup(ctx, servers, group))
	if info.Type != "share" || info.State != "Stable" || len(info.Members) != 2 {
		t.Errorf("described %+v", info)
	}
	if len(info.Lag) != 1 || info.Lag[0].Topic != topic || len(info.Lag[0].Partitions) != 1 {
		t.Fatalf("lag %+v", info.Lag)
	}
	if pl := info.Lag[0].Partitions[0]; pl.Committed != n || pl.End != n || pl.Lag != 0 || info.TotalLag != 0 {
		t.Errorf("lag after all were accepted %+v, total %d", pl, info.TotalLag)
	}
	if groups := must[[]GroupListing](t)(lib.ListGroups(ctx, servers)); fmt.Sprint(groups) != "[{workers Stable share}]" {
		t.Errorf("listed groups %v", groups)
	}
}

// TestShareReleaseAndReject checks per-record acknowledgements: a released
// record comes back with delivery count 2 (in the records form too), a
// rejected one never comes back, an accepted one neither, and the group
// has no lag left.
func TestShareReleaseAndReject(t *testing.T) {
	t.Parallel()
	const topic, group = "tasks", "runners"
	servers := newCluster(t, embedded.Topics(topic)).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send(t, lib, p, []string{topic}, unkeyed("keep", "retry", "poison")...)
	c := must[string](t)(lib.Create(ctx, ShareConsumer, shareConfig(servers, group, topic)))

	recs := pollShare(t, lib, c, 3)
	byValue := map[string]*Record{}
	for i := range recs {
		byValue[recs[i].Value().(string)] = &recs[i]
	}
	if err := lib.Ack(c, AckRelease, byValue["retry"].ID()); err != nil {
		t.Fatal(err)
	}
	if err := lib.Ack(c, AckReject, byValue["poison"].ID()); err != nil {
		t.Fatal(err)
	}
	// Acknowledged once: a second acknowledgement is refused.
	err := lib.Ack(c, AckAccept, byValue["poison"].ID())
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), `kafka-ack: topic "tasks" partition 0 offset 2 is acknowledged already (reject)`) {
		t.Errorf("second acknowledgement: %v", err)
	}
	// "keep" is left for the next poll to accept.

	again := pollShare(t, lib, c, 1)
	if v := again[0].Value(); v != "retry" || again[0].DeliveryCount() != 2 {
		t.Fatalf("redelivered %v with delivery count %d, want retry with 2", v, again[0].DeliveryCount())
	}
	l := again[0].List()
	if n, _ := l.Get("delivery-count"); n != int64(2) {
		t.Errorf("records form %s: delivery-count %v", formatOf(l), n)
	}
	if d, _ := l.Get("acquisition-deadline"); d != again[0].AcquisitionDeadline().UnixMilli() {
		t.Errorf("records form %s: acquisition-deadline %v", formatOf(l), d)
	}
	// The latest poll's records only: "keep" was accepted by this poll.
	err = lib.Ack(c, AckRelease, byValue["keep"].ID())
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "is not a record the latest poll returned") {
		t.Errorf("acknowledging a record of an earlier poll: %v", err)
	}
	if err := lib.Commit(ctx, c); err != nil { // accepts "retry"
		t.Fatal(err)
	}
	if p := must[*Polled](t)(lib.Poll(ctx, c, 2*time.Second)); p.Len() != 0 {
		t.Errorf("after accept, release, reject and accept: polled %s", formatOf(p.List()))
	}
	info := must[*GroupInfo](t)(lib.DescribeGroup(ctx, servers, group))
	if info.TotalLag != 0 || len(info.Lag) != 1 || info.Lag[0].Partitions[0].Committed != 3 {
		t.Errorf("lag %+v total %d, want start offset 3 and no lag", info.Lag, info.TotalLag)
	}
}

// pollShare polls share consumer c until it returns records, at most 20
// s, and wants n.
func pollShare(t *testing.T, lib *Library, c string, n int) []Record {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		p := must[*Polled](t)(lib.Poll(testCtx(t), c, time.Second))
		if p.Len() == 0 {
			continue
		}
		if p.Len() != n {
			t.Fatalf("polled %s, want %d records", formatOf(p.List()), n)
		}
		return p.Topics[0].Records
	}
	t.Fatalf("no records in 20 s, want %d", n)
	return nil
}

// formatOf is a value's BPL text.
func formatOf(v any) string { return value.Format(v) }

// TestShareRenewKeepsRecords checks that a renewed record stays with its
// consumer past twice its lock duration (3 s here), while another member of
// the group polls; accepted then, it is never delivered again. A renew goes
// out with the consumer's next fetch, up to about a second after Ack (up to
// kgo's 500 ms fetch wait, more on a loaded machine): a 1 s lock left too
// little margin.
func TestShareRenewKeepsRecords(t *testing.T) {
	t.Parallel()
	const topic, group = "long-jobs", "slow"
	servers := newCluster(t, embedded.Topics(topic), embedded.KfakeOptions(kfake.BrokerConfigs(map[string]string{
		"group.share.record.lock.duration.ms": "3000",
		"share.record.lock.sweep.interval.ms": "100",
	}))).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send(t, lib, p, []string{topic}, unkeyed("job")...)
	// b joins once a holds the record: b's fetch would acquire it as well
	// as a's, and b then return it from its buffer, its lock long ended.
	a := must[string](t)(lib.Create(ctx, ShareConsumer, shareConfig(servers, group, topic)))
	rec := pollShare(t, lib, a, 1)[0]
	if rec.DeliveryCount() != 1 {
		t.Errorf("delivery count %d, want 1", rec.DeliveryCount())
	}
	b := must[string](t)(lib.Create(ctx, ShareConsumer, shareConfig(servers, group, topic)))
	if time.Until(rec.AcquisitionDeadline()) > 4*time.Second {
		t.Errorf("acquisition deadline %v from now, lock duration 3 s", time.Until(rec.AcquisitionDeadline()))
	}
	end := time.Now().Add(7 * time.Second)
	for time.Now().Before(end) {
		if err := lib.Ack(a, AckRenew, rec.ID()); err != nil {
			t.Fatal(err)
		}
		if got := must[*Polled](t)(lib.Poll(ctx, b, 300*time.Millisecond)); got.Len() != 0 {
			t.Fatalf("the other member got the renewed record: %s", formatOf(got.List()))
		}
	}
	// b was a member, there to take the record; the commit accepts it.
	waitShareMembers(t, lib, servers, group, topic, 2)
	if err := lib.Commit(ctx, a); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{a, b} {
		if got := must[*Polled](t)(lib.Poll(ctx, c, 1500*time.Millisecond)); got.Len() != 0 {
			t.Errorf("after the accept, %s polled %s", c, formatOf(got.List()))
		}
	}
}

// TestShareCommitReportsRefusedAck checks that Commit reports an
// acknowledgement the brokers refused: a holds a record, "job", past its
// lock (2 s here), b gets it (delivered again) and holds it; a's accept
// then comes too late, and a's Commit says so, naming the partition,
// with the brokers' error; a's next Commit has nothing to report, and
// b's accept holds: the record is not delivered again.
//
// a holds a second record, "next", that it fetched and no poll took:
// its client then sends no fetch, and the accept goes out on its own,
// in a ShareAcknowledge. (kfake drops the error of an acknowledgement
// that rode on a fetch which then waited for records, and kgo sends
// acknowledgements with its fetches when it can.)
func TestShareCommitReportsRefusedAck(t *testing.T) {
	t.Parallel()
	const topic, group = "late-acks", "late"
	servers := newCluster(t, embedded.Topics(topic), embedded.KfakeOptions(kfake.BrokerConfigs(map[string]string{
		"group.share.record.lock.duration.ms": "2000",
		"share.record.lock.sweep.interval.ms": "100",
	}))).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send(t, lib, p, []string{topic}, unkeyed("job")...)
	a := must[string](t)(lib.Create(ctx, ShareConsumer, shareConfig(servers, group, topic)))
	rec := pollShare(t, lib, a, 1)[0]
	send(t, lib, p, []string{topic}, unkeyed("next")...)
	waitFor(t, `a to fetch "next"`, func() bool {
		h := must[*handle](t)(lib.acquire(a, ShareConsumer))
		defer h.calls.Done()
		return h.cl.BufferedFetchRecords() > 0
	})
	// b joins once a holds both records. a's lock on "job" ends first,
	// and b gets it, with "next" when both locks ended together; each
	// delivered a second time.
	b := must[string](t)(lib.Create(ctx, ShareConsumer, shareConfig(servers, group, topic)))
	got := map[string]int{} // value -> delivery count
	waitFor(t, `b to get "job"`, func() bool {
		for _, r := range must[*Polled](t)(lib.Poll(ctx, b, 300*time.Millisecond)).Topics[0].Records {
			got[r.Value().(string)] = r.DeliveryCount()
		}
		return len(got) > 0
	})
	if got["job"] != 2 || len(got) == 2 && got["next"] != 2 {
		t.Fatalf("b got %v (delivery counts), want job, delivered a second time", got)
	}
	if err := lib.Ack(a, AckAccept, rec.ID()); err != nil {
		t.Fatal(err)
	}
	err := lib.Commit(ctx, a)
	if !errors.Is(err, ErrNotCommitted) || !errors.Is(err, kerr.InvalidRecordState) ||
		!strings.HasPrefix(err.Error(), `kafka-commit: `) || !strings.Contains(err.Error(), `the brokers refused acknowledgements of records of topic "late-acks" partition 0`) {
		t.Errorf("a's late accept: %v", err)
	}
	if err := lib.Commit(ctx, a); err != nil {
		t.Errorf("a's next commit, with nothing refused since: %v", err)
	}
	if err := lib.Commit(ctx, b); err != nil {
		t.Fatalf("b's accept: %v", err)
	}
	must[bool](t)(lib.Destroy(ctx, a)) // gives "next" back, if it still held it
	if _, had := got["next"]; !had {
		if more := pollShare(t, lib, b, 1); more[0].Value() != "next" {
			t.Errorf("b got %v, want next", more[0].Value())
		}
		if err := lib.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if got := must[*Polled](t)(lib.Poll(ctx, b, 1500*time.Millisecond)); got.Len() != 0 {
		t.Errorf("after b's accepts, b polled %s", formatOf(got.List()))
	}
}

// TestShareOffsetReset checks how a share group starts a partition: at
// its end by default (the record sent before the group read it is not
// delivered), and from its start when a member's config gives
// "auto-offset-reset" "earliest", which sets the group config
// share.auto.offset.reset that DescribeConfigs then shows.
func TestShareOffsetReset(t *testing.T) {
	t.Parallel()
	const topic = "backlog"
	servers := newCluster(t, embedded.Topics(topic)).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send(t, lib, p, []string{topic}, unkeyed("old")...)

	late := must[string](t)(lib.Create(ctx, ShareConsumer, map[string]any{"servers": servers, "group": "latecomers", "topics": topic}))
	must[*Polled](t)(lib.Poll(ctx, late, 0))
	waitShareMembers(t, lib, servers, "latecomers", topic, 1)
	// The group starts the partition when it first reads it: poll until
	// it has (its start offset shows), then send.
	waitFor(t, "the group to start the partition", func() bool {
		must[*Polled](t)(lib.Poll(ctx, late, 100*time.Millisecond))
		info, err := lib.DescribeGroup(ctx, servers, "latecomers")
		return err == nil && len(info.Lag) == 1
	})
	send(t, lib, p, []string{topic}, unkeyed("new")...)
	if got := pollShare(t, lib, late, 1); got[0].Value() != "new" {
		t.Errorf("default reset polled %v, want only new", got[0].Value())
	}

	early := must[string](t)(lib.Create(ctx, ShareConsumer, shareConfig(servers, "readers", topic)))
	if got := pollShare(t, lib, early, 2); got[0].Value() != "old" || got[1].Value() != "new" {
		t.Errorf("earliest polled %v %v, want old new", got[0].Value(), got[1].Value())
	}
	entries := must[[]ConfigEntry](t)(lib.DescribeConfigs(ctx, servers, GroupConfigs("readers")))
	found := false
	for _, e := range entries {
		if e.Name == "share.auto.offset.reset" {
			found = true
			if e.Value != "earliest" || e.Source != "group" {
				t.Errorf("share.auto.offset.reset: %+v", e)
			}
		}
	}
	if !found {
		t.Errorf("no share.auto.offset.reset among the group's configs %+v", entries)
	}
}

// TestShareConsumerErrors checks the refusals: a share consumer needs a
// group and a reset it can have, cannot seek, polls its whole
// subscription; an acknowledgement needs a share consumer, a known kind
// and a record of the latest poll.
func TestShareConsumerErrors(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("a", "b")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	check := func(what string, err, kind error, text string) {
		t.Helper()
		if !errors.Is(err, kind) || !strings.Contains(fmt.Sprint(err), text) {
			t.Errorf("%s: %v, want %v with %q", what, err, kind, text)
		}
	}
	_, err := lib.Create(ctx, ShareConsumer, servers)
	check("no group", err, ErrInvalidConfig, `kafka-create: config: a share consumer needs "group"`)
	_, err = lib.Create(ctx, ShareConsumer, map[string]any{"servers": servers, "group": "g", "auto-offset-reset": "none"})
	check("reset none", err, ErrInvalidConfig, `"auto-offset-reset" "none"`)
	_, err = lib.Create(ctx, Kind("share"), servers)
	check("unknown kind", err, ErrInvalidArgument, `"share-consumer"`)

	s := must[string](t)(lib.Create(ctx, ShareConsumer, map[string]any{"servers": servers, "group-id": "g"}))
	if s[0] != 'c' || kindOfID(s) != Consumer {
		t.Errorf("share consumer id %q", s)
	}
	_, err = lib.Poll(ctx, s, 0)
	check("poll unsubscribed", err, ErrNotSubscribed, "kafka-poll: the share consumer is subscribed to no topic")
	check("seek", lib.Seek(ctx, s, "a", SeekBeginning()), ErrWrongKind, "is a share-consumer id, not a consumer id")
	if sub := must[[]string](t)(lib.Subscribe(ctx, s, []string{"a", "b"})); fmt.Sprint(sub) != "[a b]" {
		t.Errorf("subscribed %v", sub)
	}
	_, err = lib.PollTopics(ctx, s, []string{"a"}, 0)
	check("poll some topics", err, ErrInvalidArgument, `a share consumer polls its whole subscription, which also has ["b"]`)
	if sub := must[[]string](t)(lib.Unsubscribe(ctx, s, []string{"b"})); fmt.Sprint(sub) != "[a]" {
		t.Errorf("after unsubscribing b: %v", sub)
	}
	must[*Polled](t)(lib.PollTopics(ctx, s, []string{"a"}, 0))

	check("ack unknown record", lib.Ack(s, AckAccept, RecordID{"a", 0, 7}), ErrInvalidArgument,
		`kafka-ack: topic "a" partition 0 offset 7 is not a record the latest poll returned`)
	check("ack type", lib.Ack(s, AckType("done")), ErrInvalidArgument, `acknowledgement "done": want "accept", "release", "reject" or "renew"`)
	if err := lib.Ack(s, AckAccept); err != nil { // nothing polled: nothing to do
		t.Errorf("accepting an empty poll: %v", err)
	}
	c := must[string](t)(lib.Create(ctx, Consumer, servers))
	check("ack a consumer's", lib.Ack(c, AckAccept), ErrWrongKind, "is a consumer id, not a share-consumer id")
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	_, err = lib.Poll(ctx, p, 0)
	check("poll a producer", err, ErrWrongKind, "is a producer id, not a consumer id")
	must[bool](t)(lib.Destroy(ctx, s))
	check("ack destroyed", lib.Ack(s, AckAccept), ErrUnknownHandle, "unknown consumer id")
}
