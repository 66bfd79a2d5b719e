package bpl

import (
	"io"
	"math"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// The base family: evaluation, setting variables, control flow, sleep
// and output. Conversions, types and parse are in base_types.go;
// variables, references, scopes, functions and help in base_vars.go;
// exceptions (try, throw, assert) in exception.go; function values
// (function, call) in function.go.

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

		"cond":           biCond,
		"for":            biFor,
		"eval":           biEval,
		"boolean":        biBoolean,
		"type-of":        biTypeOf,
		"subtype-of":     biSubtypeOf,
		"exists":         biExists,
		"delete":         biDelete,
		"set-local":      biSetLocal,
		"reference-list": biReferenceList,
		"help":           biHelp,
		"reference":      biReference,
		"parse":          biParse,
		"global-scope":   biGlobalScope,
		"local-scope":    biLocalScope,
		"functions":      biFunctions,

		// brain4it's old names, kept for old scripts
		"seq":    biDo,
		"typeof": biTypeOf,
	})
}

// (### "text") is a comment: it evaluates nothing and gives null.
func biComment(*task, *frame, *value.List) (any, error) { return nil, nil }

// (do a b ...) evaluates its arguments in order and gives the last value.
func biDo(t *task, f *frame, call *value.List) (any, error) {
	return t.evalBody(f, call, 1)
}

