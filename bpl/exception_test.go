package bpl

import "testing"

// The exceptions brain4it's core raises under its own names: assert's
// AssertFailed, and InvalidReference and MissingArgument for reference
// arguments; a script catches them by those names.
func TestBrain4itExceptionNames(t *testing.T) {
	checkValues(t, []valueTest{
		{`(try (assert false) (ex "AssertFailed" => (get ex 0)))`, `"AssertFailed"`},
		{`(try (assert (= 1 2)) (ex "AssertFailed" => (get ex "message")))`, `"(= 1 2)"`},
		{`(try (assert false "Not equals") (ex "AssertFailed" => (get ex "message")))`, `"Not equals"`},
		// brain4it's suite: a handler of another type first does not catch it
		{`(try (do (assert false) (throw "AssertError")) (ex "AssertError" => 1 "AssertFailed" => 2))`, `2`},
		{`(try (assert false) (ex "AssertionError" => "old name"))`, `"old name"`},
		{`(try (exists 5) (ex "InvalidReference" => (get ex 0)))`, `"InvalidReference"`},
		{`(try (reference 5) (ex "InvalidReference" => 1))`, `1`},
		{`(try (delete "x") (ex "InvalidReference" => 1))`, `1`},
		{`(try (set 5 1) (ex "InvalidReference" => 1))`, `1`},
		{`(try (exists) (ex "MissingArgument" => (get ex 0)))`, `"MissingArgument"`},
		{`(try (set-local) (ex "MissingArgument" => 1))`, `1`},
		// kafkabpl's scripts of before still catch them as InvalidArgument
		{`(try (exists 5) (ex "InvalidArgument" => 1))`, `1`},
		{`(try (exists) (ex "InvalidArgument" => 1))`, `1`},
	})
	checkErrors(t, []errorTest{
		{`(try (assert false) (ex "InvalidReference" => 1))`, "AssertFailed", "false", 1},
		{`(try (exists 5) (ex "MissingArgument" => 1))`, "InvalidReference", "exists: want a variable name or a reference, got 5", 1},
	})
}

// (set (reference "a") v) sets a, and a path of one part, /a, stands for a.
func TestSetReference(t *testing.T) {
	checkValues(t, []valueTest{
		{`(set (reference "a") 44) a`, `44`},
		{`(set l (1 2)) (set (reference ("l" 1)) 9) l`, `(1 9)`},
		{`(reference ("action"))`, `/action`},
		{`(= (reference ("action")) (quote /action))`, `true`},
		{`(set action 3) (eval (reference ("action")))`, `3`},
		{`(set /b 4) b`, `4`},
		{`(reference-list /b)`, `("b")`},
	})
}

// A throw without a message makes an exception value without one, so a
// handler reading its message gets null; with a message, it is the text
// of the value given.
func TestThrowMessage(t *testing.T) {
	checkValues(t, []valueTest{
		{`(try (throw "Overheat") (ex "*" => ex))`, `("Overheat")`},
		{`(try (throw "Overheat") (ex "*" => (get ex "message")))`, `null`},
		{`(try (throw "Overheat") (ex "Overheat" => (has ex "message")))`, `false`},
		{`(try (throw "Overheat" "sensor 4") (ex "*" => (get ex "message")))`, `"sensor 4"`},
		{`(try (throw "Overheat" 41.5) (ex "*" => ex))`, `("Overheat" "message" => "41.5")`},
		{`(try (throw "Overheat" null) (ex "*" => (get ex "message")))`, `"null"`},
	})
	checkErrors(t, []errorTest{
		{`(throw "Overheat")`, "Overheat", "", 1},
	})
}
