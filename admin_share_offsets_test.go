package kafkabpl

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestResetShareGroupOffsets resets a share group and deletes it: both
// are refused while it has a member; once the member left, a reset moves
// each partition's start offset, and the next member gets the records
// from there, delivered as new (delivery count 1) although the group had
// accepted them all.
func TestResetShareGroupOffsets(t *testing.T) {
	t.Parallel()
	const topic, group = "t", "q"
	servers := newCluster(t, embedded.Topics(topic), embedded.Partitions(2), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	base := time.UnixMilli(1_700_000_000_000)
	fillTwo(t, lib, servers, topic, base)
	ctx := testCtx(t)
	// polled polls share consumer c until it returned n records in all,
	// and returns their values, sorted, each with its delivery count.
	polled := func(c string, n int) []string {
		t.Helper()
		var got []string
		waitFor(t, "the share consumer's records", func() bool {
			for _, r := range must[*Polled](t)(lib.Poll(ctx, c, 100*time.Millisecond)).Topics[0].Records {
				got = append(got, r.Value().(string)+"#"+string(rune('0'+r.DeliveryCount())))
			}
			return len(got) >= n
		})
		slices.Sort(got)
		return got
	}

	c := must[string](t)(lib.Create(ctx, ShareConsumer, shareConfig(servers, group, topic)))
	if got := polled(c, 8); len(got) != 8 {
		t.Fatalf("the first member read %v, want the 8 records", got)
	}
	if err := lib.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	_, err := lib.ResetGroupOffsets(ctx, servers, group, topic, OffsetEarliest())
	if !errors.Is(err, kerr.NonEmptyGroup) || !strings.Contains(err.Error(), `kafka-reset-offsets: `) || !strings.Contains(err.Error(), `group "q" has 1 active members`) {
		t.Errorf("a reset of an active share group: %v", err)
	}
	if err := lib.DeleteGroup(ctx, servers, group); !errors.Is(err, kerr.NonEmptyGroup) || !strings.HasPrefix(err.Error(), `kafka-delete-group: `) {
		t.Errorf("a delete of an active share group: %v", err)
	}
	must[bool](t)(lib.Destroy(ctx, c))

	for _, tt := range []struct {
		spec OffsetSpec
		want string
	}{
		{OffsetLatest(), "0:5 1:3"},
		{OffsetAtTime(base.Add(time.Second)), "0:1 1:1"},
		{OffsetAt(3), "0:3 1:3"}, // clamped to partition 1's end
	} {
		got := must[[]PartitionOffset](t)(lib.ResetGroupOffsets(ctx, servers, group, topic, tt.spec))
		if offsetsOf(got) != tt.want {
			t.Errorf("reset to %s: %s, want %s", tt.spec, offsetsOf(got), tt.want)
		}
	}
	// The group's start offsets show the last reset.
	info := must[*GroupInfo](t)(lib.DescribeGroup(ctx, servers, group))
	if info.Type != "share" || len(info.Lag) != 1 || len(info.Lag[0].Partitions) != 2 ||
		info.Lag[0].Partitions[0].Committed != 3 || info.Lag[0].Partitions[1].Committed != 3 || info.TotalLag != 2 {
		t.Errorf("described after the reset: %s", formatOf(info.List()))
	}
	c = must[string](t)(lib.Create(ctx, ShareConsumer, shareConfig(servers, group, topic)))
	if got := polled(c, 2); strings.Join(got, " ") != "0-3#1 0-4#1" {
		t.Errorf("read after the reset to 3: %v, want 0-3 and 0-4, each delivered once", got)
	}
	if err := lib.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if p := must[*Polled](t)(lib.Poll(ctx, c, time.Second)); p.Len() != 0 {
		t.Errorf("more after the reset's records: %s", formatOf(p.List()))
	}
	must[bool](t)(lib.Destroy(ctx, c))

	if _, err := lib.ResetGroupOffsets(ctx, servers, group, topic, OffsetsOf("nobody")); !errors.Is(err, kerr.GroupIDNotFound) || !strings.Contains(err.Error(), `group "nobody"`) {
		t.Errorf("a copy from a group that does not exist: %v", err)
	}
	if err := lib.DeleteGroup(ctx, servers, group); err != nil {
		t.Errorf("a delete of a share group with no members: %v", err)
	}
	if _, err := lib.DescribeGroup(ctx, servers, group); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("describing the deleted share group: %v", err)
	}
	if err := lib.DeleteGroup(ctx, servers, group); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("a delete of a deleted share group: %v", err)
	}
}
