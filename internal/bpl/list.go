package bpl

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/brain4it/kafkabpl"
)

// The list family: building, reading, changing and walking lists.
//
// As in brain4it, indexes count from 0 and there are no negative indexes;
// an index may be an integer or an integral float. Functions that only read
// a list take null as the empty list; those that change one in place want a
// list. Unlike brain4it's, a list may hold several elements of one name:
// lookup by name finds the first.

func init() {
	register(map[string]builtin{
		"for-each":   biForEach,
		"foreach":    biForEach, // brain4it's old name
		"list":       biList,
		"get":        biGet,
		"put":        biPut,
		"size":       biSize,
		"push":       biPush,
		"concat":     biConcat,
		"first":      biFirst,
		"last":       biLast,
		"pop":        biPop,
		"insert":     biInsert,
		"remove":     biRemove,
		"clear":      biClear,
		"locate":     biLocate,
		"indexof":    biLocate, // brain4it's old name (there, of a missing index-of)
		"name-index": biNameIndex,
		"find":       biFind,
		"append":     biAppend,
		"apply":      biApply,
		"sort":       biSort,
		"sublist":    biSublist,
		"names":      biNames,
		"match":      biMatch,
		"merge":      biMerge,
		"reverse":    biReverse,
		"empty":      biEmpty,
		"has":        biHas,
		"get-name":   biGetName,
		"getname":    biGetName, // brain4it's old name
		"put-name":   biPutName,
		"putname":    biPutName, // brain4it's old name
		"clone":      biClone,
	})
}

// Limits on what concat builds, so that a doubling loop fails with an
// exception instead of exhausting memory.
const (
	maxConcatBytes = 1 << 24
	maxConcatElems = 1 << 20
)

// (for-each list x body...) evaluates body with the local x set to each
// element of list in turn; (for-each list (k x) body...) also sets k to
// the element's name (null when unnamed). It gives body's last value.
// Elements pushed while it runs are not visited; a null list is empty.
// foreach is an old name of it.
func biForEach(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 2, -1); err != nil {
		return nil, err
	}
	lv, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	l, ok := lv.(*kafkabpl.List)
	if !ok && lv != nil {
		return nil, t.errorf(f, "InvalidArgument", "%s: want a list, got %s", fname(call), describe(lv))
	}
	nameVar, valueVar, ok := loopVars(call.At(2))
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "%s: want a variable name or (name value) after the list, got %s", fname(call), describe(call.At(2)))
	}
	var v any
	for i, n := 0, l.Len(); i < n && i < l.Len(); i++ {
		if err := t.checkCtx(f); err != nil {
			return nil, err
		}
		if nameVar != "" {
			var name any
			if s := l.Name(i); s != "" {
				name = s
			}
			f.locals.set(nameVar, name)
		}
		f.locals.set(valueVar, l.At(i))
		if v, err = t.evalBody(f, call, 3); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// loopVars reads for-each's variable: x, or (k x).
func loopVars(spec any) (name, value string, ok bool) {
	isVar := func(v any) (string, bool) {
		r, ok := v.(kafkabpl.Reference)
		return string(r), ok && pathOf(string(r)) == nil
	}
	if v, ok := isVar(spec); ok {
		return "", v, true
	}
	l, ok := spec.(*kafkabpl.List)
	if !ok || l.Len() != 2 {
		return "", "", false
	}
	k, ok1 := isVar(l.At(0))
	v, ok2 := isVar(l.At(1))
	return k, v, ok1 && ok2
}

// (list a b "k" => c) gives a new list of its evaluated arguments, names
// kept.
func biList(t *task, f *frame, call *kafkabpl.List) (any, error) {
	return t.evalArgs(f, call, 1)
}

// (get list key) gives the element at index key (from 0) or the first one
// named key, null when there is none; (get x) gives x. A key that is a
// list is a path of indexes and names, (get l (1 "a")) being
// (get (get l 1) "a"): null when a step finds no element or no list, the
// list itself for ().
func biGet(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	var buf argBuf
	args, err := t.evalValues(f, call, 1, buf[:])
	if err != nil {
		return nil, err
	}
	lv := args[0]
	if len(args) == 1 {
		return lv, nil
	}
	if lv == nil {
		return nil, nil
	}
	l, ok := lv.(*kafkabpl.List)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "get: want a list, got %s", describe(lv))
	}
	if p, ok := args[1].(*kafkabpl.List); ok {
		steps, err := t.pathSteps(f, "get", p)
		if err != nil {
			return nil, err
		}
		return walkSteps(l, steps), nil
	}
	i, name, err := t.key(f, "get", args[1])
	switch {
	case err != nil:
		return nil, err
	case name != "":
		v, _ := l.Get(name)
		return v, nil
	case i >= 0 && i < l.Len():
		return l.At(i), nil
	}
	return nil, nil
}

