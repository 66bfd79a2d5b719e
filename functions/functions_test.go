package functions

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// TestSeedExamples runs the user's own examples, in Go terms, against a
// local cluster (the seed's localhost:9092 is the test cluster here).
func TestSeedExamples(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t).Servers()
	lib := newLib(t)

	// A consumer subscribed before the sends, to see them.
	watcher := mustCall(t, lib, "kafka-create", "consumer", servers)
	mustCall(t, lib, "kafka-subscribe", watcher, []any{"containers", "lights"})

	kid := mustCall(t, lib, "kafka-create", "producer", servers)
	if n := mustCall(t, lib, "kafka-send", kid, "containers", "hello world"); n != int64(1) {
		t.Errorf("kafka-send one message returned %v, want 1", n)
	}
	message := "lights on"
	if n := mustCall(t, lib, "kafka-send", kid, []any{"containers", "lights"}, message); n != int64(2) {
		t.Errorf("kafka-send to two topics returned %v, want 2", n)
	}
	if ok := mustCall(t, lib, "kafka-destroy", kid); ok != true {
		t.Errorf("kafka-destroy returned %v", ok)
	}

	kid = mustCall(t, lib, "kafka-create", "consumer", servers)
	msg := mustCall(t, lib, "kafka-poll", kid, "containers", 10)
	// Under "latest" the earlier messages are not for this new consumer;
	// the result names the topic with an empty list.
	if got := value.Format(msg); got != `("containers" => ())` {
		t.Errorf("first poll of a new consumer = %s", got)
	}
	mustCall(t, lib, "kafka-destroy", kid)

	got := pollUntil(t, lib, watcher.(string), nil, 3)
	if s := value.Format(got["containers"]); s != `("hello world" "lights on")` {
		t.Errorf("containers got %s", s)
	}
	if s := value.Format(got["lights"]); s != `("lights on")` {
		t.Errorf("lights got %s", s)
	}
}

// TestBrain4itNames runs a script in the style of brain4it's Java library.
func TestBrain4itNames(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t).Servers()
	lib := newLib(t)
	p := mustCall(t, lib, "kafka-producer", servers, nv{"key-serializer", "org.apache.kafka.common.serialization.StringSerializer"}, nv{"value-serializer", "StringSerializer"})
	c := mustCall(t, lib, "kafka-consumer", servers, nv{"group-id", "g1"}, nv{"auto.offset.reset", "earliest"})
	if sub := mustCall(t, lib, "kafka-subscribe", c, []any{"sensors", "alarms"}); value.Format(sub) != `("alarms" "sensors")` {
		t.Errorf("kafka-subscribe returned %s", value.Format(sub))
	}
	mustCall(t, lib, "kafka-send", p, "sensors", bplList(t, nv{"s1", "21.5"}, nv{"s1", "21.7"}, "no key"))
	got := pollUntil(t, lib, c.(string), nil, 3)
	if s := value.Format(got["sensors"]); s != `("s1" => "21.5" "s1" => "21.7" "no key")` {
		t.Errorf("sensors got %s: repeated keys must stay two elements", s)
	}
	if mustCall(t, lib, "kafka-commit", c) != true {
		t.Error("kafka-commit did not return true")
	}
	for _, id := range []any{p, c} {
		if mustCall(t, lib, "kafka-delete-app", id) != true {
			t.Error("kafka-delete-app did not return true")
		}
	}
	// brain4it's kafka-delete-app says true for an id it does not know;
	// kafka-destroy says false.
	if mustCall(t, lib, "kafka-delete-app", c) != true {
		t.Error("kafka-delete-app of a destroyed id did not return true")
	}
	if mustCall(t, lib, "kafka-destroy", c) != false {
		t.Error("kafka-destroy of a destroyed id did not return false")
	}
}

