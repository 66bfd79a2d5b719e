package bpl

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/brain4it/kafkabpl"
)

// The list family: building, reading, changing and walking lists.

func init() {
	register(map[string]builtin{
		"for-each": biForEach,
		"list":     biList,
		"get":      biGet,
		"put":      biPut,
		"size":     biSize,
		"push":     biPush,
		"concat":   biConcat,
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
		return nil, t.errorf(f, "InvalidArgument", "for-each: want a list, got %s", describe(lv))
	}
	nameVar, valueVar, ok := loopVars(call.At(2))
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "for-each: want a variable name or (name value) after the list, got %s", describe(call.At(2)))
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
			f.locals[nameVar] = name
		}
		f.locals[valueVar] = l.At(i)
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
// named key, null when there is none; (get x) gives x.
func biGet(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	lv := args.At(0)
	if args.Len() == 1 {
		return lv, nil
	}
	if lv == nil {
		return nil, nil
	}
	l, ok := lv.(*kafkabpl.List)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "get: want a list, got %s", describe(lv))
	}
	i, name, err := t.key(f, "get", args.At(1))
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
// It gives the list.
func biPut(t *task, f *frame, call *kafkabpl.List) (any, error) {
	args, l, err := t.listCall(f, call, "put", 3, 3)
	if err != nil {
		return nil, err
	}
	i, name, err := t.key(f, "put", args.At(1))
	if err != nil {
		return nil, err
	}
	if name != "" {
		err = t.putName(f, "put", l, name, args.At(2))
	} else {
		err = t.putIndex(f, "put", l, i, args.At(2))
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
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	v, err := t.eval(f, call.At(1))
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
