package bpl

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/brain4it/kafkabpl/value"
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
func biForEach(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 2, -1); err != nil {
		return nil, err
	}
	if t.compiles() {
		c := compiler{src: f.src}
		if loop := c.forEach(call); loop != nil {
			return loop(t, f) // compiled as it starts: see compile.go
		}
	}
	lv, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	l, ok := lv.(*value.List)
	if !ok && lv != nil {
		return nil, t.errorf(f, "InvalidArgument", "%s: want a list, got %s", fname(call), value.Describe(lv))
	}
	nameVar, valueVar, ok := loopVars(call.At(2))
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "%s: want a variable name or (name value) after the list, got %s", fname(call), value.Describe(call.At(2)))
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
func loopVars(spec any) (key, elem string, ok bool) {
	isVar := func(v any) (string, bool) {
		r, ok := v.(value.Reference)
		return string(r), ok && pathOf(string(r)) == nil
	}
	if v, ok := isVar(spec); ok {
		return "", v, true
	}
	l, ok := spec.(*value.List)
	if !ok || l.Len() != 2 {
		return "", "", false
	}
	k, ok1 := isVar(l.At(0))
	v, ok2 := isVar(l.At(1))
	return k, v, ok1 && ok2
}

// (list a b "k" => c) gives a new list of its evaluated arguments, names
// kept.
func biList(t *task, f *frame, call *value.List) (any, error) {
	return t.evalArgs(f, call, 1)
}

// (get list key) gives the element at index key (from 0) or the first one
// named key, null when there is none; (get x) gives x. A key that is a
// list is a path of indexes and names, (get l (1 "a")) being
// (get (get l 1) "a"): null when a step finds no element or no list, the
// list itself for ().
func biGet(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	var buf argBuf
	args, err := t.evalValues(f, call, 1, buf[:])
	if err != nil {
		return nil, err
	}
	return getValues(t, f, call, args)
}

// getValues is get of the evaluated arguments args (one or two).
func getValues(t *task, f *frame, _ *value.List, args []any) (any, error) {
	lv := args[0]
	if len(args) == 1 {
		return lv, nil
	}
	if lv == nil {
		return nil, nil
	}
	l, ok := lv.(*value.List)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "get: want a list, got %s", value.Describe(lv))
	}
	if p, ok := args[1].(*value.List); ok {
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

// (put list key value) sets the element at index key (from 0) or the
// first one named key (appending one when there is none), and gives the
// value it had before (null for a new one), as brain4it's put does: (put
// (1 2 3) 0 9) is 1. An index past the end appends, with nulls between
// ((put (1 2) 4 3) makes (1 2 null null 3)), up to maxPad nulls. A key
// that is a list is a path, as in get: (put l (1 "a") v) puts into the
// list (get l (1)) gives, an InvalidArgument when that is not a list. A
// list may be put into itself, as in brain4it: (put r "me" r) prints as
// (<#1> ... "me" => <@1>).
func biPut(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 3, 3); err != nil {
		return nil, err
	}
	var buf argBuf
	args, err := t.evalValues(f, call, 1, buf[:])
	if err != nil {
		return nil, err
	}
	return putValues(t, f, call, args)
}

// putValues is put of the evaluated arguments args (three).
func putValues(t *task, f *frame, _ *value.List, args []any) (any, error) {
	l, ok := args[0].(*value.List)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "put: want a list, got %s", value.Describe(args[0]))
	}
	var i int
	var name string
	var err error
	if p, ok := args[1].(*value.List); ok {
		parent, last, err := t.pathParent(f, "put", l, p)
		if err != nil {
			return nil, err
		}
		l, i, name = parent, last.i, last.name
	} else if i, name, err = t.key(f, "put", args[1]); err != nil {
		return nil, err
	}
	var old any
	if name != "" {
		noteCycle(args[2], l)
		return l.Put(name, args[2]), nil
	} else {
		if i >= 0 && i < l.Len() {
			old = l.At(i)
		}
		err = t.putIndex(f, "put", l, i, args[2])
	}
	if err != nil {
		return nil, err
	}
	return old, nil
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
	return 0, "", t.errorf(f, "InvalidArgument", "%s: want an index or a name, got %s", fn, value.Describe(k))
}

