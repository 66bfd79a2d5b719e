package bpl

import (
	"encoding/json"
	"errors"
	"io"
	"iter"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl"
)

// The base family: evaluation, variables, scopes, control flow,
// conversions, types and output. Exceptions (try, throw, assert) are in
// exception.go, function values (function, call) in function.go.

func init() {
	register(map[string]builtin{
		"###":      biComment,
		"do":       biDo,
		"quote":    biQuote,
		"set":      biSet,
		"local":    biLocal,
		"if":       biIf,
		"when":     biWhen,
		"while":    biWhile,
		"string":   biString,
		"number":   biNumber,
		"sleep":    biSleep,
		"print":    biPrint,
		"try":      biTry,
		"throw":    biThrow,
		"assert":   biAssert,
		"function": biFunction,
		"call":     biCall,

		"cond":           biCond,
		"for":            biFor,
		"eval":           biEval,
		"boolean":        biBoolean,
		"type-of":        biTypeOf,
		"subtype-of":     biSubtypeOf,
		"exists":         biExists,
		"delete":         biDelete,
		"set-local":      biSetLocal,
		"reference-list": biReferenceList,
		"help":           biHelp,
		"reference":      biReference,
		"parse":          biParse,
		"global-scope":   biGlobalScope,
		"local-scope":    biLocalScope,
		"functions":      biFunctions,

		// brain4it's old names, kept for old scripts
		"seq":    biDo,
		"typeof": biTypeOf,
	})
}

// (### "text") is a comment: it evaluates nothing and gives null.
func biComment(*task, *frame, *kafkabpl.List) (any, error) { return nil, nil }

// (do a b ...) evaluates its arguments in order and gives the last value.
func biDo(t *task, f *frame, call *kafkabpl.List) (any, error) {
	return t.evalBody(f, call, 1)
}

// evalBody evaluates the elements of call from index from on and gives the
// last value (null when there is none).
func (t *task) evalBody(f *frame, call *kafkabpl.List, from int) (any, error) {
	var v any
	for i := from; i < call.Len(); i++ {
		var err error
		if v, err = t.eval(f, call.At(i)); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// (quote x) gives x unevaluated (a list as a fresh copy).
func biQuote(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	if l, ok := call.At(1).(*kafkabpl.List); ok {
		return copyData(l), nil
	}
	return call.At(1), nil
}

// (set x value) assigns the local x if the current function (or top level)
// has one, else the global x; (set a/b/0 value) the element the path
// names. It gives the value.
func biSet(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 2, 2); err != nil {
		return nil, err
	}
	ref, ok := call.At(1).(kafkabpl.Reference)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "set: want a variable name, got %s", describe(call.At(1)))
	}
	v, err := t.eval(f, call.At(2))
	if err != nil {
		return nil, err
	}
	if err := t.set(f, string(ref), v); err != nil {
		return nil, err
	}
	return v, nil
}

// (local a b "c" => value) declares local variables of the current
// function (or top level): a and b null, c the value. It gives null.
func biLocal(t *task, f *frame, call *kafkabpl.List) (any, error) {
	for i := 1; i < call.Len(); i++ {
		if name := call.Name(i); name != "" {
			v, err := t.eval(f, call.At(i))
			if err != nil {
				return nil, err
			}
			f.locals.set(name, v)
			continue
		}
		ref, ok := call.At(i).(kafkabpl.Reference)
		if !ok || pathOf(string(ref)) != nil {
			return nil, t.errorf(f, "InvalidArgument", "local: argument %d is %s, want a variable name", i, describe(call.At(i)))
		}
		f.locals.set(string(ref), nil)
	}
	return nil, nil
}

// (if cond then else) gives then's value when cond is true, else else's
// (null without else).
func biIf(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 2, 3); err != nil {
		return nil, err
	}
	c, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	if truthy(c) {
		return t.eval(f, call.At(2))
	}
	if call.Len() > 3 {
		return t.eval(f, call.At(3))
	}
	return nil, nil
}

