package functions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// TestBPLTransformForms checks how the value a BPL transform returns
// becomes outputs, and that a list value is never taken for outputs.
func TestBPLTransformForms(t *testing.T) {
	t.Parallel()
	lib := kafkabpl.New()
	in := inputRecord(t)
	out := func(args ...any) any { return mustCall(t, lib, "kafka-output", args...) }
	outs := func(args ...any) any { return mustCall(t, lib, "kafka-outputs", args...) }
	jsonArray := value.NewList(int64(1), int64(2))
	for _, tt := range []struct {
		name   string
		result any
		want   string // the outputs: topic|key|value, space-separated
	}{
		{"null filters", nil, ""},
		{"a value keeps the key", "V", `|k|"V"`},
		{"a list is one value", jsonArray, "|k|(1 2)"},
		{"a named list is one value", bplList(t, nv{"topic", "x"}, nv{"key", "y"}), `|k|("topic" => "x" "key" => "y")`},
		{"kafka-output sets topic and key", out("V", nv{"topic", "side"}, nv{"key", "K"}), `side|K|"V"`},
		{"kafka-output with a null key", out("V", nv{"key", nil}), `|<nil>|"V"`},
		{"kafka-output keeps the key", out(jsonArray), "|k|(1 2)"},
		{"kafka-outputs fans out", outs("a", out("b", nv{"topic", "t2"}), jsonArray), `|k|"a" t2|k|"b" |k|(1 2)`},
		{"kafka-outputs of nothing filters", outs(), ""},
	} {
		got, err := bplTransform(returning(tt.result))(testkit.Ctx(t), in)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var s []string
		for _, o := range got {
			s = append(s, fmt.Sprintf("%s|%v|%s", o.Topic, o.Key, value.Format(o.Value)))
		}
		if strings.Join(s, " ") != tt.want {
			t.Errorf("%s: outputs %q, want %q", tt.name, strings.Join(s, " "), tt.want)
		}
	}
	// A kafka-output inside a list would be written as text: refused.
	_, err := bplTransform(returning(value.NewList(out("a"))))(testkit.Ctx(t), in)
	if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), "return (kafka-outputs ...)") {
		t.Errorf("a list holding a kafka-output: %v", err)
	}
	// The function's error is the transform's.
	boom := goFunc(func(context.Context, *value.List) (any, error) { return nil, errors.New("boom") })
	if _, err := bplTransform(boom)(testkit.Ctx(t), in); err == nil || err.Error() != "boom" {
		t.Errorf("error: %v", err)
	}
	// The function gets the record list.
	var arg *value.List
	seen := goFunc(func(_ context.Context, args *value.List) (any, error) { arg = args; return nil, nil })
	bplTransform(seen)(testkit.Ctx(t), in)
	if got := value.Format(arg); !strings.HasPrefix(got, `(("topic" => "in" "partition" => 0 "offset" => 0 "timestamp" => `) || !strings.HasSuffix(got, `"key" => "k" "value" => "v" "headers" => ()))`) {
		t.Errorf("the transform got %s", got)
	}
	// The outputs keep the input's key even when the transform changed
	// its record list's.
	rename := goFunc(func(_ context.Context, args *value.List) (any, error) {
		args.At(0).(*value.List).Put("key", "changed")
		return "V", nil
	})
	if got, err := bplTransform(rename)(testkit.Ctx(t), in); err != nil || len(got) != 1 || got[0].Key != "k" {
		t.Errorf("a transform that changes its input's key: %v, %v", got, err)
	}
}

// TestBPLOutputPrints checks that kafka-output values print as the calls
// that make them.
func TestBPLOutputPrints(t *testing.T) {
	t.Parallel()
	lib := kafkabpl.New()
	o := mustCall(t, lib, "kafka-output", "v", nv{"topic", "t"}, nv{"key", "k"}, nv{"partition", 2}, nv{"headers", bplList(t, nv{"h", "x"})})
	if got := value.Format(o); got != `(kafka-output "v" "topic" => "t" "key" => "k" "partition" => 2 "headers" => ("h" => "x"))` {
		t.Errorf("kafka-output prints %s", got)
	}
	if got := value.Format(mustCall(t, lib, "kafka-outputs", 1, o)); got != `(kafka-outputs (kafka-output 1) (kafka-output "v" "topic" => "t" "key" => "k" "partition" => 2 "headers" => ("h" => "x")))` {
		t.Errorf("kafka-outputs prints %s", got)
	}
}

