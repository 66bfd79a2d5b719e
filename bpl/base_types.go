package bpl

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/brain4it/kafkabpl/value"
)

// The base family, continued: conversions (string, number, boolean),
// types (type-of, subtype-of) and reading text (parse).

// sameValue reports whether a and b are the same value: equal atoms, or
// the same list, function or byte array.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case nil, bool, int64, float64, string, value.Reference, *value.List, *Function:
		return a == b // a's type is comparable: this cannot panic
	}
	return false
}

// (boolean x) gives x's truth as a boolean: false for null, false, 0, ()
// and strings other than "true" (in any case), true for anything else.
func biBoolean(t *task, f *frame, call *value.List) (any, error) {
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
func biTypeOf(t *task, f *frame, call *value.List) (any, error) {
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
	case value.Reference:
		return "reference", nil
	case *value.List, value.Callable:
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
func biSubtypeOf(t *task, f *frame, call *value.List) (any, error) {
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
	case value.Reference:
		if t.isFunctionName(string(v)) {
			return "hard-reference", nil
		}
		return "soft-reference", nil
	case value.Callable:
		return "function-list", nil
	case *value.List:
		if v.Len() > 0 {
			if r, ok := v.At(0).(value.Reference); ok && t.isFunctionName(string(r)) {
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

// isFunctionName reports whether name is a builtin or a library function,
// or a core function of brain4it's left out here (system), whose call
// raises NotImplemented.
func (t *task) isFunctionName(name string) bool {
	return lookupBuiltin(name) != nil || isCore[name] || t.in.libFunc(name) != nil
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
func biParse(t *task, f *frame, call *value.List) (any, error) {
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
		return nil, t.errorf(f, "InvalidArgument", "parse: want a string, got %s", value.Describe(x))
	}
	format := ""
	if args.Len() > 1 && args.At(1) != nil {
		s, ok := args.At(1).(string)
		if !ok {
			return nil, t.errorf(f, "InvalidArgument", "parse: want a format such as \"json\", got %s", value.Describe(args.At(1)))
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
	vs, err := value.Parse(text)
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
		l := &value.List{}
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
