package functions

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/words"
	"github.com/brain4it/kafkabpl/value"
)

// Table returns the BPL function table of lib, to register in a BPL
// runtime: the names of the library's first proposal (kafka-create,
// kafka-send, kafka-poll, kafka-destroy, ...) and those of brain4it's own
// Java Kafka library (kafka-producer, kafka-consumer, kafka-delete-app), so
// that its scripts run unchanged. Each function is a thin adapter over the
// typed methods of lib: it checks and converts the arguments, calls the
// method and converts the result. Errors start with the function's name.
// The map is new on every call.
func Table(lib *kafkabpl.Library) map[string]value.Func {
	t := table{lib}
	m := map[string]value.Func{
		"kafka-create":      t.bplCreate,
		"kafka-producer":    t.bplKindCreate("kafka-producer", kafkabpl.Producer),
		"kafka-consumer":    t.bplKindCreate("kafka-consumer", kafkabpl.Consumer),
		"kafka-destroy":     t.bplDestroy("kafka-destroy"),
		"kafka-delete-app":  t.bplDestroy("kafka-delete-app"),
		"kafka-send":        t.bplSend,
		"kafka-poll":        t.bplPoll,
		"kafka-copy":        bplCopy,
		"kafka-subscribe":   t.bplSubscribe,
		"kafka-unsubscribe": t.bplUnsubscribe,
		"kafka-commit":      t.bplCommit,
		"kafka-ack":         t.bplAck,
		"kafka-seek":        t.bplSeek,

		"kafka-stream":              t.bplStream,
		"kafka-stream-status":       t.bplStreamStatus,
		"kafka-lookup":              bplLookup,
		"kafka-set-timer":           bplSetTimer,
		"kafka-cancel-timer":        bplCancelTimer,
		"kafka-store-get":           t.bplStoreGet,
		"kafka-store-range":         t.bplStoreRange,
		"kafka-store-windows":       t.bplStoreWindows,
		"kafka-store-standby-get":   t.bplStoreStandbyGet,
		"kafka-store-standby-range": t.bplStoreStandbyRange,
		"kafka-output":              bplOutput,
		"kafka-outputs":             bplOutputs,
		"kafka-state":               bplState,
	}
	t.addAdminFunctions(m)
	return m
}

// table is the Library whose methods the functions call.
type table struct{ *kafkabpl.Library }

// args holds a BPL call's arguments, split into positional and named ones.
type args struct {
	fn    string
	pos   []any
	named *value.List // nil when there are none: a nil *value.List reads as empty
}

// readArgs checks a call of fn against its reference entry (see
// [Reference]): its arity and named arguments, showing the entry's usage
// when they do not fit. The args are a value, not a pointer, so that a
// call (a kafka-poll a poll) need not allocate them.
func readArgs(fn string, l *value.List) (args, error) {
	d := docOf(fn)
	min, max, usage, names := d.Min, d.Max, d.Usage, d.namedArgs()
	a := args{fn: fn}
	if !l.Named() {
		// Every argument is positional: the call's own list holds them
		// (a.pos is only read), and a call allocates nothing for them.
		a.pos = l.Values()
	} else {
		a.pos = make([]any, 0, l.Len())
		a.named = &value.List{}
		for name, v := range l.All() {
			if name == "" {
				a.pos = append(a.pos, v)
				continue
			}
			if names != nil && !slices.Contains(names, name) {
				return args{}, fnError(fn, invalidf("unknown named argument %q%s; usage: %s", name, words.Suggest(name, names), usage))
			}
			a.named.AppendNamed(name, v)
		}
	}
	if len(a.pos) < min || len(a.pos) > max {
		want := fmt.Sprintf("%d", min)
		switch {
		case max == math.MaxInt:
			want = fmt.Sprintf("at least %d", min)
		case max > min:
			want = fmt.Sprintf("%d to %d", min, max)
		}
		return args{}, fnError(fn, invalidf("want %s arguments, got %d; usage: %s", want, len(a.pos), usage))
	}
	return a, nil
}

func (a *args) errorf(format string, v ...any) error {
	return fnError(a.fn, invalidf(format, v...))
}

// str reads positional argument i as a string; what names it in errors.
func (a *args) str(i int, what string) (string, error) {
	s, ok := a.pos[i].(string)
	if !ok {
		return "", a.errorf("%s: want a string, got %s", what, value.Describe(a.pos[i]))
	}
	return s, nil
}