// maxPad bounds the nulls put and set add before an index past the end of
// a list, so that a wrong index is an exception rather than a list that
// exhausts memory (brain4it adds any number).
const maxPad = 1 << 20

// putIndex sets element i of l; an i past the end appends v, after nulls
// up to i, as brain4it does.
func (t *task) putIndex(f *frame, fn string, l *value.List, i int, v any) error {
	if i < 0 || i-l.Len() > maxPad {
		return t.errorf(f, "InvalidArgument", "%s: index out of range: the list has %s (at most %d nulls are added before an index past its end)", fn, plural(l.Len(), "element"), maxPad)
	}
	noteCycle(v, l)
	for l.Len() < i {
		l.Append(nil)
	}
	if i == l.Len() {
		l.Append(v)
	} else {
		l.Set(i, v)
	}
	return nil
}

// putName sets the first element of l named name, or appends one.
func (t *task) putName(f *frame, fn string, l *value.List, name string, v any) error {
	noteCycle(v, l)
	l.Put(name, v)
	return nil
}

// (size x) gives the number of elements of a list, characters of a
// string or bytes of a byte array; null has size 0.
func biSize(t *task, f *frame, call *value.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	return sizeOf(t, f, v)
}

// sizeOf is size of its evaluated argument v, walked or compiled.
func sizeOf(t *task, f *frame, v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return int64(0), nil
	case *value.List:
		return int64(v.Len()), nil
	case string:
		return int64(utf8.RuneCountInString(v)), nil
	case []byte:
		return int64(len(v)), nil
	}
	return nil, t.errorf(f, "InvalidArgument", "size: want a list or a string, got %s", value.Describe(v))
}

// listCall checks a call's arity, evaluates its arguments and checks that
// the first is a list: how put and push start.
func (t *task) listCall(f *frame, call *value.List, name string, min, max int) (args, l *value.List, err error) {
	if err := t.arity(f, call, min, max); err != nil {
		return nil, nil, err
	}
	if args, err = t.evalArgs(f, call, 1); err != nil {
		return nil, nil, err
	}
	l, ok := args.At(0).(*value.List)
	if !ok {
		return nil, nil, t.errorf(f, "InvalidArgument", "%s: want a list, got %s", name, value.Describe(args.At(0)))
	}
	return args, l, nil
}

// (push list a "k" => b) appends its other arguments to list, names kept,
// and gives the list.
func biPush(t *task, f *frame, call *value.List) (any, error) {
	args, l, err := t.listCall(f, call, "push", 1, -1)
	if err != nil {
		return nil, err
	}
	for i := 1; i < args.Len(); i++ {
		noteCycle(args.At(i), l)
		l.AppendNamed(args.Name(i), args.At(i))
	}
	return l, nil
}

// (concat a b ...) joins lists into a new list (names kept; null adds
// nothing) when the first argument is a list, else joins the text of its
// arguments (see string) into a string.
func biConcat(t *task, f *frame, call *value.List) (any, error) {
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	return concatValues(t, f, call, args.Values())
}

