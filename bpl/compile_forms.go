package bpl

import (
	"strings"
	"unicode/utf8"

	"github.com/brain4it/kafkabpl/value"
)

// The special forms compiled with their arguments: each does what its
// builtin does with the call (see base.go, number.go, function.go). A
// call whose shape the builtin refuses (too few arguments, a set of no
// name) is left to the builtin, which raises the exception.

// special compiles the body of a call of the builtin name that has a form
// of its own here, or returns nil.
func (c *compiler) special(l *value.List, name string) code {
	n := l.Len() - 1 // arguments
	switch name {
	case "do":
		return c.body(c.exprs(l, 1))
	case "if":
		if n < 2 || n > 3 {
			return nil
		}
		cond, then := c.expr(l.At(1)), c.expr(l.At(2))
		var els code
		if n == 3 {
			els = c.expr(l.At(3))
		}
		return func(t *task, f *frame) (any, error) {
			v, err := cond(t, f)
			switch {
			case err != nil:
				return nil, err
			case truthy(v):
				return then(t, f)
			case els != nil:
				return els(t, f)
			}
			return nil, nil
		}
	case "when":
		if n < 1 {
			return nil
		}
		cond, body := c.expr(l.At(1)), c.body(c.exprs(l, 2))
		return func(t *task, f *frame) (any, error) {
			v, err := cond(t, f)
			if err != nil {
				return nil, err
			}
			if !truthy(v) {
				return false, nil
			}
			if _, err := body(t, f); err != nil {
				return nil, err
			}
			return true, nil
		}
	case "while":
		if n < 1 {
			return nil
		}
		return c.while(l)
	case "set":
		return c.set(l)
	case "local":
		return c.local(l)
	case "and", "or":
		args, and := c.exprs(l, 1), name == "and"
		return func(t *task, f *frame) (any, error) {
			for _, a := range args {
				v, err := a(t, f)
				if err != nil {
					return false, err
				}
				if truthy(v) != and {
					return !and, nil
				}
			}
			return and, nil
		}
	case "not":
		if n != 1 {
			return nil
		}
		x := c.expr(l.At(1))
		return func(t *task, f *frame) (any, error) {
			v, err := x(t, f)
			if err != nil {
				return nil, err
			}
			return !truthy(v), nil
		}
	case "string":
		if n != 1 || l.Name(1) != "" {
			return nil
		}
		x := c.expr(l.At(1))
		return func(t *task, f *frame) (any, error) {
			v, err := x(t, f)
			if err != nil {
				return nil, err
			}
			return t.stringOf(f, v, nil)
		}
	case "length", "upcase", "downcase":
		if n != 1 {
			return nil
		}
		x, op := c.expr(l.At(1)), oneStringOps[name]
		return func(t *task, f *frame) (any, error) {
			v, err := x(t, f)
			if err != nil {
				return nil, err
			}
			s, ok := v.(string)
			if !ok {
				return nil, t.errorf(f, "InvalidArgument", "%s: argument %d is %s, want a string", fname(l), 1, value.Describe(v))
			}
			return op(s), nil
		}
	case "size":
		if n != 1 {
			return nil
		}
		x := c.expr(l.At(1))
		return func(t *task, f *frame) (any, error) {
			v, err := x(t, f)
			if err != nil {
				return nil, err
			}
			return sizeOf(t, f, v)
		}
	case "for-each", "foreach":
		if n < 2 {
			return nil
		}
		return c.forEach(l)
	case "function":
		if n < 1 {
			return nil
		}
		shared := &fnBody{} // one compilation for every value this call makes
		return func(t *task, f *frame) (any, error) {
			v, err := biFunction(t, f, l)
			if fn, ok := v.(*Function); ok {
				fn.body = shared
			}
			return v, err
		}
	}
	return nil
}

// oneStringOps are what the builtins of one string that are compiled do
// with it, after oneString.
var oneStringOps = map[string]func(s string) any{
	"length":   func(s string) any { return int64(utf8.RuneCountInString(s)) },
	"upcase":   func(s string) any { return strings.ToUpper(s) },
	"downcase": func(s string) any { return strings.ToLower(s) },
}

