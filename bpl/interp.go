// Package bpl is an embeddable evaluator of BPL, the Lisp-like language of
// the brain4it IoT platform, with brain4it's core library (lists, strings,
// numbers, dates, executors, timers, http). Any Go program can run BPL with
// it, and register the kafkabpl library's functions (or its own) with
// [Interp.Define]. The reader and printer are value.Parse and
// value.Format.
//
// Evaluation follows brain4it. A list whose first element is a reference
// naming a function (a builtin, a library function registered with
// [Interp.Define], or a variable holding a function value) is a call; any
// other list is data and evaluates to itself, its elements unevaluated. A
// reference evaluates to its variable, null when unset; a path a/b/0 to the
// element of nested lists it names (null when there is none). A reference
// that names a builtin or library function and no variable (brain4it's
// hard reference) evaluates to itself, so that (set f sin) (f 0.5) and
// (call f 0.5) call sin, and (list + 1 2) equals (quote (+ 1 2)). Other
// atoms evaluate to themselves.
//
// Variables are global, or local to the function call running (the top
// level of a Run or Eval has a local scope of its own); there are no
// closures, as in brain4it. A function sees its own locals and the globals,
// not its caller's locals.
//
// Code is never changed by running it: a data list and (quote x) evaluate
// to a fresh copy, so (set l ()) (push l 1) in a function starts from an
// empty list on every call.
//
// A function's body is compiled into Go closures before its first call,
// and a loop of top-level code when it starts (see compile.go): what
// compiling resolves cannot change while a script runs, so a script sees
// what walking the tree would give it, and code a script can change as
// data is walked.
//
// Errors are BPL exceptions (see [Exception]). Runaway recursion is an
// exception too (StackOverflow), and a cancelled context stops loops,
// sleeps and calls with an Interrupted exception that try cannot catch.
//
// The builtins are brain4it's core functions, one file per family, as
// brain4it's core library is organised: base.go (evaluation, variables,
// control flow, conversions, output; try, throw and assert are in
// exception.go, function and call in function.go), list.go, number.go
// (arithmetic, comparison, logic, bits), string.go, time.go,
// concurrency.go (executors, monitors, timers) and http.go. Each function
// is documented where it is defined, with where it departs from brain4it;
// docs/brain4it.md has the table. In short, where brain4it leaves room: truth is
// brain4it's (null, false, 0, () and strings other than "true" are false);
// integer arithmetic wraps around like Java's long, and / of integers is
// an integer only when exact (7/2 is 3.5); = compares numbers by value and
// lists element by element without their names (== compares the names
// too); and and or give booleans; a list may be put into itself, as in
// brain4it, and then prints with brain4it's tags. A call
// of a brain4it core function that is not here is an exception
// (NotImplemented), not data.
//
// Run, Eval and calls of function values may run concurrently on one
// Interp, from any goroutines: globals and library functions are
// protected. Lists two of them change at once are not, as in brain4it,
// where sync is the tool: code that shares a list between executors must
// change and read it inside (sync list ...). See concurrency.go for
// executors (spawn), monitors (sync, wait, notify) and timers, and
// [Interp.Close] for ending them.
package bpl

import (
	"context"
	"errors"
	"io"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/brain4it/kafkabpl/value"
)

// maxDepth bounds how deep calls may nest, so that runaway recursion is an
// exception and not a Go stack overflow.
const maxDepth = 10000

// Interp is a BPL interpreter: its globals, library functions and output.
type Interp struct {
	outMu sync.Mutex // print writes whole lines
	out   io.Writer

	mu sync.RWMutex
	// globals is the global scope, in the order the variables were
	// first set, as brain4it's module scope (a list) keeps them; only
	// its named elements are variables. It changes only under mu.
	globals *value.List
	// layout counts the changes to globals that move or remove a
	// variable (see globalCache); it changes only under mu.
	layout uint64

	// lib holds the library functions. Every call of a name that is no
	// builtin reads it, from any number of goroutines, and Define is
	// rare: so it is replaced whole, under mu, and never changed, and a
	// read takes no lock (an RWMutex's read lock writes to memory that
	// all the goroutines share).
	lib atomic.Pointer[map[string]value.Func]

	conc concState // spawned executors and timer tasks (concurrency.go)

	// walk makes the interpreter evaluate by walking the code's tree
	// alone, compiling nothing: the tests compare the two.
	walk bool
}

