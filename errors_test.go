package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// TestExceptionTypesDocumented checks the sentinels' table against the
// types ErrorType's documentation lists, both ways.
func TestExceptionTypesDocumented(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var doc string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "ErrorType" {
			doc = fd.Doc.Text()
		}
	}
	var documented []string
	for _, m := range regexp.MustCompile(`"([A-Za-z]+)"`).FindAllStringSubmatch(doc, -1) {
		documented = append(documented, m[1])
	}
	var tabled []string
	for _, e := range exceptionTypes {
		tabled = append(tabled, e.typ)
		if !slices.Contains(documented, e.typ) {
			t.Errorf("type %s of %v is not in ErrorType's documentation", e.typ, e.err)
		}
	}
	for _, d := range documented {
		if d != "KafkaError" && !slices.Contains(tabled, d) {
			t.Errorf("ErrorType's documentation lists %s, which no sentinel has", d)
		}
	}
}

// bplException is a BPL runtime's exception, as a transform raises it.
type bplException struct{}

func (bplException) Error() string         { return "thrown" }
func (bplException) ExceptionType() string { return "Thrown" }

func TestErrorType(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{NewError("kafka-poll", Errorf(ErrUnknownHandle, "x")), "UnknownHandle"},
		{NewError("kafka-send", context.DeadlineExceeded), "Timeout"},
		{NewError("kafka-poll", context.Canceled), "Interrupted"},
		{fmt.Errorf("dead letter: %w", ErrLate), "LateRecord"},
		{NewError("kafka-commit", ErrNotCommitted), "KafkaError"},
		{errors.New("from the brokers"), "KafkaError"},
		{NewError("kafka-stream", Wrapf(ErrInvalidArgument, bplException{}, "transform")), "Thrown"},
	} {
		if got := ErrorType(tt.err); got != tt.want {
			t.Errorf("ErrorType(%v) = %s, want %s", tt.err, got, tt.want)
		}
		// A BPL runtime asks value.ErrorType: the package's own errors
		// answer the same.
		var e *Error
		if errors.As(tt.err, &e) {
			if got := value.ErrorType(tt.err); got != tt.want {
				t.Errorf("value.ErrorType(%v) = %s, want %s", tt.err, got, tt.want)
			}
		}
	}
}
