package kafkabpl

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
)

// Tests of auto-offset-reset "none": a partition with no committed
// offset is an error, not a silent start.

// checkNoOffset checks that err is a poll's error for partitions with no
// committed offset under auto-offset-reset "none", naming exactly the
// partitions want among the topic's first partitions.
func checkNoOffset(t *testing.T, what string, err error, topic string, partitions int32, want ...int32) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error; want one saying partitions %v have no committed offset", what, want)
		return
	}
	msg := err.Error()
	if !errors.Is(err, ErrKafka) || ErrorType(err) != "KafkaError" || !strings.HasPrefix(msg, "kafka-poll: ") || !strings.Contains(msg, "no prior committed offset") {
		t.Errorf("%s: %v (%s); want a KafkaError of kafka-poll saying there is no prior committed offset", what, err, ErrorType(err))
	}
	for p := range partitions {
		name := fmt.Sprintf("topic %q partition %d", topic, p)
		if named := strings.Contains(msg, name); named != slices.Contains(want, p) {
			t.Errorf("%s: %v; names %s: %v, want %v", what, err, name, named, !named)
		}
	}
}

// TestOffsetResetNone checks auto-offset-reset "none" in a group with no
// committed offset, as Java's consumer behaves: every poll fails, naming
// the partition, until a seek gives it a position; then it reads from
// there, and what it commits is where the group's next consumer resumes.
func TestOffsetResetNone(t *testing.T) {
	// Not parallel: a poll that has nothing to wait for must end within 2 s, which a loaded machine could stretch.
	servers := newCluster(t, embedded.NoAutoCreate(), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send := func(v string) { must[int](t)(lib.Send(ctx, p, []string{"t"}, []Message{{Value: v}})) }
	cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "auto-offset-reset": "none", "allow-auto-create-topics": false, "enable-auto-commit": false}
	send("before")
	c := must[string](t)(lib.Create(ctx, Consumer, cfg))

	// The first poll fails as soon as the group has assigned the
	// partition, not when its timeout ends.
	start := time.Now()
	res, err := lib.Poll(ctx, c, 15*time.Second)
	checkNoOffset(t, "first poll", err, "t", 1, 0)
	if res != nil && res.Len() > 0 {
		t.Errorf("first poll returned %d records", res.Len())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("first poll took %v", d)
	}

	// So does every poll until a seek, at once rather than after its
	// timeout; a message sent meanwhile does not come.
	send("after")
	for i := range 3 {
		start := time.Now()
		res, err := lib.Poll(ctx, c, 5*time.Second)
		checkNoOffset(t, fmt.Sprintf("poll %d after the first", i+1), err, "t", 1, 0)
		if res != nil && res.Len() > 0 {
			t.Errorf("poll %d after the first returned %d records", i+1, res.Len())
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("poll %d after the first took %v: it has nothing to wait for", i+1, d)
		}
	}
	// A BPL runtime (value.ErrorType) sees the error as a KafkaError.
	if _, err := lib.Poll(ctx, c, time.Second); err == nil || ErrorType(err) != "KafkaError" || value.ErrorType(err) != "KafkaError" {
		t.Errorf("poll: %v (%s), want a KafkaError", err, value.ErrorType(err))
	}

	// A seek to the beginning gives it a position: both messages come,
	// in order, and then nothing and no error.
	if err := lib.Seek(ctx, c, "t", SeekBeginning()); err != nil {
		t.Fatal(err)
	}
	if got := pollValues(t, lib, c, 2, nil); !slices.Equal(got, []string{"before", "after"}) {
		t.Errorf("after seeking to the beginning: %q", got)
	}
	if res, err := lib.Poll(ctx, c, 200*time.Millisecond); err != nil {
		t.Errorf("then %v; want no error", err)
	} else if res.Len() > 0 {
		t.Errorf("then %d records; want none", res.Len())
	}

	// Committed, the group's next consumer resumes there, without error.
	must[struct{}](t)(struct{}{}, lib.Commit(ctx, c))
	must[bool](t)(lib.Destroy(ctx, c))
	send("third")
	c = must[string](t)(lib.Create(ctx, Consumer, cfg))
	if got := pollValues(t, lib, c, 1, nil); !slices.Equal(got, []string{"third"}) {
		t.Errorf("the next consumer of the group: %q", got)
	}
	if res, err := lib.Poll(ctx, c, 200*time.Millisecond); err != nil || res.Len() > 0 {
		t.Errorf("then %v, %v; want nothing more", polledValues(res), err)
	}
}

