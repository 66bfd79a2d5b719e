package functions

import (
	"bytes"
	"context"
	"strings"

	"github.com/brain4it/kafkabpl/value"
)

// bplCopy is (kafka-copy x): x with its text in memory of its own. A
// kafka-poll message's key and value share one allocation with every
// other message of its poll (see kafkabpl.Polled.List), so that a script
// keeping one message of each of many polls keeps each poll's text; the
// copy keeps only its own. A string or bytes are copied; a list is copied
// at every depth, its names and texts too, each sublist once (one held
// twice stays shared, one that contains itself ends); numbers, booleans,
// null and functions are given as they are.
func bplCopy(_ context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-copy", l)
	if err != nil {
		return nil, err
	}
	return copier{}.value(a.pos[0]), nil
}

// copier copies values for kafka-copy, keeping the copy of each list.
type copier map[*value.List]*value.List

func (c copier) value(v any) any {
	switch v := v.(type) {
	case string:
		return strings.Clone(v)
	case []byte:
		return bytes.Clone(v)
	case *value.List:
		return c.list(v)
	}
	return v
}

func (c copier) list(l *value.List) *value.List {
	if n, ok := c[l]; ok {
		return n
	}
	n := &value.List{}
	c[l] = n
	if l.Tagged() {
		n.MarkShared() // it may contain itself, as l does
	}
	n.Grow(l.Len())
	for name, v := range l.All() {
		n.AppendNamed(strings.Clone(name), c.value(v))
	}
	return n
}
