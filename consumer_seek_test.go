package kafkabpl

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Tests of seeking: to the beginning, an offset, a timestamp or the end,
// before, while and after the partitions are assigned.

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
	if err := lib.Seek(ctx, c, "t", SeekOffset(3), 1); err != nil { // partition 1 holds 1 3 5 7 9 at offsets 0..4
		t.Fatal(err)
	}
	if got := values(c, 2); !slices.Equal(got, []string{"7", "9"}) {
		t.Errorf("offset 3 of partition 1: %v", got)
	}
	if err := lib.Seek(ctx, c, "t", SeekTimestamp(time.UnixMilli(8500))); err != nil {
		t.Fatal(err)
	}
	if got := values(c, 2); !slices.Equal(got, []string{"8", "9"}) {
		t.Errorf("from timestamp 8500: %v", got)
	}
	if err := lib.Seek(ctx, c, "t", SeekEnd()); err != nil {
		t.Fatal(err)
	}
	if s := value.Format(must[*Polled](t)(lib.Poll(ctx, c, 200*time.Millisecond)).List()); s != `("t" => ())` {
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

// TestSeekDuringAssignment seeks at each point where a seek meets the
// group's assignment of the partitions it moves, and checks that the seek
// wins: the consumer reads the topic from its beginning, under
// auto-offset-reset "latest" (which would start at the end) and "none"
// (which would leave the partitions with no position). The consumer's test
// hook holds the assignment or the seek at the point named, so each case
// happens on every run:
//   - seek, then assignment: the seek has found that the consumer owns
//     none of the topic, and the group assigns it before the seek goes on
//     (where TestSeek's seek right after subscribing was sometimes lost);
//   - in onAssigned: the seek runs inside kgo's OnPartitionsAssigned, the
//     partitions recorded and their committed offsets not fetched yet;
//   - after adjustOffsets: the seek runs once adjustOffsets has seen the
//     fetched offsets, before kgo starts the partitions from them.
func TestSeekDuringAssignment(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	var msgs []Message
	for i := range 10 {
		msgs = append(msgs, Message{Value: fmt.Sprint(i), Partition: new(int32(i % 2))})
	}
	must[int](t)(lib.Send(ctx, p, []string{"t"}, msgs))

	// wait waits for ch, failing the test after a generous deadline.
	wait := func(t *testing.T, ch <-chan struct{}, what string) {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Errorf("%s never came", what)
		}
	}
	for _, reset := range []string{"latest", "none"} {
		for _, where := range []string{"seek, then assignment", "in onAssigned", "after adjustOffsets"} {
			t.Run(reset+"/"+where, func(t *testing.T) {
				t.Parallel()
				group := "g-" + reset + "-" + strings.NewReplacer(" ", "-", ",", "").Replace(where)
				c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "group": group, "auto-offset-reset": reset}))
				// The hook fires for the first assignment only: this
				// consumer, alone in its group, gets no other.
				var placed, assigning, assigned, inside sync.Once
				decided, recorded, sought := make(chan struct{}), make(chan struct{}), make(chan struct{})
				var seekErr error
				seekNow := func() {
					seekErr = lib.Seek(ctx, c, "t", SeekBeginning())
					close(sought)
				}
				hook := func(event string) {
					switch {
					case where == "seek, then assignment" && event == "assigning":
						assigning.Do(func() { wait(t, decided, "the seek's decision") })
					case where == "seek, then assignment" && event == "assigned":
						assigned.Do(func() { close(recorded) })
					case where == "seek, then assignment" && event == "seek placed":
						placed.Do(func() { close(decided); wait(t, recorded, "the assignment") })
					case where == "in onAssigned" && event == "assigned",
						where == "after adjustOffsets" && event == "adjusted":
						inside.Do(seekNow)
					}
				}
				h, err := lib.acquire(c, Consumer)
				if err != nil {
					t.Fatal(err)
				}
				h.cons.testHook.Store(&hook)
				h.calls.Done()

				must[[]string](t)(lib.Subscribe(ctx, c, []string{"t"}))
				if where == "seek, then assignment" {
					seekNow()
				}
				wait(t, sought, "the seek")
				if seekErr != nil {
					t.Fatalf("seek: %v", seekErr)
				}
				var got []string
				for _, m := range pollUntil(t, lib, c, nil, 10)["t"].Values() {
					got = append(got, m.(string))
				}
				slices.Sort(got)
				if want := strings.Fields("0 1 2 3 4 5 6 7 8 9"); !slices.Equal(got, want) {
					t.Errorf("polled %v, want %v", got, want)
				}
			})
		}
	}
}

// TestSeekAssignedAgain has the group take a partition away and give it
// back while a seek of owned partitions is moving it (the test hook plays
// the group's callbacks when the seek has decided): the seek is made again
// on the new assignment, and when that keeps happening, it fails saying so.
func TestSeekAssignedAgain(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	for _, always := range []bool{false, true} {
		c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "topics": "t", "group": fmt.Sprint("g-again-", always)}))
		waitAssigned(t, lib, c)
		h, err := lib.acquire(c, Consumer)
		if err != nil {
			t.Fatal(err)
		}
		cs := h.cons
		h.calls.Done()
		// Poll until both partitions have started, so that the seek
		// moves them itself rather than leave them to adjustOffsets.
		for deadline := time.Now().Add(20 * time.Second); ; {
			cs.mu.Lock()
			started := len(cs.assigned["t"]) == 2 && len(cs.starting) == 0
			cs.mu.Unlock()
			if started {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the partitions never started")
			}
			must[*Polled](t)(lib.Poll(ctx, c, 50*time.Millisecond))
		}

		placed := 0
		hook := func(event string) {
			if event != "seek placed" || (placed > 0 && !always) {
				return
			}
			placed++
			// Partition 1 is taken away and given back, and with always
			// its offsets are fetched at once, so that the seek finds it
			// started again each time.
			cs.onLost(ctx, h.cl, map[string][]int32{"t": {1}})
			cs.onAssigned(ctx, h.cl, map[string][]int32{"t": {1}})
			if always {
				cs.adjustOffsets(ctx, map[string]map[int32]kgo.Offset{"t": {1: kgo.NewOffset().AtCommitted()}})
			}
		}
		cs.testHook.Store(&hook)
		err = lib.Seek(ctx, c, "t", SeekBeginning())
		cs.testHook.Store(nil)
		if always {
			if err == nil || !strings.Contains(err.Error(), "assigned them again") {
				t.Errorf("seek while the group kept assigning partition 1 again: got %v, want an error saying so", err)
			}
			if placed != seekAttempts {
				t.Errorf("seek tried %d times, want %d", placed, seekAttempts)
			}
			continue
		}
		if err != nil {
			t.Fatalf("seek: %v", err)
		}
		// Partition 1, assigned again and not started, waits for its
		// fetched offsets: adjustOffsets gives it the seek.
		adjusted := map[string]map[int32]kgo.Offset{"t": {1: kgo.NewOffset().AtCommitted()}}
		cs.adjustOffsets(ctx, adjusted)
		if got, want := adjusted["t"][1], kgo.NewOffset().AtStart(); got != want {
			t.Errorf("partition 1 assigned again during the seek starts at %v, want %v", got, want)
		}
	}
}
