package bpl

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestString(t *testing.T) {
	checkValues(t, []valueTest{
		{`(downcase "ABCD123f")`, `"abcd123f"`},
		{`(downcase "ÀÉÎ")`, `"àéî"`},
		{`(downcase "")`, `""`},
		{`(upcase "Abc123")`, `"ABC123"`},
		{`(upcase "àé")`, `"ÀÉ"`},
		{`(upcase "")`, `""`},
		{`(trim " A sentence to trim.  ")`, `"A sentence to trim."`},
		{`(trim "\t\n x y \r\n")`, `"x y"`},
		{`(trim "   ")`, `""`},
		{`(trim "")`, `""`},
		{`(= (trim "\u00a0x\u00a0") "\u00a0x\u00a0")`, `true`},
		{`(length "Brain4it")`, `8`},
		{`(length "")`, `0`},
		{`(length "héllo")`, `5`},
		{`(substring "Federation" 2 4)`, `"de"`},
		{`(substring "Federation" 2)`, `"deration"`},
		{`(substring "Federation" 2 null)`, `"deration"`},
		{`(substring "Federation" 0 10)`, `"Federation"`},
		{`(substring "Federation" 10)`, `""`},
		{`(substring "Federation" 3 3)`, `""`},
		{`(substring "Federation" 2.7 4.2)`, `"de"`},
		{`(substring "" 0)`, `""`},
		{`(substring "héllo wörld" 1 7)`, `"éllo w"`},
		{`(substring "héllo wörld" 7)`, `"örld"`},
		{`(substr "Federation" 2 4)`, `"de"`},
		{`(locate-string "My car is red" "is")`, `7`},
		{`(locate-string "My car is red" "r")`, `5`},
		{`(locate-string "My car is red" "r" 7)`, `10`},
		{`(locate-string "My car is red" "r" 11)`, `-1`},
		{`(locate-string "My car is red" "r" -5)`, `5`},
		{`(locate-string "My car is red" "r" 100)`, `-1`},
		{`(locate-string "My car is red" "blue")`, `-1`},
		{`(locate-string "abc" "")`, `0`},
		{`(locate-string "abc" "" 2)`, `2`},
		{`(locate-string "abc" "" 9)`, `3`},
		{`(locate-string "" "")`, `0`},
		{`(locate-string "" "a")`, `-1`},
		{`(locate-string "héllo héllo" "llo" 3)`, `8`},
		{`(findstr "My car is red" "is")`, `7`},
		{`(split "My name is HAL")`, `("My" "name" "is" "HAL")`},
		{`(split "1,2,3" "\\,")`, `("1" "2" "3")`},
		{`(split "1,2,3" ",")`, `("1" "2" "3")`},
		{`(split "a,b,," ",")`, `("a" "b")`},
		{`(split ",a,,b" ",")`, `("" "a" "" "b")`},
		{`(split "," ",")`, `()`},
		{`(split "" ",")`, `("")`},
		{`(split "abc" ",")`, `("abc")`},
		{`(split "abc" "")`, `("a" "b" "c")`},
		{`(split "a1b22c" "\\d+")`, `("a" "b" "c")`},
		{`(split "a  b" " ")`, `("a" "" "b")`},
		{`(split "a  b" "\\s+")`, `("a" "b")`},
		{`(split "héllo" "")`, `("h" "é" "l" "l" "o")`},
		{`(match-string "Hello" ".*e.*")`, `true`},
		{`(match-string "Hello" "e")`, `false`},
		{`(match-string "Hello" "H|Hello")`, `true`},
		{`(match-string "Hello\n" "Hello$")`, `false`},
		{`(match-string "" "")`, `true`},
		{`(match-string "" "a*")`, `true`},
		{`(match-string "ABC" "(?i)abc")`, `true`},
		{`(match-string "2024-01-31" "\\d{4}-\\d{2}-\\d{2}")`, `true`},
		{`(replace-string "Hello" "ll" "r")`, `"Hero"`},
		{`(replace-string "Hello" "x" "r")`, `"Hello"`},
		{`(replace-string "" "x*" "-")`, `"-"`},
		{`(replace-string "abc" "x*" "-")`, `"-a-b-c-"`},
		{`(replace-string "a1b22" "\\d+" "#")`, `"a#b#"`},
		{`(replace-string "John Smith" "(\\w+) (\\w+)" "$2, $1")`, `"Smith, John"`},
		{`(replace-string "ab" "(a)(b)" "$0$0")`, `"abab"`},
		{`(replace-string "ab" "(a)(b)" "$1x$2")`, `"axb"`},
		{`(replace-string "ab" "(a)(b)" "$12")`, `"a2"`},
		{`(replace-string "abcdefghijkl" "(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)" "$12$11")`, `"lk"`},
		{`(replace-string "2024-01" "(?<y>\\d+)-(?<m>\\d+)" "${m}/${y}")`, `"01/2024"`},
		{`(replace-string "2024-01" "(?P<y>\\d+)-(?P<m>\\d+)" "${m}/${y}")`, `"01/2024"`},
		{`(replace-string "a.b" "\\." "\\$")`, `"a$b"`},
		{`(replace-string "a.b" "\\." "\\\\")`, `"a\\b"`},
		{`(replace-string "a.b" "\\." "\\x")`, `"axb"`},
	})
}