// body compiles a sequence: it gives the last value (null when there is
// none).
func (c *compiler) body(cs []code) code {
	switch len(cs) {
	case 0:
		return func(*task, *frame) (any, error) { return nil, nil }
	case 1:
		return cs[0]
	}
	return func(t *task, f *frame) (any, error) {
		var v any
		for _, x := range cs {
			var err error
			if v, err = x(t, f); err != nil {
				return nil, err
			}
		}
		return v, nil
	}
}

// while compiles (while cond body...).
func (c *compiler) while(l *value.List) code {
	cond, body := c.expr(l.At(1)), c.body(c.exprs(l, 2))
	return func(t *task, f *frame) (any, error) {
		var v any
		for {
			if err := t.checkCtx(f); err != nil {
				return nil, err
			}
			ok, err := cond(t, f)
			if err != nil {
				return nil, err
			}
			if !truthy(ok) {
				return v, nil
			}
			if v, err = body(t, f); err != nil {
				return nil, err
			}
		}
	}
}

// set compiles (set name value) for a name written as a reference.
func (c *compiler) set(l *value.List) code {
	if l.Len() != 3 {
		return nil
	}
	r, ok := l.At(1).(value.Reference)
	if !ok || r == "" {
		return nil
	}
	name, x := c.intern(string(r)), c.expr(l.At(2))
	if pathOf(name) != nil {
		return func(t *task, f *frame) (any, error) {
			v, err := x(t, f)
			if err != nil {
				return nil, err
			}
			if err := t.set(f, name, v); err != nil {
				return nil, err
			}
			return v, nil
		}
	}
	gc := new(globalCache)
	return func(t *task, f *frame) (any, error) {
		v, err := x(t, f)
		if err != nil {
			return nil, err
		}
		if !f.locals.setIfSet(name, v) {
			t.in.setCachedGlobal(name, v, gc)
		}
		return v, nil
	}
}

// local compiles (local a b "c" => value) whose unnamed arguments are all
// names of variables.
func (c *compiler) local(l *value.List) code {
	type decl struct {
		name string
		x    code // nil: null
	}
	var ds []decl
	for i := 1; i < l.Len(); i++ {
		if name := l.Name(i); name != "" {
			ds = append(ds, decl{c.intern(name), c.expr(l.At(i))})
			continue
		}
		r, ok := l.At(i).(value.Reference)
		if !ok || pathOf(string(r)) != nil {
			return nil
		}
		ds = append(ds, decl{name: c.intern(string(r))})
	}
	return func(t *task, f *frame) (any, error) {
		for _, d := range ds {
			var v any
			if d.x != nil {
				var err error
				if v, err = d.x(t, f); err != nil {
					return nil, err
				}
			}
			f.locals.set(d.name, v)
		}
		return nil, nil
	}
}

// forEach compiles (for-each list x body...) and (for-each list (k x)
// body...).
func (c *compiler) forEach(l *value.List) code {
	nameVar, valueVar, ok := loopVars(l.At(2))
	if !ok {
		return nil
	}
	nameVar, valueVar = c.intern(nameVar), c.intern(valueVar)
	lx, body := c.expr(l.At(1)), c.body(c.exprs(l, 3))
	return func(t *task, f *frame) (any, error) {
		lv, err := lx(t, f)
		if err != nil {
			return nil, err
		}
		list, ok := lv.(*value.List)
		if !ok && lv != nil {
			return nil, t.errorf(f, "InvalidArgument", "%s: want a list, got %s", fname(l), value.Describe(lv))
		}
		var v any
		for i, n := 0, list.Len(); i < n && i < list.Len(); i++ {
			if err := t.checkCtx(f); err != nil {
				return nil, err
			}
			if nameVar != "" {
				var name any
				if s := list.Name(i); s != "" {
					name = s
				}
				f.locals.set(nameVar, name)
			}
			f.locals.set(valueVar, list.At(i))
			if v, err = body(t, f); err != nil {
				return nil, err
			}
		}
		return v, nil
	}
}