// (put list key value) sets the element at index key (from 0; the size
// appends) or the first one named key (appending one when there is none).
// A key that is a list is a path, as in get: (put l (1 "a") v) puts into
// the list (get l (1)) gives, an InvalidArgument when that is not a list.
// It gives the list.
func biPut(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 3, 3); err != nil {
		return nil, err
	}
	var buf argBuf
	args, err := t.evalValues(f, call, 1, buf[:])
	if err != nil {
		return nil, err
	}
	l, ok := args[0].(*kafkabpl.List)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "put: want a list, got %s", describe(args[0]))
	}
	if p, ok := args[1].(*kafkabpl.List); ok {
		parent, last, err := t.pathParent(f, "put", l, p)
		if err != nil {
			return nil, err
		}
		if last.name != "" {
			err = t.putName(f, "put", parent, last.name, args[2])
		} else {
			err = t.putIndex(f, "put", parent, last.i, args[2])
		}
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	i, name, err := t.key(f, "put", args[1])
	if err != nil {
		return nil, err
	}
	if name != "" {
		err = t.putName(f, "put", l, name, args[2])
	} else {
		err = t.putIndex(f, "put", l, i, args[2])
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// key reads an index (an integral number) or a name (a string).
func (t *task) key(f *frame, fn string, k any) (int, string, error) {
	switch k := k.(type) {
	case int64:
		if k < 0 || k > math.MaxInt32 {
			return -1, "", nil // out of range for any list
		}
		return int(k), "", nil
	case float64:
		if k == math.Trunc(k) {
			if k < 0 || k > math.MaxInt32 {
				return -1, "", nil
			}
			return int(k), "", nil
		}
	case string:
		if k != "" {
			return 0, k, nil
		}
	}
	return 0, "", t.errorf(f, "InvalidArgument", "%s: want an index or a name, got %s", fn, describe(k))
}

// putIndex sets element i of l, or appends when i is its size.
func (t *task) putIndex(f *frame, fn string, l *kafkabpl.List, i int, v any) error {
	if i < 0 || i > l.Len() {
		return t.errorf(f, "InvalidArgument", "%s: index out of range: the list has %s", fn, plural(l.Len(), "element"))
	}
	if contains(v, l) {
		return t.errorf(f, "InvalidArgument", "%s: a list cannot contain itself", fn)
	}
	if i == l.Len() {
		l.Append(v)
	} else {
		l.Set(i, v)
	}
	return nil
}

// putName sets the first element of l named name, or appends one.
func (t *task) putName(f *frame, fn string, l *kafkabpl.List, name string, v any) error {
	if contains(v, l) {
		return t.errorf(f, "InvalidArgument", "%s: a list cannot contain itself", fn)
	}
	l.Put(name, v)
	return nil
}

// (size x) gives the number of elements of a list, characters of a
// string or bytes of a byte array; null has size 0.
func biSize(t *task, f *frame, call *kafkabpl.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case nil:
		return int64(0), nil
	case *kafkabpl.List:
		return int64(v.Len()), nil
	case string:
		return int64(utf8.RuneCountInString(v)), nil
	case []byte:
		return int64(len(v)), nil
	}
	return nil, t.errorf(f, "InvalidArgument", "size: want a list or a string, got %s", describe(v))
}

// listCall checks a call's arity, evaluates its arguments and checks that
// the first is a list: how put and push start.
func (t *task) listCall(f *frame, call *kafkabpl.List, name string, min, max int) (args, l *kafkabpl.List, err error) {
	if err := t.arity(f, call, min, max); err != nil {
		return nil, nil, err
	}
	if args, err = t.evalArgs(f, call, 1); err != nil {
		return nil, nil, err
	}
	l, ok := args.At(0).(*kafkabpl.List)
	if !ok {
		return nil, nil, t.errorf(f, "InvalidArgument", "%s: want a list, got %s", name, describe(args.At(0)))
	}
	return args, l, nil
}

// (push list a "k" => b) appends its other arguments to list, names kept,
// and gives the list.
func biPush(t *task, f *frame, call *kafkabpl.List) (any, error) {
	args, l, err := t.listCall(f, call, "push", 1, -1)
	if err != nil {
		return nil, err
	}
	for i := 1; i < args.Len(); i++ {
		if contains(args.At(i), l) {
			return nil, t.errorf(f, "InvalidArgument", "push: a list cannot contain itself")
		}
		l.AppendNamed(args.Name(i), args.At(i))
	}
	return l, nil
}

// (concat a b ...) joins lists into a new list (names kept; null adds
// nothing) when the first argument is a list, else joins the text of its
// arguments (see string) into a string.
func biConcat(t *task, f *frame, call *kafkabpl.List) (any, error) {
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	if args.Len() == 0 {
		return "", nil
	}
	if _, ok := args.At(0).(*kafkabpl.List); ok {
		n := 0
		for i, v := range args.Values() {
			l, ok := v.(*kafkabpl.List)
			if !ok && v != nil {
				return nil, t.errorf(f, "InvalidArgument", "concat: argument %d is %s; joining lists, want a list", i+1, describe(v))
			}
			if n += l.Len(); n > maxConcatElems {
				return nil, t.errorf(f, "InvalidArgument", "concat: result longer than %d elements", maxConcatElems)
			}
		}
		out := &kafkabpl.List{}
		for _, v := range args.Values() {
			if l, ok := v.(*kafkabpl.List); ok {
				for name, e := range l.All() {
					out.AppendNamed(name, e)
				}
			}
		}
		return out, nil
	}
	var b strings.Builder
	for _, v := range args.Values() {
		s, err := t.text(f, "concat", v)
		if err != nil {
			return nil, err
		}
		if b.Len()+len(s) > maxConcatBytes {
			return nil, t.errorf(f, "InvalidArgument", "concat: result longer than %d bytes", maxConcatBytes)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// listStep is one step of a path: an index (name "") or a name.
type listStep struct {
	i    int
	name string
}

// pathSteps reads a path list, whose elements must be indexes or names.
func (t *task) pathSteps(f *frame, fn string, path *kafkabpl.List) ([]listStep, error) {
	steps := make([]listStep, path.Len())
	for j, v := range path.Values() {
		i, name, err := t.key(f, fn, v)
		if err != nil {
			return nil, t.errorf(f, "InvalidArgument", "%s: path element %d is %s, want an index or a name", fn, j+1, describe(v))
		}
		steps[j] = listStep{i, name}
	}
	return steps, nil
}

// stepGet gives the element of l a step names, or null.
func stepGet(l *kafkabpl.List, s listStep) any {
	if s.name != "" {
		v, _ := l.Get(s.name)
		return v
	}
	if s.i >= 0 && s.i < l.Len() {
		return l.At(s.i)
	}
	return nil
}

// walkSteps follows steps from v: null when a step finds no element or
// no list to look into.
func walkSteps(v any, steps []listStep) any {
	for _, s := range steps {
		l, ok := v.(*kafkabpl.List)
		if !ok {
			return nil
		}
		v = stepGet(l, s)
	}
	return v
}

// pathParent reads a path for put and remove: the list all but its last
// step lead to, and that last step.
func (t *task) pathParent(f *frame, fn string, l, path *kafkabpl.List) (*kafkabpl.List, listStep, error) {
	steps, err := t.pathSteps(f, fn, path)
	if err != nil {
		return nil, listStep{}, err
	}
	if len(steps) == 0 {
		return nil, listStep{}, t.errorf(f, "InvalidArgument", "%s: the path is empty", fn)
	}
	v := walkSteps(l, steps[:len(steps)-1])
	parent, ok := v.(*kafkabpl.List)
	if !ok {
		return nil, listStep{}, t.errorf(f, "InvalidArgument", "%s: the path leads to %s, not a list", fn, describe(v))
	}
	return parent, steps[len(steps)-1], nil
}

// listArg checks that v, fn's list argument, is a list; when nullOK, null
// passes as an empty list.
func (t *task) listArg(f *frame, fn string, v any, nullOK bool) (*kafkabpl.List, error) {
	switch l := v.(type) {
	case *kafkabpl.List:
		return l, nil
	case nil:
		if nullOK {
			return &kafkabpl.List{}, nil
		}
	}
	return nil, t.errorf(f, "InvalidArgument", "%s: want a list, got %s", fn, describe(v))
}

// indexArg reads fn's argument what as an index: an integral number,
// kept within ±MaxInt32 so that any out-of-range value stays out of range.
func (t *task) indexArg(f *frame, fn, what string, v any) (int, error) {
	var x float64
	switch n := v.(type) {
	case int64:
		x = float64(max(min(n, math.MaxInt32), -math.MaxInt32))
	case float64:
		if n != math.Trunc(n) {
			return 0, t.errorf(f, "InvalidArgument", "%s: %s is %s, want an integer", fn, what, describe(v))
		}
		x = max(min(n, math.MaxInt32), -math.MaxInt32)
	default:
		return 0, t.errorf(f, "InvalidArgument", "%s: %s is %s, want an index", fn, what, describe(v))
	}
	return int(x), nil
}

// outOfRange is the exception for index v of a list of n elements.
func (t *task) outOfRange(f *frame, fn string, v any, n int) error {
	return t.errorf(f, "InvalidArgument", "%s: index %s is out of range: the list has %s", fn, describe(v), plural(n, "element"))
}

// (first list) gives the first element of list, null when it is empty or
// null.
func biFirst(t *task, f *frame, call *kafkabpl.List) (any, error) {
	return t.endElement(f, call, "first", func(n int) int { return 0 })
}

// (last list) gives the last element of list, null when it is empty or
// null.
func biLast(t *task, f *frame, call *kafkabpl.List) (any, error) {
	return t.endElement(f, call, "last", func(n int) int { return n - 1 })
}

// endElement is first and last: the element at(size) of a list argument.
func (t *task) endElement(f *frame, call *kafkabpl.List, fn string, at func(n int) int) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, fn, v, true)
	if err != nil || l.Len() == 0 {
		return nil, err
	}
	return l.At(at(l.Len())), nil
}

// (pop list) removes the last element of list and gives it; null when the
// list is empty.
func biPop(t *task, f *frame, call *kafkabpl.List) (any, error) {
	_, l, err := t.listCall(f, call, "pop", 1, 1)
	if err != nil || l.Len() == 0 {
		return nil, err
	}
	v := l.At(l.Len() - 1)
	l.Remove(l.Len() - 1)
	return v, nil
}

// (insert list value) puts value first in list; (insert list index value)
// puts it at index (0 to the size of the list, which appends), moving the
// later elements up. A named value ("k" => v) is inserted with its name.
// It gives the list, or null (changing nothing) when list is not a list.
func biInsert(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 2, 3); err != nil {
		return nil, err
	}
	lv, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	l, ok := lv.(*kafkabpl.List)
	if !ok {
		return nil, nil
	}
	args, err := t.evalArgs(f, call, 2)
	if err != nil {
		return nil, err
	}
	i, at := 0, args.Len()-1
	if args.Len() == 2 {
		if i, err = t.indexArg(f, "insert", "the index", args.At(0)); err != nil {
			return nil, err
		}
		if i < 0 || i > l.Len() {
			return nil, t.outOfRange(f, "insert", args.At(0), l.Len())
		}
	}
	v := args.At(at)
	if contains(v, l) {
		return nil, t.errorf(f, "InvalidArgument", "insert: a list cannot contain itself")
	}
	l.Insert(i, args.Name(at), v)
	return l, nil
}

// (remove list key) removes the element at index key, or the first one
// named key, and gives it: null when no element has that name, an
// InvalidArgument when the index is out of range. A key that is a list is
// a path, as in put. (remove list) removes every element and gives null.
func biRemove(t *task, f *frame, call *kafkabpl.List) (any, error) {
	args, l, err := t.listCall(f, call, "remove", 1, 2)
	if err != nil {
		return nil, err
	}
	if args.Len() == 1 {
		l.Clear()
		return nil, nil
	}
	spec := args.At(1)
	step := listStep{}
	if p, ok := spec.(*kafkabpl.List); ok {
		if l, step, err = t.pathParent(f, "remove", l, p); err != nil {
			return nil, err
		}
	} else if step.i, step.name, err = t.key(f, "remove", spec); err != nil {
		return nil, err
	}
	i := step.i
	if step.name != "" {
		if i = l.Index(step.name); i < 0 {
			return nil, nil
		}
	} else if i < 0 || i >= l.Len() {
		return nil, t.outOfRange(f, "remove", spec, l.Len())
	}
	v := l.At(i)
	l.Remove(i)
	return v, nil
}

// (clear list) removes every element of list and gives null, as
// (remove list) does. (In brain4it, clear is an old name of delete, which
// deletes variables.)
func biClear(t *task, f *frame, call *kafkabpl.List) (any, error) {
	_, l, err := t.listCall(f, call, "clear", 1, 1)
	if err != nil {
		return nil, err
	}
	l.Clear()
	return nil, nil
}

// listVisitor is how apply, find and locate look at each element: with a
// local variable set to it while code is evaluated, or by calling a
// function value with it.
type listVisitor struct {
	name string
	code any
	fn   kafkabpl.Callable
}

// visitor reads the visitor of a call (fn list x code ...) or
// (fn list function ...) and gives it with the index of the next argument.
// A variable name followed by code is the first form, as in brain4it; a
// reference with nothing after it, or any other expression, must give a
// function value (an expression may also give a reference: the variable).
func (t *task) visitor(f *frame, call *kafkabpl.List, fn string) (listVisitor, int, error) {
	x := call.At(2)
	ref, isRef := x.(kafkabpl.Reference)
	if !isRef || call.Len() == 3 {
		v, err := t.eval(f, x)
		if err != nil {
			return listVisitor{}, 0, err
		}
		switch v := v.(type) {
		case kafkabpl.Callable:
			return listVisitor{fn: v}, 3, nil
		case kafkabpl.Reference:
			if !isRef {
				ref, isRef = v, true
			}
		}
		if !isRef || call.Len() == 3 {
			return listVisitor{}, 0, t.errorf(f, "InvalidArgument", "%s: want a variable name and code, or a function, after the list; got %s", fn, describe(v))
		}
	}
	if pathOf(string(ref)) != nil {
		return listVisitor{}, 0, t.errorf(f, "InvalidArgument", "%s: want a variable name, got the path %s", fn, short(string(ref)))
	}
	return listVisitor{name: string(ref), code: call.At(3)}, 4, nil
}

// visit gives what the visitor makes of element v.
func (t *task) visit(f *frame, lv listVisitor, v any) (any, error) {
	if lv.fn != nil {
		return t.apply(f, lv.fn, kafkabpl.NewList(v))
	}
	f.locals.set(lv.name, v)
	return t.eval(f, lv.code)
}

// eachElement calls do for each element list had when it started that it
// still has, stopping when do says so or fails, or when the run is
// cancelled.
func (t *task) eachElement(f *frame, l *kafkabpl.List, from int, do func(i int) (bool, error)) error {
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
func (t *task) visitCall(f *frame, call *kafkabpl.List, fn string, maxArgs int) (*kafkabpl.List, listVisitor, int, error) {
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
func biApply(t *task, f *frame, call *kafkabpl.List) (any, error) {
	l, lv, _, err := t.visitCall(f, call, "apply", 3)
	if err != nil {
		return nil, err
	}
	out := &kafkabpl.List{}
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
func biFind(t *task, f *frame, call *kafkabpl.List) (any, error) {
	l, lv, _, err := t.visitCall(f, call, "find", 3)
	if err != nil {
		return nil, err
	}
	out := &kafkabpl.List{}
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
func biLocate(t *task, f *frame, call *kafkabpl.List) (any, error) {
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
func biNameIndex(t *task, f *frame, call *kafkabpl.List) (any, error) {
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
	return nil, t.errorf(f, "InvalidArgument", "name-index: the name is %s, want a string", describe(args.At(1)))
}

// (names list) gives a new list of the names of list's named elements, in
// order; null is the empty list.
func biNames(t *task, f *frame, call *kafkabpl.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, "names", v, true)
	if err != nil {
		return nil, err
	}
	out := &kafkabpl.List{}
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
func biGetName(t *task, f *frame, call *kafkabpl.List) (any, error) {
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
func biPutName(t *task, f *frame, call *kafkabpl.List) (any, error) {
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
		return nil, t.errorf(f, "InvalidArgument", "%s: the name is %s, want a string", fn, describe(args.At(2)))
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
func biHas(t *task, f *frame, call *kafkabpl.List) (any, error) {
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
	case *kafkabpl.List:
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
	parent, ok := walkSteps(l, steps[:len(steps)-1]).(*kafkabpl.List)
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
func biEmpty(t *task, f *frame, call *kafkabpl.List) (any, error) {
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
func biAppend(t *task, f *frame, call *kafkabpl.List) (any, error) {
	args, l, err := t.listCall(f, call, "append", 2, -1)
	if err != nil {
		return nil, err
	}
	others := args.Values()[1:]
	for i, v := range others {
		o, ok := v.(*kafkabpl.List)
		if !ok && v != nil {
			return nil, t.errorf(f, "InvalidArgument", "append: argument %d is %s, want a list", i+2, describe(v))
		}
		if n := l.Len() + o.Len(); n > maxConcatElems {
			return nil, t.errorf(f, "InvalidArgument", "append: result longer than %d elements", maxConcatElems)
		}
		if o != l && contains(o, l) { // l's own elements never hold l
			return nil, t.errorf(f, "InvalidArgument", "append: a list cannot contain itself")
		}
	}
	for _, v := range others {
		o, _ := v.(*kafkabpl.List)
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
func biSublist(t *task, f *frame, call *kafkabpl.List) (any, error) {
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
	out := &kafkabpl.List{}
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
func biReverse(t *task, f *frame, call *kafkabpl.List) (any, error) {
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
// sharing its sublists (a shallow copy); (clone x true) copies the
// sublists too, at every depth, a sublist that x holds more than once
// being copied once and shared alike. Any other x (a function, whose code
// never changes, too) is given as it is.
func biClone(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	l, ok := args.At(0).(*kafkabpl.List)
	if !ok {
		return args.At(0), nil
	}
	deep := args.Len() > 1 && truthy(args.At(1))
	return cloneList(l, deep, map[*kafkabpl.List]*kafkabpl.List{}), nil
}

// cloneList copies l, and its sublists when deep, each once.
func cloneList(l *kafkabpl.List, deep bool, done map[*kafkabpl.List]*kafkabpl.List) *kafkabpl.List {
	if c, ok := done[l]; ok {
		return c
	}
	c := &kafkabpl.List{}
	done[l] = c
	for name, v := range l.All() {
		if sub, ok := v.(*kafkabpl.List); ok && deep {
			v = cloneList(sub, deep, done)
		}
		c.AppendNamed(name, v)
	}
	return c
}

// listItem is an element with its name, as sort moves them.
type listItem struct {
	name string
	v    any
}

// (sort list) gives a new list of list's elements in ascending order, each
// keeping its name: numbers by value, strings (and references) by their
// UTF-16 code units, as Java orders them; a NaN is above every number.
// Other values, or a mix of kinds, cannot be ordered: an InvalidArgument
// (unless the list has fewer than two elements). (sort list function)
// orders by function instead: called with two elements, it gives a
// negative number, 0 or a positive number when the first is to come
// before, with or after the second. The sort is stable; null is the empty
// list.
func biSort(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, "sort", args.At(0), true)
	if err != nil {
		return nil, err
	}
	cmp := func(a, b any) (int, error) {
		c, ok := listOrder(a, b)
		if !ok {
			return 0, t.errorf(f, "InvalidArgument", "sort: cannot compare %s with %s", describe(a), describe(b))
		}
		return c, nil
	}
	if args.Len() > 1 && args.At(1) != nil {
		fn, ok := args.At(1).(kafkabpl.Callable)
		if !ok {
			return nil, t.errorf(f, "InvalidArgument", "sort: the comparator is %s, want a function", describe(args.At(1)))
		}
		cmp = func(a, b any) (int, error) {
			r, err := t.apply(f, fn, kafkabpl.NewList(a, b))
			if err != nil {
				return 0, err
			}
			switch r := r.(type) {
			case int64:
				return cmpInt(r, 0), nil
			case float64:
				if r != r {
					return 0, nil
				}
				return cmpFloat(r, 0), nil
			}
			return 0, t.errorf(f, "InvalidArgument", "sort: the comparator gave %s, want a number", describe(r))
		}
	}
	items := make([]listItem, l.Len())
	for i := range items {
		items[i] = listItem{l.Name(i), l.At(i)}
	}
	if err := t.mergeSort(f, items, cmp); err != nil {
		return nil, err
	}
	out := &kafkabpl.List{}
	for _, it := range items {
		out.AppendNamed(it.name, it.v)
	}
	return out, nil
}

// mergeSort sorts items stably by cmp, stopping at cmp's first error or
// when the run is cancelled. It never fails on a comparator that
// contradicts itself: the order is then merely unspecified.
func (t *task) mergeSort(f *frame, items []listItem, cmp func(a, b any) (int, error)) error {
	buf := make([]listItem, len(items))
	var sortRange func(lo, hi int) error
	sortRange = func(lo, hi int) error {
		if hi-lo < 2 {
			return nil
		}
		mid := lo + (hi-lo)/2
		if err := sortRange(lo, mid); err != nil {
			return err
		}
		if err := sortRange(mid, hi); err != nil {
			return err
		}
		copy(buf[lo:hi], items[lo:hi])
		i, j, k := lo, mid, lo
		for ; i < mid && j < hi; k++ {
			if err := t.checkCtx(f); err != nil {
				return err
			}
			c, err := cmp(buf[i].v, buf[j].v)
			if err != nil {
				return err
			}
			if c > 0 { // only a strictly smaller right element goes first: stable
				items[k] = buf[j]
				j++
			} else {
				items[k] = buf[i]
				i++
			}
		}
		k += copy(items[k:], buf[i:mid])
		copy(items[k:], buf[j:hi])
		return nil
	}
	return sortRange(0, len(items))
}

// listOrder is sort's order: -1, 0 or 1; ok is false when a and b cannot
// be ordered.
func listOrder(a, b any) (int, bool) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmpInt(x, y), true
		case float64:
			return -cmpFloatInt(y, x), true
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return cmpFloat(x, y), true
		case int64:
			return cmpFloatInt(x, y), true
		}
	case string:
		if y, ok := b.(string); ok {
			return cmpUTF16(x, y), true
		}
	case kafkabpl.Reference:
		if y, ok := b.(kafkabpl.Reference); ok {
			return cmpUTF16(string(x), string(y)), true
		}
	}
	return 0, false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpFloat orders floats as Java's Double.compare does: -0.0 below 0.0,
// NaN above everything and equal to itself.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return cmpInt(b2i(math.Signbit(b)), b2i(math.Signbit(a)))
	case a != a && b != b:
		return 0
	case a != a:
		return 1
	}
	return -1
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// cmpFloatInt orders a float and an integer exactly (no rounding of the
// integer); NaN is above every integer.
func cmpFloatInt(x float64, y int64) int {
	switch {
	case x != x, x >= 1<<63:
		return 1
	case x < -(1 << 63):
		return -1
	}
	if c := cmpInt(int64(x), y); c != 0 { // int64(x) truncates toward 0
		return c
	}
	switch frac := x - math.Trunc(x); {
	case frac > 0:
		return 1
	case frac < 0:
		return -1
	}
	return 0
}

// cmpUTF16 compares strings by their UTF-16 code units, as Java's
// String.compareTo does: a character above U+FFFF (a surrogate pair) sorts
// below U+E000..U+FFFF.
func cmpUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ka, kb := ra, rb
			if ka > 0xFFFF && kb <= 0xFFFF {
				ka = 0xD800
			} else if kb > 0xFFFF && ka <= 0xFFFF {
				kb = 0xD800
			}
			return cmpInt(int64(ka), int64(kb))
		}
		a, b = a[na:], b[nb:]
	}
	return cmpInt(int64(len(a)), int64(len(b)))
}

// (match list pattern action) looks for pattern in list and in each of its
// sublists, at any depth, in order (the list itself first, each sublist
// before its own sublists). An element of pattern that is a reference
// ending in ? (x?) matches any one element, a list too; one ending in ...
// (x...) any run of elements, the longest first; a sublist of pattern
// matches a sublist whose elements match it; anything else matches an
// equal element (see =, names aside). A variable that appears twice must
// match equal values. For each match, action is evaluated with locals set:
// each variable to what it matched (a run as a list), match$ to the list
// that matched, match_parent$ and match_position$ to the list that holds it
// and its index there (null and -1 for list itself), and match_map$ to a
// list of the variables by name. The search stops when action gives true;
// without action, at the first match. match gives whether it stopped.
// Null is the empty list. Lists that action changes are searched as they
// are then.
func biMatch(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 2, 3); err != nil {
		return nil, err
	}
	lv, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	pv, err := t.eval(f, call.At(2))
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, "match", lv, true)
	if err != nil {
		return nil, err
	}
	p, ok := pv.(*kafkabpl.List)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "match: the pattern is %s, want a list", describe(pv))
	}
	m := &matcher{t: t, f: f, action: true}
	if call.Len() > 3 {
		m.action = call.At(3)
	}
	stop, err := m.try(l, nil, -1, p)
	type level struct {
		l *kafkabpl.List
		i int
	}
	stack := []level{{l, 0}}
	for !stop && err == nil && len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.i >= top.l.Len() {
			stack = stack[:len(stack)-1]
			continue
		}
		parent, i := top.l, top.i
		top.i++
		child, ok := parent.At(i).(*kafkabpl.List)
		if !ok {
			continue
		}
		if err = t.checkCtx(f); err == nil {
			stop, err = m.try(child, parent, i, p)
			stack = append(stack, level{child, 0})
		}
	}
	if err != nil {
		return nil, err
	}
	return stop, nil
}

// matcher is one run of match: its action and the variables bound so far.
type matcher struct {
	t      *task
	f      *frame
	action any
	binds  []matchBind
}

// matchBind is a bound variable: a single value, or the run from..to of
// seq.
type matchBind struct {
	name     string
	v        any
	seq      *kafkabpl.List
	from, to int
}

// value is what the variable matched; a run as a new list.
func (b matchBind) value() any {
	if b.seq == nil {
		return b.v
	}
	out := &kafkabpl.List{}
	for i := b.from; i < b.to && i < b.seq.Len(); i++ {
		out.AppendNamed(b.seq.Name(i), b.seq.At(i))
	}
	return out
}

func (m *matcher) bound(name string) (matchBind, bool) {
	for _, b := range m.binds {
		if b.name == name {
			return b, true
		}
	}
	return matchBind{}, false
}

// matchVar tells whether pattern element v is a variable: "?" for one
// element, "..." for a run.
func matchVar(v any) (name, kind string) {
	r, ok := v.(kafkabpl.Reference)
	switch {
	case !ok:
		return "", ""
	case strings.HasSuffix(string(r), "?"):
		return string(r), "?"
	case strings.HasSuffix(string(r), "..."):
		return string(r), "..."
	}
	return "", ""
}

// try matches pattern against the whole of l, running the action for each
// way it matches until one gives true.
func (m *matcher) try(l, parent *kafkabpl.List, pos int, pattern *kafkabpl.List) (bool, error) {
	return m.seq(l, 0, pattern, 0, func() (bool, error) {
		for _, b := range m.binds {
			m.f.locals.set(b.name, b.value())
		}
		vars := &kafkabpl.List{}
		for _, b := range m.binds {
			v, _ := m.f.locals.get(b.name)
			vars.AppendNamed(b.name, v)
		}
		m.f.locals.set("match$", l)
		if parent != nil {
			m.f.locals.set("match_parent$", parent)
		} else {
			m.f.locals.set("match_parent$", nil)
		}
		m.f.locals.set("match_position$", int64(pos))
		m.f.locals.set("match_map$", vars)
		v, err := m.t.eval(m.f, m.action)
		return err == nil && truthy(v), err
	})
}

// seq matches the elements of l from li on against those of p from pi on,
// and when all match calls k, which goes on with the rest of the lists
// that hold them (or runs the action). It gives true when the search is to
// stop. Variables it binds are unbound when it returns.
func (m *matcher) seq(l *kafkabpl.List, li int, p *kafkabpl.List, pi int, k func() (bool, error)) (bool, error) {
	mark := len(m.binds)
	defer func() { m.binds = m.binds[:mark] }()
	for ; pi < p.Len(); pi, li = pi+1, li+1 {
		if err := m.t.checkCtx(m.f); err != nil {
			return false, err
		}
		pe := p.At(pi)
		name, kind := matchVar(pe)
		if kind == "..." {
			return m.run(l, li, p, pi, name, k)
		}
		if li >= l.Len() {
			return false, nil
		}
		le := l.At(li)
		if kind == "?" {
			if b, ok := m.bound(name); ok {
				if !equal(le, b.value(), false, nil) {
					return false, nil
				}
			} else {
				m.binds = append(m.binds, matchBind{name: name, v: le})
			}
			continue
		}
		ll, lok := le.(*kafkabpl.List)
		pl, pok := pe.(*kafkabpl.List)
		if lok && pok {
			return m.seq(ll, 0, pl, 0, func() (bool, error) {
				return m.seq(l, li+1, p, pi+1, k)
			})
		}
		if !equal(le, pe, false, nil) {
			return false, nil
		}
	}
	if li < l.Len() {
		return false, nil
	}
	return k()
}

// run matches the variable x... at p[pi] against a run of l from li: the
// run it is bound to, or else each run in turn, the longest first.
func (m *matcher) run(l *kafkabpl.List, li int, p *kafkabpl.List, pi int, name string, k func() (bool, error)) (bool, error) {
	if b, ok := m.bound(name); ok {
		want, _ := b.value().(*kafkabpl.List)
		n := want.Len()
		if li+n > l.Len() {
			return false, nil
		}
		for i := range n {
			if !equal(l.At(li+i), want.At(i), false, nil) {
				return false, nil
			}
		}
		return m.seq(l, li+n, p, pi+1, k)
	}
	for end := l.Len(); end >= li; end-- {
		if err := m.t.checkCtx(m.f); err != nil {
			return false, err
		}
		if end = min(end, l.Len()); end < li { // the action shortened l
			break
		}
		m.binds = append(m.binds, matchBind{name: name, seq: l, from: li, to: end})
		stop, err := m.seq(l, end, p, pi+1, k)
		m.binds = m.binds[:len(m.binds)-1]
		if stop || err != nil {
			return stop, err
		}
	}
	return false, nil
}

// (merge list variables) gives a copy of list, at every depth, in which
// each reference that names an element of the list variables is replaced by
// that element's value; an unnamed reference ending in ... whose value is
// a list is replaced by its elements (a named one of those replaces the
// element of that name, as append does). (merge x variables) gives the
// value of the reference x, or x when it names none; any other value as it
// is. Null or no variables leave the references as they are.
func biMerge(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	vars := &kafkabpl.List{}
	if args.Len() > 1 && args.At(1) != nil {
		if vars, err = t.listArg(f, "merge", args.At(1), false); err != nil {
			return nil, err
		}
	}
	switch x := args.At(0).(type) {
	case kafkabpl.Reference:
		if v, ok := vars.Get(string(x)); ok {
			return v, nil
		}
	case *kafkabpl.List:
		out := &kafkabpl.List{}
		budget := maxConcatElems
		if err := t.mergeInto(f, x, out, vars, &budget); err != nil {
			return nil, err
		}
		return out, nil
	}
	return args.At(0), nil
}

// mergeInto adds the merge of src to dst; budget is how many more elements
// the result may have.
func (t *task) mergeInto(f *frame, src, dst, vars *kafkabpl.List, budget *int) error {
	if err := t.checkCtx(f); err != nil {
		return err
	}
	add := func(n int) error {
		if *budget -= n; *budget < 0 {
			return t.errorf(f, "InvalidArgument", "merge: result longer than %d elements", maxConcatElems)
		}
		return nil
	}
	for name, v := range src.All() {
		splice := false
		switch x := v.(type) {
		case kafkabpl.Reference:
			if val, ok := vars.Get(string(x)); ok {
				v = val
				splice = strings.HasSuffix(string(x), "...")
			}
		case *kafkabpl.List:
			sub := &kafkabpl.List{}
			if err := t.mergeInto(f, x, sub, vars, budget); err != nil {
				return err
			}
			v = sub
		}
		if run, ok := v.(*kafkabpl.List); ok && splice && name == "" {
			if err := add(run.Len()); err != nil {
				return err
			}
			for n, e := range run.All() {
				if n != "" {
					dst.Put(n, e)
				} else {
					dst.Append(e)
				}
			}
			continue
		}
		if err := add(1); err != nil {
			return err
		}
		dst.AppendNamed(name, v)
	}
	return nil
}