// New returns an interpreter whose print function writes to out (nowhere
// when out is nil).
func New(out io.Writer) *Interp {
	if out == nil {
		out = io.Discard
	}
	in := &Interp{out: out, globals: &value.List{}}
	in.lib.Store(&map[string]value.Func{})
	return in
}

// Define registers a library function under name, as in
//
//	for name, f := range functions.Table(lib) { in.Define(name, f) }
//
// A builtin of the same name (such as print) takes precedence.
func (in *Interp) Define(name string, f value.Func) {
	in.mu.Lock()
	defer in.mu.Unlock()
	lib := maps.Clone(*in.lib.Load())
	lib[name] = f
	in.lib.Store(&lib)
}

// isGlobalValue reports whether x is a list that a global variable holds.
func (in *Interp) isGlobalValue(x any) bool {
	l, ok := x.(*value.List)
	if !ok {
		return false
	}
	in.mu.RLock()
	defer in.mu.RUnlock()
	for _, v := range in.globals.Values() {
		if v == any(l) {
			return true
		}
	}
	return false
}

func (in *Interp) libFunc(name string) value.Func {
	return (*in.lib.Load())[name]
}

// Run reads src (file names the source for messages) and evaluates each
// top-level expression in order, calling each(result) after every one
// (each may be nil; it is called for null results too; value.Format
// writes a list that holds a list more than once, or itself, with
// brain4it's tags). It stops at the
// first uncaught exception and returns it as *Exception, or returns the
// *value.SyntaxError if src does not parse (nothing is evaluated then).
func (in *Interp) Run(ctx context.Context, file, src string, each func(v any)) error {
	s := &source{file: file, lines: map[*value.List]int{}}
	exprs, err := value.ParseLines(src, func(l *value.List, line int) { s.lines[l] = line })
	if err != nil {
		return err
	}
	t := in.task(ctx, 0)
	f := &frame{src: s}
	for _, x := range exprs {
		v, err := t.eval(f, x)
		if err != nil {
			return err
		}
		if each != nil {
			each(v)
		}
	}
	return nil
}

// Eval evaluates one already-read expression, with a top-level scope of
// its own. An error is an *Exception.
//
// Eval compiles the loops of expr when they start, and the body of a
// function value it makes, such as f in (set f (function (x) ...)), at
// its first call, unless expr is the list a global variable holds: expr
// should not change after that, as the expressions of a Run and those
// value.Parse gives cannot. The list a global holds, and code a script
// passes to eval, are walked at every evaluation instead, and may change.
func (in *Interp) Eval(ctx context.Context, expr any) (any, error) {
	t := in.task(ctx, 0)
	if in.isGlobalValue(expr) {
		t.extra().data++ // code a script can change: see compile.go
	}
	return t.eval(&frame{src: &source{}}, expr)
}

// source is where code was read: its file and the line of each list.
type source struct {
	file  string
	lines map[*value.List]int
}

// task is one evaluation running on one goroutine: a Run, an Eval, the
// library's call of a function value, or a spawned executor.
type task struct {
	in    *Interp
	ctx   context.Context
	depth int // calls in progress, counting those of enclosing tasks
	line  int // line of the innermost call with a known line

	// base is the context executors this task spawns run under: the
	// context of the Run, Eval or Call that started it all, so that
	// an executor outlives the executor that spawned it, as in brain4it,
	// but not the run.
	base context.Context
	exec *executor // the spawned executor this task is; nil for others

	// more is what few tasks need, made when one does, so that a task
	// that needs none (a function value's call, mostly) costs nothing
	// more than the pointer.
	more *taskMore

	// kept is set once something other than the evaluator's own calls may
	// hold the task: a library function got a context naming it (libCtx).
	// Function.CallArgs reuses the task of a call only while it is unset.
	kept bool

	// libs are the last two contexts libCtx made, libNext the one it
	// replaces next. Whatever changes ctx empties them.
	libs    [2]*libContext
	libNext uint8
}

