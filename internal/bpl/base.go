package bpl

import (
	"io"
	"math"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl"
)

// The base family: evaluation, variables, control flow, conversions and
// output. Exceptions (try, throw, assert) are in exception.go, function
// values (function, call) in function.go.

func init() {
	register(map[string]builtin{
		"###":      biComment,
		"do":       biDo,
		"quote":    biQuote,
		"set":      biSet,
		"local":    biLocal,
		"if":       biIf,
		"when":     biWhen,
		"while":    biWhile,
		"string":   biString,
		"number":   biNumber,
		"sleep":    biSleep,
		"print":    biPrint,
		"try":      biTry,
		"throw":    biThrow,
		"assert":   biAssert,
		"function": biFunction,
		"call":     biCall,
	})
}

// (### "text") is a comment: it evaluates nothing and gives null.
func biComment(*task, *frame, *kafkabpl.List) (any, error) { return nil, nil }

// (do a b ...) evaluates its arguments in order and gives the last value.
func biDo(t *task, f *frame, call *kafkabpl.List) (any, error) {
	return t.evalBody(f, call, 1)
}

// evalBody evaluates the elements of call from index from on and gives the
// last value (null when there is none).
func (t *task) evalBody(f *frame, call *kafkabpl.List, from int) (any, error) {
	var v any
	for i := from; i < call.Len(); i++ {
		var err error
		if v, err = t.eval(f, call.At(i)); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// (quote x) gives x unevaluated (a list as a fresh copy).
func biQuote(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	if l, ok := call.At(1).(*kafkabpl.List); ok {
		return copyData(l), nil
	}
	return call.At(1), nil
}

// (set x value) assigns the local x if the current function (or top level)
// has one, else the global x; (set a/b/0 value) the element the path
// names. It gives the value.
func biSet(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 2, 2); err != nil {
		return nil, err
	}
	ref, ok := call.At(1).(kafkabpl.Reference)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "set: want a variable name, got %s", describe(call.At(1)))
	}
	v, err := t.eval(f, call.At(2))
	if err != nil {
		return nil, err
	}
	if err := t.set(f, string(ref), v); err != nil {
		return nil, err
	}
	return v, nil
}

// (local a b "c" => value) declares local variables of the current
// function (or top level): a and b null, c the value. It gives null.
func biLocal(t *task, f *frame, call *kafkabpl.List) (any, error) {
	for i := 1; i < call.Len(); i++ {
		if name := call.Name(i); name != "" {
			v, err := t.eval(f, call.At(i))
			if err != nil {
				return nil, err
			}
			f.locals[name] = v
			continue
		}
		ref, ok := call.At(i).(kafkabpl.Reference)
		if !ok || pathOf(string(ref)) != nil {
			return nil, t.errorf(f, "InvalidArgument", "local: argument %d is %s, want a variable name", i, describe(call.At(i)))
		}
		f.locals[string(ref)] = nil
	}
	return nil, nil
}

// (if cond then else) gives then's value when cond is true, else else's
// (null without else).
func biIf(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 2, 3); err != nil {
		return nil, err
	}
	c, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	if truthy(c) {
		return t.eval(f, call.At(2))
	}
	if call.Len() > 3 {
		return t.eval(f, call.At(3))
	}
	return nil, nil
}

// (when cond body...) evaluates body when cond is true and gives its last
// value, else null.
func biWhen(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	c, err := t.eval(f, call.At(1))
	if err != nil || !truthy(c) {
		return nil, err
	}
	return t.evalBody(f, call, 2)
}

// (while cond body...) evaluates body as long as cond is true and gives
// the last value body had (null if it never ran).
func biWhile(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	var v any
	for {
		if err := t.checkCtx(f); err != nil {
			return nil, err
		}
		c, err := t.eval(f, call.At(1))
		if err != nil {
			return nil, err
		}
		if !truthy(c) {
			return v, nil
		}
		if v, err = t.evalBody(f, call, 2); err != nil {
			return nil, err
		}
	}
}

// (string x) gives x as text: a string as it is, a byte array as its
// bytes, anything else in BPL text (null as "null").
func biString(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	v, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	return t.text(f, "string", v)
}

// (number x) gives the number x's text denotes, read as BPL reads numbers
// ("12" 12, "2.5" 2.5, "0x1F" 31); a number is itself and null stays null.
func biNumber(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	v, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	var s string
	switch x := v.(type) {
	case nil, int64, float64:
		return v, nil
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return nil, t.errorf(f, "InvalidArgument", "number: want a string, got %s", describe(v))
	}
	if vs, err := kafkabpl.Parse(s); err == nil && len(vs) == 1 {
		switch n := vs[0].(type) {
		case int64, float64:
			return n, nil
		}
	}
	return nil, t.errorf(f, "InvalidArgument", "number: %s is not a number", describe(s))
}

// (sleep ms) waits ms milliseconds, or until the run is cancelled, and
// gives null.
func biSleep(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	v, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	ms, ok := toFloat(v)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "sleep: want milliseconds, got %s", describe(v))
	}
	d := time.Duration(math.MaxInt64)
	if ms < float64(d/time.Millisecond) {
		d = time.Duration(ms * float64(time.Millisecond))
	}
	if d <= 0 || ms != ms {
		return nil, t.checkCtx(f)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.ctx.Done():
		return nil, t.interrupted(f)
	case <-timer.C:
		return nil, nil
	}
}

// (print a b ...) writes its arguments, strings raw and others in BPL
// text, separated by spaces and followed by a newline; it gives null.
func biPrint(t *task, f *frame, call *kafkabpl.List) (any, error) {
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for i, v := range args.Values() {
		if i > 0 {
			b.WriteByte(' ')
		}
		s, err := t.text(f, "print", v)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	b.WriteByte('\n')
	t.in.outMu.Lock()
	_, err = io.WriteString(t.in.out, b.String())
	t.in.outMu.Unlock()
	if err != nil {
		return nil, t.exception(f, "IOError", "print: "+err.Error(), err)
	}
	return nil, nil
}
