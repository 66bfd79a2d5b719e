package functions

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// TestIntervalJoinBPLArgs checks kafka-stream's "interval-join": every
// setting read, and each bad one refused, naming it and its value.
func TestIntervalJoinBPLArgs(t *testing.T) {
	t.Parallel()
	lib := kafkabpl.New()
	t.Cleanup(func() { lib.Close(context.Background()) })
	fn := returning(nil)
	cfg := bplList(t, nv{"servers", "127.0.0.1:1"}, nv{"group", "g"})
	ij := func(args ...any) nv { return nv{"interval-join", bplList(t, args...)} }
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{ij(nv{"window", -5}), nv{"transform", fn}}, `"interval-join" "window" (ms): want an integer from 0 to 9223372036854, got -5`},
		{[]any{ij(nv{"before", 10}, nv{"after", "x"}), nv{"transform", fn}}, `"interval-join" "after" (ms): want an integer`},
		{[]any{ij(nv{"window", 10}, nv{"before", 10}), nv{"transform", fn}}, `not both`},
		{[]any{ij(nv{"grace", 10}), nv{"transform", fn}}, `want a "window" => ms, or "before" and "after"`},
		{[]any{ij(nv{"windw", 10}), nv{"transform", fn}}, `unknown setting "windw" (did you mean "window"?)`},
		{[]any{ij(nv{"window", 10}, nv{"kind", "full"}), nv{"transform", fn}}, `"interval-join" "kind": want "inner", "left" or "outer", got the string "full"`},
		{[]any{ij(nv{"window", 10})}, `"transform": an interval join needs one`},
		{[]any{ij(nv{"window", 10}), nv{"transform", fn}, nv{"aggregate", fn}}, `"aggregate": an interval join takes none`},
		{[]any{nv{"interval-join", 10}, nv{"transform", fn}}, `"interval-join": want a list`},
		{[]any{ij(10), nv{"transform", fn}}, `"interval-join": want named settings`},
		// The library's own checks, through the BPL form.
		{[]any{ij(nv{"window", 10}), nv{"transform", fn}, nv{"from", "left"}}, `"from" ["left"]: an interval join takes two topics, the left then the right, got 1`},
		{[]any{ij(nv{"window", 10}), nv{"transform", fn}, nv{"from", bplList(t, "a", "b", "c")}}, `an interval join takes two topics`},
		{[]any{ij(nv{"window", 10}), nv{"transform", fn}, nv{"store", ""}}, `"store": a stateful stream needs a store name`},
	} {
		args := append([]any{cfg, nv{"from", bplList(t, "left", "right")}, nv{"to", "out"}, nv{"store", "s"}}, c.args...)
		_, err := call(t, lib, "kafka-stream", args...)
		if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "kafka-stream: ") {
			t.Errorf("%v:\n got %v\nwant %q", c.args, err, c.want)
		}
	}
	// A good one reads every setting.
	a := &args{fn: "kafka-stream"}
	var spec stream.Spec
	l := bplList(t, nv{"before", 1000}, nv{"after", 2000}, nv{"grace", 3000}, nv{"kind", "outer"}, nv{"late", "dead-letter"})
	if err := a.readIntervalJoin(&spec, l, map[string]any{}, fn); err != nil {
		t.Fatal(err)
	}
	j := spec.Interval
	if j.Before != time.Second || j.After != 2*time.Second || j.Grace != 3*time.Second || j.Kind != stream.IntervalOuter || j.Late != stream.DeadLetterLate || j.Joiner == nil {
		t.Errorf("interval join %+v", j)
	}
	if err := a.readIntervalJoin(&spec, bplList(t, nv{"window", 500}), map[string]any{}, fn); err != nil || spec.Interval.Before != 500*time.Millisecond || spec.Interval.After != 500*time.Millisecond {
		t.Errorf("a symmetric window: %+v, %v", spec.Interval, err)
	}
}

// TestIntervalJoinBPLJoiner checks what the BPL joiner gets and how its
// result becomes outputs: both records, or null for the side an unmatched
// record lacks, and outputs keyed by the records' key.
func TestIntervalJoinBPLJoiner(t *testing.T) {
	t.Parallel()
	lib := kafkabpl.New()
	t.Cleanup(func() { lib.Close(context.Background()) })
	in := inputRecord(t)
	var args *value.List
	spy := goFunc(func(_ context.Context, l *value.List) (any, error) { args = l; return "joined", nil })
	for _, c := range []struct {
		name        string
		left, right *kafkabpl.Record
		nulls       [2]bool
	}{
		{"a pair", in, in, [2]bool{false, false}},
		{"left alone", in, nil, [2]bool{false, true}},
		{"right alone", nil, in, [2]bool{true, false}},
	} {
		outs, err := bplJoiner(spy)(testkit.Ctx(t), c.left, c.right)
		if err != nil || len(outs) != 1 || outs[0].Value != "joined" || outs[0].Key != "k" {
			t.Errorf("%s: outs %+v, %v", c.name, outs, err)
		}
		if args.Len() != 2 || (args.At(0) == nil) != c.nulls[0] || (args.At(1) == nil) != c.nulls[1] {
			t.Errorf("%s: args %v", c.name, args)
		}
	}
	// Outputs as a transform returns them, or an error.
	two := goFunc(func(context.Context, *value.List) (any, error) {
		return mustCall(t, lib, "kafka-outputs", "a", mustCall(t, lib, "kafka-output", "b", nv{"key", "other"})), nil
	})
	outs, err := bplJoiner(two)(testkit.Ctx(t), in, in)
	if err != nil || len(outs) != 2 || outs[0].Key != "k" || outs[1].Key != "other" {
		t.Errorf("two outputs: %+v, %v", outs, err)
	}
	fail := goFunc(func(context.Context, *value.List) (any, error) { return nil, errors.New("no") })
	if _, err := bplJoiner(fail)(testkit.Ctx(t), in, nil); err == nil {
		t.Error("a failing joiner's error was lost")
	}
}