// taskMore is the rest of a task.
type taskMore struct {
	// data counts the evaluations in progress of code a script can
	// reach as data and change (eval's, and Eval's of a global's
	// value): while there is one, nothing is compiled (see compile.go).
	data int

	// vs is the stack of the values of the arguments of the compiled
	// calls in progress (see push), in buf while they fit.
	vs  []any
	buf [16]any

	// free holds frames of returned calls, for the next (see release).
	free []*frame
}

// extra returns the task's taskMore, making it.
func (t *task) extra() *taskMore {
	if t.more == nil {
		t.more = &taskMore{}
		t.more.vs = t.more.buf[:0]
	}
	return t.more
}

// frame is the scope of the code being evaluated: where it was read and
// the locals of the function call (or top level) running it.
type frame struct {
	src    *source
	locals scope
}

// errData is callee's answer for a call that runs nothing: its list is
// data, whose value is a copy of it.
var errData = errors.New("a list of data")

// callee finds what a call l of name, which names no builtin, runs: a
// library function (lf), a variable's function value (fv), or the builtin
// or library function that a variable's value names, as (set f sin) makes
// one (b or lf). The error is errData when it runs nothing, and
// NotImplemented for a core function this evaluator lacks.
func (t *task) callee(f *frame, l *value.List, name string) (b builtin, lf value.Func, fv value.Callable, err error) {
	if lf = t.in.libFunc(name); lf != nil {
		return nil, lf, nil, nil
	}
	v := t.lookup(f, name)
	if fv, ok := v.(value.Callable); ok {
		return nil, nil, fv, nil
	}
	r, isRef := v.(value.Reference)
	switch {
	case isRef && lookupBuiltin(string(r)) != nil:
		return lookupBuiltin(string(r)), nil, nil, nil
	case isRef && t.in.libFunc(string(r)) != nil:
		return nil, t.in.libFunc(string(r)), nil, nil
	case isRef && isCore[string(r)]:
		return nil, nil, nil, t.notImplemented(f, l, string(r))
	case isCore[name]:
		return nil, nil, nil, t.notImplemented(f, l, name)
	}
	return nil, nil, nil, errData
}

func (in *Interp) task(ctx context.Context, depth int) *task {
	if ctx == nil {
		ctx = context.Background()
	}
	t := &task{}
	in.initTask(t, ctx, depth, callerOf(ctx))
	return t
}

// initTask makes t a new task of in on ctx (not nil), c being what ctx
// carries of the task that called the library, if any.
func (in *Interp) initTask(t *task, ctx context.Context, depth int, c caller) {
	*t = task{in: in, ctx: ctx, depth: depth, base: ctx}
	if c.base != nil {
		t.base = c.base
	}
}

// callerKey carries a *caller through the library into function values
// it calls (see callerOf).
type callerKey struct{}

// caller is what a function value the library calls keeps of the task
// that called the library: the call depth, so that recursion through the
// library is bounded too, and the base context of its executors.
type caller struct {
	depth int
	base  context.Context
	task  *task // the task blocked in the library call (see lockTask)
}

// callerOf is what ctx carries of the task that called the library; the
// zero caller when it carries none.
func callerOf(ctx context.Context) caller {
	if c, ok := ctx.Value(callerKey{}).(*caller); ok {
		return *c
	}
	return caller{}
}

// libContext is the context a library function gets: the task's context,
// carrying the task as the caller (a *caller under callerKey), in one
// allocation.
type libContext struct {
	context.Context
	c caller
}

// Value is the caller for callerKey, else what the task's context holds.
func (l *libContext) Value(key any) any {
	if _, ok := key.(callerKey); ok {
		return &l.c
	}
	return l.Context.Value(key)
}

// libCtx is the context a library function gets. It is the same for
// every call at one depth (it holds the task's context, depth and base),
// so the task keeps the last two it made, for calls at two depths (calls
// nest: (f (g x)) calls g deeper than f): a script's loop calling library
// functions makes none after its first round.
func (t *task) libCtx() context.Context {
	t.kept = true
	for _, l := range t.libs {
		if l != nil && l.c.depth == t.depth {
			return l
		}
	}
	l := &libContext{Context: t.ctx, c: caller{depth: t.depth, base: t.base, task: t}}
	t.libs[t.libNext] = l
	t.libNext ^= 1
	return l
}

