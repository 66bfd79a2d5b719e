package functions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// TestBPLStateForms checks kafka-state and how a BPL stateful transform's
// result becomes outputs and state.
func TestBPLStateForms(t *testing.T) {
	t.Parallel()
	lib := kafkabpl.New()
	out := mustCall(t, lib, "kafka-output", "x", nv{"topic", "side"})
	st := mustCall(t, lib, "kafka-state", int64(2), "a", out)
	if got := value.Format(st); got != `(kafka-state 2 (kafka-output "a") (kafka-output "x" "topic" => "side"))` {
		t.Errorf("kafka-state prints %s", got)
	}
	if _, err := call(t, lib, "kafka-state"); !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), "kafka-state: ") {
		t.Errorf("kafka-state of nothing: %v", err)
	}
	in := inputRecord(t)
	for _, c := range []struct {
		name      string
		ret       any
		outs      string
		state     any
		errSubstr string
	}{
		{"kafka-state", st, `|k|"a" side|k|"x"`, int64(2), ""},
		{"null keeps the state", nil, "", "old", ""},
		{"kafka-state null deletes", mustCall(t, lib, "kafka-state", nil), "", nil, ""},
		{"a plain value is refused", "oops", "", nil, "returns (kafka-state new-state output ...)"},
		{"outputs without state are refused", out, "", nil, "returns (kafka-state"},
	} {
		outs, state, err := bplUpdate(returning(c.ret))(testkit.Ctx(t), in, "old")
		if c.errSubstr != "" {
			if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), c.errSubstr) {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var got []string
		for _, o := range outs {
			got = append(got, o.Topic+"|"+value.Format(o.Key)[1:2]+"|"+value.Format(o.Value))
		}
		if err != nil || strings.Join(got, " ") != c.outs || !equalValues(state, c.state) {
			t.Errorf("%s: outs %v state %v, %v", c.name, got, state, err)
		}
	}
	// The function gets the input's record list and the state.
	var args *value.List
	spy := goFunc(func(_ context.Context, l *value.List) (any, error) { args = l; return nil, nil })
	if _, _, err := bplUpdate(spy)(testkit.Ctx(t), in, int64(7)); err != nil || args.Len() != 2 || args.At(1) != int64(7) {
		t.Fatalf("args %v, %v", args, err)
	}
	if l, ok := args.At(0).(*value.List); !ok || value.Format(l.Values()[4]) != `"k"` {
		t.Errorf("the input as %v", args.At(0))
	}
	// An aggregate returning outputs is refused.
	if _, err := bplAggregate(returning(out))(testkit.Ctx(t), in, nil); !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), `"result" function's`) {
		t.Errorf("an aggregate returning outputs: %v", err)
	}
	// A result gets the window as a list.
	r := &stream.WindowResult{Key: "k", Start: 10, End: 20, Value: int64(3), Final: true}
	spy = func(_ context.Context, l *value.List) (any, error) { args = l; return "done", nil }
	outs, err := bplResult(spy)(testkit.Ctx(t), r)
	if err != nil || len(outs) != 1 || outs[0].Value != "done" || outs[0].Key != "k" || value.Format(args.At(0)) != `("key" => "k" "start" => 10 "end" => 20 "value" => 3 "final" => true)` {
		t.Errorf("result: %v %v, args %v", outs, err, args)
	}
}