// evalBody evaluates the elements of call from index from on and gives the
// last value (null when there is none).
func (t *task) evalBody(f *frame, call *value.List, from int) (any, error) {
	var v any
	for i := from; i < call.Len(); i++ {
		var err error
		if v, err = t.eval(f, call.At(i)); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// (quote x) gives x unevaluated (a list as a fresh copy, but for one read
// with a brain4it tag, which is itself: see value.Parse).
func biQuote(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	if l, ok := call.At(1).(*value.List); ok {
		if l.Tagged() {
			return l, nil
		}
		return copyData(l), nil
	}
	return call.At(1), nil
}

// (set x value) assigns the local x if the current function (or top level)
// has one, else the global x; (set a/b/0 value) the element the path
// names. x may be an expression in parentheses whose value is a reference,
// as in (set (reference "a") 44). It gives the value.
func biSet(t *task, f *frame, call *value.List) (any, error) {
	name, err := t.varArg(f, call, 1)
	if err != nil {
		return nil, err
	}
	if err := t.arity(f, call, 2, 2); err != nil {
		return nil, err
	}
	v, err := t.eval(f, call.At(2))
	if err != nil {
		return nil, err
	}
	if err := t.set(f, name, v); err != nil {
		return nil, err
	}
	return v, nil
}

// (local a b "c" => value) declares local variables of the current
// function (or top level): a and b null, c the value. It gives null.
func biLocal(t *task, f *frame, call *value.List) (any, error) {
	for i := 1; i < call.Len(); i++ {
		if name := call.Name(i); name != "" {
			v, err := t.eval(f, call.At(i))
			if err != nil {
				return nil, err
			}
			f.locals.set(name, v)
			continue
		}
		ref, ok := call.At(i).(value.Reference)
		if !ok || pathOf(string(ref)) != nil {
			return nil, t.errorf(f, "InvalidArgument", "local: argument %d is %s, want a variable name", i, value.Describe(call.At(i)))
		}
		f.locals.set(string(ref), nil)
	}
	return nil, nil
}

// (if cond then else) gives then's value when cond is true, else else's
// (null without else).
func biIf(t *task, f *frame, call *value.List) (any, error) {
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

// (when cond body...) evaluates body when cond is true, and gives whether
// it did, true or false, as brain4it's when does (use if for a value).
func biWhen(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	c, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	if !truthy(c) {
		return false, nil
	}
	if _, err := t.evalBody(f, call, 2); err != nil {
		return nil, err
	}
	return true, nil
}

// (while cond body...) evaluates body as long as cond is true and gives
// the last value body had (null if it never ran).
func biWhile(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	if t.compiles() {
		c := compiler{src: f.src}
		return c.while(call)(t, f) // compiled as it starts: see compile.go
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

// (sleep ms) waits ms milliseconds, or until the run is cancelled, and
// gives null.
func biSleep(t *task, f *frame, call *value.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	ms, ok := toFloat(v)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "sleep: want milliseconds, got %s", value.Describe(v))
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
func biPrint(t *task, f *frame, call *value.List) (any, error) {
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

// (cond clause...) evaluates its clauses in order until one is true, as
// brain4it's cond does with clauses like (when test body...): a when
// clause is true when its test is (its body is evaluated then), any other
// clause when its value is true. It gives null, whatever the clauses gave.
// (A when clause is judged by its test, so that a when that its script
// has redefined as a variable is evaluated as any other clause.)
func biCond(t *task, f *frame, call *value.List) (any, error) {
	for i := 1; i < call.Len(); i++ {
		if w, ok := call.At(i).(*value.List); ok && w.Len() > 1 && w.At(0) == value.Reference("when") && !t.hasVar(f, "when") {
			c, err := t.eval(f, w.At(1))
			if err != nil {
				return nil, err
			}
			if !truthy(c) {
				continue
			}
			_, err = t.evalBody(f, w, 2)
			return nil, err
		}
		v, err := t.eval(f, call.At(i))
		if err != nil {
			return nil, err
		}
		if truthy(v) {
			break
		}
	}
	return nil, nil
}

// (for init test step body...) evaluates init, then, as long as test is
// true, body and then step. It gives the last value body had (null if it
// never ran or is empty).
func biFor(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 3, -1); err != nil {
		return nil, err
	}
	if _, err := t.eval(f, call.At(1)); err != nil {
		return nil, err
	}
	var v any
	for {
		if err := t.checkCtx(f); err != nil {
			return nil, err
		}
		c, err := t.eval(f, call.At(2))
		if err != nil {
			return nil, err
		}
		if !truthy(c) {
			return v, nil
		}
		if call.Len() > 4 {
			if v, err = t.evalBody(f, call, 4); err != nil {
				return nil, err
			}
		}
		if _, err := t.eval(f, call.At(3)); err != nil {
			return nil, err
		}
	}
}

// (eval expr scope) evaluates expr, then evaluates its value: (eval
// (quote (+ 1 2))) gives 3 and (eval (reference "x")) the value of x. The
// second evaluation runs in the current scope, or, when scope is a list
// (not null), in a scope of its own whose locals are scope's named
// elements (the first of each name; unnamed ones are ignored), with the
// globals. scope stands for that scope as brain4it's does: when the
// evaluation ends, normally or not, the locals it changed or declared are
// put back into scope by name (set on the first element of the name, or
// appended in name order), and those it deleted are removed from it (the
// first element of the name).
func biEval(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	x, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	m := t.extra()
	m.data++ // x is data the script holds: nothing of it is compiled
	defer func() { m.data-- }()
	if call.Len() < 3 {
		return t.eval(f, x)
	}
	sv, err := t.eval(f, call.At(2))
	if err != nil {
		return nil, err
	}
	if sv == nil {
		return t.eval(f, x)
	}
	scope, ok := sv.(*value.List)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "eval: want a list as the scope, got %s", value.Describe(sv))
	}
	before := map[string]any{}
	for name, e := range scope.All() {
		if _, dup := before[name]; name != "" && !dup {
			before[name] = e
		}
	}
	sf := &frame{src: f.src}
	for name, e := range before {
		sf.locals.set(name, e)
	}
	v, err := t.eval(sf, x)
	for name, nv := range scopeList(sf.locals.all()).All() { // new locals are appended in a fixed order
		if old, had := before[name]; had && sameValue(old, nv) {
			continue
		}
		if perr := t.putName(f, "eval", scope, name, nv); perr != nil && err == nil {
			err = perr
		}
	}
	for name := range before {
		if _, kept := sf.locals.get(name); !kept {
			if i := scope.Index(name); i >= 0 {
				scope.Remove(i) // deleted by the evaluation
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}