// topics reads a topic name or a list of them.
func (a *args) topics(v any, what string) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case *value.List:
		ts := make([]string, 0, v.Len())
		for _, e := range v.Values() {
			s, ok := e.(string)
			if !ok {
				return nil, a.errorf("%s: want topic names, got %s in %s", what, value.Describe(e), value.Describe(v))
			}
			ts = append(ts, s)
		}
		return ts, nil
	}
	return nil, a.errorf("%s: want a topic name or a list of them, got %s", what, value.Describe(v))
}

// optionalTopics reads positional argument i, when given, as topics; nil
// when it is not.
func (a *args) optionalTopics(i int) ([]string, error) {
	if len(a.pos) <= i {
		return nil, nil
	}
	return a.topics(a.pos[i], "topics")
}

// int reads an integer (an integral float will do) in [lo, hi].
func (a *args) int(v any, what string, lo, hi int64) (int64, error) {
	n, ok := v.(int64)
	if f, isFloat := v.(float64); isFloat {
		n, ok = words.Integral(f)
	}
	if !ok || n < lo || n > hi {
		return 0, a.errorf("%s: want an integer from %d to %d, got %s", what, lo, hi, value.Describe(v))
	}
	return n, nil
}

// millis reads a duration written in milliseconds, 0 or more, as the
// settings of windows, joins and tables are; what names it in errors.
func (a *args) millis(v any, what string) (time.Duration, error) {
	ms, err := a.int(v, what+" (ms)", 0, math.MaxInt64/int64(time.Millisecond))
	return time.Duration(ms) * time.Millisecond, err
}

// settings reads v, a list of named settings such as "window"'s: what
// names it in errors, usage is its form, and names are the settings it
// takes. It calls set with each element; an element without a name, or
// with a name not in names, is an error, as v not a list is.
func (a *args) settings(v any, what, usage string, names []string, set func(name string, v any) error) error {
	l, ok := v.(*value.List)
	if !ok {
		return a.errorf(`%s: want a list %s, got %s`, what, usage, value.Describe(v))
	}
	for name, v := range l.All() {
		var err error
		switch {
		case name == "":
			err = a.errorf(`%s: want named settings %s, got the unnamed %s`, what, usage, value.Describe(v))
		case !slices.Contains(names, name):
			err = a.errorf(`%s: unknown setting %q%s; want %s`, what, name, words.Suggest(name, names), usage)
		default:
			err = set(name, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readIDArgs is readArgs for functions whose first argument is a handle
// id: it also returns the id.
func readIDArgs(fn string, l *value.List) (args, string, error) {
	a, err := readArgs(fn, l)
	if err != nil {
		return args{}, "", err
	}
	id, err := a.str(0, "id")
	return a, id, err
}

func (lib table) bplCreate(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-create", l)
	if err != nil {
		return nil, err
	}
	kind, err := a.str(0, "kind")
	if err != nil {
		return nil, err
	}
	return lib.Create(ctx, kafkabpl.Kind(strings.ToLower(kind)), a.pos[1])
}

// bplKindCreate is brain4it's (kafka-producer servers "key" => value ...):
// the named arguments are config keys, read with brain4it's defaults; one
// it does not know is a warning, not an error, as brain4it ignores it.
func (lib table) bplKindCreate(fn string, kind kafkabpl.Kind) value.Func {
	return func(ctx context.Context, l *value.List) (any, error) {
		a, err := readArgs(fn, l)
		if err != nil {
			return nil, err
		}
		return lib.Create(ctx, kind, kafkabpl.Config{Base: a.pos[0], Keys: a.named, Brain4it: true})
	}
}

func (lib table) bplDestroy(fn string) value.Func {
	return func(ctx context.Context, l *value.List) (any, error) {
		_, id, err := readIDArgs(fn, l)
		if err != nil {
			return nil, err
		}
		ok, err := lib.Destroy(ctx, id)
		if e, isErr := err.(*kafkabpl.Error); isErr && e.Func != fn {
			err = &kafkabpl.Error{Func: fn, Err: e.Err} // kafka-delete-app's, not kafka-destroy's
		}
		// brain4it's kafka-delete-app says true for an id it does not
		// know (already deleted, say); kafka-destroy says false.
		return ok || fn == "kafka-delete-app", err
	}
}

func stringList(ss []string) *value.List {
	vals := make([]any, len(ss))
	for i, s := range ss {
		vals[i] = s
	}
	return value.ListOf(vals, nil)
}
