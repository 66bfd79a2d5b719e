package store

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/brain4it/kafkabpl/value"
)

// The encoding of state values in a changelog: lossless, so that a value
// restored after a crash is the value the stream held (BPL text is not:
// 3.0 prints as 3, which reads back as an integer, and a []byte as a
// string). A value is a version byte (1), then the value: a tag byte and
// its payload. Integers are zig-zag varints, floats their 8 IEEE bytes
// big-endian, strings, bytes and references a uvarint length and the
// bytes, and a list its length, then for each element its name (a uvarint
// length and the bytes; 0 for none) and its value.

const stateVersion = 1

const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagBytes
	tagList
	tagReference
)

// maxStateDepth bounds the nesting of a state value, both ways, so that a
// corrupt changelog record cannot exhaust the stack.
const maxStateDepth = 1000

// Encode appends the encoding of v (a BPL value, or a Go value that
// converts to one) to dst. Functions and values that print themselves (a
// runtime's own, such as kafka-output's) have no encoding: they are
// refused, naming where in v they are.
func Encode(dst []byte, v any) ([]byte, error) {
	if value.MayCycle() && value.Cyclic(v) {
		// BPL lets a list contain itself, as brain4it does; no store can
		// keep one (the depth bound would refuse it less clearly)
		return nil, errorf(ErrInvalidArgument, "state: a list that contains itself cannot be kept in a store")
	}
	return appendValue(append(dst, stateVersion), v, 0)
}

func appendValue(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxStateDepth {
		return nil, errorf(ErrInvalidArgument, "state: nested deeper than %d lists", maxStateDepth)
	}
	switch v := v.(type) {
	case nil:
		return append(b, tagNull), nil
	case bool:
		if v {
			return append(b, tagTrue), nil
		}
		return append(b, tagFalse), nil
	case int64:
		return binary.AppendVarint(append(b, tagInt), v), nil
	case float64:
		return binary.BigEndian.AppendUint64(append(b, tagFloat), math.Float64bits(v)), nil
	case string:
		return appendBytes(append(b, tagString), v), nil
	case []byte:
		return appendBytes(append(b, tagBytes), string(v)), nil
	case value.Reference:
		return appendBytes(append(b, tagReference), string(v)), nil
	case *value.List:
		b = binary.AppendUvarint(append(b, tagList), uint64(v.Len()))
		var err error
		for i := range v.Len() {
			b = appendBytes(b, v.Name(i))
			if b, err = appendValue(b, v.At(i), depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	case value.Callable, fmt.Stringer: // a function, or a value of a runtime's own that prints itself (kafka-output's, say): no data
		return nil, errorf(ErrInvalidArgument, "state: %s cannot be kept in a store (only data: numbers, strings, booleans, null and lists of them)", value.Describe(v))
	}
	bv, err := value.FromGo(v) // a Go int, []any, map[string]any, ...: never a type above again
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	return appendValue(b, bv, depth)
}

func appendBytes(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// Decode reads a value Encode wrote. Its errors are ErrDeserialization.
func Decode(b []byte) (any, error) {
	if len(b) == 0 || b[0] != stateVersion {
		return nil, errorf(ErrDeserialization, "state: not a state value of version %d", stateVersion)
	}
	d := decoder{b: b[1:]}
	v := d.value(0)
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes after the value", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return v, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, v ...any) {
	if d.err == nil {
		d.err = errorf(ErrDeserialization, "state: "+format, v...)
	}
}

func (d *decoder) value(depth int) any {
	if d.err != nil {
		return nil
	}
	if len(d.b) == 0 {
		d.fail("truncated")
		return nil
	}
	if depth > maxStateDepth {
		d.fail("nested deeper than %d lists", maxStateDepth)
		return nil
	}
	tag := d.b[0]
	d.b = d.b[1:]
	switch tag {
	case tagNull:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt:
		v, n := binary.Varint(d.b)
		if n <= 0 {
			d.fail("bad integer")
			return nil
		}
		d.b = d.b[n:]
		return v
	case tagFloat:
		if len(d.b) < 8 {
			d.fail("truncated float")
			return nil
		}
		v := math.Float64frombits(binary.BigEndian.Uint64(d.b))
		d.b = d.b[8:]
		return v
	case tagString:
		return d.str()
	case tagBytes:
		return []byte(d.str())
	case tagReference:
		return value.Reference(d.str())
	case tagList:
		n, k := binary.Uvarint(d.b)
		if k <= 0 || n > uint64(len(d.b)) { // each element takes 2 bytes at least
			d.fail("bad list length")
			return nil
		}
		d.b = d.b[k:]
		l := &value.List{}
		l.Grow(int(n))
		for range n {
			name := d.str()
			v := d.value(depth + 1)
			if d.err != nil {
				return nil
			}
			if name != "" {
				l.AppendNamed(name, v)
			} else {
				l.Append(v)
			}
		}
		return l
	}
	d.fail("unknown tag %d", tag)
	return nil
}

func (d *decoder) str() string {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(len(d.b)-k) {
		d.fail("bad length")
		return ""
	}
	s := string(d.b[k : k+int(n)])
	d.b = d.b[k+int(n):]
	return s
}
