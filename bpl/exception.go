package bpl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/brain4it/kafkabpl/value"
)

// Exception is an uncaught BPL exception. Value is the exception as BPL
// sees it in a try handler: a list whose first element is the type and
// whose element named "message" is the message, ("Type" "message" => m).
//
// The evaluator's own exceptions have the types InvalidArgument (a builtin
// got the wrong number or kind of arguments), InvalidReference and
// MissingArgument (a reference argument was not one, or was missing, as
// brain4it names them), AssertFailed (assert, as brain4it names it),
// UnknownFunction, StackOverflow (calls nested too deep), DivisionByZero,
// IOError (print could not write) and Interrupted (the context was
// cancelled; try does not catch it). A library function's error has the
// type value.ErrorType(err) and err's text as message, and Unwrap
// returns err.
type Exception struct {
	Type, Message string
	File          string // the source file, as given to Run
	Line          int    // the line of the innermost call that failed; 0 if unknown
	Value         *value.List

	// Code is the innermost call that raised the exception, as the
	// evaluator read it: what brain4it's server answers as the exception
	// list's "code" element. nil when no call raised it (a parse error).
	// It is not part of Value, so a try handler does not see it.
	Code *value.List

	cause     error
	interrupt bool // the context ended: try must not catch it
}

// Error returns "TYPE: message (FILE:LINE)".
func (e *Exception) Error() string {
	s := e.Type
	if e.Message != "" {
		s += ": " + e.Message
	}
	switch {
	case e.File != "" && e.Line > 0:
		s += " (" + e.File + ":" + strconv.Itoa(e.Line) + ")"
	case e.File != "":
		s += " (" + e.File + ")"
	case e.Line > 0:
		s += " (line " + strconv.Itoa(e.Line) + ")"
	}
	return s
}

// ExceptionType returns the exception's type, so that value.ErrorType
// of an error wrapping it (a stream's transform that threw, say) is the
// type the script raised.
func (e *Exception) ExceptionType() string { return e.Type }

// Unwrap returns the Go error the exception came from: a library
// function's error, or the context's error for Interrupted; nil otherwise.
func (e *Exception) Unwrap() error { return e.cause }

// noteCode records call as where err was raised, unless a call inside it
// was recorded already: the innermost call wins, as in brain4it.
func noteCode(err error, call *value.List) {
	var e *Exception
	if errors.As(err, &e) && e.Code == nil && !e.interrupt {
		e.Code = call
	}
}

// exception returns a new exception raised where t is, in f's file.
func (t *task) exception(f *frame, typ, msg string, cause error) *Exception {
	v := value.NewList(typ)
	v.AppendNamed("message", msg)
	return &Exception{Type: typ, Message: msg, File: f.src.file, Line: t.line, Value: v, cause: cause}
}

func (t *task) errorf(f *frame, typ, format string, args ...any) error {
	return t.exception(f, typ, fmt.Sprintf(format, args...), nil)
}

// interrupted is the exception that ends the task when its context ends.
func (t *task) interrupted(f *frame) error {
	e := t.exception(f, "Interrupted", t.ctx.Err().Error(), t.ctx.Err())
	e.interrupt = true
	return e
}

// checkCtx returns the Interrupted exception once the context has ended.
func (t *task) checkCtx(f *frame) error {
	if t.ctx.Err() != nil {
		return t.interrupted(f)
	}
	return nil
}

// fromGo turns an error of a library function or function value into an
// exception.
func (t *task) fromGo(f *frame, err error) error {
	if t.ctx.Err() != nil {
		return t.interrupted(f) // the script is being stopped: no handler may run
	}
	var inner *Exception
	if errors.As(err, &inner) {
		if error(inner) == err {
			return inner // a function value's exception: keep where it happened
		}
		return t.exception(f, inner.Type, err.Error(), err)
	}
	e := t.exception(f, value.ErrorType(err), err.Error(), err)
	// A library error may say more than its message, for a handler to
	// use: a partial kafka-send says which messages failed.
	var more interface{ ExceptionFields() *value.List }
	if errors.As(err, &more) {
		for name, v := range more.ExceptionFields().All() {
			e.Value.AppendNamed(name, v)
		}
	}
	return e
}

// fromValue makes an exception of an exception value, a list whose first
// element is the type: ("Type" "message" => m), or brain4it's ("Type" m).
func (t *task) fromValue(f *frame, typ string, v *value.List) error {
	e := &Exception{Type: typ, File: f.src.file, Line: t.line, Value: v}
	if m, ok := v.Get("message"); ok {
		e.Message, _ = m.(string)
	} else if v.Len() > 1 && v.Name(1) == "" {
		e.Message, _ = v.At(1).(string)
	}
	return e
}

// asException returns err as the *Exception it is.
func (t *task) asException(f *frame, err error) *Exception {
	var e *Exception
	if errors.As(err, &e) {
		return e
	}
	return t.exception(f, value.ErrorType(err), err.Error(), err)
}