// TestBPLPartitionedTable checks the per-table form of "tables": a
// partitioned table and a global one side by side, as
// kafka-stream-status shows them (the stream needs no broker to start).
func TestBPLPartitionedTable(t *testing.T) {
	t.Parallel()
	lib := kafkabpl.New()
	fn := goFunc(func(context.Context, *value.List) (any, error) { return nil, nil })
	id := mustCall(t, lib, "kafka-stream", "127.0.0.1:1", nv{"group", "g"}, nv{"from", "orders"}, nv{"to", "out"}, nv{"transform", fn},
		nv{"tables", bplList(t, nv{"customers", bplList(t, nv{"topic", "customer-table"}, nv{"partitioned", true}, nv{"hold", 500})}, nv{"sites", "site-table"})},
		nv{"join", "customers"})
	defer mustCall(t, lib, "kafka-destroy", id)
	st := value.Format(mustCall(t, lib, "kafka-stream-status", id))
	for _, want := range []string{
		`"customers" => ("name" => "customers" "topic" => "customer-table" "ready" => false "keys" => 0 "bytes" => 0 "read" => 0 "total" => 0 "updates" => 0 "partitioned" => true "partitions" => 0 "restoring" => 0 "pending" => 0)`,
		`"sites" => ("name" => "sites" "topic" => "site-table" "ready" => false "keys" => 0 "bytes" => 0 "read" => 0 "total" => 0 "updates" => 0)`,
	} {
		if !strings.Contains(st, want) {
			t.Errorf("status %s: want %s", st, want)
		}
	}
}

// TestBPLStreamArgs checks kafka-stream's and kafka-output's bad inputs.
func TestBPLStreamArgs(t *testing.T) {
	t.Parallel()
	lib := kafkabpl.New()
	fn := returning(nil)
	servers := "127.0.0.1:1"
	for _, tt := range []struct {
		name string
		fn   string
		args []any
		kind error
		msg  string
	}{
		{"no to", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"transform", fn}}, kafkabpl.ErrInvalidArgument, `kafka-stream: "to": want the output topic`},
		{"transform not a function", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", "upcase"}}, kafkabpl.ErrInvalidArgument, `"transform": want a function`},
		{"bad guarantee", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"guarantee", "maybe"}}, kafkabpl.ErrInvalidArgument, `"guarantee": want "exactly-once" or "at-least-once", got the string "maybe"`},
		{"bad on-error", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"on-error", "ignore"}}, kafkabpl.ErrInvalidArgument, `"on-error": want "stop", "skip" or "dead-letter"`},
		{"bad from", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", 5}, nv{"to", "out"}, nv{"transform", fn}}, kafkabpl.ErrInvalidArgument, `"from": want a topic name or a list of them, got 5`},
		{"unknown config key", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"lingr", 5}}, kafkabpl.ErrInvalidConfig, `unknown config key "lingr" (did you mean "linger"?)`},
		{"no group", "kafka-stream", []any{servers, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}}, kafkabpl.ErrInvalidConfig, `a stream needs a "group"`},
		{"output's bad field", "kafka-output", []any{"v", nv{"partitions", 1}}, kafkabpl.ErrInvalidArgument, `unknown named argument "partitions" (did you mean "partition"?)`},
		{"output's bad topic", "kafka-output", []any{"v", nv{"topic", 1}}, kafkabpl.ErrInvalidArgument, `"topic": want a string, got 1`},
		{"bad tables", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"tables", bplList(t, nv{"devices", 5})}}, kafkabpl.ErrInvalidArgument, `kafka-stream: "tables": want topic names or ("topic" => topic "partitioned" => true|false "hold" => ms), got 5`},
		{"table's unknown setting", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"tables", bplList(t, nv{"c", bplList(t, nv{"topic", "c"}, nv{"partitoned", true})})}}, kafkabpl.ErrInvalidArgument, `kafka-stream: "tables" "c": unknown setting "partitoned"; want ("topic" => topic "partitioned" => true|false "hold" => ms)`},
		{"table without a topic", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"tables", bplList(t, nv{"c", bplList(t, nv{"partitioned", true})})}}, kafkabpl.ErrInvalidArgument, `kafka-stream: "tables" "c": want a "topic"`},
		{"table's partitioned not a bool", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"tables", bplList(t, nv{"c", bplList(t, nv{"topic", "c"}, nv{"partitioned", "yes"})})}}, kafkabpl.ErrInvalidArgument, `"tables" "c" "partitioned": want true or false, got the string "yes"`},
		{"table's bad hold", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"tables", bplList(t, nv{"c", bplList(t, nv{"topic", "c"}, nv{"hold", -1})})}}, kafkabpl.ErrInvalidArgument, `"tables" "c" "hold" (ms)`},
		{"join of no table", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"tables", "registry"}, nv{"join", "devices"}}, kafkabpl.ErrInvalidArgument, `kafka-stream: "join" "devices": not a table of the stream (its "tables" name [registry])`},
		{"join-kind alone", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"join-kind", "left"}}, kafkabpl.ErrInvalidArgument, `"join-kind": want "join" => table too`},
		{"bad join-kind", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"tables", "t"}, nv{"join", "t"}, nv{"join-kind", "outer"}}, kafkabpl.ErrInvalidArgument, `"join-kind": want "inner" or "left", got the string "outer"`},
		{"on-timer in a stateless stream", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"on-timer", fn}}, kafkabpl.ErrInvalidArgument, `kafka-stream: "on-timer": timers are a per-key stateful stream's`},
		{"on-timer not a function", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"store", "s"}, nv{"transform", fn}, nv{"on-timer", 5}}, kafkabpl.ErrInvalidArgument, `"on-timer": want a function, such as (function (timer state) ...), got 5`},
		{"silence without on-timer", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"store", "s"}, nv{"transform", fn}, nv{"silence", int64(1000)}}, kafkabpl.ErrInvalidArgument, `"silence" 1s: a silence calls the stream's "on-timer" function, and it has none`},
		{"bad silence", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"store", "s"}, nv{"transform", fn}, nv{"on-timer", fn}, nv{"silence", "5m"}}, kafkabpl.ErrInvalidArgument, `"silence" (ms): want an integer`},
		{"bad standbys", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"store", "s"}, nv{"transform", fn}, nv{"standbys", int64(-1)}}, kafkabpl.ErrInvalidArgument, `kafka-stream: "standbys": want an integer from 0`},
		{"standbys of a stateless stream", "kafka-stream", []any{servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", fn}, nv{"standbys", int64(1)}}, kafkabpl.ErrInvalidArgument, `kafka-stream: "standbys" 1: want 0 or more, and a stateful stream's`},
		{"set-timer outside a stream", "kafka-set-timer", []any{"wall-clock", int64(5)}, kafkabpl.ErrInvalidArgument, `kafka-set-timer: timers: only the functions of a per-key stateful stream`},
		{"set-timer's bad kind", "kafka-set-timer", []any{"cpu", int64(5)}, kafkabpl.ErrInvalidArgument, `kafka-set-timer: kind: want "stream-time" or "wall-clock", got the string "cpu"`},
		{"cancel-timer outside a stream", "kafka-cancel-timer", nil, kafkabpl.ErrInvalidArgument, `kafka-cancel-timer: timers: only the functions`},
		{"lookup outside a stream", "kafka-lookup", []any{"devices", "d1"}, kafkabpl.ErrInvalidArgument, `kafka-lookup: table "devices": only a stream's functions look tables up`},
		{"lookup's table not a string", "kafka-lookup", []any{5, "d1"}, kafkabpl.ErrInvalidArgument, `kafka-lookup: table: want a string, got 5`},
		{"status of a producer", "kafka-stream-status", []any{"p0123456789abcdef0123456789abcdef"}, kafkabpl.ErrUnknownHandle, "unknown producer id"},
	} {
		_, err := call(t, lib, tt.fn, tt.args...)
		if !errors.Is(err, tt.kind) || !strings.Contains(fmt.Sprint(err), tt.msg) {
			t.Errorf("%s: %v, want %v containing %q", tt.name, err, tt.kind, tt.msg)
		}
	}
}