func TestStringErrors(t *testing.T) {
	checkErrors(t, []errorTest{
		{`(downcase)`, "InvalidArgument", "downcase: want 1 argument, got 0", 1},
		{`(downcase null)`, "InvalidArgument", "downcase: argument 1 is null, want a string", 1},
		{`(upcase 1)`, "InvalidArgument", "upcase: argument 1 is 1, want a string", 1},
		{`(trim (1))`, "InvalidArgument", "trim: argument 1 is the list (1), want a string", 1},
		{`(trim "a" "b")`, "InvalidArgument", "trim: want 1 argument, got 2", 1},
		{`(length null)`, "InvalidArgument", "length: argument 1 is null, want a string", 1},
		{`(substring "abc")`, "InvalidArgument", "substring: want 2 to 3 arguments, got 1", 1},
		{`(substring null 0)`, "InvalidArgument", "substring: argument 1 is null, want a string", 1},
		{`(substring "abc" null)`, "InvalidArgument", "substring: argument 2 is null, want an index", 1},
		{`(substring "abc" "1")`, "InvalidArgument", `substring: argument 2 is the string "1", want an index`, 1},
		{`(substring "abc" 0 "2")`, "InvalidArgument", `substring: argument 3 is the string "2", want an index`, 1},
		{`(substring "abc" -1)`, "InvalidArgument", "substring: index -1 out of range: the string has 3 characters", 1},
		{`(substring "abc" 4)`, "InvalidArgument", "substring: index 4 out of range: the string has 3 characters", 1},
		{`(substring "abc" 1 4)`, "InvalidArgument", "substring: index 4 out of range: the string has 3 characters", 1},
		{`(substring "abc" 2 1)`, "InvalidArgument", "substring: end index 1 is before start index 2", 1},
		{`(substr "abc" 5)`, "InvalidArgument", "substr: index 5 out of range", 1},
		{`(locate-string "abc")`, "InvalidArgument", "locate-string: want 2 to 3 arguments, got 1", 1},
		{`(locate-string "abc" null)`, "InvalidArgument", "locate-string: argument 2 is null, want a string", 1},
		{`(locate-string 5 "a")`, "InvalidArgument", "locate-string: argument 1 is 5, want a string", 1},
		{`(locate-string "abc" "a" "1")`, "InvalidArgument", `locate-string: argument 3 is the string "1", want an index`, 1},
		{`(findstr "abc" 1)`, "InvalidArgument", "findstr: argument 2 is 1, want a string", 1},
		{`(split)`, "InvalidArgument", "split: want 1 to 2 arguments, got 0", 1},
		{`(split null)`, "InvalidArgument", "split: argument 1 is null, want a string", 1},
		{`(split "a" 1)`, "InvalidArgument", "split: argument 2 is 1, want a string", 1},
		{`(split "a" "(")`, "InvalidArgument", `split: bad regular expression "(": missing closing )`, 1},
		{`(match-string "a")`, "InvalidArgument", "match-string: want 2 arguments, got 1", 1},
		{`(match-string "a" null)`, "InvalidArgument", "match-string: argument 2 is null, want a string", 1},
		{`(match-string "aa" "(a)\\1")`, "InvalidArgument", `match-string: bad regular expression "(a)\\1": invalid escape sequence`, 1},
		{`(match-string "ab" "a(?=b)")`, "InvalidArgument", `match-string: bad regular expression "a(?=b)": invalid or unsupported Perl syntax`, 1},
		{`(match-string "ab" "a(?<!b)")`, "InvalidArgument", "lookaround", 1},
		{`(match-string "ab" "a*+")`, "InvalidArgument", "possessive", 1},
		{`(match-string "a" "a{1000}{1000}")`, "InvalidArgument", `match-string: bad regular expression`, 1},
		{`(match-string "a" "` + strings.Repeat("a{1000}", 11) + `")`, "InvalidArgument", `is too complex (over 10000 instructions)`, 1},
		{`(replace-string "a" "a")`, "InvalidArgument", "replace-string: want 3 arguments, got 2", 1},
		{`(replace-string "a" "a" null)`, "InvalidArgument", "replace-string: argument 3 is null, want a string", 1},
		{`(replace-string "a" "[" "b")`, "InvalidArgument", `replace-string: bad regular expression "[": missing closing ]`, 1},
		{`(replace-string "a" "a" "$")`, "InvalidArgument", "replace-string: a $ in the replacement must be followed by a group number", 1},
		{`(replace-string "a" "a" "$$")`, "InvalidArgument", "must be followed by a group number", 1},
		{`(replace-string "a" "a" "$x")`, "InvalidArgument", "must be followed by a group number", 1},
		{`(replace-string "a" "a" "$1")`, "InvalidArgument", "replace-string: the regular expression has no group 1", 1},
		{`(replace-string "a" "(a)" "${x}")`, "InvalidArgument", `replace-string: the regular expression has no group named "x"`, 1},
		{`(replace-string "a" "(a)" "${x")`, "InvalidArgument", "replace-string: the replacement has a ${ without }", 1},
		{`(replace-string "a" "a" "b\\")`, "InvalidArgument", "replace-string: the replacement ends with a backslash", 1},
		// 2^12 matches of a 2^12-byte replacement each would be 2^24 bytes; 2^14 of them 2^28
		{`(set s "aaaaaaaaaaaaaaaa") (set i 0) (while (< i 10) (set s (concat s s)) (set i (+ i 1))) (set r (replace-string s "a" s)) (replace-string s "a" (concat s s s s))`, "InvalidArgument", "replace-string: the result would be longer than", 1},
	})
}

// A long match stops with the task's context.
func TestStringRegexInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	in := New(io.Discard)
	in.SetGlobal("s", strings.Repeat("ab", 1<<23))
	done := make(chan error, 1)
	go func() {
		done <- in.Run(ctx, "test.bpl", `(while true (replace-string s "(a|b)+?(a|b)*?b" "$1$2"))`, nil)
	}()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		var e *Exception
		if !errors.As(err, &e) || e.Type != "Interrupted" {
			t.Fatalf("got %v, want an Interrupted exception", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the run did not end within a minute of its cancellation")
	}
}
