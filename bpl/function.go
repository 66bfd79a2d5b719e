package bpl

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"

	"github.com/brain4it/kafkabpl/value"
)

// Function is a user function, the value of (function (a b) body...). It
// implements value.Callable, so library functions can call it, and
// prints as its source.
//
// A call binds arguments named like a parameter ("b" => 2) to it, and the
// unnamed ones (and those named like no parameter) to the remaining
// parameters in order, but for the parameters that take only a named
// argument; parameters left over are null and extra arguments are ignored. (function args body...) binds
// all the arguments, as a list, to args. The body runs with only these
// locals and the globals, and gives the value of its last expression.
type Function struct {
	in     *Interp
	src    *source
	def    *value.List // (function params body...) as read; never changed
	params []param
	rest   string

	body *fnBody // compiled at the first call; nil: never compiled

	// positional is whether binding can go by position alone when no
	// argument has a name: no parameter takes only a named argument and
	// no two set the same local. Then the k-th argument is the k-th
	// parameter's, as the general rule gives, with less work a call.
	positional bool
}

// param is a parameter of a function: the local it sets, the name of the
// argument it takes, and whether it takes only a named argument.
type param struct {
	local, key string
	named      bool
}

// Call calls the function with arguments already evaluated. Its error is
// an *Exception.
func (fn *Function) Call(ctx context.Context, args *value.List) (any, error) {
	t, f, err := fn.begin(ctx)
	if err != nil {
		return nil, err
	}
	return fn.invoke(t, f, args)
}

// begin makes the task and the frame of a call from Go.
func (fn *Function) begin(ctx context.Context) (*task, *frame, error) {
	// The task and the frame of the call are made in one allocation,
	// which is all a call from Go costs of its own when its arguments
	// fit in the frame's inline locals. Each is used as if made alone:
	// whatever keeps one (a library function keeping the context that
	// names the task) keeps the other alive too, which is all.
	return fn.beginIn(ctx, &callState{})
}

// callState is the task and the frame of a call from Go, made together.
type callState struct {
	t task
	f frame
}

// callStates keeps the states of CallArgs's calls that ended with nothing
// else holding their task or frame, for the next call: a stream calls its
// transform once per record, and the state was a third of what a call of
// a one-line transform allocated.
var callStates = sync.Pool{New: func() any { return new(callState) }}

// maxPooledStack bounds the argument stack a pooled call state keeps: a
// deep recursion's is left to the collector.
const maxPooledStack = 256

