package store

import (
	"errors"
	"fmt"

	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
)

// The kinds of the package's errors, for errors.Is: the first two are the
// values package kafkabpl gives the same names, so that its callers see
// a store's errors as its own.
var (
	// ErrInvalidArgument: a value a store cannot keep (a function, a list
	// that contains itself, ...), or an aggregate that returned null. It
	// is [value.ErrInvalidArgument].
	ErrInvalidArgument = value.ErrInvalidArgument
	// ErrDeserialization: bytes that are not a state value's encoding. It
	// is [serde.ErrDeserialization].
	ErrDeserialization = serde.ErrDeserialization
	// ErrLate: an input of a windowed store came after its windows
	// closed (see [Store.Fold]).
	ErrLate = errors.New("late record")
	// ErrNotHeld: a read of a partition the store does not hold (not
	// assigned to this process, or not restored yet).
	ErrNotHeld = errors.New("partition not held")
	// ErrKind: a read of the other kind of store: Get and Range read a
	// per-key store, Windows a windowed one.
	ErrKind = errors.New("not a read of this kind of store")
	// ErrLocked: a state directory another process (or another store of
	// this one) holds open; the message names the holder.
	ErrLocked = errors.New("state directory locked")
)

// kindError is an error of one kind with its own message, which does not
// repeat the kind's.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }

func (e *kindError) Unwrap() error { return e.kind }

// errorf returns an error of the given kind whose message is the
// formatted text.
func errorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