// (when cond body...) evaluates body when cond is true and gives its last
// value, else null.
func biWhen(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	c, err := t.eval(f, call.At(1))
	if err != nil || !truthy(c) {
		return nil, err
	}
	return t.evalBody(f, call, 2)
}

// (while cond body...) evaluates body as long as cond is true and gives
// the last value body had (null if it never ran).
func biWhile(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	var v any
	for {
		if err := t.checkCtx(f); err != nil {
			return nil, err
		}
		c, err := t.eval(f, call.At(1))
		if err != nil {
			return nil, err
		}
		if !truthy(c) {
			return v, nil
		}
		if v, err = t.evalBody(f, call, 2); err != nil {
			return nil, err
		}
	}
}

// (string x) gives x as text: a string as it is, a byte array as its
// bytes, anything else in BPL text (null as "null").
func biString(t *task, f *frame, call *kafkabpl.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	return t.text(f, "string", v)
}

// (number x) gives the number x's text denotes, read as BPL reads numbers
// ("12" 12, "2.5" 2.5, "0x1F" 31); a number is itself and null stays null.
func biNumber(t *task, f *frame, call *kafkabpl.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	var s string
	switch x := v.(type) {
	case nil, int64, float64:
		return v, nil
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return nil, t.errorf(f, "InvalidArgument", "number: want a string, got %s", describe(v))
	}
	if vs, err := kafkabpl.Parse(s); err == nil && len(vs) == 1 {
		switch n := vs[0].(type) {
		case int64, float64:
			return n, nil
		}
	}
	return nil, t.errorf(f, "InvalidArgument", "number: %s is not a number", describe(s))
}

// (sleep ms) waits ms milliseconds, or until the run is cancelled, and
// gives null.
func biSleep(t *task, f *frame, call *kafkabpl.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	ms, ok := toFloat(v)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "sleep: want milliseconds, got %s", describe(v))
	}
	d := time.Duration(math.MaxInt64)
	if ms < float64(d/time.Millisecond) {
		d = time.Duration(ms * float64(time.Millisecond))
	}
	if d <= 0 || ms != ms {
		return nil, t.checkCtx(f)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.ctx.Done():
		return nil, t.interrupted(f)
	case <-timer.C:
		return nil, nil
	}
}

// (print a b ...) writes its arguments, strings raw and others in BPL
// text, separated by spaces and followed by a newline; it gives null.
func biPrint(t *task, f *frame, call *kafkabpl.List) (any, error) {
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for i, v := range args.Values() {
		if i > 0 {
			b.WriteByte(' ')
		}
		s, err := t.text(f, "print", v)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	b.WriteByte('\n')
	t.in.outMu.Lock()
	_, err = io.WriteString(t.in.out, b.String())
	t.in.outMu.Unlock()
	if err != nil {
		return nil, t.exception(f, "IOError", "print: "+err.Error(), err)
	}
	return nil, nil
}

// (cond clause...) evaluates its clauses in order until one gives a true
// value, as brain4it's cond does with clauses like (when test body...):
// the first clause whose when runs a body with a true value stops it. It
// gives null, whatever the clauses gave.
func biCond(t *task, f *frame, call *kafkabpl.List) (any, error) {
	for i := 1; i < call.Len(); i++ {
		v, err := t.eval(f, call.At(i))
		if err != nil {
			return nil, err
		}
		if truthy(v) {
			break
		}
	}
	return nil, nil
}

// (for init test step body...) evaluates init, then, as long as test is
// true, body and then step. It gives the last value body had (null if it
// never ran or is empty).
func biFor(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 3, -1); err != nil {
		return nil, err
	}
	if _, err := t.eval(f, call.At(1)); err != nil {
		return nil, err
	}
	var v any
	for {
		if err := t.checkCtx(f); err != nil {
			return nil, err
		}
		c, err := t.eval(f, call.At(2))
		if err != nil {
			return nil, err
		}
		if !truthy(c) {
			return v, nil
		}
		if call.Len() > 4 {
			if v, err = t.evalBody(f, call, 4); err != nil {
				return nil, err
			}
		}
		if _, err := t.eval(f, call.At(3)); err != nil {
			return nil, err
		}
	}
}

