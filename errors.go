package kafkabpl

import (
	"context"
	"errors"
	"fmt"

	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Sentinel errors. Every error the package returns wraps one of them, so
// callers can test with errors.Is; errors the brokers report also keep
// franz-go's kerr code reachable, and a call cut short by its context
// keeps the context's error (a passed deadline is also an ErrTimeout;
// a cancelled call wraps context.Canceled). BPL scripts see them as
// exceptions whose type is [ErrorType].
var (
	// ErrUnknownHandle: the id names no live handle (never created, or
	// destroyed).
	ErrUnknownHandle = errors.New("unknown handle")
	// ErrWrongKind: the id is live but of another kind, such as polling a
	// producer.
	ErrWrongKind = errors.New("wrong kind of handle")
	// ErrInvalidConfig: a config key is unknown, or its value has the
	// wrong type or is out of range. It is [serde.ErrInvalidConfig], which
	// a schema registry's config wraps too.
	ErrInvalidConfig = serde.ErrInvalidConfig
	// ErrInvalidArgument: a function got the wrong number or type of
	// arguments, or a value its serializer cannot encode. It is
	// [value.ErrInvalidArgument], which BPL text that does not parse
	// wraps too.
	ErrInvalidArgument = value.ErrInvalidArgument
	// ErrTimeout: the brokers did not answer in time; the message names
	// the servers.
	ErrTimeout = errors.New("timeout")
	// ErrClosed: the handle or library was closed while the call ran.
	ErrClosed = errors.New("closed")
	// ErrNotCommitted: a commit could not cover records a poll returned,
	// because the group took their partitions from this consumer first
	// (a rebalance, or the consumer's session ended); the partitions' next
	// owner will deliver them again. Java's consumer throws
	// CommitFailedException for this. For a share consumer: the brokers
	// refused acknowledgements (a record's lock had ended), and the group
	// delivers those records again. Its BPL type is "KafkaError".
	ErrNotCommitted = errors.New("not committed")
	// ErrDeserialization: a received key or value is not what the
	// consumer's deserializer reads (see [Record.Err]). Its BPL type is
	// "DeserializationError". It is [serde.ErrDeserialization].
	ErrDeserialization = serde.ErrDeserialization
	// ErrNotSubscribed: a poll of a consumer subscribed to no topic, which
	// would return nothing for ever (a missing subscribe). Java's consumer
	// throws IllegalStateException. Its BPL type is "NotSubscribed".
	ErrNotSubscribed = errors.New("not subscribed")
	// ErrSchemaRegistry: the schema registry could not be reached, refused a
	// request, or does not hold the schema asked for (an unknown id or
	// subject). The message names the registry's URL. Its BPL type is
	// "SchemaRegistryError". It is [serde.ErrSchemaRegistry].
	ErrSchemaRegistry = serde.ErrSchemaRegistry
	// ErrRegistryUnavailable: the schema registry could not be reached,
	// did not answer in time, or failed (HTTP 5xx); it comes with
	// ErrSchemaRegistry. A poll holds back the records it cannot read for
	// that reason and fails with it, and a stream waits for the registry:
	// such a record is not a bad one, and is never skipped or committed
	// past.
	ErrRegistryUnavailable = serde.ErrRegistryUnavailable
	// ErrLate: an input of a windowed stream came after its windows
	// closed; what such a stream dead-letters wraps it (see
	// [DeadLetterLate]). Its BPL type is "LateRecord".
	ErrLate = store.ErrLate
	// ErrNotReady: a store query's key is in a partition that is being
	// restored from its changelog, or whose owner the group is still
	// settling (a rebalance, or a member that left and whose session has
	// not ended yet): asked again later, it is answered. The message names
	// the store and the partition. Its BPL type is "NotReady".
	ErrNotReady = errors.New("not ready")
	// ErrNotHeld: a store query's key is in a partition that another
	// process of the stream's group holds, and this one cannot ask it:
	// no forwarder is set (see package stream's Runtime.SetStoreForwarder; kafkabpl
	// serve sets one), or the owner advertises no query endpoint. The
	// message names the partition and its owner. Its BPL type is
	// "NotHeld".
	ErrNotHeld = errors.New("not held here")
	// ErrKafka marks errors the brokers or the client reported that no
	// other sentinel names (a kerr code stays reachable beside it); its
	// BPL type is "KafkaError".
	ErrKafka = errors.New("kafka error")
)

// exceptionTypes is each sentinel's BPL exception type, in the order
// ErrorType tries them.
var exceptionTypes = []struct {
	err error
	typ string
}{
	{ErrUnknownHandle, "UnknownHandle"},
	{ErrWrongKind, "WrongKind"},
	{ErrInvalidConfig, "InvalidConfig"},
	{ErrInvalidArgument, "InvalidArgument"},
	{ErrTimeout, "Timeout"},
	{ErrClosed, "Closed"},
	{ErrDeserialization, "DeserializationError"},
	{ErrNotSubscribed, "NotSubscribed"},
	{context.DeadlineExceeded, "Timeout"}, // a schema registry that did not answer too
	{ErrSchemaRegistry, "SchemaRegistryError"},
	{ErrLate, "LateRecord"},
	{ErrNotReady, "NotReady"},
	{ErrNotHeld, "NotHeld"},
	{context.Canceled, "Interrupted"},
}

// Error is the error every function of the package returns: the BPL
// function that failed and why. Its message starts with the function name,
// as in `kafka-poll: unknown consumer id "c12..."`.
type Error struct {
	Func string // the BPL function, such as "kafka-send"
	Err  error  // wraps one of the sentinel errors or a kerr error
}

// NewError returns the error of BPL function fn, for packages built over
// the Library (package stream) and the package itself. A context error
// passed through bare gets the sentinel a caller tests for: a passed
// deadline is an ErrTimeout. An err that is already fn's is returned as
// it is.
func NewError(fn string, err error) *Error {
	if e, ok := err.(*Error); ok && e.Func == fn {
		return e // already said by fn: not "fn: fn: ..."
	}
	if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrTimeout) {
		err = &kindError{kind: ErrTimeout, cause: err}
	}
	return &Error{fn, err}
}

