package serde

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/brain4it/kafkabpl/value"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

func (c *protobufCodec) appendEncode(dst []byte, v any) ([]byte, error) {
	m := dynamicpb.NewMessage(c.msg)
	if err := pbFill(m, v, 0); err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.MarshalAppend(dst, m)
}

// decode reads the message indexes, then the message they name (into
// the reader schema's, when there is one).
func (c *protobufCodec) decode(b []byte) (any, error) {
	idx, rest, err := confluentHeader.DecodeIndex(b, 64)
	if err != nil {
		return nil, fmt.Errorf("the message indexes: %w", err)
	}
	var md protoreflect.MessageDescriptor
	msgs := c.file.Messages()
	for i, x := range idx {
		if md = pbDeclared(msgs, x); md == nil {
			return nil, fmt.Errorf("message index %v: no message %d at level %d", idx, x, i)
		}
		msgs = md.Messages()
	}
	if md == nil { // no indexes: the first message
		md = pbDeclared(c.file.Messages(), 0)
	}
	m := dynamicpb.NewMessage(c.readAs(md))
	if err := (proto.UnmarshalOptions{RecursionLimit: 1000}).Unmarshal(rest, m); err != nil {
		return nil, fmt.Errorf("message %s: %w", m.Descriptor().FullName(), err)
	}
	return pbValueOf(m), nil
}

// pbDeclared is the x-th message declared in msgs, as the .proto text
// declares them: a map field's entry message, which protocompile adds,
// is not counted, as Confluent's message indexes do not count it.
func pbDeclared(msgs protoreflect.MessageDescriptors, x int) protoreflect.MessageDescriptor {
	for i := range msgs.Len() {
		if m := msgs.Get(i); !m.IsMapEntry() {
			if x == 0 {
				return m
			}
			x--
		}
	}
	return nil
}

func pbFill(m protoreflect.Message, v any, depth int) error {
	if depth > 1000 {
		return &avroError{msg: "nested more than 1000 deep"}
	}
	l, ok := v.(*value.List)
	if !ok || l.Len() > 0 && !l.Named() {
		return avroWant("a list with names (message "+string(m.Descriptor().FullName())+")", v)
	}
	fields := m.Descriptor().Fields()
	for i, e := range l.Values() {
		name := l.Name(i)
		fd := fields.ByName(protoreflect.Name(name))
		if fd == nil {
			fd = fields.ByJSONName(name)
		}
		if fd == nil {
			return &avroError{path: name, msg: "not a field of message " + string(m.Descriptor().FullName())}
		}
		if m.Has(fd) && !fd.IsList() && !fd.IsMap() {
			return &avroError{path: name, msg: "given twice"}
		}
		if e == nil {
			continue
		}
		if err := pbSetField(m, fd, e, depth); err != nil {
			return avroIn(err, name)
		}
	}
	return nil
}

func pbSetField(m protoreflect.Message, fd protoreflect.FieldDescriptor, v any, depth int) error {
	switch {
	case fd.IsMap():
		l, ok := v.(*value.List) // an element without a name has the key ""
		if !ok {
			return avroWant("a list with names (map)", v)
		}
		mp := m.Mutable(fd).Map()
		for i, e := range l.Values() {
			name := l.Name(i)
			k, err := pbScalar(fd.MapKey(), name)
			if err != nil {
				return avroIn(err, name)
			}
			val, err := pbElem(mp.NewValue, fd.MapValue(), e, depth)
			if err != nil {
				return avroIn(err, name)
			}
			mp.Set(k.MapKey(), val)
		}
	case fd.IsList():
		l, ok := v.(*value.List)
		if !ok {
			return avroWant("a list (repeated)", v)
		}
		list := m.Mutable(fd).List()
		for i, e := range l.Values() {
			val, err := pbElem(list.NewElement, fd, e, depth)
			if err != nil {
				return avroIn(err, fmt.Sprintf("[%d]", i))
			}
			list.Append(val)
		}
	default:
		val, err := pbElem(func() protoreflect.Value { return m.NewField(fd) }, fd, v, depth)
		if err != nil {
			return err
		}
		m.Set(fd, val)
	}
	return nil
}

// pbElem is one value of fd's kind: a message filled from a list, or a
// scalar.
func pbElem(newValue func() protoreflect.Value, fd protoreflect.FieldDescriptor, v any, depth int) (protoreflect.Value, error) {
	if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
		nv := newValue()
		if err := pbFill(nv.Message(), v, depth+1); err != nil {
			return protoreflect.Value{}, err
		}
		return nv, nil
	}
	return pbScalar(fd, v)
}

const wantUint64 = "a uint64 (0 to 18446744073709551615; above 9223372036854775807 as decimal text)"

func isUint64(fd protoreflect.FieldDescriptor) bool {
	return fd.Kind() == protoreflect.Uint64Kind || fd.Kind() == protoreflect.Fixed64Kind
}

