package server

import (
	"context"
	"errors"

	"github.com/brain4it/kafkabpl/bpl"
)

// javaError is an error that brain4it's server raises as a Java
// exception, worded as brain4it words it, since a client may show or
// test it: typ is the exception's class's simple name (the type of the
// exception list a client gets), msg its message. is is the sentinel the
// error matches for Go callers (ErrModule, ErrNoSnapshot), or nil.
type javaError struct {
	typ, msg string
	is       error
}

func (e *javaError) Error() string         { return e.msg }
func (e *javaError) ExceptionType() string { return e.typ }
func (e *javaError) Is(target error) bool  { return e.is != nil && target == e.is }

// moduleError is an error about a module, as brain4it's ModuleManager
// and RestService raise it: an IOException but for the few they raise
// as a plain Exception.
func moduleError(typ, msg string) error {
	return &javaError{typ: typ, msg: msg, is: ErrModule}
}

// phaseError is a module's start or stop that failed: err is what its
// code raised; timedOut is whether it ran out of its 60 s.
type phaseError struct {
	module, phase string // phase is "start" or "stop"
	err           error
	timedOut      bool
}

func (e *phaseError) Error() string {
	return "module " + e.module + ": " + e.phase + " failed: " + e.err.Error()
}

func (e *phaseError) Unwrap() error { return e.err }

// brain4itError is the failed start or stop in err as brain4it's
// Module.start and stop raise it to module-start, module-stop and
// module-init: an Exception whose message is "Start failed: " (or
// "Stop failed: ") and what Java's Throwable.toString gives for the
// cause: org.brain4it.lang.BException and its message for an exception
// of BPL code, java.util.concurrent.TimeoutException when the code ran
// out of time. Any other error is given as it is.
func brain4itError(err error) error {
	var pe *phaseError
	if !errors.As(err, &pe) {
		return err
	}
	title := "Start failed: "
	if pe.phase == "stop" {
		title = "Stop failed: "
	}
	cause := pe.err.Error()
	var ex *bpl.Exception
	switch {
	case pe.timedOut:
		cause = "java.util.concurrent.TimeoutException"
	case errors.As(pe.err, &ex):
		cause = "org.brain4it.lang.BException"
		if ex.Message != "" {
			cause += ": " + ex.Message
		}
	}
	return &javaError{typ: "Exception", msg: title + cause}
}

// timedOut reports whether ctx ended by its own deadline while parent
// goes on: the code it bounded ran out of time.
func timedOut(ctx, parent context.Context) bool {
	return errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil
}
