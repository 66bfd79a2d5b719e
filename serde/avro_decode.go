package serde

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/brain4it/kafkabpl/value"
)

// avroDecoder reads Avro binary data into BPL values; i is how far it
// has read, for errors.
type avroDecoder struct {
	b     []byte
	s     string // b as a string, made at the first string read: every string is a part of it
	i     int
	depth int
}

// str returns b[i:j] as a string, sharing one copy of b among a value's
// strings: one allocation for all of them, not one each.
func (d *avroDecoder) str(i, j int) string {
	if d.s == "" {
		d.s = string(d.b)
	}
	return d.s[i:j]
}

// maxAvroDepth bounds nesting, so that a recursive schema and crafted
// bytes cannot exhaust the stack.
const maxAvroDepth = 1000

func (d *avroDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", d.i, fmt.Sprintf(format, args...))
}

func (d *avroDecoder) long() (int64, error) {
	u, n := binary.Uvarint(d.b[d.i:])
	if n <= 0 {
		if n == 0 {
			return 0, d.errorf("the data ends inside a number")
		}
		return 0, d.errorf("a number longer than 64 bits")
	}
	d.i += n
	return int64(u>>1) ^ -int64(u&1), nil
}

func (d *avroDecoder) take(n int64, what string) ([]byte, error) {
	if n < 0 {
		return nil, d.errorf("negative %s length %d", what, n)
	}
	if n > int64(len(d.b)-d.i) {
		return nil, d.errorf("%s of %d bytes, but %d are left", what, n, len(d.b)-d.i)
	}
	out := d.b[d.i : d.i+int(n)]
	d.i += int(n)
	return out, nil
}

func (c *avroCodec) decode(b []byte) (any, error) {
	if c.resolved != nil {
		return c.decodeResolved(b)
	}
	d := avroDecoder{b: b}
	v, err := d.value(c.root)
	if err != nil {
		return nil, err
	}
	if d.i != len(b) {
		return nil, d.errorf("%d bytes after the value", len(b)-d.i)
	}
	return v, nil
}

func (d *avroDecoder) value(n *avroNode) (any, error) {
	switch n.kind {
	case avNull:
		return nil, nil
	case avBoolean:
		if d.i >= len(d.b) {
			return nil, d.errorf("the data ends before a boolean")
		}
		c := d.b[d.i]
		if c > 1 {
			return nil, d.errorf("boolean byte %d", c)
		}
		d.i++
		return c == 1, nil
	case avInt:
		x, err := d.long()
		if err != nil {
			return nil, err
		}
		if x < math.MinInt32 || x > math.MaxInt32 {
			return nil, d.errorf("int %d out of 32 bits", x)
		}
		if n.logical == lgDate {
			return x * msPerDay, nil
		}
		return x, nil
	case avLong:
		return d.long()
	case avFloat:
		raw, err := d.take(4, "float")
		if err != nil {
			return nil, err
		}
		f32 := math.Float32frombits(binary.LittleEndian.Uint32(raw))
		// As the Float deserializer does: the float64 nearest the
		// float's shortest decimal, 0.1 for 0.1f.
		f, err := strconv.ParseFloat(strconv.FormatFloat(float64(f32), 'g', -1, 32), 64)
		if err != nil {
			return float64(f32), nil
		}
		return f, nil
	case avDouble:
		raw, err := d.take(8, "double")
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(raw)), nil
	case avBytes, avString:
		ln, err := d.long()
		if err != nil {
			return nil, err
		}
		what := "bytes"
		if n.kind == avString {
			what = "string"
		}
		start := d.i
		raw, err := d.take(ln, what)
		if err != nil {
			return nil, err
		}
		if n.logical == lgDecimal {
			return decimalText(fromTwosComplement(raw), n.scale), nil
		}
		if n.kind == avString {
			if !utf8.Valid(raw) {
				d.i = start
				return nil, d.errorf("a string that is not UTF-8")
			}
			return d.str(start, d.i), nil
		}
		return slices.Clone(raw), nil
	case avFixed:
		raw, err := d.take(int64(n.size), "fixed "+n.name)
		if err != nil {
			return nil, err
		}
		if n.logical == lgDecimal {
			return decimalText(fromTwosComplement(raw), n.scale), nil
		}
		return slices.Clone(raw), nil
	case avEnum:
		x, err := d.long()
		if err != nil {
			return nil, err
		}
		if x < 0 || x >= int64(len(n.symbols)) {
			return nil, d.errorf("enum %s has no symbol %d", n.name, x)
		}
		return n.symbols[x], nil
	case avUnion:
		x, err := d.long()
		if err != nil {
			return nil, err
		}
		if x < 0 || x >= int64(len(n.branches)) {
			return nil, d.errorf("the union has no branch %d", x)
		}
		return d.nested(n.branches[x])
	case avRecord:
		vals := make([]any, len(n.fields))
		for i := range n.fields {
			v, err := d.nested(n.fields[i].node)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		return value.ListOf(vals, slices.Clone(n.names)), nil
	case avArray, avMap:
		return d.blocks(n)
	}
	return nil, d.errorf("unsupported Avro type %d", n.kind)
}