// concatValues is concat of the evaluated arguments vs, which it does
// not keep (compiled, vs is the task's stack).
func concatValues(t *task, f *frame, _ *value.List, vs []any) (any, error) {
	if len(vs) == 0 {
		return "", nil
	}
	if _, ok := vs[0].(*value.List); ok {
		n := 0
		for i, v := range vs {
			l, ok := v.(*value.List)
			if !ok && v != nil {
				return nil, t.errorf(f, "InvalidArgument", "concat: argument %d is %s; joining lists, want a list", i+1, value.Describe(v))
			}
			if n += l.Len(); n > maxConcatElems {
				return nil, t.errorf(f, "InvalidArgument", "concat: result longer than %d elements", maxConcatElems)
			}
		}
		out := &value.List{}
		for _, v := range vs {
			if l, ok := v.(*value.List); ok {
				for name, e := range l.All() {
					out.AppendNamed(name, e)
				}
			}
		}
		return out, nil
	}
	// Strings alone, the usual case (a key or a message built of parts),
	// are joined in one allocation of the result's size.
	n := 0
	for _, v := range vs {
		s, ok := v.(string)
		if !ok {
			n = -1
			break
		}
		n += len(s)
	}
	if n > maxConcatBytes {
		return nil, t.errorf(f, "InvalidArgument", "concat: result longer than %d bytes", maxConcatBytes)
	}
	var b strings.Builder
	if n >= 0 {
		b.Grow(n)
	}
	for _, v := range vs {
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
func (t *task) pathSteps(f *frame, fn string, path *value.List) ([]listStep, error) {
	steps := make([]listStep, path.Len())
	for j, v := range path.Values() {
		i, name, err := t.key(f, fn, v)
		if err != nil {
			return nil, t.errorf(f, "InvalidArgument", "%s: path element %d is %s, want an index or a name", fn, j+1, value.Describe(v))
		}
		steps[j] = listStep{i, name}
	}
	return steps, nil
}

// stepGet gives the element of l a step names, or null.
func stepGet(l *value.List, s listStep) any {
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
		l, ok := v.(*value.List)
		if !ok {
			return nil
		}
		v = stepGet(l, s)
	}
	return v
}

// pathParent reads a path for put and remove: the list all but its last
// step lead to, and that last step.
func (t *task) pathParent(f *frame, fn string, l, path *value.List) (*value.List, listStep, error) {
	steps, err := t.pathSteps(f, fn, path)
	if err != nil {
		return nil, listStep{}, err
	}
	if len(steps) == 0 {
		return nil, listStep{}, t.errorf(f, "InvalidArgument", "%s: the path is empty", fn)
	}
	v := walkSteps(l, steps[:len(steps)-1])
	parent, ok := v.(*value.List)
	if !ok {
		return nil, listStep{}, t.errorf(f, "InvalidArgument", "%s: the path leads to %s, not a list", fn, value.Describe(v))
	}
	return parent, steps[len(steps)-1], nil
}

// listArg checks that v, fn's list argument, is a list; when nullOK, null
// passes as an empty list.
func (t *task) listArg(f *frame, fn string, v any, nullOK bool) (*value.List, error) {
	switch l := v.(type) {
	case *value.List:
		return l, nil
	case nil:
		if nullOK {
			return &value.List{}, nil
		}
	}
	return nil, t.errorf(f, "InvalidArgument", "%s: want a list, got %s", fn, value.Describe(v))
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
			return 0, t.errorf(f, "InvalidArgument", "%s: %s is %s, want an integer", fn, what, value.Describe(v))
		}
		x = max(min(n, math.MaxInt32), -math.MaxInt32)
	default:
		return 0, t.errorf(f, "InvalidArgument", "%s: %s is %s, want an index", fn, what, value.Describe(v))
	}
	return int(x), nil
}

// outOfRange is the exception for index v of a list of n elements.
func (t *task) outOfRange(f *frame, fn string, v any, n int) error {
	return t.errorf(f, "InvalidArgument", "%s: index %s is out of range: the list has %s", fn, value.Describe(v), plural(n, "element"))
}

// (first list) gives the first element of list, null when it is empty or
// null.
func biFirst(t *task, f *frame, call *value.List) (any, error) {
	return t.endElement(f, call, "first", func(n int) int { return 0 })
}

// (last list) gives the last element of list, null when it is empty or
// null.
func biLast(t *task, f *frame, call *value.List) (any, error) {
	return t.endElement(f, call, "last", func(n int) int { return n - 1 })
}

// endElement is first and last: the element at(size) of a list argument.
func (t *task) endElement(f *frame, call *value.List, fn string, at func(n int) int) (any, error) {
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
func biPop(t *task, f *frame, call *value.List) (any, error) {
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
func biInsert(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 2, 3); err != nil {
		return nil, err
	}
	lv, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	l, ok := lv.(*value.List)
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
	noteCycle(v, l)
	l.Insert(i, args.Name(at), v)
	return l, nil
}

// (remove list key) removes the element at index key, or the first one
// named key, and gives it: null when no element has that name, an
// InvalidArgument when the index is out of range. A key that is a list is
// a path, as in put. (remove list) removes every element and gives null.
func biRemove(t *task, f *frame, call *value.List) (any, error) {
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
	if p, ok := spec.(*value.List); ok {
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
func biClear(t *task, f *frame, call *value.List) (any, error) {
	_, l, err := t.listCall(f, call, "clear", 1, 1)
	if err != nil {
		return nil, err
	}
	l.Clear()
	return nil, nil
}
