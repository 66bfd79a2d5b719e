package bpl

import (
	"strings"
	"testing"
)

func TestStringNamedArguments(t *testing.T) {
	checkValues(t, []valueTest{
		{`(string 45)`, `"45"`},
		{`(string 7 radix => 2)`, `"111"`},
		{`(string 23 radix => 16)`, `"17"`},
		{`(string 6.0 radix => 2)`, `"110"`},
		{`(string 2.5 radix => 2)`, `"2.5"`},
		{`(string -1 radix => 16)`, `"-1"`},
		{`(string -1 radix => 16 unsigned => true)`, `"ffffffffffffffff"`},
		{`(string -1 radix => 2 unsigned => true)`, `"` + strings.Repeat("1", 64) + `"`},
		{`(string (- 0 9223372036854775807 1) radix => 2)`, `"-1` + strings.Repeat("0", 63) + `"`},
		{`(string 5.3429 pattern => "0.00" locale => "es")`, `"5,34"`},
		{`(string 1234567.891 pattern => "#,##0.00")`, `"1,234,567.89"`},
		{`(string 1234567.891 pattern => "#,##0.00" locale => "de")`, `"1.234.567,89"`},
		{`(string 0.125 pattern => "0.00")`, `"0.12"`}, // half to even
		{`(string 0.375 pattern => "0.00")`, `"0.38"`},
		{`(string 0.5 pattern => "#.#")`, `"0.5"`},
		{`(string 0.5 pattern => "#.00")`, `".50"`},
		{`(string -0.001 pattern => "0.00")`, `"-0.00"`},
		{`(string 0.5 pattern => "0%")`, `"50%"`},
		{`(string 3 pattern => "EUR 0.00")`, `"EUR 3.00"`},
		{`(string 225 pattern => "unicode")`, `"á"`},
		{`(string "Hello" escape => true)`, `"\"Hello\""`},
		{`(string "Hello" escape => false)`, `"Hello"`},
		{`(string (1 2 3) format => "json")`, `"[1,2,3]"`},
		{`(string ("a" => 1 "b" => ("x" true null 2.5)) format => "json")`, `"{\"a\":1,\"b\":[\"x\",true,null,2.5]}"`},
		{`(string () format => "json")`, `"[]"`},
		{`(string (1 "k" => 2) format => "json")`, `"[1,2]"`},
		{`(string (1 2) format => "bpl")`, `"(1 2)"`},
	})
	checkErrors(t, []errorTest{
		{`(string 1 radix => 1)`, "InvalidArgument", "string: radix is 1, want an integer from 2 to 36", 1},
		{`(string 1 colour => 1)`, "InvalidArgument", `string: unknown argument "colour"`, 1},
		{`(string 1 2)`, "InvalidArgument", "string: want 1 argument besides the named ones, got 2", 1},
		{`(string 1.5 pattern => "0.0E0")`, "InvalidArgument", "is not supported here", 1},
		{`(string 1.5 pattern => "0.0" locale => "xx")`, "InvalidArgument", `locale "xx" is not supported here`, 1},
		{`(string -1 pattern => "unicode")`, "InvalidArgument", "string: -1 is no Unicode code point", 1},
		{`(string (list 1 (/ 0 0.0)) format => "json")`, "InvalidArgument", "string: NaN cannot be written in JSON", 1},
		{`(string (1) format => "xml")`, "InvalidArgument", `string: format "xml" is not supported`, 1},
	})
}

func TestNumberNamedArguments(t *testing.T) {
	checkValues(t, []valueTest{
		{`(number "1010" radix => 2)`, `10`},
		{`(number "-ff" radix => 16)`, `-255`},
		{`(subtype-of (number "1010" radix => 2 type => "double"))`, `"double"`},
		{`(number "45.6" pattern => "0.0" locale => "en")`, `45.6`},
		{`(number "45,6" pattern => "0.0" locale => "es")`, `45.6`},
		{`(number "1.234,5 kg" pattern => "#,##0.0" locale => "es")`, `1234.5`},
		{`(subtype-of (number "45" pattern => "0.0"))`, `"integer"`},
		{`(number 7.4 type => "integer")`, `7`},
		{`(number 7.9 type => "long")`, `7`},
		{`(number 1e12 type => "integer")`, `2147483647`},
		{`(number 3 type => "double")`, `3`},
		{`(subtype-of (number 3 type => "double"))`, `"double"`},
	})
	checkErrors(t, []errorTest{
		{`(number "12" radix => 2)`, "InvalidArgument", `number: the string "12" is not an integer in base 2`, 1},
		{`(number "abc" pattern => "0.0")`, "InvalidArgument", `number: the string "abc" is not a number`, 1},
		{`(number 1 type => "short")`, "InvalidArgument", `number: type "short" is not one of`, 1},
		{`(number "1" base => 2)`, "InvalidArgument", `number: unknown argument "base"`, 1},
	})
}