// beginIn is begin in the zero state cs.
func (fn *Function) beginIn(ctx context.Context, cs *callState) (*task, *frame, error) {
	if fn == nil {
		return nil, nil, errors.New("bpl: call of a nil *Function")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	c := callerOf(ctx)
	more := cs.t.more                        // a pooled state's argument stack, empty
	fn.in.initTask(&cs.t, ctx, c.depth+1, c) // this call counts for the depth limit
	cs.t.more = more
	if cs.t.depth > maxDepth {
		return nil, nil, cs.t.errorf(&frame{src: fn.src}, "StackOverflow", "calls nested more than %d deep", maxDepth)
	}
	return &cs.t, &cs.f, nil
}

// CallArgs calls the function with its first n positional arguments of
// a0 and a1 (n from 0 to 2), as Call does with a list of them, without
// making that list when the function binds its parameters by position:
// a library's callback per record (a stream's transform, say) saves an
// allocation a call. A function that takes its arguments as one list
// gets a list made for it.
//
// A call that ends without an exception, and that called no library
// function (which may keep the context naming its task), leaves its task
// and frame for the next call of any function: the evaluator holds no
// other reference to them once the call returns (there are no closures,
// and an executor or a timer task that the body starts has a task of its
// own).
func (fn *Function) CallArgs(ctx context.Context, n int, a0, a1 any) (any, error) {
	if fn == nil || fn.rest != "" || !fn.positional || n < 0 || n > 2 {
		args := []any{a0, a1}
		return fn.Call(ctx, value.NewList(args[:max(0, min(n, 2))]...))
	}
	cs := callStates.Get().(*callState)
	t, f, err := fn.beginIn(ctx, cs)
	if err != nil {
		return nil, err
	}
	f.src = fn.src
	if err := t.checkCtx(f); err != nil {
		return nil, err
	}
	for k, p := range fn.params {
		var v any
		switch {
		case k == 0 && n > 0:
			v = a0
		case k == 1 && n > 1:
			v = a1
		}
		f.locals.set(p.local, v)
	}
	v, err := fn.run(t, f)
	if err == nil && !t.kept {
		more := t.more
		if more != nil && (more.data != 0 || len(more.vs) != 0 || cap(more.vs) > maxPooledStack) {
			return v, nil // not as a call leaves it, or grown large: left to the collector
		}
		*cs = callState{}
		cs.t.more = more
		callStates.Put(cs)
	}
	return v, err
}

// TakesLazy reports that a Function takes *value.Lazy arguments: its
// scope makes one when the body first reads the parameter bound to it (and
// invoke makes them all for a function that takes its arguments as one
// list), so that a library can pass an argument the body may never read
// without building it.
func (fn *Function) TakesLazy() bool { return true }

// String returns the function's source, (function (a b) body...).
func (fn *Function) String() string {
	if fn == nil {
		return "null"
	}
	return value.Format(fn.def)
}

// invoke binds args in f, a new frame, and evaluates the body there.
func (fn *Function) invoke(t *task, f *frame, args *value.List) (any, error) {
	f.src = fn.src
	if err := t.checkCtx(f); err != nil {
		return nil, err
	}
	switch {
	case fn.rest != "":
		if args == nil {
			args = &value.List{}
		}
		for i := range args.Len() {
			if lv, ok := args.At(i).(*value.Lazy); ok {
				args.Set(i, value.Force(lv))
			}
		}
		f.locals.set(fn.rest, args)
	case fn.positional && !args.Named():
		for k, p := range fn.params {
			var v any
			if k < args.Len() {
				v = args.At(k)
			}
			f.locals.set(p.local, v)
		}
	default:
		bound := make([]bool, len(fn.params))
		var positional []any
		for i := range args.Len() {
			name := args.Name(i)
			j := -1
			if name != "" {
				for k, p := range fn.params {
					if p.key == name && !bound[k] {
						j = k
						break
					}
				}
			}
			if j < 0 {
				positional = append(positional, args.At(i))
				continue
			}
			f.locals.set(fn.params[j].local, args.At(i))
			bound[j] = true
		}
		for k, p := range fn.params {
			if bound[k] {
				continue
			}
			var v any
			if len(positional) > 0 && !p.named {
				v, positional = positional[0], positional[1:]
			}
			if !f.locals.has(p.local) {
				f.locals.set(p.local, v)
			}
		}
	}
	return fn.run(t, f)
}

// run evaluates the body in f, whose parameters are bound.
func (fn *Function) run(t *task, f *frame) (any, error) {
	var v any
	switch {
	case t.in.walk:
		return t.evalBody(f, fn.def, 2)
	case fn.body == nil: // made from data, as its loops are: see compile.go
		m := t.extra()
		m.data++
		defer func() { m.data-- }()
		return t.evalBody(f, fn.def, 2)
	}
	for _, x := range fn.compiled() {
		var err error
		if v, err = x(t, f); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// (function (a b) body...) makes a function value; (function args body...)
// one that takes all its arguments as the list args. As in brain4it, a
// parameter written as a string, (function (a "b") ...), takes only an
// argument named b (null without one), and one written "k" => v sets the
// local v to the argument named k: (function (s "upcase" => up) ...)
// called with upcase => true sets up to true.
func biFunction(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	fn := &Function{in: t.in, src: f.src, def: call}
	if t.compiles() {
		fn.body = &fnBody{} // compiled at its first call
	}
	switch p := call.At(1).(type) {
	case value.Reference:
		fn.rest = string(p)
		return fn, nil
	case *value.List:
		for i := range p.Len() {
			var pa param
			switch r := p.At(i).(type) {
			case value.Reference:
				pa = param{local: string(r), key: string(r), named: p.Name(i) != ""}
				if pa.named {
					pa.key = p.Name(i)
				}
			case string:
				if p.Name(i) == "" {
					pa = param{local: r, key: r, named: true}
				}
			}
			if pa.local == "" || pathOf(pa.local) != nil {
				return nil, t.errorf(f, "InvalidArgument", "function: parameter %d is %s, want a name", i+1, value.Describe(p.At(i)))
			}
			fn.params = append(fn.params, pa)
		}
		fn.positional = true
		for k, pa := range fn.params {
			if pa.named || slices.ContainsFunc(fn.params[:k], func(o param) bool { return o.local == pa.local }) {
				fn.positional = false
			}
		}
		return fn, nil
	}
	return nil, t.errorf(f, "InvalidArgument", "function: want a parameter list like (a b), got %s", value.Describe(call.At(1)))
}

// (call f args...) calls f with the evaluated args: f is a function
// value, or the name of a builtin or library function, as a reference
// ((call sin 0.5), (call + 4 5)) or a string.
func biCall(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	target, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 2)
	if err != nil {
		return nil, err
	}
	name := ""
	switch c := target.(type) {
	case value.Callable:
		return t.apply(f, c, args)
	case string:
		name = c
	case value.Reference:
		name = string(c)
	case nil:
		if r, ok := call.At(1).(value.Reference); ok {
			name = string(r)
		}
	}
	if t.isFunctionName(name) {
		return t.callNamed(f, name, args)
	}
	what := value.Describe(target)
	if target == nil && name != "" {
		what = name
	}
	return nil, t.errorf(f, "UnknownFunction", "call: %s is not a function", what)
}

// callNamed calls the builtin or library function name with arguments
// already evaluated. A builtin gets them as a call whose arguments are
// references to locals of a scope of their own holding the values, so
// that it evaluates them to the very values (a list stays that list).
func (t *task) callNamed(f *frame, name string, args *value.List) (any, error) {
	if lf := t.in.libFunc(name); lookupBuiltin(name) == nil && lf != nil {
		if err := t.cyclicArg(f, name, nil, args); err != nil {
			return nil, err
		}
		v, err := lf(t.libCtx(), args)
		if err != nil {
			return nil, t.fromGo(f, err)
		}
		return v, nil
	}
	b := lookupBuiltin(name)
	if b == nil {
		return nil, t.notImplemented(f, value.NewList(value.Reference(name)), name)
	}
	g := &frame{src: f.src}
	c := value.NewList(value.Reference(name))
	for i := range args.Len() {
		local := "\x00arg" + strconv.Itoa(i) // no script can name it
		g.locals.set(local, args.At(i))
		c.AppendNamed(args.Name(i), value.Reference(local))
	}
	t.depth++
	defer func() { t.depth-- }()
	if t.depth > maxDepth {
		return nil, t.errorf(f, "StackOverflow", "%s: calls nested more than %d deep", name, maxDepth)
	}
	return b(t, g, c)
}

// cyclicArg checks, once lists have been read with tags, that no argument
// of a library function contains itself: the library's serializers follow
// lists without end, so such a list is an InvalidArgument before it gets
// there. fn names the function in the error; "" names it by the head of
// call, formatted only for the error.
func (t *task) cyclicArg(f *frame, fn string, call, args *value.List) error {
	if !value.MayCycle() {
		return nil
	}
	for i, v := range args.Values() {
		if value.Cyclic(v) {
			if fn == "" {
				fn = fname(call)
			}
			return t.errorf(f, "InvalidArgument", "%s: argument %d is a list that contains itself, which the library cannot take", fn, i+1)
		}
	}
	return nil
}