// TestBadInputs checks that every bad call fails with the right error type,
// a message naming the function and what was wrong, and no panic.
func TestBadInputs(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t).Servers()
	lib := newLib(t)
	p := mustCall(t, lib, "kafka-create", "producer", servers).(string)
	c := mustCall(t, lib, "kafka-create", "consumer", servers).(string)
	gone := mustCall(t, lib, "kafka-create", "producer", servers).(string)
	mustCall(t, lib, "kafka-destroy", gone)
	unknownC := "c" + strings.Repeat("0", 32)

	tests := []struct {
		name string
		fn   string
		args []any
		kind error
		msg  string // a part of the message
	}{
		{"create no args", "kafka-create", nil, kafkabpl.ErrInvalidArgument, "kafka-create: want 2 arguments, got 0"},
		{"create bad kind", "kafka-create", []any{"streamer", servers}, kafkabpl.ErrInvalidArgument, `kind "streamer"`},
		{"create kind not string", "kafka-create", []any{1, servers}, kafkabpl.ErrInvalidArgument, "kind: want a string, got 1"},
		{"create unknown key", "kafka-create", []any{"consumer", map[string]any{"servers": servers, "grup": "g"}}, kafkabpl.ErrInvalidConfig, `unknown config key "grup" (did you mean "group"?)`},
		{"create no servers", "kafka-create", []any{"consumer", map[string]any{"group": "g"}}, kafkabpl.ErrInvalidConfig, `"servers" is required`},
		{"create bad server", "kafka-create", []any{"producer", "localhost:99999"}, kafkabpl.ErrInvalidConfig, `server "localhost:99999"`},
		{"create config number", "kafka-create", []any{"producer", 42}, kafkabpl.ErrInvalidConfig, "got 42"},
		{"send arity", "kafka-send", []any{p, "t"}, kafkabpl.ErrInvalidArgument, "kafka-send: want 3 arguments, got 2"},
		{"send id not string", "kafka-send", []any{42, "t", "m"}, kafkabpl.ErrInvalidArgument, "id: want a string, got 42"},
		{"send unknown id", "kafka-send", []any{"p" + strings.Repeat("1", 32), "t", "m"}, kafkabpl.ErrUnknownHandle, `kafka-send: unknown producer id "p111`},
		{"send destroyed id", "kafka-send", []any{gone, "t", "m"}, kafkabpl.ErrUnknownHandle, "unknown producer id"},
		{"send on consumer", "kafka-send", []any{c, "t", "m"}, kafkabpl.ErrWrongKind, "is a consumer id, not a producer"},
		{"send bad topic", "kafka-send", []any{p, "a b", "m"}, kafkabpl.ErrInvalidArgument, `invalid topic name "a b"`},
		{"send topics number", "kafka-send", []any{p, 7, "m"}, kafkabpl.ErrInvalidArgument, "topics: want a topic name or a list of them, got 7"},
		{"send list value", "kafka-send", []any{p, "t", []any{[]any{"nested"}}}, kafkabpl.ErrInvalidArgument, "message 1: the String serializer cannot encode"},
		{"send unknown named", "kafka-send", []any{p, "t", "m", nv{"partiton", 1}}, kafkabpl.ErrInvalidArgument, `unknown named argument "partiton" (did you mean "partition"?)`},
		{"send negative partition", "kafka-send", []any{p, "t", "m", nv{"partition", -1}}, kafkabpl.ErrInvalidArgument, `"partition": want an integer from 0`},
		{"send records not lists", "kafka-send", []any{p, "t", "m", nv{"records", true}}, kafkabpl.ErrInvalidArgument, "each message is a record list"},
		{"send headers unnamed", "kafka-send", []any{p, "t", "m", nv{"headers", []any{"x"}}}, kafkabpl.ErrInvalidArgument, `"headers": want a named list`},
		{"poll arity", "kafka-poll", []any{c}, kafkabpl.ErrInvalidArgument, "kafka-poll: want 2 to 3 arguments, got 1"},
		{"poll negative", "kafka-poll", []any{c, -1}, kafkabpl.ErrInvalidArgument, "kafka-poll: timeout-ms: want an integer from 0 to 2147483647, got -1"},
		{"poll timeout too large", "kafka-poll", []any{c, int64(99999999999)}, kafkabpl.ErrInvalidArgument, "kafka-poll: timeout-ms: want an integer from 0 to 2147483647, got 99999999999"},
		{"poll timeout text", "kafka-poll", []any{c, "10"}, kafkabpl.ErrInvalidArgument, `timeout-ms: want an integer`},
		{"poll topics negative", "kafka-poll", []any{c, "t", -1}, kafkabpl.ErrInvalidArgument, "timeout-ms: want an integer from 0 to 2147483647, got -1"},
		{"poll topics bad", "kafka-poll", []any{c, 5, 10}, kafkabpl.ErrInvalidArgument, "topics: want a topic name"},
		{"poll on producer", "kafka-poll", []any{p, 10}, kafkabpl.ErrWrongKind, "is a producer id, not a consumer"},
		{"poll unknown id", "kafka-poll", []any{unknownC, 10}, kafkabpl.ErrUnknownHandle, `kafka-poll: unknown consumer id "c000`},
		{"poll not an id", "kafka-poll", []any{"hello", 10}, kafkabpl.ErrUnknownHandle, `unknown consumer id "hello"`},
		{"subscribe topics map", "kafka-subscribe", []any{c, 3.5}, kafkabpl.ErrInvalidArgument, "topics: want a topic name"},
		{"unsubscribe producer", "kafka-unsubscribe", []any{p}, kafkabpl.ErrWrongKind, "not a consumer"},
		{"commit producer", "kafka-commit", []any{p}, kafkabpl.ErrWrongKind, "not a consumer"},
		{"seek bad position", "kafka-seek", []any{c, "t", "middle"}, kafkabpl.ErrInvalidArgument, `position: want "beginning", "end", an offset or ("timestamp" => ms), got the string "middle"`},
		{"seek negative offset", "kafka-seek", []any{c, "t", -5}, kafkabpl.ErrInvalidArgument, "position: want an integer from 0"},
		{"destroy arity", "kafka-destroy", []any{}, kafkabpl.ErrInvalidArgument, "kafka-destroy: want 1 arguments, got 0"},
		{"producer no servers", "kafka-producer", []any{nv{"acks", "all"}}, kafkabpl.ErrInvalidArgument, "kafka-producer: want 1 arguments, got 0"},
		{"consumer bad value", "kafka-consumer", []any{servers, nv{"max-poll-records", 0}}, kafkabpl.ErrInvalidConfig, `config "max-poll-records": want an integer from 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := call(t, lib, tt.fn, tt.args...)
			if err == nil {
				t.Fatalf("got %v, want an error", v)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %q is a %s, want %v", err, kafkabpl.ErrorType(err), tt.kind)
			}
			if !strings.HasPrefix(err.Error(), tt.fn+": ") || strings.HasPrefix(err.Error(), tt.fn+": "+tt.fn) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q: want it to start with %q once and contain %q", err, tt.fn+": ", tt.msg)
			}
		})
	}
}

// FuzzFunctions calls every BPL function with arguments read from fuzzed
// BPL text, on handles whose brokers are unreachable (nothing listens on
// 127.0.0.1:1) and with short timeouts: no input may panic or hang, and
// every error must name its function.
func FuzzFunctions(f *testing.F) {
	for _, seed := range []string{
		`(ID "t" "m")`, `(ID ("a" "b") ("k" => 1 2.5 null) "partition" => 0)`, `(ID 0)`, `(ID "t" -1)`,
		`(ID "t" "beginning" "partition" => 3)`, `("producer" ("servers" => "127.0.0.1:1" "acks" => 0))`,
		`(ID ("t") "partitions" => 2 "configs" => ("a" => 1))`, `(ID "g")`, `()`, `(ID ("x" => ("y")) "records" => true)`,
		`(ID "accept")`, `(ID ("topic" => "t" "partition" => 0 "offset" => 1) "release")`,
	} {
		for i := range 3 {
			f.Add(uint8(i*7), seed)
		}
	}
	lib := kafkabpl.New()
	defer lib.Close(context.Background())
	cfg := map[string]any{"servers": "127.0.0.1:1", "send-timeout": 20, "request-timeout": 20}
	var ids []string
	for _, k := range []kafkabpl.Kind{kafkabpl.Producer, kafkabpl.Consumer, kafkabpl.Admin, kafkabpl.ShareConsumer} {
		id, err := lib.Create(context.Background(), k, kafkabpl.Config{Base: cfg, Keys: value.NewList().AppendNamed("group", "fuzz")})
		if err != nil {
			f.Fatal(err)
		}
		ids = append(ids, id)
	}
	fns := Table(lib)
	names := make([]string, 0, len(fns))
	for n := range fns {
		names = append(names, n)
	}
	slices.Sort(names)
	f.Fuzz(func(t *testing.T, pick uint8, text string) {
		vs, err := value.Parse(strings.ReplaceAll(text, "ID", `"`+ids[int(pick)%len(ids)]+`"`))
		if err != nil || len(vs) != 1 {
			return
		}
		args, ok := vs[0].(*value.List)
		if !ok {
			return
		}
		name := names[int(pick)%len(names)]
		if name == "kafka-destroy" || name == "kafka-delete-app" {
			return // the handles must outlive the run
		}
		// A short deadline keeps each run short: a poll that may wait is
		// bounded by it, and anything still running at 5 s is a hang.
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, err = fns[name](ctx, args)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s %s did not return", name, value.Format(args))
		}
		if err != nil && !strings.HasPrefix(err.Error(), name+": ") {
			t.Errorf("%s %s: error %q does not start with the function's name", name, value.Format(args), err)
		}
		// A stream would run on after the call: stop it.
		for _, id := range stream.Of(lib).IDs() {
			lib.Destroy(ctx, id)
		}
	})
}