// TestBPLStreamStateArgs checks kafka-stream's stateful arguments: each
// bad one is refused, naming it.
func TestBPLStreamStateArgs(t *testing.T) {
	t.Parallel()
	lib := kafkabpl.New()
	t.Cleanup(func() { lib.Close(context.Background()) })
	fn := returning(nil)
	cfg := bplList(t, nv{"servers", "127.0.0.1:1"}, nv{"group", "g"})
	win := func(args ...any) *value.List { return bplList(t, args...) }
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{nv{"window", win(nv{"type", "tumbling"}, nv{"size", 10})}}, `"aggregate": a windowed stream needs one`},
		{[]any{nv{"aggregate", fn}}, `"aggregate": only a windowed stream takes it`},
		{[]any{nv{"transform", fn}, nv{"window", win(nv{"type", "tumbling"}, nv{"size", 10})}, nv{"aggregate", fn}}, `takes an "aggregate" (and a "result"), not a transform`},
		{[]any{nv{"window", win(nv{"type", "tumbling"}, nv{"siz", 10})}, nv{"aggregate", fn}}, `unknown setting "siz" (did you mean "size"?)`},
		{[]any{nv{"window", win(nv{"size", 10})}, nv{"aggregate", fn}}, `want a "type"`},
		{[]any{nv{"window", win(nv{"type", "sliding"})}, nv{"aggregate", fn}}, `"window" "type": want "tumbling", "hopping" or "session", got the string "sliding"`},
		{[]any{nv{"window", win(nv{"type", "tumbling"}, nv{"size", -1})}, nv{"aggregate", fn}}, `"window" "size" (ms): want an integer`},
		{[]any{nv{"store", "s"}, nv{"window", win(nv{"type", "session"}, nv{"gap", 10})}, nv{"aggregate", fn}}, `"merge": a session window needs a merge function`},
		{[]any{nv{"window", "tumbling"}, nv{"aggregate", fn}}, `"window": want a list`},
		{[]any{nv{"store", 3}, nv{"transform", fn}}, `"store": want a string`},
		{[]any{nv{"store", "s"}, nv{"transform", fn}, nv{"rekey", 5}}, `"rekey": want a function, such as (function (in) new-key), got 5`},
		{[]any{nv{"transform", fn}, nv{"rekey", fn}}, `"rekey": a new key is a stateful stream's`},
		{[]any{nv{"aggregate", "f"}, nv{"window", win(nv{"type", "tumbling"}, nv{"size", 10})}}, `"aggregate": want a function`},
	} {
		args := append([]any{cfg, nv{"from", "in"}, nv{"to", "out"}}, c.args...)
		_, err := call(t, lib, "kafka-stream", args...)
		if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "kafka-stream: ") {
			t.Errorf("%v:\n got %v\nwant %q", c.args, err, c.want)
		}
	}
	// A good window reads every setting.
	l := &args{fn: "kafka-stream"}
	w, err := l.window(win(nv{"type", "hopping"}, nv{"size", 60000}, nv{"advance", 10000}, nv{"grace", 5000},
		nv{"emit", "update"}, nv{"late", "dead-letter"}, nv{"idle", 1000}))
	if err != nil || w.Kind != stream.Hopping || w.Size != time.Minute || w.Advance != 10*time.Second || w.Grace != 5*time.Second ||
		w.Emit != stream.EmitOnUpdate || w.Late != stream.DeadLetterLate || w.Idle != time.Second {
		t.Errorf("window %+v, %v", w, err)
	}
}

// TestBPLStateNotData runs a stateful stream whose transform keeps a
// kafka-output as its key's state: the store, which keeps data only, fails
// the stream saying so.
func TestBPLStateNotData(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t).Servers()
	lib := newLib(t)
	lib.SetLogOutput(t.Output())
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	mustCall(t, lib, "kafka-send", p, "in", bplList(t, nv{"k", "v"}))
	out := mustCall(t, lib, "kafka-output", "x")
	keep := returning(mustCall(t, lib, "kafka-state", out)) // the state is the output
	s := mustCall(t, lib, "kafka-stream", servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"store", "st"},
		nv{"transform", keep}, nv{"auto-offset-reset", "earliest"}).(string)
	var st *stream.Status
	testkit.WaitFor(t, "the stream to fail", func() bool {
		st = testkit.Must[*stream.Status](t)(stream.Of(lib).Status(testkit.Ctx(t), s))
		return st.State != stream.Running
	})
	if want := `state: (kafka-output "x") cannot be kept in a store (only data: numbers, strings, booleans, null and lists of them)`; st.State != stream.Failed ||
		!errors.Is(st.LastError, kafkabpl.ErrInvalidArgument) || !strings.Contains(fmt.Sprint(st.LastError), want) {
		t.Errorf("stream %s, %v; want it failed with an error containing %q", st.State, st.LastError, want)
	}
}