// (eval expr scope) evaluates expr, then evaluates its value: (eval
// (quote (+ 1 2))) gives 3 and (eval (reference "x")) the value of x. The
// second evaluation runs in the current scope, or, when scope is a list
// (not null), in a scope of its own whose locals are scope's named
// elements (the first of each name; unnamed ones are ignored), with the
// globals. scope stands for that scope as brain4it's does: when the
// evaluation ends, normally or not, the locals it changed or declared are
// put back into scope by name (set on the first element of the name, or
// appended in name order), and those it deleted are removed from it (the
// first element of the name).
func biEval(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	x, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	if call.Len() < 3 {
		return t.eval(f, x)
	}
	sv, err := t.eval(f, call.At(2))
	if err != nil {
		return nil, err
	}
	if sv == nil {
		return t.eval(f, x)
	}
	scope, ok := sv.(*kafkabpl.List)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "eval: want a list as the scope, got %s", describe(sv))
	}
	before := map[string]any{}
	for name, e := range scope.All() {
		if _, dup := before[name]; name != "" && !dup {
			before[name] = e
		}
	}
	sf := &frame{src: f.src}
	for name, e := range before {
		sf.locals.set(name, e)
	}
	v, err := t.eval(sf, x)
	for name, nv := range scopeList(sf.locals.all()).All() { // new locals are appended in a fixed order
		if old, had := before[name]; had && sameValue(old, nv) {
			continue
		}
		if perr := t.putName(f, "eval", scope, name, nv); perr != nil && err == nil {
			err = perr
		}
	}
	for name := range before {
		if _, kept := sf.locals.get(name); !kept {
			if i := scope.Index(name); i >= 0 {
				scope.Remove(i) // deleted by the evaluation
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// sameValue reports whether a and b are the same value: equal atoms, or
// the same list, function or byte array.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case nil, bool, int64, float64, string, kafkabpl.Reference, *kafkabpl.List, *Function:
		return a == b // a's type is comparable: this cannot panic
	}
	return false
}

// (boolean x) gives x's truth as a boolean: false for null, false, 0, ()
// and strings other than "true" (in any case), true for anything else.
func biBoolean(t *task, f *frame, call *kafkabpl.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	return truthy(v), nil
}

// (type-of x) gives the name of x's type, as brain4it names it: "null",
// "boolean", "number", "string", "reference" or "list". A function value
// is a "list", as brain4it's functions are the lists (function ...) they
// were written as. brain4it has no name for byte arrays: a byte array's
// type is null. typeof is an old name of type-of.
func biTypeOf(t *task, f *frame, call *kafkabpl.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	switch v.(type) {
	case nil:
		return "null", nil
	case bool:
		return "boolean", nil
	case int64, float64:
		return "number", nil
	case string:
		return "string", nil
	case kafkabpl.Reference:
		return "reference", nil
	case *kafkabpl.List, kafkabpl.Callable:
		return "list", nil
	}
	return nil, nil
}

// (subtype-of x) names x's type more finely, as brain4it does: "integer"
// for an integer that fits in 32 bits (brain4it reads those as Java ints)
// and "long" for a larger one, "double" for any other number;
// "hard-reference" for a reference naming a builtin or library function
// and "soft-reference" for any other (a variable or a path);
// "function-list" for a function value or a list that starts with the
// reference function, "code-list" for a list that starts with a reference
// naming another builtin or library function, "data-list" for any other
// list; "null", "boolean" and "string" as type-of gives them. A byte
// array's subtype is null.
func biSubtypeOf(t *task, f *frame, call *kafkabpl.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case nil:
		return "null", nil
	case bool:
		return "boolean", nil
	case int64:
		if v >= math.MinInt32 && v <= math.MaxInt32 {
			return "integer", nil
		}
		return "long", nil
	case float64:
		return "double", nil
	case string:
		return "string", nil
	case kafkabpl.Reference:
		if t.isFunctionName(string(v)) {
			return "hard-reference", nil
		}
		return "soft-reference", nil
	case kafkabpl.Callable:
		return "function-list", nil
	case *kafkabpl.List:
		if v.Len() > 0 {
			if r, ok := v.At(0).(kafkabpl.Reference); ok && t.isFunctionName(string(r)) {
				if r == "function" {
					return "function-list", nil
				}
				return "code-list", nil
			}
		}
		return "data-list", nil
	}
	return nil, nil
}