// TestBPLStream runs a stream through the BPL functions, its transform a
// function value, and reads its status list.
func TestBPLStream(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t).Servers()
	lib := newLib(t)
	lib.SetLogOutput(t.Output()) // the stream's start and stop
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	mustCall(t, lib, "kafka-send", p, "in", bplList(t, nv{"a", "1"}, nv{"b", "2"}, nv{"c", "3"}))
	twice := goFunc(func(_ context.Context, args *value.List) (any, error) {
		r := args.At(0).(*value.List)
		v, _ := r.Get("value")
		if v == "2" {
			return nil, nil
		}
		return mustCall(t, lib, "kafka-outputs", v, mustCall(t, lib, "kafka-output", v, nv{"topic", "copies"})), nil
	})
	s := mustCall(t, lib, "kafka-stream", servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", twice}, nv{"guarantee", "at-least-once"}).(string)
	if !strings.HasPrefix(s, "s") || !slices.Contains(stream.Of(lib).IDs(), s) {
		t.Fatalf("kafka-stream returned %q", s)
	}
	testkit.WaitFor(t, "the stream to process its 3 inputs", func() bool {
		return testkit.Must[*stream.Status](t)(stream.Of(lib).Status(testkit.Ctx(t), s)).Processed == 3
	})
	st := mustCall(t, lib, "kafka-stream-status", s).(*value.List)
	if got := value.Format(st); got != `("state" => "running" "processed" => 3 "produced" => 4 "dropped" => 1 "skipped" => 0 "dead-lettered" => 0 "lag" => 0 "transactions" => 1 "aborted" => 0 "reinits" => 0 "last-error" => null)` {
		t.Errorf("status %s", got)
	}
	r := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "topics": "copies", "auto-offset-reset": "earliest", "isolation-level": "read_committed"})
	if got := pollUntil(t, lib, r.(string), nil, 2)["copies"].Values(); !slices.Equal(got, []any{"1", "3"}) {
		t.Errorf("copies: %v", got)
	}
	if mustCall(t, lib, "kafka-destroy", s) != true {
		t.Error("kafka-destroy of a stream did not return true")
	}
}

// TestOutputsOfCycle checks that a transform returning a list that
// contains itself, which no message can hold, is an error, not a
// serializer that never ends.
func TestOutputsOfCycle(t *testing.T) {
	t.Parallel()
	cyc := value.NewList(int64(1))
	cyc.MarkShared() // as BPL's put marks a list it puts into itself
	cyc.Append(cyc)
	if _, err := outputsOf(cyc, "k"); !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), "contains itself") {
		t.Errorf("a transform returning a list that contains itself: %v", err)
	}
}
