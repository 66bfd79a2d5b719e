package bpl

import (
	"iter"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/brain4it/kafkabpl/value"
)

// The base family, continued: variables, references and scopes
// (exists, delete, set-local, reference, reference-list, global-scope,
// local-scope), and what the interpreter knows of itself (functions, help).

// varArg reads argument i of exists, delete and set-local: a variable name
// or path as written (x, a/b/0), or an expression in parentheses whose
// value is a reference, such as (reference "x").
// A missing argument is a MissingArgument exception and one that is no
// reference an InvalidReference, as brain4it names them.
func (t *task) varArg(f *frame, call *value.List, i int) (string, error) {
	if i >= call.Len() {
		return "", t.errorf(f, "MissingArgument", "%s: want a variable name or a reference as argument %d", fname(call), i)
	}
	arg := call.At(i)
	if l, ok := arg.(*value.List); ok {
		v, err := t.eval(f, l)
		if err != nil {
			return "", err
		}
		arg = v
	}
	if r, ok := arg.(value.Reference); ok && r != "" {
		return string(r), nil
	}
	return "", t.errorf(f, "InvalidReference", "%s: want a variable name or a reference, got %s", fname(call), value.Describe(arg))
}

// hasVar reports whether name is a local variable of f or a global one.
func (t *task) hasVar(f *frame, name string) bool {
	if f.locals.has(name) {
		return true
	}
	_, ok := t.in.global(name)
	return ok
}

// pathElement finds the element a path such as a/b/0 names: the list that
// holds it (nil when there is none) and its index there (-1 when it has no
// such element).
func (t *task) pathElement(f *frame, segs []string) (*value.List, int) {
	l, ok := t.lookup(f, strings.Join(segs[:len(segs)-1], "/")).(*value.List)
	if !ok {
		return nil, -1
	}
	last := segs[len(segs)-1]
	if i, ok := pathIndex(last); ok {
		if i >= 0 && i < l.Len() {
			return l, i
		}
		return l, -1
	}
	return l, l.Index(last)
}

// (exists x) gives true when x is a variable, local or global, even one
// set to null; (exists a/b/0) when the path names an element of a list
// (false when any list on the way is missing). (exists (reference "x"))
// takes the variable from an expression.
func biExists(t *task, f *frame, call *value.List) (any, error) {
	name, err := t.varArg(f, call, 1)
	if err != nil {
		return nil, err
	}
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	if t.hasVar(f, name) {
		return true, nil
	}
	if segs := pathOf(name); segs != nil {
		_, i := t.pathElement(f, segs)
		return i >= 0, nil
	}
	return false, nil
}

// (delete x) removes the variable x: the local one if there is one, else
// the global one. (delete a/b/0) removes the element the path names from
// its list (the first one of the name for a name). It gives true when it
// removed something, false when there was nothing to remove (as when a
// list on the path is missing).
func biDelete(t *task, f *frame, call *value.List) (any, error) {
	name, err := t.varArg(f, call, 1)
	if err != nil {
		return nil, err
	}
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	if f.locals.del(name) {
		return true, nil
	}
	if t.in.deleteGlobal(name) {
		return true, nil
	}
	if segs := pathOf(name); segs != nil {
		if l, i := t.pathElement(f, segs); i >= 0 {
			l.Remove(i)
			return true, nil
		}
	}
	return false, nil
}

// deleteGlobal removes a global variable and reports whether there was one.
func (in *Interp) deleteGlobal(name string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	i := in.globals.Index(name)
	if i < 0 {
		return false
	}
	in.removeGlobal(i)
	return true
}

// (set-local x value) sets the local variable x of the current function
// (or top level), declaring it if need be, even when a global x exists;
// it gives the value. x may be an expression in parentheses whose value is
// a reference; it cannot be a path.
func biSetLocal(t *task, f *frame, call *value.List) (any, error) {
	name, err := t.varArg(f, call, 1)
	if err != nil {
		return nil, err
	}
	if err := t.arity(f, call, 2, 2); err != nil {
		return nil, err
	}
	if pathOf(name) != nil {
		return nil, t.errorf(f, "InvalidArgument", "set-local: %s is a path, want a variable name", name)
	}
	v, err := t.eval(f, call.At(2))
	if err != nil {
		return nil, err
	}
	f.locals.set(name, v)
	return v, nil
}