// TestOffsetResetNoneMixed checks auto-offset-reset "none" when one
// partition has a committed offset and the other none: the first is read
// as usual, never held up by the second, whose error polls report when
// they have no records to return, until a seek gives it a position.
func TestOffsetResetNoneMixed(t *testing.T) {
	// Not parallel: a poll that has nothing to wait for must end within 2 s, which a loaded machine could stretch.
	servers := newCluster(t, embedded.NoAutoCreate(), embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send := func(part int32, v string) {
		must[int](t)(lib.Send(ctx, p, []string{"t"}, []Message{{Value: v, Partition: &part}}))
	}
	cfg := map[string]any{"servers": servers, "group": "g", "topics": "t", "allow-auto-create-topics": false, "enable-auto-commit": false}

	// A first consumer of the group commits partition 0 only: partition 1
	// has nothing yet.
	send(0, "p0-a")
	cfg["auto-offset-reset"] = "earliest"
	a := must[string](t)(lib.Create(ctx, Consumer, cfg))
	if got := pollValues(t, lib, a, 1, nil); !slices.Equal(got, []string{"p0-a"}) {
		t.Fatalf("first consumer: %q", got)
	}
	must[struct{}](t)(struct{}{}, lib.Commit(ctx, a))
	must[bool](t)(lib.Destroy(ctx, a))

	send(1, "p1-a")
	send(0, "p0-b")
	cfg["auto-offset-reset"] = "none"
	c := must[string](t)(lib.Create(ctx, Consumer, cfg))
	only1 := func(what string) func(error) {
		return func(err error) { checkNoOffset(t, what, err, "t", 2, 1) }
	}

	// Partition 0 is read from its committed offset; polls may fail
	// meanwhile, naming partition 1 only.
	if got := pollValues(t, lib, c, 1, only1("reading partition 0")); !slices.Equal(got, []string{"p0-b"}) {
		t.Errorf("partition 0 from its committed offset: %q", got)
	}

	// With partition 0 read, a poll fails at once, naming partition 1.
	start := time.Now()
	res, err := lib.Poll(ctx, c, 5*time.Second)
	checkNoOffset(t, "poll with partition 0 read", err, "t", 2, 1)
	if got := polledValues(res); got != nil {
		t.Errorf("poll with partition 0 read: %q", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("poll with partition 0 read took %v: it has nothing to wait for", d)
	}

	// Partition 0 is not held up by partition 1.
	send(0, "p0-c")
	if got := pollValues(t, lib, c, 1, only1("reading partition 0 later")); !slices.Equal(got, []string{"p0-c"}) {
		t.Errorf("partition 0 later: %q", got)
	}

	// A seek gives partition 1 a position; then polls are quiet.
	if err := lib.Seek(ctx, c, "t", SeekBeginning(), 1); err != nil {
		t.Fatal(err)
	}
	if got := pollValues(t, lib, c, 1, nil); !slices.Equal(got, []string{"p1-a"}) {
		t.Errorf("partition 1 after a seek: %q", got)
	}
	if res, err := lib.Poll(ctx, c, 300*time.Millisecond); err != nil || res.Len() > 0 {
		t.Errorf("then %q, %v; want nothing and no error", polledValues(res), err)
	}

	// Committed, the group's next consumer reads both partitions on,
	// without error.
	must[struct{}](t)(struct{}{}, lib.Commit(ctx, c))
	must[bool](t)(lib.Destroy(ctx, c))
	send(0, "p0-d")
	send(1, "p1-b")
	c = must[string](t)(lib.Create(ctx, Consumer, cfg))
	got := pollValues(t, lib, c, 2, nil)
	slices.Sort(got)
	if !slices.Equal(got, []string{"p0-d", "p1-b"}) {
		t.Errorf("the next consumer of the group: %q", got)
	}
	if res, err := lib.Poll(ctx, c, 200*time.Millisecond); err != nil || res.Len() > 0 {
		t.Errorf("then %q, %v; want nothing more", polledValues(res), err)
	}
}