// eval evaluates x. Every error it returns is an *Exception.
func (t *task) eval(f *frame, x any) (any, error) {
	switch x := x.(type) {
	case value.Reference:
		v := t.lookup(f, string(x))
		if v == nil && t.isFunctionName(string(x)) && !t.hasVar(f, string(x)) {
			return x, nil // a hard reference, as brain4it calls it: itself
		}
		return v, nil
	case *value.List:
		return t.evalList(f, x)
	}
	return x, nil
}

// evalList evaluates a list: a call when its head names a function, else
// data.
func (t *task) evalList(f *frame, l *value.List) (any, error) {
	if l.Len() == 0 {
		return &value.List{}, nil
	}
	ref, ok := l.At(0).(value.Reference)
	if !ok {
		if l.Tagged() {
			return l, nil // shared on purpose (see value.Parse)
		}
		return copyData(l), nil
	}
	name := string(ref)
	b := lookupBuiltin(name)
	var lf value.Func
	var fv value.Callable
	if b == nil {
		var err error
		if b, lf, fv, err = t.callee(f, l, name); err == errData {
			return copyData(l), nil
		} else if err != nil {
			return nil, err
		}
	}

	saved := t.line
	if line := f.src.lines[l]; line > 0 {
		t.line = line
	}
	t.depth++
	var (
		v   any
		err error
	)
	switch {
	case t.depth > maxDepth:
		err = t.errorf(f, "StackOverflow", "%s: calls nested more than %d deep", name, maxDepth)
	case b != nil:
		v, err = b(t, f, l)
	case lf != nil:
		v, err = t.callLib(f, lf, l)
	default:
		var args *value.List
		if args, err = t.evalArgs(f, l, 1); err == nil {
			v, err = t.apply(f, fv, args)
		}
	}
	t.depth--
	t.line = saved
	if err != nil {
		noteCode(err, l)
	}
	return v, err
}

// evalArgs evaluates the elements of call from index from on, keeping
// their names.
func (t *task) evalArgs(f *frame, call *value.List, from int) (*value.List, error) {
	args := value.NewList(make([]any, 0, max(call.Len()-from, 0))...) // room for all: no growing
	for i := from; i < call.Len(); i++ {
		v, err := t.eval(f, call.At(i))
		if err != nil {
			return nil, err
		}
		args.AppendNamed(call.Name(i), v)
	}
	return args, nil
}

// argBuf is room for the arguments of most calls on the caller's stack: a
// builtin that only reads its arguments evaluates them into one with
// evalValues rather than into a new list, two allocations less a call.
type argBuf [4]any