// isFunctionName reports whether name is a builtin or a library function.
func (t *task) isFunctionName(name string) bool {
	return builtins[name] != nil || t.in.libFunc(name) != nil
}

// varArg reads argument i of exists, delete and set-local: a variable name
// or path as written (x, a/b/0), or an expression in parentheses whose
// value is a reference, such as (reference "x").
func (t *task) varArg(f *frame, call *kafkabpl.List, i int) (string, error) {
	arg := call.At(i)
	if l, ok := arg.(*kafkabpl.List); ok {
		v, err := t.eval(f, l)
		if err != nil {
			return "", err
		}
		arg = v
	}
	if r, ok := arg.(kafkabpl.Reference); ok && r != "" {
		return string(r), nil
	}
	return "", t.errorf(f, "InvalidArgument", "%s: want a variable name or a reference, got %s", fname(call), describe(arg))
}

// hasVar reports whether name is a local variable of f or a global one.
func (t *task) hasVar(f *frame, name string) bool {
	if _, ok := f.locals.get(name); ok {
		return true
	}
	_, ok := t.in.global(name)
	return ok
}

// pathElement finds the element a path such as a/b/0 names: the list that
// holds it (nil when there is none) and its index there (-1 when it has no
// such element).
func (t *task) pathElement(f *frame, segs []string) (*kafkabpl.List, int) {
	l, ok := t.lookup(f, strings.Join(segs[:len(segs)-1], "/")).(*kafkabpl.List)
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
func biExists(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	name, err := t.varArg(f, call, 1)
	if err != nil {
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
func biDelete(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	name, err := t.varArg(f, call, 1)
	if err != nil {
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
	_, ok := in.globals[name]
	delete(in.globals, name)
	return ok
}

// (set-local x value) sets the local variable x of the current function
// (or top level), declaring it if need be, even when a global x exists;
// it gives the value. x may be an expression in parentheses whose value is
// a reference; it cannot be a path.
func biSetLocal(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 2, 2); err != nil {
		return nil, err
	}
	name, err := t.varArg(f, call, 1)
	if err != nil {
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
// or indexes (("persons" 5 "name") gives persons/5/name). A part that the
// reader could not read back in a path (a name with a space, a slash or
// only digits, a negative or fractional index) is an exception, as are
// values of other types.
func biReference(t *task, f *frame, call *kafkabpl.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case kafkabpl.Reference:
		return v, nil
	case string:
		if !isReferenceText(v) {
			return nil, t.errorf(f, "InvalidArgument", "reference: %s is not a reference", describe(v))
		}
		return kafkabpl.Reference(v), nil
	case *kafkabpl.List:
		return t.pathReference(f, v)
	}
	return nil, t.errorf(f, "InvalidArgument", "reference: want a string, a list or a reference, got %s", describe(v))
}

// isReferenceText reports whether s reads as one reference and nothing
// else.
func isReferenceText(s string) bool {
	vs, err := kafkabpl.Parse(s)
	if err != nil || len(vs) != 1 {
		return false
	}
	r, ok := vs[0].(kafkabpl.Reference)
	return ok && string(r) == s
}

// pathReference joins a list of path parts into a reference.
func (t *task) pathReference(f *frame, l *kafkabpl.List) (any, error) {
	if l.Len() == 0 {
		return nil, t.errorf(f, "InvalidArgument", "reference: an empty list is no path")
	}
	parts := make([]string, l.Len())
	for i, p := range l.Values() {
		var s string
		switch p := p.(type) {
		case string:
			s = p
			_, isIndex := pathIndex(p)
			if isIndex || strings.Contains(p, "/") || !isReferenceText(p) {
				return nil, t.errorf(f, "InvalidArgument", "reference: path part %d, %s, cannot be written in a path", i+1, describe(p))
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
			return nil, t.errorf(f, "InvalidArgument", "reference: path part %d is %s, want %s", i+1, describe(p), want)
		}
		parts[i] = s
	}
	return kafkabpl.Reference(strings.Join(parts, "/")), nil
}

// maxJSONDepth bounds how deep parse lets JSON arrays and objects nest, as
// the BPL reader bounds lists.
const maxJSONDepth = 10000

// (parse text format) reads the value text holds: a BPL expression, or,
// when format is "json", a JSON value (objects become named lists, a
// repeated member setting the first of its name; arrays unnamed lists;
// integers numbers, floats beyond range ±Infinity). Any other format,
// null included, reads BPL, except "xml", which is not supported. Text
// with nothing but white space gives null, as does null text; text with
// more than one value, or that does not read, is an exception.
func biParse(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	var text string
	switch x := args.At(0).(type) {
	case nil:
		return nil, nil
	case string:
		text = x
	case []byte:
		text = string(x)
	default:
		return nil, t.errorf(f, "InvalidArgument", "parse: want a string, got %s", describe(x))
	}
	format := ""
	if args.Len() > 1 && args.At(1) != nil {
		s, ok := args.At(1).(string)
		if !ok {
			return nil, t.errorf(f, "InvalidArgument", "parse: want a format such as \"json\", got %s", describe(args.At(1)))
		}
		format = s
	}
	switch format {
	case "json":
		v, err := parseJSON(text)
		if err != nil {
			return nil, t.exception(f, "InvalidArgument", "parse: JSON: "+err.Error(), err)
		}
		return v, nil
	case "xml":
		return nil, t.errorf(f, "InvalidArgument", "parse: the xml format is not supported")
	}
	vs, err := kafkabpl.Parse(text)
	if err != nil {
		return nil, t.exception(f, "InvalidArgument", "parse: "+err.Error(), err)
	}
	switch len(vs) {
	case 0:
		return nil, nil
	case 1:
		return vs[0], nil
	}
	return nil, t.errorf(f, "InvalidArgument", "parse: want one expression, got %d", len(vs))
}

// parseJSON reads one JSON value; blank text is null.
func parseJSON(text string) (any, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	v, err := jsonValue(d, 0)
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.New("the text ends too soon")
	}
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("text after the value")
	}
	return v, nil
}

func jsonValue(d *json.Decoder, depth int) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		if tok != '[' && tok != '{' {
			return nil, errors.New("unexpected " + string(tok))
		}
		if depth >= maxJSONDepth {
			return nil, errors.New("arrays and objects nest too deep")
		}
		l := &kafkabpl.List{}
		for d.More() {
			name := ""
			if tok == '{' {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				name, _ = k.(string)
			}
			v, err := jsonValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			if name != "" {
				l.Put(name, v)
			} else {
				l.Append(v)
			}
		}
		if _, err := d.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return l, nil
	case json.Number:
		if n, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
			return n, nil
		}
		x, err := strconv.ParseFloat(string(tok), 64)
		if errors.Is(err, strconv.ErrRange) {
			err = nil // beyond float64: ±Infinity, as Java reads it
		}
		return x, err
	}
	return tok, nil // string, bool or nil
}

