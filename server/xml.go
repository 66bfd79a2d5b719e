package server

import (
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/brain4it/kafkabpl/value"
)

// xmlChildren is the name of the element holding a tag's children, as
// brain4it's XMLParser names it.
const xmlChildren = "*"

// formatXML writes v as brain4it's XMLPrinter does: a list is a tag, its
// first element the tag's name, its named elements (but *) attributes, its
// element * the children (a list of them, or one); anything else is text,
// a space between two texts in a row. A list that contains itself, which
// BPL allows as brain4it does, has no XML: it is an InvalidArgument
// rather than a walk without end.
func formatXML(v any) (string, error) {
	if value.MayCycle() && value.Cyclic(v) {
		return "", fmt.Errorf("%w: a list that contains itself cannot be written in XML", value.ErrInvalidArgument)
	}
	var b strings.Builder
	sep := false
	writeXML(&b, v, &sep)
	return b.String(), nil
}

func writeXML(b *strings.Builder, v any, sep *bool) {
	l, ok := v.(*value.List)
	if !ok {
		if *sep {
			b.WriteByte(' ')
		}
		xml.EscapeText(b, []byte(xmlText(v)))
		*sep = true
		return
	}
	if l.Len() == 0 {
		return
	}
	tag := xmlText(l.At(0))
	b.WriteString("<" + tag)
	for i := 1; i < l.Len(); i++ {
		name := l.Name(i)
		if name == "" || name == xmlChildren || !isLetter(name[0]) {
			continue
		}
		b.WriteString(" " + name + `="`)
		xml.EscapeText(b, []byte(xmlText(l.At(i))))
		b.WriteString(`"`)
	}
	b.WriteString(">")
	*sep = false
	if c, ok := l.Get(xmlChildren); ok {
		if cl, ok := c.(*value.List); ok {
			for _, e := range cl.Values() {
				writeXML(b, e, sep)
			}
		} else {
			writeXML(b, c, sep)
		}
	}
	b.WriteString("</" + tag + ">")
	*sep = false
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// xmlText is a value as XML text: a string as it is, else BPL text.
func xmlText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return value.Format(v)
}
