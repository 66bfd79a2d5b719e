package bpl

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// What a server that hosts BPL modules needs of an Interp: the global scope
// as brain4it's module scope (an ordered list), reading and changing it by
// path, and printing it, all safe to use while code runs on the Interp.
//
// A path is a sequence of parts, each a string (a name) or an int (an
// index), as brain4it's PathParser makes them: ("a" 0 "b") is a/0/b. Its
// first part names a global variable.

// ErrPath is wrapped by the errors of GetPath, PutPath and DeletePath when
// the path names no element.
var ErrPath = errors.New("bpl: invalid path")

// Scope returns the global scope as a new named list, in the order the
// variables were first set (brain4it's module order). The values are the
// variables' own: a list in it is the variable's list.
func (in *Interp) Scope() *value.List {
	in.mu.RLock()
	defer in.mu.RUnlock()
	c := &value.List{}
	for name, v := range in.globals.All() {
		c.AppendNamed(name, v)
	}
	return c
}

// ReplaceScope makes scope the global scope, as brain4it's module-init and
// PUT /module with a list do; in keeps and owns scope afterwards (the
// caller must not change it). A nil scope empties the global scope. A
// value in scope that is scope itself (a saved module that refers to
// itself) stays so.
func (in *Interp) ReplaceScope(scope *value.List) {
	if scope == nil {
		scope = &value.List{}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.globals = scope
	in.layout++
}

// Global returns the value of a global variable and whether it is set.
func (in *Interp) Global(name string) (any, bool) { return in.global(name) }

// DeleteGlobal removes a global variable and reports whether it was set.
func (in *Interp) DeleteGlobal(name string) bool { return in.deleteGlobal(name) }

// GetPath returns the element path names: the global of its first part,
// then the element of each further part (nil when a list on the way has no
// such element). An empty path is an error wrapping ErrPath.
func (in *Interp) GetPath(ctx context.Context, path []any) (any, error) {
	if len(path) == 0 {
		return nil, fmt.Errorf("%w: empty path", ErrPath)
	}
	name, ok := path[0].(string)
	if !ok {
		return nil, fmt.Errorf("%w: the first part of a path is a name, got %v", ErrPath, path[0])
	}
	v, _ := in.global(name)
	for _, p := range path[1:] {
		l, ok := v.(*value.List)
		if !ok {
			return nil, nil
		}
		unlock, err := in.LockList(ctx, l)
		if err != nil {
			return nil, err
		}
		v = partOf(l, p)
		unlock()
	}
	return v, nil
}

// partOf is the element of l a path part names, or nil.
func partOf(l *value.List, p any) any {
	switch p := p.(type) {
	case int:
		if p >= 0 && p < l.Len() {
			return l.At(p)
		}
	case string:
		v, _ := l.Get(p)
		return v
	}
	return nil
}

// PutPath sets the element path names to v and returns its old value: a
// global for a one-part path, else the element of the list the path's
// other parts name, set while holding that list's monitor (see
// concurrency.go), so code that changes the list inside (sync list ...)
// never meets it half done. A name missing from that list is appended; an
// index may be the list's length (appending). A list may be put into
// itself, as with put. The errors wrap ErrPath.
func (in *Interp) PutPath(ctx context.Context, path []any, v any) (any, error) {
	if len(path) == 1 {
		name, ok := path[0].(string)
		if !ok {
			return nil, fmt.Errorf("%w: the first part of a path is a name, got %v", ErrPath, path[0])
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		return in.putGlobal(name, v), nil
	}
	l, last, err := in.parentOf(ctx, path)
	if err != nil {
		return nil, err
	}
	noteCycle(v, l)
	unlock, err := in.LockList(ctx, l)
	if err != nil {
		return nil, err
	}
	defer unlock()
	switch p := last.(type) {
	case int:
		switch {
		case p >= 0 && p < l.Len():
			old := l.At(p)
			l.Set(p, v)
			return old, nil
		case p == l.Len():
			l.Append(v)
			return nil, nil
		}
		return nil, fmt.Errorf("%w: index %d is out of range: the list has %d elements", ErrPath, p, l.Len())
	case string:
		old, _ := l.Get(p)
		l.Put(p, v)
		return old, nil
	}
	return nil, fmt.Errorf("%w: a path part is a name or an index, got %v", ErrPath, last)
}

// DeletePath removes the element path names (a global for a one-part path)
// and returns its value; it returns nil when there is none.
func (in *Interp) DeletePath(ctx context.Context, path []any) (any, error) {
	if len(path) == 1 {
		name, ok := path[0].(string)
		if !ok {
			return nil, fmt.Errorf("%w: the first part of a path is a name, got %v", ErrPath, path[0])
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		if i := in.globals.Index(name); i >= 0 {
			return in.removeGlobal(i), nil
		}
		return nil, nil
	}
	l, last, err := in.parentOf(ctx, path)
	if err != nil {
		return nil, err
	}
	unlock, err := in.LockList(ctx, l)
	if err != nil {
		return nil, err
	}
	defer unlock()
	i := -1
	switch p := last.(type) {
	case int:
		if p >= 0 && p < l.Len() {
			i = p
		}
	case string:
		i = l.Index(p)
	}
	if i < 0 {
		return nil, nil
	}
	old := l.At(i)
	l.Remove(i)
	return old, nil
}

// parentOf returns the list all but the last part of path name, and the
// last part.
func (in *Interp) parentOf(ctx context.Context, path []any) (*value.List, any, error) {
	if len(path) == 0 {
		return nil, nil, fmt.Errorf("%w: empty path", ErrPath)
	}
	pv, err := in.GetPath(ctx, path[:len(path)-1])
	if err != nil {
		return nil, nil, err
	}
	l, ok := pv.(*value.List)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %v is %s, not a list", ErrPath, path[:len(path)-1], value.Describe(pv))
	}
	return l, path[len(path)-1], nil
}

// LockList takes the monitor of l, the one (sync l ...) takes, waiting
// until no executor holds it or ctx ends (then the error is an Interrupted
// *Exception). The caller must call unlock once, and must not evaluate
// code on in that syncs on other lists meanwhile, or it may deadlock with
// it until ctx ends.
func (in *Interp) LockList(ctx context.Context, l *value.List) (unlock func(), err error) {
	t := in.lockTask(ctx)
	if err := t.lock(&frame{src: &source{}}, l); err != nil {
		return nil, err
	}
	return func() { t.unlock(l) }, nil
}

// FormatValue writes v as value.Format does, holding v's monitor when it is a
// list, so code that changes v inside (sync v ...) does not race with it.
func (in *Interp) FormatValue(ctx context.Context, v any) (string, error) {
	l, ok := v.(*value.List)
	if !ok {
		return value.Format(v), nil
	}
	unlock, err := in.LockList(ctx, l)
	if err != nil {
		return "", err
	}
	defer unlock()
	return value.Format(l), nil
}

// FormatScope writes the global scope as value.Format does, as brain4it prints a
// module (GET /module and its saved snapshot): it takes the monitor of
// every list a global holds, in scope order, then prints the scope at once
// so that brain4it's tags link lists shared between variables. So that it
// never deadlocks with code that holds one of those monitors while
// waiting for another, it lets go of them all when one is not free within
// lockPatience and tries again. It gives up with an Interrupted
// *Exception when ctx ends first.
func (in *Interp) FormatScope(ctx context.Context) (string, error) {
	in.mu.RLock()
	var lists []*value.List
	seen := map[*value.List]bool{}
	for _, v := range in.globals.Values() {
		if l, ok := v.(*value.List); ok && l != in.globals && !seen[l] {
			seen[l] = true
			lists = append(lists, l)
		}
	}
	in.mu.RUnlock()
	f := &frame{src: &source{}}
	for {
		t, held, err := in.lockAll(ctx, f, lists)
		if err == nil {
			in.mu.RLock()
			text := value.Format(in.globals)
			in.mu.RUnlock()
			for _, l := range held {
				t.unlock(l)
			}
			return text, nil
		}
		if ctx.Err() != nil {
			return "", in.task(ctx, 0).interrupted(f)
		}
	}
}

// lockPatience is how long FormatScope waits for one monitor before it
// lets go of the others and starts again.
const lockPatience = 20 * time.Millisecond

// lockAll takes the monitors of lists for one task, or none: it fails when
// one is not free within lockPatience.
func (in *Interp) lockAll(ctx context.Context, f *frame, lists []*value.List) (*task, []*value.List, error) {
	t := in.lockTask(ctx)
	held := make([]*value.List, 0, len(lists))
	saved := t.ctx
	defer func() { t.ctx, t.libs = saved, [2]*libContext{} }()
	for _, l := range lists {
		actx, cancel := context.WithTimeout(ctx, lockPatience)
		t.ctx, t.libs = actx, [2]*libContext{}
		err := t.lock(f, l)
		cancel()
		if err != nil {
			for _, h := range held {
				t.unlock(h)
			}
			return nil, nil, err
		}
		held = append(held, l)
	}
	return t, held, nil
}

// lockTask is the task that takes monitors for LockList and FormatScope:
// when ctx is that of a library function called from code running on in
// (module-save, say), the calling task, blocked in that call, so that the
// monitors it holds (its (sync l ...)) are its own again, as Java's are
// reentrant; otherwise a task of its own.
func (in *Interp) lockTask(ctx context.Context) *task {
	if c := callerOf(ctx); c.task != nil && c.task.in == in {
		return c.task
	}
	return in.task(ctx, 0)
}

// SafeEval is Eval that never panics: a Go panic in the evaluator or in a
// library function it calls becomes an InternalError *Exception, its stack
// kept in the message, so that one bad evaluation never takes down a
// server that hosts many.
func (in *Interp) SafeEval(ctx context.Context, expr any) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, panicException(r)
		}
	}()
	return in.Eval(ctx, expr)
}