// (global-scope) gives the global variables as a named list, sorted by
// name: a copy made when it is called, so that changing the list changes
// no variable (brain4it hands out the scope itself). The values are the
// variables' own: a list in it is the variable's list.
func biGlobalScope(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 0, 0); err != nil {
		return nil, err
	}
	t.in.mu.RLock()
	defer t.in.mu.RUnlock()
	return scopeList(maps.All(t.in.globals)), nil
}

// (local-scope) gives the local variables of the current function (or top
// level) as a named list sorted by name: a copy, like global-scope's.
// (local-scope 0) is the same; a negative depth gives null. A depth from 1
// on, a caller's scope in brain4it, is an exception: a function cannot
// reach its callers' locals here.
func biLocalScope(t *task, f *frame, call *kafkabpl.List) (any, error) {
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
			return nil, t.errorf(f, "InvalidArgument", "local-scope: want a depth, got %s", describe(v))
		case d <= -1:
			return nil, nil
		case d >= 1:
			return nil, t.errorf(f, "InvalidArgument", "local-scope: depth %s: a function cannot see its callers' scopes", describe(v))
		}
	}
	return scopeList(f.locals.all()), nil
}

// scopeList is a scope's variables as a named list sorted by name.
func scopeList(vars iter.Seq2[string, any]) *kafkabpl.List {
	type variable struct {
		name  string
		value any
	}
	var all []variable
	for name, v := range vars {
		all = append(all, variable{name, v})
	}
	slices.SortFunc(all, func(a, b variable) int { return strings.Compare(a.name, b.name) })
	l := &kafkabpl.List{}
	for _, v := range all {
		l.AppendNamed(v.name, v.value)
	}
	return l
}

