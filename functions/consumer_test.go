package functions

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
)

// Tests of kafka-poll's, kafka-subscribe's, kafka-unsubscribe's and
// kafka-seek's BPL forms. What the consumer does under them is tested in
// package kafkabpl.

func TestPollRecordsFormat(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	c := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "poll-format": "records", "auto-offset-reset": "earliest"})
	mustCall(t, lib, "kafka-send", p, "t", bplList(t, nv{"k", "v"}), nv{"headers", map[string]any{"h1": "x", "h2": 5}}, nv{"timestamp", 1700000000123})
	got := pollUntil(t, lib, c.(string), []string{"t"}, 1)
	want := `(("topic" => "t" "partition" => 0 "offset" => 0 "timestamp" => 1700000000123 "key" => "k" "value" => "v" "headers" => ("h1" => "x" "h2" => "5")))`
	if s := value.Format(got["t"]); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

func TestSubscribeUnsubscribe(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t).Servers()
	lib := newLib(t)
	c := mustCall(t, lib, "kafka-create", "consumer", servers)
	steps := []struct {
		fn   string
		args []any
		want string
	}{
		{"kafka-subscribe", []any{[]any{"b", "a"}}, `("a" "b")`},
		{"kafka-subscribe", []any{[]any{"c", "b"}}, `("b" "c")`},
		{"kafka-unsubscribe", []any{"b"}, `("c")`},
		{"kafka-unsubscribe", []any{"never"}, `("c")`},
		{"kafka-poll", []any{"d", 0}, `("d" => ())`},
		{"kafka-poll", []any{0}, `("c" => () "d" => ())`},
		{"kafka-unsubscribe", nil, `()`},
		{"kafka-subscribe", []any{[]any{"x"}}, `("x")`},
		{"kafka-subscribe", []any{[]any{}}, `()`},
	}
	for _, s := range steps {
		got := mustCall(t, lib, s.fn, append([]any{c}, s.args...)...)
		if value.Format(got) != s.want {
			t.Errorf("%s %v = %s, want %s", s.fn, s.args, value.Format(got), s.want)
		}
	}
}

// TestBPLSeek checks kafka-seek's positions: "beginning", an offset of one
// partition ("partition" => p), ("timestamp" => ms) and "end".
func TestBPLSeek(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.Partitions(2), embedded.Topics("t")).Servers()
	lib := newLib(t)
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	for i := range 10 { // partition 1 holds 1 3 5 7 9 at offsets 0..4
		mustCall(t, lib, "kafka-send", p, "t", fmt.Sprint(i), nv{"partition", i % 2}, nv{"timestamp", 1000 * (i + 1)})
	}
	c := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "topics": "t"}).(string)
	// seek seeks c and returns the values of the next want messages,
	// sorted.
	seek := func(want int, args ...any) []string {
		t.Helper()
		if ok := mustCall(t, lib, "kafka-seek", append([]any{c, "t"}, args...)...); ok != true {
			t.Fatalf("kafka-seek %v returned %v", args, ok)
		}
		var got []string
		for _, v := range pollUntil(t, lib, c, nil, want)["t"].Values() {
			got = append(got, v.(string))
		}
		slices.Sort(got)
		return got
	}
	if got := seek(10, "beginning"); !slices.Equal(got, strings.Fields("0 1 2 3 4 5 6 7 8 9")) {
		t.Fatalf("from the beginning: %v", got)
	}
	if got := seek(2, 3, nv{"partition", 1}); !slices.Equal(got, []string{"7", "9"}) {
		t.Errorf("offset 3 of partition 1: %v", got)
	}
	if got := seek(2, map[string]any{"timestamp": 8500}); !slices.Equal(got, []string{"8", "9"}) {
		t.Errorf("from timestamp 8500: %v", got)
	}
	mustCall(t, lib, "kafka-seek", c, "t", "end")
	testkit.WantFormat(t, "a poll after seeking to the end", mustCall(t, lib, "kafka-poll", c, 200), `("t" => ())`)
}

// TestBPLShareConsumer runs a share consumer's forms: kafka-create
// "share-consumer", kafka-poll's records with their delivery count,
// kafka-ack of one record, of a list of them and of the rest, and
// kafka-commit; and kafka-ack's refusals.
func TestBPLShareConsumer(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.Topics("jobs")).Servers()
	lib := newLib(t)
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	mustCall(t, lib, "kafka-send", p, "jobs", []any{"a", "b", "c", "d"})
	q := mustCall(t, lib, "kafka-create", "share-consumer", map[string]any{
		"servers": servers, "group": "workers", "topics": "jobs", "auto-offset-reset": "earliest", "poll-format": "records"}).(string)
	recs := pollUntil(t, lib, q, nil, 4)["jobs"].Values()
	for _, r := range recs {
		if n, _ := r.(*value.List).Get("delivery-count"); n != int64(1) {
			t.Errorf("record %s: delivery-count %v, want 1", value.Format(r), n)
		}
	}
	if got := mustCall(t, lib, "kafka-ack", q, recs[0], "Release"); got != true {
		t.Errorf("kafka-ack returned %v", got)
	}
	mustCall(t, lib, "kafka-ack", q, []any{recs[1], recs[2]}, "reject")
	mustCall(t, lib, "kafka-ack", q, "accept") // d, the rest
	for _, tt := range []struct {
		args []any
		want string
	}{
		{[]any{q, recs[3], "accept"}, `topic "jobs" partition 0 offset 3 is acknowledged already (accept)`},
		{[]any{q, "a", "accept"}, `records: want a record ("topic" => t "partition" => p "offset" => o ...) or a list of them, got the string "a"`},
		{[]any{q, []any{}, "accept"}, `records: want a record or a list of records, got ()`},
		{[]any{q, map[string]any{"value": "a"}, "accept"}, `record: want "topic" => name, "partition" and "offset" (poll with "poll-format" "records")`},
		{[]any{q, recs[0], "done"}, `acknowledgement "done": want "accept", "release", "reject" or "renew"`},
		{[]any{q}, `want 2 to 3 arguments, got 1; usage: (kafka-ack id "accept"|"release"|"reject"|"renew") or (kafka-ack id records type)`},
	} {
		_, err := call(t, lib, "kafka-ack", tt.args...)
		if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.HasPrefix(fmt.Sprint(err), "kafka-ack: ") || !strings.Contains(fmt.Sprint(err), tt.want) {
			t.Errorf("kafka-ack %v: %v, want InvalidArgument containing %q", tt.args, err, tt.want)
		}
	}
	mustCall(t, lib, "kafka-commit", q)
	again := pollUntil(t, lib, q, nil, 1)["jobs"].Values()
	if v, _ := again[0].(*value.List).Get("value"); v != "a" {
		t.Errorf("redelivered %s, want the released a", value.Format(again[0]))
	}
	if n, _ := again[0].(*value.List).Get("delivery-count"); n != int64(2) {
		t.Errorf("redelivered %s: delivery-count %v, want 2", value.Format(again[0]), n)
	}
	mustCall(t, lib, "kafka-commit", q)
	testkit.WantFormat(t, "nothing left", mustCall(t, lib, "kafka-poll", q, "jobs", 1500), `("jobs" => ())`)
}
