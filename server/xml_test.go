package server

import (
	"errors"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// A list that contains itself has no XML: formatXML refuses it rather
// than write without end.
func TestXMLRefusesACycle(t *testing.T) {
	vs, err := value.Parse(`(<#1> "p" "*" => (<@1>))`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := formatXML(vs[0]); !errors.Is(err, value.ErrInvalidArgument) {
		t.Errorf("formatXML of a cycle: %v, want an InvalidArgument", err)
	}
	if got, err := formatXML(value.NewList("p", "hi")); err != nil || got != "<p></p>" {
		t.Errorf("formatXML of (\"p\" \"hi\"): %q, %v", got, err)
	}
}
