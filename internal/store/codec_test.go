package store

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// equal compares two state values as BPL does: by Go type and content.
func equal(a, b any) bool { return value.NewList(a).Equal(value.NewList(b)) }

// opaque is a runtime's value that is not data, and prints itself, as
// kafka-output's does.
type opaque struct{}

func (opaque) String() string { return "(opaque)" }

// TestCodec round-trips state values exactly, and refuses what is not
// data.
func TestCodec(t *testing.T) {
	l := value.NewList(int64(1), 3.0, "s", []byte{0, 1}, nil, true, false, value.Reference("r"))
	l.AppendNamed("nested", value.NewList(math.Inf(-1), int64(math.MinInt64)))
	for _, v := range []any{nil, int64(-7), 3.0, "", "é", []byte{}, l} {
		raw, err := Encode(nil, v)
		if err != nil {
			t.Fatal(v, err)
		}
		back, err := Decode(raw)
		if err != nil || !equal(back, v) || reflect.TypeOf(back) != reflect.TypeOf(v) {
			t.Errorf("%s came back as %s (%T), %v", value.Format(v), value.Format(back), back, err)
		}
	}
	if _, err := Encode(nil, 3); err != nil { // a Go int converts
		t.Error(err)
	}
	for _, v := range []any{opaque{}, value.NewList("a", value.NewList(opaque{})), time.Second} {
		_, err := Encode(nil, v)
		if want := "cannot be kept in a store (only data:"; !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s as state: %v, want %q", value.Format(v), err, want)
		}
	}
	if _, err := Encode(nil, struct{}{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a struct as state: %v", err)
	}
	cyc := value.NewList(int64(1))
	cyc.MarkShared() // as BPL's put marks a list it puts into itself
	cyc.Append(cyc)
	if _, err := Encode(nil, cyc); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "contains itself") {
		t.Errorf("a list that contains itself as state: %v", err)
	}
	for _, bad := range [][]byte{nil, {2}, {1}, {1, tagList, 200}, {1, tagString, 5, 'a'}, {1, tagInt}, {1, 99}, {1, tagNull, 0}} {
		if _, err := Decode(bad); !errors.Is(err, ErrDeserialization) {
			t.Errorf("decode %v: %v", bad, err)
		}
	}
}

// FuzzDecode feeds the decoder anything: an error or a value that
// encodes back to the same bytes, never a panic.
func FuzzDecode(f *testing.F) {
	for _, v := range []any{nil, int64(5), 2.5, "x", value.NewList("a", value.NewList(int64(1)))} {
		raw, _ := Encode(nil, v)
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b)
		if err != nil {
			return
		}
		raw, err := Encode(nil, v)
		if err != nil {
			t.Fatalf("%v decoded to %s, which does not encode: %v", b, value.Format(v), err)
		}
		if again, err := Decode(raw); err != nil || !equal(again, v) {
			t.Fatalf("%v: %s encodes to %v, which decodes to %v, %v", b, value.Format(v), raw, again, err)
		}
	})
}