func (d *avroDecoder) nested(n *avroNode) (any, error) {
	if d.depth++; d.depth > maxAvroDepth {
		return nil, d.errorf("nested more than %d deep", maxAvroDepth)
	}
	v, err := d.value(n)
	d.depth--
	return v, err
}

// blocks reads an array's or a map's blocks.
func (d *avroDecoder) blocks(n *avroNode) (any, error) {
	l := &value.List{}
	for {
		count, err := d.long()
		if err != nil {
			return nil, err
		}
		if count == 0 {
			return l, nil
		}
		if count < 0 { // a block with its size in bytes
			if count == math.MinInt64 {
				return nil, d.errorf("block count out of range")
			}
			count = -count
			if _, err := d.long(); err != nil {
				return nil, err
			}
		}
		// Every element takes a byte at least, except null ones.
		if n.items.kind != avNull && count > int64(len(d.b)-d.i) {
			return nil, d.errorf("a block of %d elements, but %d bytes are left", count, len(d.b)-d.i)
		}
		if count > 1<<20 && n.items.kind == avNull {
			return nil, d.errorf("a block of %d null elements", count)
		}
		if l.Len() == 0 {
			l.Grow(int(count)) // a map's names take the same room at its first
		}
		for range count {
			name := ""
			if n.kind == avMap {
				ln, err := d.long()
				if err != nil {
					return nil, err
				}
				start := d.i
				if _, err := d.take(ln, "map key"); err != nil {
					return nil, err
				}
				name = d.str(start, d.i)
			}
			v, err := d.nested(n.items)
			if err != nil {
				return nil, err
			}
			if n.kind == avMap {
				l.AppendNamed(name, v)
			} else {
				l.Append(v)
			}
		}
	}
}

// decodeResolved reads data written with c's schema into the reader
// schema's layout, through twmb/avro's resolution, and turns its Go
// values into BPL ones in the reader schema's field order.
func (c *avroCodec) decodeResolved(b []byte) (any, error) {
	var v any
	rest, err := c.resolved.Decode(b, &v)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("at byte %d: %d bytes after the value", len(b)-len(rest), len(rest))
	}
	return avroFromGo(c.reader, v, 0)
}

// avroFromGo converts a value twmb/avro decoded (maps, time.Time,
// *big.Rat, ...) to the BPL value the codec gives for node n.
func avroFromGo(n *avroNode, v any, depth int) (any, error) {
	if depth > maxAvroDepth {
		return nil, fmt.Errorf("nested more than %d deep", maxAvroDepth)
	}
	if v == nil {
		return nil, nil
	}
	switch n.kind {
	case avUnion:
		for _, b := range n.branches {
			if b.kind == avNull {
				continue
			}
			if out, err := avroFromGo(b, v, depth+1); err == nil && avroGoFits(b, v) {
				return out, nil
			}
		}
		return value.FromGo(v)
	case avRecord:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("record %s decoded as %T", n.name, v)
		}
		vals := make([]any, len(n.fields))
		for i := range n.fields {
			x, err := avroFromGo(n.fields[i].node, m[n.fields[i].name], depth+1)
			if err != nil {
				return nil, err
			}
			vals[i] = x
		}
		return value.ListOf(vals, slices.Clone(n.names)), nil
	case avArray:
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Slice {
			return nil, fmt.Errorf("array decoded as %T", v)
		}
		l := &value.List{}
		for i := range rv.Len() {
			x, err := avroFromGo(n.items, rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			l.Append(x)
		}
		return l, nil
	case avMap:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("map decoded as %T", v)
		}
		l := &value.List{}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		}) {
			x, err := avroFromGo(n.items, m[k], depth+1)
			if err != nil {
				return nil, err
			}
			l.AppendNamed(k, x)
		}
		return l, nil
	}
	switch x := v.(type) {
	case time.Time:
		switch n.lt {
		case "timestamp-micros", "local-timestamp-micros":
			return x.UnixMicro(), nil
		case "timestamp-nanos", "local-timestamp-nanos":
			return x.UnixNano(), nil
		}
		return x.UnixMilli(), nil
	case *big.Rat:
		return x.FloatString(n.scale), nil
	case time.Duration:
		if n.lt == "time-micros" {
			return x.Microseconds(), nil
		}
		return x.Milliseconds(), nil
	case float32:
		f, err := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		if err != nil {
			return float64(x), nil
		}
		return f, nil
	case [16]byte:
		return x[:], nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 {
		b := make([]byte, rv.Len())
		reflect.Copy(reflect.ValueOf(b), rv)
		return b, nil
	}
	return value.FromGo(v)
}

// avroGoFits reports whether the Go value v is of union branch b's kind.
func avroGoFits(b *avroNode, v any) bool {
	switch v.(type) {
	case map[string]any:
		return b.kind == avRecord || b.kind == avMap
	case []any:
		return b.kind == avArray
	case string:
		return b.kind == avString || b.kind == avEnum
	case bool:
		return b.kind == avBoolean
	case []byte:
		return b.kind == avBytes || b.kind == avFixed
	case float32, float64:
		return b.kind == avFloat || b.kind == avDouble
	}
	return true
}