// (try expr (ex "Type" => handler "*" => handler) finally) evaluates expr;
// when it raises an exception whose type names a handler ("*" names any),
// binds ex to the exception value as a local and gives the handler's value.
// So that brain4it's scripts run unchanged, a handler named by the Java
// exception class brain4it raises in that case also catches the type that
// stands for it here (see javaTypes), when no handler names the type
// itself.
// The catch list and finally are optional (null skips the catch list);
// finally is evaluated last in every case but an interruption.
func biTry(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 3); err != nil {
		return nil, err
	}
	var catch *value.List
	var exVar string
	if call.Len() > 2 && call.At(2) != nil {
		cl, ok := call.At(2).(*value.List)
		var ref value.Reference
		if ok && cl.Len() > 0 && cl.Name(0) == "" {
			ref, ok = cl.At(0).(value.Reference)
		}
		if !ok || ref == "" || pathOf(string(ref)) != nil {
			return nil, t.errorf(f, "InvalidArgument", `try: want a catch list like (ex "Type" => handler "*" => handler), got %s`, value.Describe(call.At(2)))
		}
		catch, exVar = cl, string(ref)
	}
	v, err := t.eval(f, call.At(1))
	if err != nil && catch != nil {
		e := t.asException(f, err)
		if !e.interrupt {
			h := catch.Index(e.Type)
			if h < 0 {
				h = javaHandler(catch, e.Type)
			}
			if h < 0 {
				h = catch.Index("*")
			}
			if h > 0 {
				f.locals.set(exVar, e.Value)
				v, err = t.eval(f, catch.At(h))
			}
		}
	}
	if call.Len() > 3 && t.ctx.Err() == nil {
		if _, ferr := t.eval(f, call.At(3)); ferr != nil {
			return nil, ferr
		}
	}
	return v, err
}

// (throw "Type" "message") raises an exception of that type; (throw ex)
// raises an exception value again, such as one a try handler caught.
func biThrow(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	if l, ok := args.At(0).(*value.List); ok && args.Len() == 1 && l.Len() > 0 {
		if typ, ok := l.At(0).(string); ok && typ != "" {
			return nil, t.fromValue(f, typ, l)
		}
	}
	typ, ok := atomText(args.At(0))
	if !ok || typ == "" {
		return nil, t.errorf(f, "InvalidArgument", "throw: want an exception type or value, got %s", value.Describe(args.At(0)))
	}
	if args.Len() == 1 {
		// no message: the value has none, as in brain4it, so that
		// (get ex "message") is null
		e := t.exception(f, typ, "", nil)
		e.Value = value.NewList(typ)
		return nil, e
	}
	msg, err := t.text(f, "throw", args.At(1))
	if err != nil {
		return nil, err
	}
	return nil, t.exception(f, typ, msg, nil)
}

// (assert cond message) raises an AssertFailed exception, as brain4it
// names it, whose message is message or else cond's source, when cond is
// false; it gives cond's value. A handler of AssertionError, this
// evaluator's name for it before, catches it too.
func biAssert(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	v, err := t.eval(f, call.At(1))
	if err != nil || truthy(v) {
		return v, err
	}
	msg := value.Format(call.At(1))
	if call.Len() > 2 {
		m, err := t.eval(f, call.At(2))
		if err != nil {
			return nil, err
		}
		if msg, err = t.text(f, "assert", m); err != nil {
			return nil, err
		}
	}
	return nil, t.exception(f, "AssertFailed", msg, nil)
}

// javaTypes maps the Java exception classes brain4it's functions raise to
// the types raised here in the same cases; try lets a handler named by the
// Java class catch them. brain4it's try matches a class's simple name
// exactly, with no subclassing ("Exception" catches only what is raised as
// exactly Exception, which brain4it's Kafka library does for an unknown
// id), and so does this.
var javaTypes = map[string][]string{
	"Exception":                       {"UnknownHandle", "WrongKind"},
	"RuntimeException":                {"InvalidArgument"},
	"IllegalArgumentException":        {"InvalidArgument", "InvalidConfig"},
	"ClassCastException":              {"InvalidArgument"},
	"NullPointerException":            {"InvalidArgument"},
	"NumberFormatException":           {"InvalidArgument"},
	"IndexOutOfBoundsException":       {"InvalidArgument"},
	"StringIndexOutOfBoundsException": {"InvalidArgument"},
	"PatternSyntaxException":          {"InvalidArgument"},
	"ParseException":                  {"InvalidArgument"},
	"ConfigException":                 {"InvalidConfig"},
	"ArithmeticException":             {"DivisionByZero"},
	"IllegalStateException":           {"NotSubscribed"},
	"IOException":                     {"IOError"},
	"SocketTimeoutException":          {"IOError"},
	"UnknownHostException":            {"IOError"},
	"ConnectException":                {"IOError"},
	"SerializationException":          {"InvalidArgument", "DeserializationError"},
	"TimeoutException":                {"Timeout"},
	"CommitFailedException":           {"KafkaError"},
	"KafkaException":                  {"KafkaError", "Timeout", "DeserializationError"},
	"AssertionError":                  {"AssertFailed"}, // kafkabpl's name for it before
	// not Java's, but what kafkabpl raised for these before
	"InvalidArgument": {"InvalidReference", "MissingArgument"},
}

// javaHandler returns the index of the first handler of catch named by a
// Java class that typ stands for, or -1.
func javaHandler(catch *value.List, typ string) int {
	for i := 1; i < catch.Len(); i++ {
		if slices.Contains(javaTypes[catch.Name(i)], typ) {
			return i
		}
	}
	return -1
}
