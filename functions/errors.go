package functions

import (
	"fmt"

	"github.com/brain4it/kafkabpl"
)

// The functions' own errors: arguments that are wrong. Every other error
// is the Library's, passed on as it is.

// fnError is the error of BPL function fn, as the Library's methods make
// theirs: its message starts with the function's name.
func fnError(fn string, err error) error { return &kafkabpl.Error{Func: fn, Err: err} }

// invalidArgument is an argument that is wrong: its message says what is
// wrong (with no "invalid argument:" in front), and errors.Is finds
// [kafkabpl.ErrInvalidArgument] in it.
type invalidArgument struct{ msg string }

// invalidf returns an invalidArgument whose message is the formatted text.
func invalidf(format string, v ...any) error {
	return &invalidArgument{fmt.Sprintf(format, v...)}
}

func (e *invalidArgument) Error() string { return e.msg }

func (e *invalidArgument) Unwrap() error { return kafkabpl.ErrInvalidArgument }

// ExceptionType is the BPL exception type of kafkabpl.ErrInvalidArgument,
// "InvalidArgument": the type of the root package's own errors of that
// kind, whatever error wraps this one (a stream's, say).
func (e *invalidArgument) ExceptionType() string {
	return kafkabpl.ErrorType(kafkabpl.ErrInvalidArgument)
}
