package functions

import (
	"maps"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
)

// Tests of kafka-send's BPL forms: messages named by their keys, records,
// call-wide keys, partitions and headers. What the producer does under
// them is tested in package kafkabpl.

// TestSendCallWideKey checks "key" => k: it keys every message that has no
// name of its own; a message's name still wins.
func TestSendCallWideKey(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	c := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "topics": "t"})
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	mustCall(t, lib, "kafka-send", p, "t", bplList(t, "a", nv{"own", "b"}), nv{"key", "k"})
	if got := value.Format(pollUntil(t, lib, c.(string), nil, 2)["t"]); got != `("k" => "a" "own" => "b")` {
		t.Errorf("got %s", got)
	}
}

// TestEmptyIsNotNull checks that an empty string is sent as an empty
// value, key or header, never as Kafka's null: a null value is a tombstone,
// which on a compacted topic deletes the key.
func TestEmptyIsNotNull(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	c := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "topics": "t"})
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	mustCall(t, lib, "kafka-send", p, "t", bplList(t, "", nv{"k", ""}, nil), nv{"headers", bplList(t, nv{"h", ""})})
	mustCall(t, lib, "kafka-send", p, "t", bplList(t, bplList(t, nv{"key", ""}, nv{"value", ""})), nv{"records", true})
	got := pollUntil(t, lib, c.(string), nil, 4)["t"]
	// (An empty key names nothing: a List's empty name means unnamed.
	// The Go API below and the "records" format tell it from null.)
	if s := value.Format(got); s != `("" "k" => "" null "")` {
		t.Errorf("polled %s", s)
	}
	// The Go API's view: empty, not nil.
	c2 := testkit.Must[string](t)(lib.Create(testkit.Ctx(t), kafkabpl.Consumer, map[string]any{"servers": servers, "topics": "t", "auto-offset-reset": "earliest"}))
	var recs []kafkabpl.Record
	for len(recs) < 4 {
		res := testkit.Must[*kafkabpl.Polled](t)(lib.Poll(testkit.Ctx(t), c2, 5*time.Second))
		if res.Len() == 0 {
			t.Fatalf("polled %d records", len(recs))
		}
		recs = append(recs, res.Topics[0].Records...)
	}
	if r := recs[0]; r.KeyBytes() != nil || r.ValueBytes() == nil || r.Headers()[0].Value == nil {
		t.Errorf("record 1: key %#v value %#v headers %#v; want a null key, an empty value and header", r.KeyBytes(), r.ValueBytes(), r.Headers())
	}
	if r := recs[2]; r.ValueBytes() != nil {
		t.Errorf("record 3: value %#v, want null", r.ValueBytes())
	}
	if r := recs[3]; r.KeyBytes() == nil || r.ValueBytes() == nil {
		t.Errorf("record 4: key %#v value %#v, want both empty, not null", r.KeyBytes(), r.ValueBytes())
	}
}

// TestNumericKeysNameMessages checks that keys read by a numeric
// deserializer name their messages with their BPL text.
func TestNumericKeysNameMessages(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.Topics("t")).Servers()
	lib := newLib(t)
	c := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "topics": "t", "key-deserializer": "Integer", "value-deserializer": "Double"})
	p := mustCall(t, lib, "kafka-create", "producer", map[string]any{"servers": servers, "key-serializer": "Integer", "value-serializer": "Double"})
	mustCall(t, lib, "kafka-send", p, "t", bplList(t, nv{"7", 21.5}, nv{"-3", int64(2)}))
	if got := value.Format(pollUntil(t, lib, c.(string), nil, 2)["t"]); got != `("7" => 21.5 "-3" => 2)` {
		t.Errorf("got %s", got)
	}
}

// TestBPLSendPartitions checks kafka-send's partitions: the call-wide
// "partition" => p of every message, and with "records" => true each
// record's own, which a key does not override.
func TestBPLSendPartitions(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.Partitions(3), embedded.Topics("t")).Servers()
	lib := newLib(t)
	c := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "poll-format": "records", "auto-offset-reset": "earliest", "topics": "t"})
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	if n := mustCall(t, lib, "kafka-send", p, "t", []any{"a", "b"}, nv{"partition", 2}); n != int64(2) {
		t.Errorf("kafka-send of 2 returned %v", n)
	}
	mustCall(t, lib, "kafka-send", p, "t", []any{map[string]any{"key": "k", "value": "v", "partition": 1}}, nv{"records", true})
	got := map[string]any{}
	for _, r := range pollUntil(t, lib, c.(string), nil, 3)["t"].Values() {
		v, _ := r.(*value.List).Get("value")
		got[v.(string)], _ = r.(*value.List).Get("partition")
	}
	if want := map[string]any{"a": int64(2), "b": int64(2), "v": int64(1)}; !maps.Equal(got, want) {
		t.Errorf("partitions by value %v, want %v", got, want)
	}
}
