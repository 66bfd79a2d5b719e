package bpl

import (
	"math"

	"github.com/brain4it/kafkabpl/value"
)

// The list family, continued: apply, find and locate walk a list's
// elements; names, has and the name functions read them by name; append,
// sublist, reverse and clone build new lists from old.

// listVisitor is how apply, find and locate look at each element: with a
// local variable set to it while code is evaluated, or by calling a
// function value with it.
type listVisitor struct {
	name string
	code any
	fn   value.Callable
}

// visitor reads the visitor of a call (fn list x code ...) or
// (fn list function ...) and gives it with the index of the next argument.
// A variable name followed by code is the first form, as in brain4it; a
// reference with nothing after it, or any other expression, must give a
// function value (an expression may also give a reference: the variable).
func (t *task) visitor(f *frame, call *value.List, fn string) (listVisitor, int, error) {
	x := call.At(2)
	ref, isRef := x.(value.Reference)
	if !isRef || call.Len() == 3 {
		v, err := t.eval(f, x)
		if err != nil {
			return listVisitor{}, 0, err
		}
		switch v := v.(type) {
		case value.Callable:
			return listVisitor{fn: v}, 3, nil
		case value.Reference:
			if !isRef {
				ref, isRef = v, true
			}
		}
		if !isRef || call.Len() == 3 {
			return listVisitor{}, 0, t.errorf(f, "InvalidArgument", "%s: want a variable name and code, or a function, after the list; got %s", fn, value.Describe(v))
		}
	}
	if pathOf(string(ref)) != nil {
		return listVisitor{}, 0, t.errorf(f, "InvalidArgument", "%s: want a variable name, got the path %s", fn, value.Short(string(ref)))
	}
	return listVisitor{name: string(ref), code: call.At(3)}, 4, nil
}

// visit gives what the visitor makes of element v.
func (t *task) visit(f *frame, lv listVisitor, v any) (any, error) {
	if lv.fn != nil {
		return t.apply(f, lv.fn, value.NewList(v))
	}
	f.locals.set(lv.name, v)
	return t.eval(f, lv.code)
}

// eachElement calls do for each element list had when it started that it
// still has, stopping when do says so or fails, or when the run is
// cancelled.
func (t *task) eachElement(f *frame, l *value.List, from int, do func(i int) (bool, error)) error {
	for i, n := from, l.Len(); i < n && i < l.Len(); i++ {
		if err := t.checkCtx(f); err != nil {
			return err
		}
		if stop, err := do(i); stop || err != nil {
			return err
		}
	}
	return nil
}

// visitCall starts apply, find and locate: the list (null is empty) and
// the visitor.
func (t *task) visitCall(f *frame, call *value.List, fn string, maxArgs int) (*value.List, listVisitor, int, error) {
	if err := t.arity(f, call, 2, maxArgs); err != nil {
		return nil, listVisitor{}, 0, err
	}
	v, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, listVisitor{}, 0, err
	}
	l, err := t.listArg(f, fn, v, true)
	if err != nil {
		return nil, listVisitor{}, 0, err
	}
	lv, next, err := t.visitor(f, call, fn)
	if err == nil && lv.fn != nil && call.Len() > maxArgs {
		err = t.arity(f, call, 2, maxArgs-1) // the function takes the code's place
	}
	if err != nil {
		return nil, listVisitor{}, 0, err
	}
	return l, lv, next, nil
}

