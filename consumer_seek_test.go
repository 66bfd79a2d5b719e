package kafkabpl

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
)

// Tests of seeking: to the beginning, an offset, a timestamp or the end,
// before and after the partitions are assigned.

func TestSeek(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	var msgs []Message
	for i := range 10 {
		msgs = append(msgs, Message{Value: fmt.Sprint(i), Partition: new(int32(i % 2)), Timestamp: time.UnixMilli(int64(1000 * (i + 1)))})
	}
	must[int](t)(lib.Send(ctx, p, []string{"t"}, msgs))

	values := func(c string, want int) []string {
		var out []string
		for _, m := range pollUntil(t, lib, c, nil, want)["t"].Values() {
			out = append(out, m.(string))
		}
		slices.Sort(out)
		return out
	}

	// A seek right after subscribing waits for the assignment.
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t"}))
	if err := lib.Seek(ctx, c, "t", SeekBeginning()); err != nil {
		t.Fatal(err)
	}
	if got := values(c, 10); !slices.Equal(got, strings.Fields("0 1 2 3 4 5 6 7 8 9")) {
		t.Fatalf("from the beginning: %v", got)
	}
	// Now owned partitions move at once.
	mustCall(t, lib, "kafka-seek", c, "t", 3, nv{"partition", 1}) // partition 1 holds 1 3 5 7 9 at offsets 0..4
	if got := values(c, 2); !slices.Equal(got, []string{"7", "9"}) {
		t.Errorf("offset 3 of partition 1: %v", got)
	}
	mustCall(t, lib, "kafka-seek", c, "t", map[string]any{"timestamp": 8500})
	if got := values(c, 2); !slices.Equal(got, []string{"8", "9"}) {
		t.Errorf("from timestamp 8500: %v", got)
	}
	mustCall(t, lib, "kafka-seek", c, "t", "end")
	if s := Format(mustCall(t, lib, "kafka-poll", c, 200)); s != `("t" => ())` {
		t.Errorf("after seeking to the end: %s", s)
	}
}

// TestSeekNotReplayed checks that a seek of every partition, made while
// the consumer owns some of them, is not applied again when the group
// rebalances: when the other member leaves, its partitions resume at its
// committed offsets, and the sought ones are not moved back. (Auto-commit
// is on, so the rebalance commits what a polled: with it off, what a
// polled but did not commit may come again after a rebalance, as with
// Java's consumer.)
func TestSeekNotReplayed(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.NoAutoCreate(), embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send := func(prefix string) {
		t.Helper()
		must[int](t)(lib.Send(ctx, p, []string{"t"}, []Message{
			{Value: prefix + "0", Partition: new(int32(0))}, {Value: prefix + "1", Partition: new(int32(1))},
		}))
	}
	cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "auto-offset-reset": "earliest", "auto-commit": true}
	a := must[string](t)(lib.Create(ctx, Consumer, cfg))
	b := must[string](t)(lib.Create(ctx, Consumer, cfg))
	waitAssigned(t, lib, a, b) // one partition each
	send("x")
	for _, c := range []string{a, b} {
		if got := pollValues(t, lib, c, 1, nil); len(got) != 1 {
			t.Fatalf("%s polled %q, want its partition's one message", c, got)
		}
		if err := lib.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// a reads its partition again from the beginning.
	if err := lib.Seek(ctx, a, "t", SeekBeginning()); err != nil {
		t.Fatal(err)
	}
	if got := pollValues(t, lib, a, 1, nil); len(got) != 1 {
		t.Fatalf("after the seek a polled %q, want its partition's message again", got)
	}
	if err := lib.Commit(ctx, a); err != nil {
		t.Fatal(err)
	}
	// b leaves; a gets both partitions and must read only what is new.
	if _, err := lib.Destroy(ctx, b); err != nil {
		t.Fatal(err)
	}
	send("y")
	got := pollValues(t, lib, a, 2, nil)
	slices.Sort(got)
	if !slices.Equal(got, []string{"y0", "y1"}) {
		t.Errorf("after the rebalance a polled %q, want only the new y0 y1 (the old seek applied again?)", got)
	}
	if res, err := lib.Poll(ctx, a, 500*time.Millisecond); err != nil || res.Len() != 0 {
		t.Errorf("then a polled %v (%v), want nothing", polledValues(res), err)
	}
}

// TestSeekPastEnd checks a seek beyond a partition's end: the partition
// resets to its end (auto-offset-reset "latest"), and a message sent then
// comes in the next poll. kgo lets a fetch wait 5 s for data, and the
// partition only joins the next fetch, so it used to come seconds late,
// often after a 3 s poll; the fetch wait is now Java's 500 ms.
func TestSeekPastEnd(t *testing.T) {
	// Not parallel: the message must come within one 3 s poll, which a loaded machine could stretch.
	servers := newCluster(t, embedded.Partitions(4), embedded.Topics("sk")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "sk"}))
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	must[*Polled](t)(lib.Poll(ctx, c, 500*time.Millisecond))
	if err := lib.Seek(ctx, c, "sk", SeekOffset(100), 2); err != nil {
		t.Fatal(err)
	}
	if res := must[*Polled](t)(lib.Poll(ctx, c, time.Second)); res.Len() != 0 {
		t.Fatalf("polled %v from an empty topic", polledValues(res))
	}
	two := int32(2)
	must[int](t)(lib.Send(ctx, p, []string{"sk"}, []Message{{Value: "late", Partition: &two}}))
	if got := polledValues(must[*Polled](t)(lib.Poll(ctx, c, 3*time.Second))); !slices.Equal(got, []string{"late"}) {
		t.Errorf("the poll after the send got %q, want [late]", got)
	}
}

// TestSeekMissingPartition checks that seeking a partition the topic does
// not have fails, naming it, instead of waiting for ever for an
// assignment that cannot come; a topic that does not exist yet may still
// be sought.
func TestSeekMissingPartition(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(4), embedded.Topics("sk")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": "g", "topics": "sk"}))
	err := lib.Seek(ctx, c, "sk", SeekOffset(0), 9)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), `kafka-seek: topic "sk" has 4 partitions (0 to 3); partition 9 does not exist`) {
		t.Errorf("seek of partition 9: %v", err)
	}
	if err := lib.Seek(ctx, c, "sk", SeekOffset(0), 3); err != nil {
		t.Errorf("seek of partition 3: %v", err)
	}
	if err := lib.Seek(ctx, c, "later", SeekBeginning(), 5); err != nil {
		t.Errorf("seek of a topic not created yet: %v", err)
	}
}
