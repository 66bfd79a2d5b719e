package serde

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error of the package wraps one of them, or
// value.ErrInvalidArgument (a value its serializer cannot encode), or
// the error of a context that ended (see [Serde.Encode]), so callers test
// with errors.Is. Package kafkabpl returns these same values under the
// same names, and gives them their BPL exception types.
var (
	// ErrInvalidConfig: a [RegistryConfig] is not valid (a URL that is not
	// http or https, a schema given inline that does not parse, a subject
	// strategy without the schema it needs), or a schema serde is used
	// without a registry.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrDeserialization: bytes are not what a deserializer reads; the
	// error says which part (key, value), why and, for a schema
	// deserializer whose registry failed, wraps [ErrSchemaRegistry] too.
	ErrDeserialization = errors.New("cannot deserialize")
	// ErrSchemaRegistry: the schema registry could not be reached within
	// its timeout, refused a request, or does not hold the schema asked
	// for (an unknown id or subject), or gave a schema that does not
	// parse. The message names the registry's URL, never its password.
	ErrSchemaRegistry = errors.New("schema registry")
	// ErrRegistryUnavailable: the schema registry could not be reached,
	// did not answer within its timeout, or answered with a server error
	// (HTTP 5xx). It always comes with [ErrSchemaRegistry]. It says
	// nothing of the record at hand: a consumer holds such a record back
	// until the registry answers, where a record the registry does answer
	// for (an unknown schema id) is an error of its own.
	ErrRegistryUnavailable = errors.New("schema registry unavailable")
)

// unavailable is an error of the registry that is its unavailability:
// it wraps ErrSchemaRegistry and ErrRegistryUnavailable.
type unavailable struct{ err error }

func (e *unavailable) Error() string { return e.err.Error() }
func (e *unavailable) Unwrap() []error {
	return []error{ErrRegistryUnavailable, e.err}
}

// kindError is an error of one of the package's kinds (a sentinel) whose
// message is err's alone: "message 2: ..." rather than "invalid argument:
// message 2: ...". errors.Is sees the kind and err's chain both.
type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// errorf returns an error of kind whose message is the formatted text.
func errorf(kind error, format string, args ...any) error {
	return &kindError{kind, fmt.Errorf(format, args...)}
}

// wrapf is errorf with cause appended to the message and kept for
// errors.Is.
func wrapf(kind, cause error, format string, args ...any) error {
	return &kindError{kind, fmt.Errorf(format+": %w", append(args, cause)...)}
}

// RecordError is a value that does not fit its schema, as a schema
// serializer's [Serde.Encode] reports it: unlike the other errors of
// Encode, it fails that record alone, so a producer may send the call's
// other records. Err says where in the value and why, and wraps
// value.ErrInvalidArgument.
type RecordError struct{ Err error }

// Error returns Err's message.
func (e *RecordError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *RecordError) Unwrap() error { return e.Err }