// (functions pattern) gives the names of the builtins and library
// functions, as references sorted by name; with pattern (a regular
// expression, RE2 syntax), only the names it matches whole: (functions
// "kafka-.*"). Without pattern, or with null, all of them.
func biFunctions(t *task, f *frame, call *kafkabpl.List) (any, error) {
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
				return nil, t.errorf(f, "InvalidArgument", "functions: pattern %s: %v", describe(p), err)
			}
		default:
			return nil, t.errorf(f, "InvalidArgument", "functions: want a pattern string, got %s", describe(v))
		}
	}
	seen := map[string]bool{}
	for name := range builtins {
		seen[name] = true
	}
	t.in.mu.RLock()
	for name := range t.in.lib {
		seen[name] = true
	}
	t.in.mu.RUnlock()
	names := make([]string, 0, len(seen))
	for name := range seen {
		if re == nil || re.MatchString(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	l := &kafkabpl.List{}
	for _, name := range names {
		l.Append(kafkabpl.Reference(name))
	}
	return l, nil
}

// (reference-list x) gives the parts of the reference x as a list, the
// inverse of reference: (reference-list persons/5/name) is ("persons" 5
// "name"), (reference-list x) is ("x"). A part of digits is an index,
// given as a number. x is taken as written, or from an expression in
// parentheses whose value is a reference, as exists takes it.
func biReferenceList(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	name, err := t.varArg(f, call, 1)
	if err != nil {
		return nil, err
	}
	segs := pathOf(name)
	if segs == nil {
		return kafkabpl.NewList(name), nil
	}
	out := &kafkabpl.List{}
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
// brain4it's "format" and "language" arguments are accepted; the text is
// English, and "format" => "list" is not supported.
func biHelp(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	var name string
	switch arg := call.At(1).(type) {
	case kafkabpl.Reference:
		name = string(arg)
	default:
		v, err := t.eval(f, arg)
		if err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case kafkabpl.Reference:
			name = string(v)
		case string:
			name = v
		default:
			return nil, t.errorf(f, "InvalidArgument", "help: want a function name, got %s", describe(v))
		}
	}
	if text, ok := helpText[name]; ok {
		return text, nil
	}
	if t.in.libFunc(name) != nil {
		return name + " is a library function: its documentation is the kafkabpl package's (go doc github.com/brain4it/kafkabpl) and the README.", nil
	}
	return nil, nil
}
