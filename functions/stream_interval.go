package functions

import (
	"context"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// The BPL side of interval joins: kafka-stream's "interval-join", with a
// "transform" of the left and the right record.

const intervalUsage = `("window" => ms | "before" => ms "after" => ms "grace" => ms "kind" => "inner"|"left"|"outer" "late" => "drop"|"dead-letter")`

var intervalNames = []string{"window", "before", "after", "grace", "kind", "late"}

// readIntervalJoin reads "interval-join" into spec; transform is the
// joiner, (function (left right) ...).
func (a *args) readIntervalJoin(spec *stream.Spec, v any, named map[string]any, transform value.Callable) error {
	for _, name := range []string{"window", "aggregate", "merge", "result", "on-timer", "silence", "rekey"} {
		if _, ok := named[name]; ok {
			return a.errorf(`%q: an interval join takes none; its window is the "interval-join" list's`, name)
		}
	}
	if transform == nil {
		return a.errorf(`"transform": an interval join needs one, of the two records, such as (function (left right) (list (get left "value") (get right "value")))`)
	}
	j := &stream.IntervalJoin{Joiner: bplJoiner(transform)}
	windowed, sided := false, false
	err := a.settings(v, `"interval-join"`, intervalUsage, intervalNames, func(name string, v any) error {
		var err error
		var k int
		switch name {
		case "kind":
			k, err = a.oneOf(v, `"interval-join" "kind"`, "inner", "left", "outer")
			j.Kind = stream.IntervalKind(k)
		case "late":
			k, err = a.oneOf(v, `"interval-join" "late"`, "drop", "dead-letter")
			j.Late = stream.LateRecords(k)
		case "window":
			j.Before, err = a.millis(v, `"interval-join" "window"`)
			j.After, windowed = j.Before, true
		case "before":
			j.Before, err = a.millis(v, `"interval-join" "before"`)
			sided = true
		case "after":
			j.After, err = a.millis(v, `"interval-join" "after"`)
			sided = true
		case "grace":
			j.Grace, err = a.millis(v, `"interval-join" "grace"`)
		}
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case windowed && sided:
		return a.errorf(`"interval-join": want a "window" (as far before as after) or "before" and "after", not both`)
	case !windowed && !sided:
		return a.errorf(`"interval-join": want a "window" => ms, or "before" and "after": %s`, intervalUsage)
	}
	spec.Interval = j
	return nil
}

// bplJoiner adapts a BPL function (left right) to an interval join's
// joiner: it gets the two records as record lists (null for the side an
// unmatched record lacks) and returns outputs as a transform does, keyed
// by the records' key unless they say otherwise.
func bplJoiner(fn value.Callable) func(ctx context.Context, left, right *kafkabpl.Record) ([]stream.Output, error) {
	return func(ctx context.Context, left, right *kafkabpl.Record) ([]stream.Output, error) {
		var l, r any
		var key any
		if left != nil {
			rec := left.List()
			l, key = rec, inputKey(left, rec)
		}
		if right != nil {
			rec := right.List()
			r = rec
			if left == nil {
				key = inputKey(right, rec)
			}
		}
		v, err := callFn(ctx, fn, l, r, 2)
		if err != nil {
			return nil, err
		}
		return outputsOf(v, key)
	}
}
