//go:build unix

package main

// More of TestRealKafka's share group subtests (see
// realkafka_share_test.go), on Kafka 4.4:
//
//   - renew: a holds a record under a 3 s lock (the group's
//     share.record.lock.duration.ms) and renews it while b, a member
//     that joined once a held the record, polls for more than twice the
//     lock: b never gets it; accepted then, neither gets it again.
//   - refused acknowledgement: a holds a record past its 2 s lock, b gets
//     it again and holds it; a's accept then comes too late, and a's
//     commit reports the brokers' refusal (INVALID_RECORD_STATE), naming
//     the partition, once; b's accept holds.
//   - reset and delete: a share group's reset and delete are refused
//     while it has a member; once the member left, a reset to an offset
//     moves the group's start offset there, and the next member gets the
//     records from there, each delivered as new (delivery count 1),
//     although the group had accepted them all; the group is then
//     deleted, and a second delete finds no group.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/twmb/franz-go/pkg/kerr"
)

// shareMember creates a share consumer of group on topic.
func shareMember(t *testing.T, lib *kafkabpl.Library, servers, group, topic string) string {
	t.Helper()
	return ok[string](t)(lib.Create(realCtx(t), kafkabpl.ShareConsumer, map[string]any{"servers": servers, "group": group, "topics": topic, "poll-format": "records"}))
}

// pollRecords polls share consumer c until it returned records, within
// testTimeout, and returns them.
func pollRecords(t *testing.T, lib *kafkabpl.Library, c string) []kafkabpl.Record {
	t.Helper()
	for end := time.Now().Add(testTimeout); time.Now().Before(end); {
		if res := ok[*kafkabpl.Polled](t)(lib.Poll(realCtx(t), c, time.Second)); res.Len() > 0 {
			return res.Topics[0].Records
		}
	}
	t.Fatalf("%s polled no records in %v", c, testTimeout)
	return nil
}

func testRealShareRenew(t *testing.T, servers string) {
	const topic, group = "rk-share-renew", "rk-share-renew-g"
	lib := newRealLib(t)
	ctx := realCtx(t)
	shareStart(t, ctx, lib, servers, group, 3000)
	ok[int](t)(lib.Send(ctx, newProducer(t, lib, ctx, servers), []string{topic}, textMessages("job")))
	a := shareMember(t, lib, servers, group, topic)
	recs := pollRecords(t, lib, a)
	if len(recs) != 1 || recs[0].DeliveryCount() != 1 {
		t.Fatalf("a polled %d records, want job, delivered once", len(recs))
	}
	rec := recs[0]
	if left := time.Until(rec.AcquisitionDeadline()); left > 4*time.Second {
		t.Errorf("acquisition deadline %v from now, lock duration 3 s", left)
	}
	b := shareMember(t, lib, servers, group, topic)
	end := time.Now().Add(7 * time.Second)
	for time.Now().Before(end) {
		noErr(t, lib.Ack(a, kafkabpl.AckRenew, rec.ID()))
		if got := ok[[]sharedMsg](t)(pollShared(ctx, lib, b, 300*time.Millisecond)); len(got) != 0 {
			t.Fatalf("b got the renewed record: %v", got)
		}
	}
	// b was a member, there to take the record.
	info := ok[*kafkabpl.GroupInfo](t)(lib.DescribeGroup(ctx, servers, group))
	if len(info.Members) != 2 {
		t.Errorf("the group had %d members, want a and b", len(info.Members))
	}
	noErr(t, lib.Commit(ctx, a))
	for _, c := range []string{a, b} {
		if got := ok[[]sharedMsg](t)(pollShared(ctx, lib, c, 2*time.Second)); len(got) != 0 {
			t.Errorf("after the accept, %s polled %v", c, got)
		}
	}
}

