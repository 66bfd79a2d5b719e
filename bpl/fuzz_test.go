package bpl

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// runSeeds are scripts for FuzzRun: every builtin, and the ways to fail.
var runSeeds = []string{
	`(print "a" 1 2.5 (1 "k" => x) null)`,
	`(set i 0) (while (< i 10) (set i (+ i 1))) i`,
	`(set fact (function (n) (if (<= n 1) 1 (* n (fact (- n 1)))))) (fact 20)`,
	`(set f (function args args)) (f 1 "k" => 2)`,
	`(set r (list)) (for-each ("a" => 1 2) (k v) (push r k v)) r`,
	`(try (throw "E" "m") (ex "E" => (get ex "message") "*" => null) (print "f"))`,
	`(set a ("b" => (10 20))) (set a/b/0 7) a/b/0`,
	`(local a "b" => 2) (put (list a b) "c" 3)`,
	`(concat "a" 1 (1) null) (concat (1) (2))`,
	`(string (quote (a b))) (number "0x1F") (size "héllo")`,
	`(= 1 1.0) (!= (1) (1)) (< "a" "b") (>= 1 2 3)`,
	`(and true (or false 1) (not null))`,
	`(/ 7 2) (/ 1 0) (- 5) (*)`,
	`(assert (= 1 2) "no")`,
	`(### "comment") (sleep 1) (when true 1)`,
	`(set f (function (n) (f n))) (f 1)`,
	`(set s "ab") (while true (set s (concat s s)))`,
	`(set l (list)) (push l l)`,
	`(call nope) (call 5)`,
	`(while true (try (sleep 1000) (ex "*" => 1)))`,
	`(do (quote) (if) (get) (put) (set))`,
	`(set a (list 1)) (set i 0) (while (< i 70) (set a (list a a)) (set i (+ i 1))) (print a)`,
	`(set h ("a b" => (1 2))) (set h/"a b"/0 3) (reference-list h/"a b"/1) (reference ("h" "x/y" 2))`,
	`(set f (function (x) x)) (list (=== f (clone f true)) (try (throw "E") (ex "E" => ex)) (tan 1))`,
	")", `(a => `,
}

// FuzzRun runs arbitrary scripts with no library functions: they must
// never panic, and must end soon after their context does, with nil, an
// *Exception or a *value.SyntaxError.
func FuzzRun(f *testing.F) {
	for _, s := range runSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := New(io.Discard).Run(ctx, "fuzz.bpl", src, nil)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Run took %v with a 20ms context", d)
		}
		if err == nil {
			return
		}
		var e *Exception
		var se *value.SyntaxError
		switch {
		case errors.As(err, &e):
			if e.Type == "" || e.Value == nil {
				t.Fatalf("exception without a type or value: %#v", e)
			}
		case errors.As(err, &se):
		default:
			t.Fatalf("Run error %T %v is neither an exception nor a syntax error", err, err)
		}
	})
}
