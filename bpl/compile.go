package bpl

import (
	"strings"
	"sync/atomic"

	"github.com/brain4it/kafkabpl/value"
)

// The compiling evaluator (issue 37). A function's body is compiled
// once, before its first call, and a while or for-each loop of top-level
// code each time it starts, into Go closures; code that runs once is
// walked, since compiling it would cost more than walking it. Compiled,
// a call of a builtin calls it directly, without looking its name up; a
// constant is returned as it is; the arguments of +, <, get, put and the
// other builtins that evaluate all their arguments first are evaluated
// onto the task's stack of values, without a list or a slice made per
// call (two integers, or a list and a key, take a path of their own:
// compile_ops.go); a BPL function's arguments are bound from that stack;
// and the forms scripts are mostly made of (do, if, when, while,
// for-each, set, local, and, or, not, list, concat, string, length,
// size, function: compile_forms.go) are compiled with their arguments.
//
// A compiled expression does exactly what eval does with it: compiling
// resolves only what cannot change while a program runs. Builtins are
// fixed (a builtin's name calls it whatever variable of that name is set,
// as in brain4it, which resolves them when it reads code), and so is the
// source's line of each list; library functions (Define may add one at
// any time) and variables are looked up at every call, as eval looks them
// up. Each call keeps eval's line and depth bookkeeping, and an exception
// its code. Builtins compiled with no form of their own get their call
// unevaluated, as from eval, and evaluate its arguments with eval.
//
// Code that a script can reach as data, and change, is never compiled,
// so that a change shows at the next evaluation as it does when walking
// the tree: what eval evaluates and the value of a global that Eval is
// given (a server module's start code), while taskMore.data counts them;
// the functions such code makes, whose bodies run with it counted too;
// and a call read with a tag (value.Parse), which may be reached through
// its tag.

// code is a compiled expression: it evaluates the expression in f.
type code func(t *task, f *frame) (any, error)

// compiler compiles the code of one source, whose lines it gives calls.
type compiler struct {
	src *source

	// names holds one string of each name of a variable the code
	// uses, so that the names of a scope and those the code looks up
	// are the same strings, which compare at once, without reading
	// their bytes.
	names map[string]string
}

// compiles reports whether code the task walks may be compiled: whether
// it is no data a script can reach (see taskMore.data), and compiling is not
// turned off for the tests.
func (t *task) compiles() bool { return (t.more == nil || t.more.data == 0) && !t.in.walk }

// intern returns the one string of name the code uses.
func (c *compiler) intern(name string) string {
	if s, ok := c.names[name]; ok {
		return s
	}
	if c.names == nil {
		c.names = map[string]string{}
	}
	c.names[name] = name
	return name
}

// expr compiles an expression.
func (c *compiler) expr(x any) code {
	switch x := x.(type) {
	case value.Reference:
		return c.ref(x)
	case *value.List:
		return c.list(x)
	}
	return func(*task, *frame) (any, error) { return x, nil }
}

// exprs compiles the elements of l from index from on.
func (c *compiler) exprs(l *value.List, from int) []code {
	cs := make([]code, 0, max(l.Len()-from, 0))
	for i := from; i < l.Len(); i++ {
		cs = append(cs, c.expr(l.At(i)))
	}
	return cs
}

// ref compiles a reference: eval's lookup, without its search for a path
// when the name has no slash.
func (c *compiler) ref(r value.Reference) code {
	name := c.intern(string(r))
	var rv any = r // made an interface once, not at every evaluation
	if strings.Contains(name, "/") {
		return func(t *task, f *frame) (any, error) { return t.eval(f, rv) }
	}
	fixed := lookupBuiltin(name) != nil || isCore[name] // a function's name whatever Define does
	gc := new(globalCache)
	return func(t *task, f *frame) (any, error) {
		if v, ok := f.locals.get(name); ok {
			return v, nil
		}
		v, ok := t.in.cachedGlobal(name, gc)
		if !ok && (fixed || t.in.libFunc(name) != nil) {
			return rv, nil // a hard reference: itself
		}
		return v, nil
	}
}