// (reference x) gives a reference: x itself when it is one; the reference
// x's text names when x is a string ("persons" or "persons/5/name"; it
// must read as one reference); the path a list of parts names when x is a
// list whose first element is a variable name and whose others are names
// or indexes (("persons" 5 "name") gives persons/5/name). A name with a
// space, a slash, a parenthesis or a quote is written quoted, as brain4it
// writes it: (reference ("Hello friend" "John Connor")) is /"Hello
// friend"/"John Connor". The empty name, a name of digits only (which a
// path reads as an index) and a negative or fractional index are an
// exception, as are values of other types (an InvalidReference exception,
// as brain4it's). A path of one part, or whose first part is quoted, is
// written with a slash before it: (reference ("action")) is /action,
// which evaluates as action does.
func biReference(t *task, f *frame, call *value.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case value.Reference:
		return v, nil
	case string:
		if !isReferenceText(v) {
			return nil, t.errorf(f, "InvalidReference", "reference: %s is not a reference", value.Describe(v))
		}
		return value.Reference(v), nil
	case *value.List:
		return t.pathReference(f, v)
	}
	return nil, t.errorf(f, "InvalidReference", "reference: want a string, a list or a reference, got %s", value.Describe(v))
}

// isReferenceText reports whether s reads as one reference and nothing
// else.
func isReferenceText(s string) bool {
	vs, err := value.Parse(s)
	if err != nil || len(vs) != 1 {
		return false
	}
	r, ok := vs[0].(value.Reference)
	return ok && string(r) == s
}

// pathReference joins a list of path parts into a reference.
func (t *task) pathReference(f *frame, l *value.List) (any, error) {
	if l.Len() == 0 {
		return nil, t.errorf(f, "InvalidReference", "reference: an empty list is no path")
	}
	parts := make([]string, l.Len())
	for i, p := range l.Values() {
		var s string
		switch p := p.(type) {
		case string:
			var ok bool
			if s, ok = pathName(p); !ok {
				return nil, t.errorf(f, "InvalidReference", "reference: path part %d, %s, cannot be written in a path", i+1, value.Describe(p))
			}
		case int64:
			if i > 0 && p >= 0 {
				s = strconv.FormatInt(p, 10)
			}
		case float64:
			if i > 0 && p >= 0 && p == math.Trunc(p) && p < 1<<53 {
				s = strconv.FormatInt(int64(p), 10)
			}
		}
		if s == "" {
			want := "a name or an index from 0"
			if i == 0 {
				want = "a variable name"
			}
			return nil, t.errorf(f, "InvalidReference", "reference: path part %d is %s, want %s", i+1, value.Describe(p), want)
		}
		parts[i] = s
	}
	if len(parts) == 1 || parts[0][0] == '"' {
		return value.Reference("/" + strings.Join(parts, "/")), nil // a path still
	}
	return value.Reference(strings.Join(parts, "/")), nil
}

// (global-scope) gives the global variables as a named list, sorted by
// name: a copy made when it is called, so that changing the list changes
// no variable (brain4it hands out the scope itself). The values are the
// variables' own: a list in it is the variable's list.
func biGlobalScope(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 0, 0); err != nil {
		return nil, err
	}
	t.in.mu.RLock()
	defer t.in.mu.RUnlock()
	return scopeList(t.in.globals.All()), nil
}

// (local-scope) gives the local variables of the current function (or top
// level) as a named list sorted by name: a copy, like global-scope's.
// (local-scope 0) is the same; a negative depth gives null. A depth from 1
// on, a caller's scope in brain4it, is an exception: a function cannot
// reach its callers' locals here.
func biLocalScope(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 0, 1); err != nil {
		return nil, err
	}
	if call.Len() > 1 {
		v, err := t.eval(f, call.At(1))
		if err != nil {
			return nil, err
		}
		d, ok := toFloat(v)
		switch {
		case !ok:
			return nil, t.errorf(f, "InvalidArgument", "local-scope: want a depth, got %s", value.Describe(v))
		case d <= -1:
			return nil, nil
		case d >= 1:
			return nil, t.errorf(f, "InvalidArgument", "local-scope: depth %s: a function cannot see its callers' scopes", value.Describe(v))
		}
	}
	return scopeList(f.locals.all()), nil
}

// scopeList is a scope's variables as a named list sorted by name.
func scopeList(vars iter.Seq2[string, any]) *value.List {
	type variable struct {
		name  string
		value any
	}
	var all []variable
	for name, v := range vars {
		all = append(all, variable{name, v})
	}
	slices.SortFunc(all, func(a, b variable) int { return strings.Compare(a.name, b.name) })
	l := &value.List{}
	for _, v := range all {
		l.AppendNamed(v.name, v.value)
	}
	return l
}