func testRealShareRefused(t *testing.T, servers string) {
	const topic, group = "rk-share-refused", "rk-share-refused-g"
	lib := newRealLib(t)
	ctx := realCtx(t)
	shareStart(t, ctx, lib, servers, group, 2000)
	ok[int](t)(lib.Send(ctx, newProducer(t, lib, ctx, servers), []string{topic}, textMessages("job")))
	a := shareMember(t, lib, servers, group, topic)
	rec := pollRecords(t, lib, a)[0]
	b := shareMember(t, lib, servers, group, topic)
	// a's lock ends and b gets the record (a's client may fetch it again
	// first, and no poll take it: b gets it when that lock ends too).
	taken := pollRecords(t, lib, b)
	if len(taken) != 1 || taken[0].Value() != "job" || taken[0].DeliveryCount() < 2 {
		t.Fatalf("b polled %d records, want job delivered again", len(taken))
	}
	noErr(t, lib.Ack(a, kafkabpl.AckAccept, rec.ID()))
	err := lib.Commit(ctx, a)
	if !errors.Is(err, kafkabpl.ErrNotCommitted) || !errors.Is(err, kerr.InvalidRecordState) ||
		!strings.Contains(err.Error(), `kafka-commit: the brokers refused acknowledgements of records of topic "`+topic+`" partition 0`) {
		t.Errorf("a's late accept: %v", err)
	}
	noErr(t, lib.Commit(ctx, a)) // nothing refused since
	noErr(t, lib.Commit(ctx, b))
	ok[bool](t)(lib.Destroy(ctx, a)) // gives back a copy it may have fetched again
	if got := ok[[]sharedMsg](t)(pollShared(ctx, lib, b, 2*time.Second)); len(got) != 0 {
		t.Errorf("after b's accept, b polled %v", got)
	}
}

func testRealShareReset(t *testing.T, servers string) {
	const topic, group = "rk-share-reset", "rk-share-reset-g"
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 1}))
	shareStart(t, ctx, lib, servers, group, 0)
	ok[int](t)(lib.Send(ctx, newProducer(t, lib, ctx, servers), []string{topic}, textMessages("0", "1", "2", "3", "4")))
	// read polls c until it got n records, and returns them as
	// VALUE#DELIVERY-COUNT, sorted.
	read := func(c string, n int) []string {
		var got []string
		for end := time.Now().Add(testTimeout); len(got) < n && time.Now().Before(end); {
			for _, m := range ok[[]sharedMsg](t)(pollShared(ctx, lib, c, time.Second)) {
				got = append(got, fmt.Sprintf("%s#%d", m.value, m.deliveries))
			}
		}
		slices.Sort(got)
		return got
	}
	c := shareMember(t, lib, servers, group, topic)
	if got := read(c, 5); len(got) != 5 {
		t.Fatalf("the first member read %v, want the 5 records", got)
	}
	noErr(t, lib.Commit(ctx, c))
	if _, err := lib.ResetGroupOffsets(ctx, a, group, topic, kafkabpl.OffsetEarliest()); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Errorf("a reset of an active share group: %v", err)
	}
	if err := lib.DeleteGroup(ctx, a, group); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Errorf("a delete of an active share group: %v", err)
	}
	ok[bool](t)(lib.Destroy(ctx, c))

	reset := eventually(t, func() ([]kafkabpl.PartitionOffset, error) {
		return lib.ResetGroupOffsets(ctx, a, group, topic, kafkabpl.OffsetAt(2))
	}, func([]kafkabpl.PartitionOffset) bool { return true })
	if got := offsets(reset); got != "0:2" || reset[0].Err != nil {
		t.Errorf("reset to 2: %s %v", got, reset[0].Err)
	}
	info := ok[*kafkabpl.GroupInfo](t)(lib.DescribeGroup(ctx, a, group))
	if info.Type != "share" || len(info.Lag) != 1 || info.Lag[0].Partitions[0].Committed != 2 {
		t.Errorf("described after the reset: %+v", info)
	}
	c = shareMember(t, lib, servers, group, topic)
	if got := read(c, 3); strings.Join(got, " ") != "2#1 3#1 4#1" {
		t.Errorf("read after the reset to 2: %v, want 2, 3 and 4, each delivered once", got)
	}
	noErr(t, lib.Commit(ctx, c))
	if more := ok[[]sharedMsg](t)(pollShared(ctx, lib, c, 2*time.Second)); len(more) != 0 {
		t.Errorf("more after the reset's records: %v", more)
	}
	ok[bool](t)(lib.Destroy(ctx, c))

	eventually(t, func() (bool, error) { return true, lib.DeleteGroup(ctx, a, group) }, func(bool) bool { return true })
	if _, err := lib.DescribeGroup(ctx, a, group); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("describing the deleted share group: %v", err)
	}
	if err := lib.DeleteGroup(ctx, a, group); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("a delete of a deleted share group: %v", err)
	}
}