// (apply list x code) gives a new list of the values of code evaluated
// with the local x set to each element of list in turn, names kept;
// (apply list function) calls function with each element instead. Null is
// the empty list; elements added while it runs are not visited.
func biApply(t *task, f *frame, call *value.List) (any, error) {
	l, lv, _, err := t.visitCall(f, call, "apply", 3)
	if err != nil {
		return nil, err
	}
	out := &value.List{}
	err = t.eachElement(f, l, 0, func(i int) (bool, error) {
		name := l.Name(i)
		v, err := t.visit(f, lv, l.At(i))
		if err == nil {
			out.AppendNamed(name, v)
		}
		return false, err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// (find list x condition) gives a new list of the elements of list for
// which condition, evaluated with the local x set to the element, is true,
// names kept; (find list function) calls function with each element
// instead. Null is the empty list.
func biFind(t *task, f *frame, call *value.List) (any, error) {
	l, lv, _, err := t.visitCall(f, call, "find", 3)
	if err != nil {
		return nil, err
	}
	out := &value.List{}
	err = t.eachElement(f, l, 0, func(i int) (bool, error) {
		name, e := l.Name(i), l.At(i)
		c, err := t.visit(f, lv, e)
		if err == nil && truthy(c) {
			out.AppendNamed(name, e)
		}
		return false, err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// (locate list x condition from) gives the index of the first element, at
// index from (default 0; null is 0) or later, for which condition,
// evaluated with the local x set to the element, is true; -1 when there is
// none. (locate list function from) calls function with each element
// instead. A from past the end gives -1, a negative one is an
// InvalidArgument. Null is the empty list. indexof is an old name of it.
func biLocate(t *task, f *frame, call *value.List) (any, error) {
	fn := fname(call)
	l, lv, next, err := t.visitCall(f, call, fn, 4)
	if err != nil {
		return nil, err
	}
	from := 0
	if next < call.Len() {
		v, err := t.eval(f, call.At(next))
		if err != nil {
			return nil, err
		}
		if v != nil {
			if from, err = t.indexArg(f, fn, "from", v); err != nil {
				return nil, err
			}
			if from < 0 {
				return nil, t.outOfRange(f, fn, v, l.Len())
			}
		}
	}
	found := -1
	err = t.eachElement(f, l, from, func(i int) (bool, error) {
		c, err := t.visit(f, lv, l.At(i))
		if err == nil && truthy(c) {
			found = i
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return nil, err
	}
	return int64(found), nil
}

// (name-index list name) gives the index of the first element named name,
// -1 when there is none (or name is null); null is the empty list.
func biNameIndex(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 2, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, "name-index", args.At(0), true)
	if err != nil {
		return nil, err
	}
	switch name := args.At(1).(type) {
	case nil:
		return int64(-1), nil
	case string:
		return int64(l.Index(name)), nil
	}
	return nil, t.errorf(f, "InvalidArgument", "name-index: the name is %s, want a string", value.Describe(args.At(1)))
}

// (names list) gives a new list of the names of list's named elements, in
// order; null is the empty list.
func biNames(t *task, f *frame, call *value.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, "names", v, true)
	if err != nil {
		return nil, err
	}
	out := &value.List{}
	for name := range l.All() {
		if name != "" {
			out.Append(name)
		}
	}
	return out, nil
}

// (get-name list index) gives the name of the element at index, null when
// it has none or there is no such element; null is the empty list.
// getname is an old name of it.
func biGetName(t *task, f *frame, call *value.List) (any, error) {
	fn := fname(call)
	if err := t.arity(f, call, 2, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, fn, args.At(0), true)
	if err != nil {
		return nil, err
	}
	i, err := t.indexArg(f, fn, "the index", args.At(1))
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= l.Len() || l.Name(i) == "" {
		return nil, nil
	}
	return l.Name(i), nil
}

// (put-name list index name) names the element at index, taking the name
// from any other element that has it, as brain4it's names are unique; a
// null or empty name makes the element unnamed. It gives the list; an
// index out of range is an InvalidArgument. putname is an old name of it.
func biPutName(t *task, f *frame, call *value.List) (any, error) {
	fn := fname(call)
	args, l, err := t.listCall(f, call, fn, 3, 3)
	if err != nil {
		return nil, err
	}
	i, err := t.indexArg(f, fn, "the index", args.At(1))
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= l.Len() {
		return nil, t.outOfRange(f, fn, args.At(1), l.Len())
	}
	name, ok := args.At(2).(string)
	if !ok && args.At(2) != nil {
		return nil, t.errorf(f, "InvalidArgument", "%s: the name is %s, want a string", fn, value.Describe(args.At(2)))
	}
	if name != "" {
		for j := range l.Len() {
			if j != i && l.Name(j) == name {
				l.SetName(j, "")
			}
		}
	}
	l.SetName(i, name)
	return l, nil
}

// (has list key) tells whether list has an element at index key, or one
// named key, or, when key is a list, at the path key (see get): false for
// any other key; null is the empty list.
func biHas(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 2, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, "has", args.At(0), true)
	if err != nil {
		return nil, err
	}
	var steps []listStep
	switch k := args.At(1).(type) {
	case int64, float64:
		if n, ok := toFloat(k); !ok || n != math.Trunc(n) {
			return false, nil
		}
		i, _, _ := t.key(f, "has", k)
		steps = []listStep{{i: i}}
	case string:
		if k == "" {
			return false, nil
		}
		steps = []listStep{{name: k}}
	case *value.List:
		for _, v := range k.Values() {
			i, name, err := t.key(f, "has", v)
			if err != nil {
				return false, nil
			}
			steps = append(steps, listStep{i, name})
		}
	}
	if len(steps) == 0 {
		return false, nil
	}
	parent, ok := walkSteps(l, steps[:len(steps)-1]).(*value.List)
	if !ok {
		return false, nil
	}
	last := steps[len(steps)-1]
	if last.name != "" {
		return parent.Index(last.name) >= 0, nil
	}
	return last.i >= 0 && last.i < parent.Len(), nil
}

// (empty list) tells whether list has no elements; null is empty.
func biEmpty(t *task, f *frame, call *value.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, "empty", v, true)
	if err != nil {
		return nil, err
	}
	return l.Len() == 0, nil
}

// (append list other...) adds the elements of the other lists to the end
// of list, in place, and gives it: a named element replaces the first
// element of list with its name, as put does, an unnamed one is appended.
// A null other adds nothing.
func biAppend(t *task, f *frame, call *value.List) (any, error) {
	args, l, err := t.listCall(f, call, "append", 2, -1)
	if err != nil {
		return nil, err
	}
	others := args.Values()[1:]
	for i, v := range others {
		o, ok := v.(*value.List)
		if !ok && v != nil {
			return nil, t.errorf(f, "InvalidArgument", "append: argument %d is %s, want a list", i+2, value.Describe(v))
		}
		if n := l.Len() + o.Len(); n > maxConcatElems {
			return nil, t.errorf(f, "InvalidArgument", "append: result longer than %d elements", maxConcatElems)
		}
		if o != l { // l's own elements make no new cycle in l
			noteCycle(o, l)
		}
	}
	for _, v := range others {
		o, _ := v.(*value.List)
		for i, n := 0, o.Len(); i < n; i++ { // o may be l itself
			if name := o.Name(i); name != "" {
				l.Put(name, o.At(i))
			} else {
				l.Append(o.At(i))
			}
		}
	}
	return l, nil
}

// (sublist list from to) gives a new list of the elements of list from
// index from up to, not including, index to (default and null: the size),
// names kept. It is empty when from is not below to; otherwise from below
// 0 or to past the size is an InvalidArgument. Null is the empty list.
func biSublist(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 2, 3); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, "sublist", args.At(0), true)
	if err != nil {
		return nil, err
	}
	from, err := t.indexArg(f, "sublist", "from", args.At(1))
	if err != nil {
		return nil, err
	}
	to := l.Len()
	if args.Len() > 2 && args.At(2) != nil {
		if to, err = t.indexArg(f, "sublist", "to", args.At(2)); err != nil {
			return nil, err
		}
	}
	out := &value.List{}
	switch {
	case from >= to:
		return out, nil
	case from < 0:
		return nil, t.outOfRange(f, "sublist", args.At(1), l.Len())
	case to > l.Len():
		return nil, t.outOfRange(f, "sublist", args.At(2), l.Len())
	}
	for i := from; i < to; i++ {
		out.AppendNamed(l.Name(i), l.At(i))
	}
	return out, nil
}

// (reverse list) reverses the order of list's elements, in place, each
// keeping its name, and gives the list.
func biReverse(t *task, f *frame, call *value.List) (any, error) {
	_, l, err := t.listCall(f, call, "reverse", 1, 1)
	if err != nil {
		return nil, err
	}
	for i, j := 0, l.Len()-1; i < j; i, j = i+1, j-1 {
		vi, vj, ni, nj := l.At(i), l.At(j), l.Name(i), l.Name(j)
		l.Set(i, vj)
		l.Set(j, vi)
		l.SetName(i, nj)
		l.SetName(j, ni)
	}
	return l, nil
}

// (clone x) gives a new list with the elements of the list x, names kept,
// sharing its sublists and functions (a shallow copy); (clone x true)
// copies the sublists and functions too, at every depth, one that x holds
// more than once being copied once and shared alike. A function x gives a
// new function of the same code, so that (=== fn (clone fn)) is false as
// in brain4it, where a function is a list. Any other x is given as it is.
func biClone(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	deep := args.Len() > 1 && truthy(args.At(1))
	c := cloner{deep: deep}
	switch x := args.At(0).(type) {
	case *value.List:
		return c.list(x), nil
	case *Function:
		return c.function(x), nil
	}
	return args.At(0), nil
}

// cloner copies lists, and their sublists and functions when deep, each
// once.
type cloner struct {
	deep  bool
	lists map[*value.List]*value.List
	fns   map[*Function]*Function
}

func (c *cloner) list(l *value.List) *value.List {
	if n, ok := c.lists[l]; ok {
		return n
	}
	if c.lists == nil {
		c.lists = map[*value.List]*value.List{}
	}
	n := &value.List{}
	c.lists[l] = n
	for name, v := range l.All() {
		if c.deep {
			switch x := v.(type) {
			case *value.List:
				v = c.list(x)
			case *Function:
				v = c.function(x)
			}
		}
		n.AppendNamed(name, v)
	}
	return n
}

// function copies fn: its code is never changed, so the copy shares it.
func (c *cloner) function(fn *Function) *Function {
	if n, ok := c.fns[fn]; ok {
		return n
	}
	if c.fns == nil {
		c.fns = map[*Function]*Function{}
	}
	n := new(Function)
	*n = *fn
	c.fns[fn] = n
	return n
}