// (functions pattern) gives the names of the builtins and library
// functions, as references sorted by name; with pattern (a regular
// expression, RE2 syntax), only the names it matches whole: (functions
// "kafka-.*"). Without pattern, or with null, all of them.
func biFunctions(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 0, 1); err != nil {
		return nil, err
	}
	var re *regexp.Regexp
	if call.Len() > 1 {
		v, err := t.eval(f, call.At(1))
		if err != nil {
			return nil, err
		}
		switch p := v.(type) {
		case nil:
		case string:
			// p compiles on its own first, so that it cannot close the
			// group that anchors it
			if _, err = regexp.Compile(p); err == nil {
				re, err = regexp.Compile(`^(?:` + p + `)$`)
			}
			if err != nil {
				return nil, t.errorf(f, "InvalidArgument", "functions: pattern %s: %v", value.Describe(p), err)
			}
		default:
			return nil, t.errorf(f, "InvalidArgument", "functions: want a pattern string, got %s", value.Describe(v))
		}
	}
	seen := map[string]bool{}
	for name := range builtins {
		seen[name] = true
	}
	for name := range *t.in.lib.Load() {
		seen[name] = true
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		if re == nil || re.MatchString(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	l := &value.List{}
	for _, name := range names {
		l.Append(value.Reference(name))
	}
	return l, nil
}

// (reference-list x) gives the parts of the reference x as a list, the
// inverse of reference: (reference-list persons/5/name) is ("persons" 5
// "name"), (reference-list x) is ("x"). A part of digits is an index,
// given as a number. x is taken as written, or from an expression in
// parentheses whose value is a reference, as exists takes it.
func biReferenceList(t *task, f *frame, call *value.List) (any, error) {
	name, err := t.varArg(f, call, 1)
	if err != nil {
		return nil, err
	}
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	segs := pathOf(name)
	if segs == nil {
		return value.NewList(name), nil
	}
	out := &value.List{}
	for _, s := range segs {
		if i, ok := pathIndex(s); ok && i >= 0 {
			out.Append(int64(i))
		} else {
			out.Append(s)
		}
	}
	return out, nil
}

// (help name) gives the documentation of the function name as text: for a
// builtin, the comment it is documented with in this evaluator's source;
// for a library function (kafka-send, ...), where to read its
// documentation; null for a name that is no function. name is taken as
// written, or from an expression whose value is a reference or a string.
// brain4it's named arguments are taken: "format" => "string" (the
// default) gives the text, "format" => "list" a list ("name" => name
// "description" => text) (brain4it's list has more fields, from its own
// documentation files), and "language" => l is accepted, but the text is
// English.
func biHelp(t *task, f *frame, call *value.List) (any, error) {
	if call.Len() < 2 || call.Name(1) != "" {
		return nil, t.errorf(f, "MissingArgument", "help: want a function name as argument 1")
	}
	var name string
	switch arg := call.At(1).(type) {
	case value.Reference:
		name = string(arg)
	default:
		v, err := t.eval(f, arg)
		if err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case value.Reference:
			name = string(v)
		case string:
			name = v
		default:
			return nil, t.errorf(f, "InvalidReference", "help: want a function name, got %s", value.Describe(v))
		}
	}
	rest := value.NewList(call.At(0))
	for i := 2; i < call.Len(); i++ {
		rest.AppendNamed(call.Name(i), call.At(i))
	}
	_, opts, err := t.optArgs(f, rest, 0, 0, "format", "language")
	if err != nil {
		return nil, err
	}
	format, _, err := t.optString(f, "help", opts, "format")
	if err != nil {
		return nil, err
	}
	if _, _, err := t.optString(f, "help", opts, "language"); err != nil {
		return nil, err
	}
	if format != "" && format != "string" && format != "list" {
		return nil, t.errorf(f, "InvalidArgument", "help: format %s is not \"string\" or \"list\"", strconv.Quote(format))
	}
	text, ok := helpText[name]
	if !ok && t.in.libFunc(name) != nil {
		text, ok = name+" is a library function: its reference is docs/functions.md, and the kafkabpl package's documentation (go doc github.com/brain4it/kafkabpl) has the rest.", true
	}
	if !ok && isCore[name] {
		text, ok = name+" is a function of brain4it's core library that is not available here: "+notImplemented[name]+".", true
	}
	switch {
	case !ok:
		return nil, nil
	case format == "list":
		l := value.NewList()
		l.AppendNamed("name", name)
		l.AppendNamed("description", text)
		return l, nil
	}
	return text, nil
}
