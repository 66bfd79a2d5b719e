package kafkabpl

import (
	"fmt"

	"github.com/brain4it/kafkabpl/value"
)

// The wording of error messages: how a value is shown. How a misspelled
// name is corrected and how a number is read as an integer are in package
// internal/words, shared with the BPL functions.

// typeName names a BPL value's type for messages that must not show it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	case string:
		return "string"
	case []byte:
		return "byte array"
	case *value.List:
		return "list"
	}
	return fmt.Sprintf("%T", v)
}