// list compiles a list: a call when its head names a function, else data.
func (c *compiler) list(l *value.List) code {
	if l.Len() == 0 {
		return func(*task, *frame) (any, error) { return &value.List{}, nil }
	}
	ref, ok := l.At(0).(value.Reference)
	if !ok {
		if l.Tagged() {
			return func(*task, *frame) (any, error) { return l, nil } // shared on purpose (see value.Parse)
		}
		return func(*task, *frame) (any, error) { return copyData(l), nil }
	}
	if l.Tagged() {
		// a call read with a tag may be reached as data, and changed:
		// it is evaluated as it is at every evaluation
		var lv any = l
		return func(t *task, f *frame) (any, error) { return t.eval(f, lv) }
	}
	name := string(ref)
	if b := lookupBuiltin(name); b != nil {
		return c.call(l, name, c.builtin(l, name, b))
	}
	return c.dynamic(l, name)
}

// call wraps the compiled body of a call of a builtin in eval's
// bookkeeping: the call's line for exceptions, the depth of calls, and
// the call as the code of an exception raised in it.
func (c *compiler) call(l *value.List, name string, body code) code {
	line := c.src.lines[l]
	return func(t *task, f *frame) (any, error) {
		saved := t.line
		if line > 0 {
			t.line = line
		}
		t.depth++
		var (
			v   any
			err error
		)
		if t.depth > maxDepth {
			err = t.errorf(f, "StackOverflow", "%s: calls nested more than %d deep", name, maxDepth)
		} else {
			v, err = body(t, f)
		}
		t.depth--
		t.line = saved
		if err != nil {
			noteCode(err, l)
		}
		return v, err
	}
}

// builtin compiles the body of a call of the builtin b: its own form, or
// its values function, or b itself given the call.
func (c *compiler) builtin(l *value.List, name string, b builtin) code {
	if body := c.special(l, name); body != nil {
		return body
	}
	if s, ok := strict[name]; ok && l.Len()-1 >= s.min && (s.max < 0 || l.Len()-1 <= s.max) {
		if l.Len() == 3 {
			if body := c.binary(l, name, s.fn); body != nil {
				return body
			}
		}
		args, fn := c.exprs(l, 1), s.fn
		return func(t *task, f *frame) (any, error) {
			base, err := t.push(f, args)
			if err != nil {
				return nil, err
			}
			v, err := fn(t, f, l, t.more.vs[base:])
			t.pop(base)
			return v, err
		}
	}
	if s, ok := listed[name]; ok {
		args := c.exprs(l, 1)
		return func(t *task, f *frame) (any, error) {
			vs, err := t.argList(f, l, args)
			if err != nil {
				return nil, err
			}
			return s(t, f, l, vs)
		}
	}
	return func(t *task, f *frame) (any, error) { return b(t, f, l) }
}

// valuesFn is what a builtin that evaluates all its arguments first, in
// order, does with their values vs; vs is the task's stack, which it must
// not keep.
type valuesFn func(t *task, f *frame, call *value.List, vs []any) (any, error)

// strict holds the builtins that are a check of their number of
// arguments, the evaluation of them all, then a valuesFn. A call with
// another number of arguments is compiled as b itself, which raises the
// exception.
var strict = map[string]struct {
	min, max int
	fn       valuesFn
}{
	"+":   {0, -1, addValues},
	"-":   {1, -1, subValues},
	"*":   {0, -1, mulValues},
	"/":   {1, -1, divValues},
	"=":   {2, -1, eqValues},
	"!=":  {2, -1, neValues},
	"<":   {2, -1, compareValues},
	">":   {2, -1, compareValues},
	"<=":  {2, -1, compareValues},
	">=":  {2, -1, compareValues},
	"mod": {2, 2, modValues},
	"get": {1, 2, getValues},
	"put": {3, 3, putValues},
	// concat keeps no argument; on the stack, a call makes no list of them.
	"concat": {0, -1, concatValues},
}

// listed holds the builtins that evaluate all their arguments first into
// a list, names kept, and what they do with it.
var listed = map[string]func(t *task, f *frame, call *value.List, args *value.List) (any, error){
	"list": func(_ *task, _ *frame, _ *value.List, args *value.List) (any, error) { return args, nil },
}

// push evaluates args onto the task's stack and returns where their
// values start; pop(base) takes them off.
func (t *task) push(f *frame, args []code) (int, error) {
	s := t.extra()
	base := len(s.vs)
	for _, a := range args {
		v, err := a(t, f)
		if err != nil {
			t.pop(base)
			return 0, err
		}
		s.vs = append(s.vs, v)
	}
	return base, nil
}

// pop takes the values from base on off the stack, leaving nothing there
// for the garbage collector to keep.
func (t *task) pop(base int) {
	clear(t.more.vs[base:])
	t.more.vs = t.more.vs[:base]
}

