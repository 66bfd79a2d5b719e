package bpl

import (
	"context"
	"io"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// TestLazyArguments calls functions with a lazy first argument, as the
// library calls a windowed stream's aggregate: a body that never reads the
// parameter never makes it; one that does makes it once, however often it
// reads it, and no script sees anything but the value made.
func TestLazyArguments(t *testing.T) {
	in := New(io.Discard)
	defer in.Close()
	if !value.TakesLazy(&Function{}) || value.TakesLazy(value.Reference("+")) {
		t.Fatal("Accepts: want *Function only")
	}
	for _, c := range []struct {
		fn    string
		want  string
		makes int
	}{
		{`(function (in acc) (+ acc 1))`, `3`, 0},
		{`(function (in acc) (+ acc (get in "n") (get in "n")))`, `12`, 1},
		{`(function (in acc) (list in (local-scope)))`, `((<#1> "n" => 5) ("acc" => 2 "in" => <@1>))`, 1},
		{`(function args args)`, `(("n" => 5) 2)`, 1},
		{`(function (in acc) (set in 7) in)`, `7`, 0},
		{`(function (in acc) (eval (list get (reference "in") "n")))`, `5`, 1},
	} {
		v, err := in.Eval(context.Background(), parseOne(t, c.fn))
		if err != nil {
			t.Fatalf("%s: %v", c.fn, err)
		}
		makes := 0
		rec := &value.Lazy{Arg: "n", Make: func(arg any) any {
			makes++
			l := &value.List{}
			l.AppendNamed(arg.(string), int64(5))
			return l
		}}
		args := &value.List{}
		args.Append(rec)
		args.Append(int64(2))
		got, err := v.(*Function).Call(context.Background(), args)
		if err != nil {
			t.Errorf("%s: %v", c.fn, err)
			continue
		}
		if s := value.Format(got); s != c.want || makes != c.makes {
			t.Errorf("%s = %s, made %d times; want %s, %d", c.fn, s, makes, c.want, c.makes)
		}
	}
}

func parseOne(t *testing.T, src string) any {
	t.Helper()
	vs, err := value.Parse(src)
	if err != nil || len(vs) != 1 {
		t.Fatalf("%s: %v", src, err)
	}
	return vs[0]
}