func pbScalar(fd protoreflect.FieldDescriptor, v any) (protoreflect.Value, error) {
	if s, ok := v.(string); ok && fd.Kind() != protoreflect.StringKind && fd.Kind() != protoreflect.BytesKind && fd.Kind() != protoreflect.EnumKind {
		// A map key is a name, so text; numbers in text are read too, and
		// a uint64 above an int64's range comes as text.
		if isUint64(fd) {
			if u, err := strconv.ParseUint(s, 10, 64); err == nil {
				return protoreflect.ValueOfUint64(u), nil
			}
			return protoreflect.Value{}, avroWant(wantUint64, v)
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			v = n
		} else if f, err := strconv.ParseFloat(s, 64); err == nil && fd.Kind() != protoreflect.BoolKind {
			v = f
		} else if b, err := strconv.ParseBool(s); err == nil && fd.Kind() == protoreflect.BoolKind {
			v = b
		}
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if b, ok := v.(bool); ok {
			return protoreflect.ValueOfBool(b), nil
		}
		return protoreflect.Value{}, avroWant("true or false", v)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if n, ok := integer(v); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			return protoreflect.ValueOfInt32(int32(n)), nil
		}
		return protoreflect.Value{}, avroWant("an int32", v)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if n, ok := integer(v); ok {
			return protoreflect.ValueOfInt64(n), nil
		}
		return protoreflect.Value{}, avroWant("an int64", v)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if n, ok := integer(v); ok && n >= 0 && n <= math.MaxUint32 {
			return protoreflect.ValueOfUint32(uint32(n)), nil
		}
		return protoreflect.Value{}, avroWant("a uint32", v)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if n, ok := integer(v); ok && n >= 0 {
			return protoreflect.ValueOfUint64(uint64(n)), nil
		}
		if u, ok := v.(uint64); ok { // a Go caller's, above an int64's range
			return protoreflect.ValueOfUint64(u), nil
		}
		if f, ok := v.(float64); ok && f >= 1<<63 {
			// BPL reads an integer beyond an int64 as a float, which has
			// lost its last digits: 9223372036854775809 is
			// 9223372036854775808.0. Writing it would change it silently.
			return protoreflect.Value{}, avroWant("a uint64; one above 9223372036854775807 as its decimal text (\"18446744073709551615\"), since a number that big is a float that has lost digits", v)
		}
		return protoreflect.Value{}, avroWant(wantUint64, v)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		default:
			return protoreflect.Value{}, avroWant("a number", v)
		}
		if fd.Kind() == protoreflect.FloatKind {
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
		return protoreflect.ValueOfFloat64(f), nil
	case protoreflect.StringKind:
		switch x := v.(type) {
		case string:
			return protoreflect.ValueOfString(x), nil
		case []byte:
			return protoreflect.ValueOfString(string(x)), nil
		}
		return protoreflect.Value{}, avroWant("a string", v)
	case protoreflect.BytesKind:
		switch x := v.(type) {
		case []byte:
			return protoreflect.ValueOfBytes(x), nil
		case string:
			return protoreflect.ValueOfBytes([]byte(x)), nil
		}
		return protoreflect.Value{}, avroWant("bytes or a string", v)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		switch x := v.(type) {
		case string:
			if ev := vals.ByName(protoreflect.Name(x)); ev != nil {
				return protoreflect.ValueOfEnum(ev.Number()), nil
			}
		case int64:
			// A number the enum does not name is kept, as proto3's open
			// enums keep it (and as it is read back).
			if ev := vals.ByNumber(protoreflect.EnumNumber(x)); ev != nil || !fd.Enum().IsClosed() && x >= math.MinInt32 && x <= math.MaxInt32 {
				return protoreflect.ValueOfEnum(protoreflect.EnumNumber(x)), nil
			}
		}
		names := make([]string, vals.Len())
		for i := range names {
			names[i] = string(vals.Get(i).Name())
		}
		return protoreflect.Value{}, avroWant(fmt.Sprintf("one of the values of enum %s (%s)", fd.Enum().FullName(), strings.Join(names, " ")), v)
	}
	return protoreflect.Value{}, avroWant(fd.Kind().String(), v)
}

// pbValueOf is a message as a BPL list with names: every field in
// declaration order (a oneof's only when set; an unset message field is
// null), maps by their keys' text, sorted.
func pbValueOf(m protoreflect.Message) *value.List {
	fields := m.Descriptor().Fields()
	vals, names := make([]any, 0, fields.Len()), make([]string, 0, fields.Len())
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic() && !m.Has(fd) {
			continue
		}
		var v any
		switch {
		case fd.IsMap():
			mp := m.Get(fd).Map()
			type kv struct {
				k string
				v protoreflect.Value
			}
			var kvs []kv
			mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				kvs = append(kvs, kv{k.String(), v})
				return true
			})
			slices.SortFunc(kvs, func(a, b kv) int { return strings.Compare(a.k, b.k) })
			ml := &value.List{}
			for _, e := range kvs {
				ml.AppendNamed(e.k, pbScalarOf(fd.MapValue(), e.v))
			}
			v = ml
		case fd.IsList():
			list := m.Get(fd).List()
			items := make([]any, list.Len())
			for j := range items {
				items[j] = pbScalarOf(fd, list.Get(j))
			}
			v = value.ListOf(items, nil)
		case (fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind) && !m.Has(fd):
			v = nil
		case fd.HasPresence() && !m.Has(fd) && fd.ContainingOneof() != nil:
			v = nil // proto3 optional, unset
		default:
			v = pbScalarOf(fd, m.Get(fd))
		}
		vals, names = append(vals, v), append(names, string(fd.Name()))
	}
	return value.ListOf(vals, names)
}

func pbScalarOf(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return pbValueOf(v.Message())
	case protoreflect.BoolKind:
		return v.Bool()
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return v.Int()
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		// A BPL integer is an int64: a uint64 above its range reads as
		// its decimal text, exact, which the serializer takes back.
		if u := v.Uint(); u <= math.MaxInt64 {
			return int64(u)
		} else {
			return strconv.FormatUint(u, 10)
		}
	case protoreflect.FloatKind:
		f, err := strconv.ParseFloat(strconv.FormatFloat(v.Float(), 'g', -1, 32), 64)
		if err != nil {
			return v.Float()
		}
		return f
	case protoreflect.DoubleKind:
		return v.Float()
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.BytesKind:
		return slices.Clone(v.Bytes())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return int64(v.Enum())
	}
	return nil
}