// SafeCall calls c with args as the library calls a function value, and
// never panics (see SafeEval).
func SafeCall(ctx context.Context, c value.Callable, args *value.List) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, panicException(r)
		}
	}()
	return c.Call(ctx, args)
}

// panicException is the exception a recovered panic becomes.
func panicException(r any) *Exception {
	msg := fmt.Sprintf("panic: %v\n%s", r, debug.Stack())
	return &Exception{Type: "InternalError", Message: msg,
		Value: value.NewList("InternalError").AppendNamed("message", msg)}
}

// WithSpawnContext returns ctx such that the executors and timer tasks
// that code evaluated under it spawns run under base rather than ctx: a
// server evaluates a request under the request's context, cancelled when
// the request ends or its time is up, while what the code spawns runs on
// until it ends, is killed or the Interp is closed, as on brain4it's
// server. base must not be nil.
func WithSpawnContext(ctx, base context.Context) context.Context {
	c := callerOf(ctx)
	c.base = base
	return context.WithValue(ctx, callerKey{}, &c)
}

// FormatJSON writes v in JSON as (string v "format" => "json") does: a list
// all of whose elements are named as an object, any other list as an
// array; references, functions and byte arrays as null. The error is an
// InvalidArgument *Exception for what JSON cannot hold (NaN, a list that
// contains itself).
func (in *Interp) FormatJSON(v any) (string, error) {
	if l, ok := v.(*value.List); ok {
		return in.task(nil, 0).jsonText(&frame{src: &source{}}, l)
	}
	s, err := in.task(nil, 0).jsonText(&frame{src: &source{}}, value.NewList(v))
	if err != nil {
		return "", err
	}
	return s[1 : len(s)-1], nil // the one element of [v]
}

// Reopen makes in usable again after Close: spawn and timer-schedule work
// again, and the scope, library functions and function values stay. A
// server stops a module so (Close kills its executors) and may start it
// again later. Call it only after Close has returned.
func (in *Interp) Reopen() {
	c := &in.conc
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		c.closed = false
		c.ctx, c.cancel = nil, nil
		c.init()
	}
}
