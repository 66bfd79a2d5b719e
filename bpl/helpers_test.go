package bpl

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// run runs src on a fresh interpreter and returns the last value in BPL
// text, what it printed, and the error.
func run(t *testing.T, in *Interp, src string) (string, string, error) {
	t.Helper()
	var out strings.Builder
	fresh := in == nil
	if fresh {
		in = New(&out)
	} else {
		in.out = &out
	}
	var last any
	err := in.Run(context.Background(), "test.bpl", src, func(v any) { last = v })
	got, printed := value.Format(last), out.String()
	if fresh && deterministic(src) {
		// The compiled evaluator must give what walking the tree gives.
		var wout strings.Builder
		w := New(&wout)
		w.walk = true
		var wlast any
		werr := w.Run(context.Background(), "test.bpl", src, func(v any) { wlast = v })
		if wgot := value.Format(wlast); wgot != got || wout.String() != printed || describeErr(werr) != describeErr(err) {
			t.Errorf("%s: compiled gives %s, printed %q, error %s; walking the tree %s, printed %q, error %s",
				src, got, printed, describeErr(err), wgot, wout.String(), describeErr(werr))
		}
	}
	return got, printed, err
}

// deterministic reports whether src gives the same each time it runs:
// whether it uses no clock, randomness, executors nor the network.
func deterministic(src string) bool {
	for _, w := range []string{"random", "date", "spawn", "timer", "sleep", "http", "executors", "wait", "notify", "sync", "kill"} {
		if strings.Contains(src, w) {
			return false
		}
	}
	return true
}

// describeErr is an error in text, with an exception's type, message,
// line and code.
func describeErr(err error) string {
	var e *Exception
	if !errors.As(err, &e) {
		if err == nil {
			return "none"
		}
		return err.Error()
	}
	return e.Type + ": " + e.Message + " on line " + strconv.Itoa(e.Line) + " in " + value.Format(e.Code) + " of " + e.File
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