// Error returns the function's name, a colon and what went wrong.
func (e *Error) Error() string { return e.Func + ": " + e.Err.Error() }

// Unwrap returns the cause, so errors.Is sees the sentinels.
func (e *Error) Unwrap() error { return e.Err }

// ErrorType returns the BPL exception type of err: "UnknownHandle",
// "WrongKind", "InvalidConfig", "InvalidArgument", "Timeout" (a deadline
// passed too), "Closed", "DeserializationError", "NotSubscribed",
// "SchemaRegistryError", "LateRecord", "NotReady", "NotHeld", "Interrupted" (the call's context
// was cancelled), or "KafkaError" for anything the brokers or the client
// reported, ErrNotCommitted among them. An error inside err that has an
// ExceptionType() string method (a BPL runtime's exception, raised by a
// function value the library called) gives its own type.
//
// The package's errors have that method too, so [value.ErrorType], which
// a BPL runtime calls, gives the same types for them.
func ErrorType(err error) string {
	var typed interface{ ExceptionType() string }
	if errors.As(err, &typed) {
		return typed.ExceptionType()
	}
	return sentinelType(err)
}

// sentinelType is the type exceptionTypes gives err, or "KafkaError".
func sentinelType(err error) string {
	for _, t := range exceptionTypes {
		if errors.Is(err, t.err) {
			return t.typ
		}
	}
	return "KafkaError"
}

// ExceptionType returns the BPL exception type of the error, as
// [ErrorType] gives it.
func (e *Error) ExceptionType() string { return ErrorType(e.Err) }

// kindError is an error of one sentinel kind with its own message and an
// optional cause; errors.Is sees both the kind and the cause.
type kindError struct {
	kind  error
	msg   string
	cause error
}

func (e *kindError) Error() string {
	switch {
	case e.cause == nil:
		return e.msg
	case e.msg == "":
		return e.cause.Error()
	}
	return e.msg + ": " + e.cause.Error()
}

// ExceptionType is the type of the error's cause when that is a BPL
// runtime's exception, else its kind's.
func (e *kindError) ExceptionType() string {
	var typed interface{ ExceptionType() string }
	if errors.As(e.cause, &typed) {
		return typed.ExceptionType()
	}
	return sentinelType(e)
}

func (e *kindError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// Errorf returns an error of kind, one of the sentinel errors, whose
// message is the formatted text, with no "invalid argument:" prefix in
// front of it; errors.Is sees kind, and [ErrorType] types it as kind's.
// It is for packages built over the Library (package stream), whose
// errors read as the package's own.
func Errorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// Wrapf is Errorf with a cause appended to the message and kept for
// errors.Is.
func Wrapf(kind, cause error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...), cause: cause}
}

// isKafkaErr reports whether err carries a Kafka protocol error code.
func isKafkaErr(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke)
}

// errorValue is err as a BPL status list shows it: its text, or null for
// no error.
func errorValue(err error) any {
	if err == nil {
		return nil
	}
	return err.Error()
}