// evalValues evaluates the elements of call from index from on into buf,
// growing it when they do not fit, and returns their values (not their
// names). The caller must not keep the slice: it is buf's memory.
func (t *task) evalValues(f *frame, call *value.List, from int, buf []any) ([]any, error) {
	vs := buf[:0]
	for i := from; i < call.Len(); i++ {
		v, err := t.eval(f, call.At(i))
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// callLib calls a library function with the evaluated arguments of call.
func (t *task) callLib(f *frame, lf value.Func, call *value.List) (any, error) {
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	return t.callLibWith(f, lf, call, args)
}

// callLibWith calls a library function with args, the evaluated arguments
// of call.
func (t *task) callLibWith(f *frame, lf value.Func, call *value.List, args *value.List) (any, error) {
	if err := t.cyclicArg(f, "", call, args); err != nil {
		return nil, err
	}
	v, err := lf(t.libCtx(), args)
	if err != nil {
		return nil, t.fromGo(f, err)
	}
	return v, nil
}

// apply calls a function value with evaluated arguments.
func (t *task) apply(f *frame, c value.Callable, args *value.List) (any, error) {
	if fn, ok := c.(*Function); ok && fn != nil && fn.in == t.in {
		return fn.invoke(t, &frame{}, args)
	}
	if err := t.cyclicArg(f, "a library function", nil, args); err != nil {
		return nil, err
	}
	v, err := c.Call(t.libCtx(), args)
	if err != nil {
		return nil, t.fromGo(f, err)
	}
	return v, nil
}

// lookup returns the value of a variable, or of the element a path names.
func (t *task) lookup(f *frame, name string) any {
	if v, ok := f.locals.get(name); ok {
		return v
	}
	if v, ok := t.in.global(name); ok {
		return v
	}
	if !strings.Contains(name, "/") {
		return nil
	}
	if strings.Contains(name, `"`) {
		return t.walk(f, quotedPath(name))
	}
	// A plain path, walked part by part as pathOf would split it, but
	// without making the slice of parts at every read of a/b: /a is the
	// one part a; an empty part (a//b, a/, /a/b, /) makes no path.
	if name[0] == '/' && !strings.Contains(name[1:], "/") {
		if name == "/" {
			return nil
		}
		return t.lookup(f, name[1:])
	}
	if name[0] == '/' || name[len(name)-1] == '/' || strings.Contains(name, "//") {
		return nil
	}
	first, rest, _ := strings.Cut(name, "/")
	v := t.lookup(f, first)
	for rest != "" {
		var part string
		part, rest, _ = strings.Cut(rest, "/")
		l, ok := v.(*value.List)
		if !ok {
			return nil
		}
		v = elementAt(l, part)
	}
	return v
}

// walk returns the element the path segs names (nil when segs is nil).
func (t *task) walk(f *frame, segs []string) any {
	if segs == nil {
		return nil
	}
	v := t.lookup(f, segs[0])
	for _, s := range segs[1:] {
		l, ok := v.(*value.List)
		if !ok {
			return nil
		}
		v = elementAt(l, s)
	}
	return v
}

// set assigns a variable (the local one if there is one, else the global)
// or the element a path names.
func (t *task) set(f *frame, name string, v any) error {
	segs := pathOf(name)
	if segs == nil {
		if f.locals.has(name) {
			f.locals.set(name, v)
		} else {
			t.in.SetGlobal(name, v)
		}
		return nil
	}
	if len(segs) == 1 {
		return t.set(f, segs[0], v)
	}
	parent := t.lookup(f, strings.Join(segs[:len(segs)-1], "/"))
	l, ok := parent.(*value.List)
	if !ok {
		return t.errorf(f, "InvalidArgument", "set: %s is %s, not a list", strings.Join(segs[:len(segs)-1], "/"), value.Describe(parent))
	}
	last := segs[len(segs)-1]
	if i, ok := pathIndex(last); ok {
		return t.putIndex(f, "set", l, i, v)
	}
	return t.putName(f, "set", l, last, v)
}

// pathOf splits a path reference such as a/b/0 into its parts; it returns
// nil for a plain name, including / itself. A path of one part is written
// /a, as brain4it writes it.
func pathOf(name string) []string {
	if !strings.Contains(name, "/") {
		return nil
	}
	if strings.Contains(name, `"`) {
		return quotedPath(name)
	}
	if len(name) > 1 && name[0] == '/' && !strings.Contains(name[1:], "/") {
		return []string{name[1:]}
	}
	segs := strings.Split(name, "/")
	for _, s := range segs {
		if s == "" {
			return nil
		}
	}
	return segs
}

// pathIndex reports whether a path part is an index (all digits).
func pathIndex(s string) (int, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1, true // too big: an index that is out of range
	}
	return n, true
}

// elementAt returns the element of l a path part names, or nil.
func elementAt(l *value.List, s string) any {
	if i, ok := pathIndex(s); ok {
		if i >= 0 && i < l.Len() {
			return l.At(i)
		}
		return nil
	}
	v, _ := l.Get(s)
	return v
}

// notImplemented is the exception of a call of a brain4it core function
// that this evaluator does not have.
func (t *task) notImplemented(f *frame, call *value.List, name string) error {
	if line := f.src.lines[call]; line > 0 {
		t.line = line
	}
	why := notImplemented[name]
	if why == "" {
		why = "not implemented yet"
	}
	return t.errorf(f, "NotImplemented", "%s: brain4it's core function is not available here: %s", name, why)
}