// argList evaluates args, the compiled elements of call from index 1 on,
// into a new list with their names, as evalArgs does.
func (t *task) argList(f *frame, call *value.List, args []code) (*value.List, error) {
	var l *value.List
	if len(args) <= 4 {
		// A library call's few arguments: the list and its values in
		// one allocation.
		one := &struct {
			l value.List
			v [4]any
		}{}
		l = &one.l
		l.Reset(one.v[:0:len(args)], nil)
	} else {
		l = value.NewList(make([]any, 0, len(args))...)
	}
	for i, a := range args {
		v, err := a(t, f)
		if err != nil {
			return nil, err
		}
		l.AppendNamed(call.Name(i+1), v)
	}
	return l, nil
}

// dynamic compiles a call whose head is no builtin: a library function,
// a function value, a variable naming a function, or data, decided at
// every evaluation as evalList decides it.
func (c *compiler) dynamic(l *value.List, name string) code {
	args := c.exprs(l, 1)
	line := c.src.lines[l]
	byPosition := !l.Named()
	name = c.intern(name)
	return func(t *task, f *frame) (any, error) {
		b, lf, fv, err := t.callee(f, l, name)
		if err == errData {
			return copyData(l), nil
		} else if err != nil {
			return nil, err
		}
		saved := t.line
		if line > 0 {
			t.line = line
		}
		t.depth++
		var v any
		switch {
		case t.depth > maxDepth:
			err = t.errorf(f, "StackOverflow", "%s: calls nested more than %d deep", name, maxDepth)
		case b != nil:
			v, err = b(t, f, l)
		case lf != nil:
			var vs *value.List
			if vs, err = t.argList(f, l, args); err == nil {
				v, err = t.callLibWith(f, lf, l, vs)
			}
		default:
			v, err = t.applyCompiled(f, fv, l, args, byPosition)
		}
		t.depth--
		t.line = saved
		if err != nil {
			noteCode(err, l)
		}
		return v, err
	}
}

// applyCompiled calls the function value fv with the arguments args of
// call. A BPL function of this interpreter whose parameters bind by
// position gets them from the stack, with no list made, when no argument
// has a name (byPosition).
func (t *task) applyCompiled(f *frame, fv value.Callable, call *value.List, args []code, byPosition bool) (any, error) {
	fn, ok := fv.(*Function)
	if !ok || fn == nil || fn.in != t.in || !byPosition || !fn.positional || fn.rest != "" {
		vs, err := t.argList(f, call, args)
		if err != nil {
			return nil, err
		}
		return t.apply(f, fv, vs)
	}
	base, err := t.push(f, args)
	if err != nil {
		return nil, err
	}
	m := t.more // push made it
	g := m.frame()
	g.src = fn.src
	if err := t.checkCtx(g); err != nil {
		t.pop(base)
		return nil, err
	}
	vs := m.vs[base:]
	for k, p := range fn.params {
		var v any
		if k < len(vs) {
			v = vs[k]
		}
		g.locals.set(p.local, v)
	}
	t.pop(base)
	v, err := fn.run(t, g)
	m.release(g)
	return v, err
}

// maxFreeFrames bounds the frames a task keeps for its next calls: a
// recursion deeper than that makes the rest as it goes.
const maxFreeFrames = 32

// frame returns a zero frame for a call from compiled code, one that an
// earlier call of the task gave back if there is one.
func (m *taskMore) frame() *frame {
	if n := len(m.free); n > 0 {
		g := m.free[n-1]
		m.free = m.free[:n-1]
		return g
	}
	return &frame{}
}

// release gives back the frame of a call that has returned. Nothing else
// holds a frame once its call returns: BPL has no closures, exceptions
// keep its file name only, and executors and timer tasks make their own.
func (m *taskMore) release(g *frame) {
	if len(m.free) < maxFreeFrames {
		*g = frame{}
		m.free = append(m.free, g)
	}
}

// fnBody is a function's compiled body, shared by the function values one
// (function ...) makes, compiled at the first call of any of them.
type fnBody struct {
	code atomic.Pointer[[]code]
}

// compiled returns fn's body compiled, compiling it at the first call.
func (fn *Function) compiled() []code {
	if p := fn.body.code.Load(); p != nil {
		return *p
	}
	c := compiler{src: fn.src}
	for _, p := range fn.params {
		c.intern(p.local)
	}
	c.intern(fn.rest)
	cs := c.exprs(fn.def, 2)
	fn.body.code.CompareAndSwap(nil, &cs) // a call at the same time may have won
	return *fn.body.code.Load()
}
