package bpl

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// run runs src on a fresh interpreter and returns the last value in BPL
// text, what it printed, and the error.
func run(t *testing.T, in *Interp, src string) (string, string, error) {
	t.Helper()
	var out strings.Builder
	if in == nil {
		in = New(&out)
	} else {
		in.out = &out
	}
	var last any
	err := in.Run(context.Background(), "test.bpl", src, func(v any) { last = v })
	return value.Format(last), out.String(), err
}

// valueTest is a script and the value of its last expression in BPL text.
type valueTest struct {
	src, want string
}

func checkValues(t *testing.T, tests []valueTest) {
	t.Helper()
	for _, tt := range tests {
		got, _, err := run(t, nil, tt.src)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s = %s, want %s", tt.src, got, tt.want)
		}
	}
}

// errorTest is a script that must fail with an exception of type typ
// whose message contains msg, on line line (when not 0).
type errorTest struct {
	src, typ, msg string
	line          int
}

func checkErrors(t *testing.T, tests []errorTest) {
	t.Helper()
	for _, tt := range tests {
		_, _, err := run(t, nil, tt.src)
		var e *Exception
		if !errors.As(err, &e) {
			t.Errorf("%s: error %v, want an exception %s", tt.src, err, tt.typ)
			continue
		}
		if e.Type != tt.typ || !strings.Contains(e.Message, tt.msg) || (tt.line != 0 && e.Line != tt.line) {
			t.Errorf("%s: got %s: %q on line %d, want %s: %q on line %d", tt.src, e.Type, e.Message, e.Line, tt.typ, tt.msg, tt.line)
		}
		if e.File != "test.bpl" {
			t.Errorf("%s: File = %q, want test.bpl", tt.src, e.File)
		}
		if ty, _ := e.Value.At(0).(string); ty != e.Type {
			t.Errorf("%s: Value %s does not start with the type", tt.src, e.Value)
		}
	}
}
