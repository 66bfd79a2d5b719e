package serde

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/brain4it/kafkabpl/value"
)

// Serde converts BPL values to the bytes of a Kafka record's key, value or
// header, and back. It is the only place where that happens. A nil value
// is Kafka's null (no bytes at all) both ways, whatever the format.
//
// The package's Serdes ([String], [Avro]...) are shared values: compare
// them with ==, never change them. The schema serdes ([Avro], [Protobuf],
// [JSONSchema]) need a schema registry: [Serde.Bind] makes one bound to a
// [Registry], and only a bound one encodes and decodes. A Serde is safe
// for concurrent use.
type Serde struct {
	name   string
	encode func(v any) ([]byte, error)
	decode func(b []byte) (any, error)
	// check reports whether decode would fail, without building the value,
	// so a poll can flag bad records and still decode lazily; nil means
	// every byte string decodes.
	check func(b []byte) error

	// format is a schema serde's language (Avro...), nil for the others;
	// schema is it bound to a registry (Bind binds it).
	format *schemaFormat
	schema *schemaSerde
}

// The serdes, by the names Lookup knows them by. Each reads back what it
// writes. String writes text (numbers and booleans as their BPL text);
// ByteArray bytes or text as they are; Short, Integer and Long integers
// big-endian in 2, 4 and 8 bytes, and Float and Double IEEE 754 numbers,
// as Java's serializers do; JSON lists with names as objects, in order,
// and lists without as arrays; BPL any value as BPL text. Avro, Protobuf
// and JSONSchema write Confluent's schema registry wire format, once bound
// to a registry ([Serde.Bind]). docs/registry.md maps
// BPL values to each schema format.
var (
	String     = &Serde{name: "String", encode: encodeString, decode: func(b []byte) (any, error) { return string(b), nil }}
	ByteArray  = &Serde{name: "ByteArray", encode: encodeBytes, decode: func(b []byte) (any, error) { return b, nil }}
	Short      = &Serde{name: "Short", encode: encodeInt(16), decode: decodeInt(2), check: checkLen(2)}
	Integer    = &Serde{name: "Integer", encode: encodeInt(32), decode: decodeInt(4), check: checkLen(4)}
	Long       = &Serde{name: "Long", encode: encodeInt(64), decode: decodeInt(8), check: checkLen(8)}
	Float      = &Serde{name: "Float", encode: encodeFloat32, decode: decodeFloat32, check: checkLen(4)}
	Double     = &Serde{name: "Double", encode: encodeFloat64, decode: decodeFloat64, check: checkLen(8)}
	JSON       = &Serde{name: "JSON", encode: encodeJSON, decode: decodeJSON, check: checkJSON}
	BPL        = &Serde{name: "BPL", encode: encodeBPL, decode: decodeBPL, check: checkBPL}
	Avro       = &Serde{name: "Avro", format: avroFormat}
	JSONSchema = &Serde{name: "JSON Schema", format: jsonSchemaFormat}
	Protobuf   = &Serde{name: "Protobuf", format: protobufFormat}
)

// byName maps the lower-case short names to serdes.
var byName = map[string]*Serde{
	"string": String, "bytearray": ByteArray, "bytes": ByteArray,
	"short": Short, "integer": Integer, "int": Integer, "long": Long,
	"float": Float, "double": Double, "json": JSON, "bpl": BPL,
	// Confluent's: io.confluent.kafka.serializers.KafkaAvroSerializer and
	// its deserializer.
	"avro": Avro, "kafkaavro": Avro,
	// io.confluent.kafka.serializers.json.KafkaJsonSchemaSerializer
	// io.confluent.kafka.serializers.protobuf.KafkaProtobufSerializer
	"protobuf": Protobuf, "kafkaprotobuf": Protobuf,
	"json-schema": JSONSchema, "jsonschema": JSONSchema, "json schema": JSONSchema, "kafkajsonschema": JSONSchema,
}

// Lookup finds a serde by its short name (String, Avro, JSON-Schema) or
// Java class name (StringSerializer,
// org.apache.kafka.common.serialization.StringDeserializer,
// io.confluent.kafka.serializers.KafkaAvroSerializer), case-insensitively;
// a serializer's name and its deserializer's give the same Serde. It
// returns nil when there is none.
func Lookup(name string) *Serde {
	n := strings.ToLower(strings.TrimSpace(name))
	n = n[strings.LastIndex(n, ".")+1:]
	n = strings.TrimSuffix(n, "deserializer")
	n = strings.TrimSuffix(n, "serializer")
	return byName[n]
}

// Name returns the serde's short name, as errors call it ("Avro",
// "JSON Schema").
func (s *Serde) Name() string { return s.name }

// NeedsRegistry reports whether s is a schema serde (Avro, Protobuf, JSON
// Schema), which needs [Serde.Bind] before it encodes or decodes.
func (s *Serde) NeedsRegistry() bool { return s.format != nil }

// Encode serializes v, part of message pos, for topic. pos counts from 1
// (0: the value is not one of a list of messages) and part is "" for the
// value, "key", or "header h": they only word the error, which names
// both; it is only formatted on failure, as this is the send path. Only
// schema serdes read topic (their subject comes from it) and ctx (they may
// ask the registry). A Go value (int, []string, map[string]any...) is
// encoded as its BPL value (see [value.FromGo]).
//
// A value the serializer cannot encode is an error wrapping
// [value.ErrInvalidArgument]; for a schema serde, one that does not fit
// the schema is a [*RecordError], which fails its record alone. A schema
// serde's registry that cannot be asked is an [ErrSchemaRegistry] error.
// Hazard: the first Encode of a schema serde for a topic asks the
// registry, which takes up to the registry's timeout per request; when ctx
// ends first, the error wraps ctx's error and not ErrSchemaRegistry, since
// the registry did not fail. The answers are kept: later Encodes of the
// topic do no I/O.
func (s *Serde) Encode(ctx context.Context, topic string, v any, pos int, part string) ([]byte, error) {
	switch v.(type) {
	case nil:
		return nil, nil
	case string, []byte, int64, float64, bool, *value.List:
	default: // a Go value (int, []string, map[string]any, ...) as its BPL value
		if bv, err := value.FromGo(v); err == nil {
			v = bv
		}
	}
	if s.format != nil {
		return s.encodeSchema(ctx, topic, v, pos, part)
	}
	b, err := s.encode(v)
	if err != nil {
		return nil, errorf(value.ErrInvalidArgument, "%s: the %s serializer cannot encode %s: %v", partName(pos, part), s.name, value.Describe(v), err)
	}
	return b, nil
}

func partName(pos int, part string) string {
	if pos > 0 {
		return strings.TrimSpace(fmt.Sprintf("message %d %s", pos, part))
	}
	return part
}

func (s *Serde) encodeSchema(ctx context.Context, topic string, v any, pos int, part string) ([]byte, error) {
	if s.schema == nil {
		return nil, s.unbound("serializer")
	}
	b, err := s.schema.encode(ctx, topic, v)
	if err == nil {
		return b, nil
	}
	if re, ok := errors.AsType[*RecordError](err); ok {
		return nil, &RecordError{errorf(value.ErrInvalidArgument, "%s to topic %q: the %s serializer cannot encode %s: %v", partName(pos, part), topic, s.name, value.Describe(v), re.Err)}
	}
	if ctx.Err() != nil && !errors.Is(err, ErrSchemaRegistry) { // the caller stopped waiting: not the registry's failure
		return nil, fmt.Errorf("%s to topic %q: the %s serializer: %w", partName(pos, part), topic, s.name, err)
	}
	return nil, wrapf(ErrSchemaRegistry, err, "%s to topic %q: the %s serializer", partName(pos, part), topic, s.name)
}

// unbound is the error of a schema serde used without a registry.
func (s *Serde) unbound(role string) error {
	return errorf(ErrInvalidConfig, "the %s %s needs a schema registry (Serde.Bind)", s.name, role)
}

// Check reports, for bytes b received from topic, the error Decode would
// give, without building the value when the format can tell without: a
// consumer flags bad records so, and decodes the good ones only when asked
// to. A schema deserializer has no cheaper check than decoding.
func (s *Serde) Check(ctx context.Context, topic string, b []byte, part string) error {
	if b == nil {
		return nil
	}
	if s.format != nil {
		_, err := s.Decode(ctx, topic, b, part)
		return err
	}
	if s.check == nil {
		return nil
	}
	if err := s.check(b); err != nil {
		return wrapf(ErrDeserialization, err, "%s: the %s deserializer cannot decode %d bytes", part, s.name, len(b))
	}
	return nil
}

// Decode deserializes bytes b received from topic; part ("key", "value",
// or "") words the error, an [ErrDeserialization] one. The value shares
// nothing with b but what a ByteArray deserializer gives (b itself).
//
// A schema deserializer reads the schema id in b's header and asks the
// registry, within ctx, for the schemas it does not know yet (the answers
// are kept, as for Encode); when that fails the error wraps
// [ErrSchemaRegistry], or ctx's error when ctx ended first. Hazard: a
// registry that does not answer holds Decode up to the registry's timeout
// per request when ctx has no deadline; [Serde.Prepare] asks ahead, within
// a context of the caller's choosing.
func (s *Serde) Decode(ctx context.Context, topic string, b []byte, part string) (any, error) {
	if b == nil {
		return nil, nil
	}
	var v any
	var err error
	switch {
	case s.schema != nil:
		v, err = s.schema.decode(ctx, topic, b)
	case s.format != nil:
		return nil, s.unbound("deserializer")
	default:
		v, err = s.decode(b)
	}
	if err != nil {
		return nil, wrapf(ErrDeserialization, err, "%s: the %s deserializer cannot decode %d bytes", part, s.name, len(b))
	}
	return v, nil
}

// Prepare asks the registry, within ctx, for the schema bytes b received
// from topic were written with, when a schema deserializer does not know
// it yet, so that a later Decode or Check of b does no I/O; for the other
// serdes, for null and for bytes not in the wire format it does nothing.
// Its error is the registry's, which Decode would report too (a failed
// lookup is remembered for a second, so the records of one poll ask
// once); a consumer may ignore it and decode later.
func (s *Serde) Prepare(ctx context.Context, topic string, b []byte) error {
	if s.schema == nil || b == nil {
		return nil
	}
	return s.schema.prepare(ctx, topic, b)
}

func checkLen(n int) func([]byte) error {
	return func(b []byte) error {
		if len(b) != n {
			return fmt.Errorf("want %d bytes", n)
		}
		return nil
	}
}

// checkJSON validates without building anything; only an invalid text is
// decoded, for its detailed error.
func checkJSON(b []byte) error {
	if json.Valid(b) {
		return nil
	}
	_, err := decodeJSON(b)
	if err == nil {
		err = errors.New("invalid JSON")
	}
	return err
}

func checkBPL(b []byte) error {
	_, err := decodeBPL(b)
	return err
}

// stringBytes returns the bytes of s without copying them. The client only
// reads a record's bytes, so sharing them with the immutable string is safe.
// The empty string gives an empty slice, never nil: nil is Kafka's null,
// which would turn "" into a tombstone.
func stringBytes(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

var errList = errors.New("a list is not text; use the JSON or BPL serializer")

// encodeString takes text, and numbers and booleans as their BPL text.
func encodeString(v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return stringBytes(v), nil
	case []byte:
		return v, nil
	case int64, float64, bool, value.Reference:
		return []byte(value.Format(v)), nil
	case *value.List:
		return nil, errList
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

func encodeBytes(v any) ([]byte, error) {
	switch v := v.(type) {
	case []byte:
		return v, nil
	case string:
		return stringBytes(v), nil
	}
	return nil, errors.New("want a byte array or a string")
}

// encodeInt writes an integer big-endian in bits bits, as Java's Short,
// Integer and Long serializers do.
func encodeInt(bits int) func(any) ([]byte, error) {
	lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
	if bits == 64 {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	return func(v any) ([]byte, error) {
		var n int64
		switch v := v.(type) {
		case int64:
			n = v
		case float64:
			var ok bool
			if n, ok = integer(v); !ok {
				return nil, errors.New("not an integer")
			}
		case string: // a message's name is its key, and names are text
			// Base 10, as Java's Integer.valueOf reads it: "010" is 10,
			// and "0x10" or "1_000" are not integers.
			var err error
			if n, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
				return nil, errors.New("not an integer")
			}
		default:
			return nil, errors.New("not a number")
		}
		if n < lo || n > hi {
			return nil, fmt.Errorf("out of range %d to %d", lo, hi)
		}
		b := make([]byte, bits/8)
		for i := range b {
			b[len(b)-1-i] = byte(n >> (8 * i))
		}
		return b, nil
	}
}

// decodeInt reads a big-endian signed integer of exactly size bytes.
func decodeInt(size int) func([]byte) (any, error) {
	return func(b []byte) (any, error) {
		if len(b) != size {
			return nil, fmt.Errorf("want %d bytes", size)
		}
		var n int64
		for _, c := range b {
			n = n<<8 | int64(c)
		}
		shift := 64 - 8*size
		return n << shift >> shift, nil // sign-extend
	}
}

// integer returns v as an int64 when it is one, or a float64 that is a
// whole number an int64 holds: BPL numbers that have no fraction may come
// either way.
func integer(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case float64:
		if v == math.Trunc(v) && v >= -(1<<63) && v < 1<<63 {
			return int64(v), true
		}
	}
	return 0, false
}

func toFloat(v any) (float64, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case int64:
		return float64(v), nil
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return f, nil
		}
	}
	return 0, errors.New("not a number")
}

func encodeFloat32(v any) ([]byte, error) {
	f, err := toFloat(v)
	if err != nil {
		return nil, err
	}
	f32 := float32(f)
	if math.IsInf(float64(f32), 0) && !math.IsInf(f, 0) {
		return nil, errors.New("out of a Float's range")
	}
	return binary.BigEndian.AppendUint32(nil, math.Float32bits(f32)), nil
}

func decodeFloat32(b []byte) (any, error) {
	if len(b) != 4 {
		return nil, errors.New("want 4 bytes")
	}
	// BPL numbers are float64. Widening 0.1f exactly gives
	// 0.10000000149011612; the float64 nearest the Float's shortest
	// decimal gives 0.1, which is what was sent and what Java's
	// Float.toString prints. Encoding it again gives the same 4 bytes.
	f32 := math.Float32frombits(binary.BigEndian.Uint32(b))
	f, err := strconv.ParseFloat(strconv.FormatFloat(float64(f32), 'g', -1, 32), 64)
	if err != nil { // cannot happen: FormatFloat's text, NaN and ±Inf included
		return float64(f32), nil
	}
	return f, nil
}

func encodeFloat64(v any) ([]byte, error) {
	f, err := toFloat(v)
	if err != nil {
		return nil, err
	}
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
}

func decodeFloat64(b []byte) (any, error) {
	if len(b) != 8 {
		return nil, errors.New("want 8 bytes")
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
}

func encodeBPL(v any) ([]byte, error) { return []byte(value.Format(v)), nil }

// decodeBPL reads exactly one BPL expression. brain4it's tags make shared
// lists, as brain4it writes them; a list that contains itself is refused,
// as a send of one is: no serializer could write it again.
func decodeBPL(b []byte) (any, error) {
	vs, err := value.Parse(string(b))
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("want one BPL expression, got %d", len(vs))
	}
	if value.MayCycle() && value.Cyclic(vs[0]) {
		return nil, errors.New("a list that contains itself")
	}
	return vs[0], nil
}

// encodeJSON writes a list with names as an object (in element order, a
// repeated name repeated) and one without names as an array.
func encodeJSON(v any) ([]byte, error) { return encodeJSONObjects(v, nil) }

// encodeJSONObjects is encodeJSON writing the empty lists in objects as
// {}: BPL has one empty list for both, and the JSON Schema serializer
// knows from the schema which it is.
func encodeJSONObjects(v any, objects map[*value.List]bool) ([]byte, error) {
	var buf bytes.Buffer
	if err := appendJSON(&buf, v, objects); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func appendJSON(buf *bytes.Buffer, v any, objects map[*value.List]bool) error {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case int64:
		buf.WriteString(strconv.FormatInt(v, 10))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("JSON has no %v", v)
		}
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") { // keep it a float when read back
			s += ".0"
		}
		buf.WriteString(s)
	case string:
		return appendJSONString(buf, v)
	case value.Reference:
		return appendJSONString(buf, string(v))
	case []byte:
		if !utf8.Valid(v) {
			return errors.New("a byte array that is not UTF-8 text has no JSON form")
		}
		return appendJSONString(buf, string(v))
	case *value.List:
		named := v.Named() || objects != nil && v.Len() == 0 && objects[v]
		open, end := byte('['), byte(']')
		if named {
			open, end = '{', '}'
		}
		buf.WriteByte(open)
		for i := range v.Len() {
			if i > 0 {
				buf.WriteByte(',')
			}
			if named {
				if v.Name(i) == "" {
					return fmt.Errorf("element %d has no name in a list with names; JSON needs all or none", i)
				}
				appendJSONString(buf, v.Name(i))
				buf.WriteByte(':')
			}
			if err := appendJSON(buf, v.At(i), objects); err != nil {
				return err
			}
		}
		buf.WriteByte(end)
	default:
		return fmt.Errorf("unsupported value of type %T", v)
	}
	return nil
}

func appendJSONString(buf *bytes.Buffer, s string) error {
	b, err := json.Marshal(s)
	buf.Write(b)
	return err
}

// decodeJSON reads one JSON value, keeping the order of object members:
// objects become named lists, arrays unnamed ones, integers int64 (float64
// when too big or written with a fraction or exponent).
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeJSONValue(d)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil, errors.New("the JSON text ends too soon")
	}
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON value")
	}
	return v, nil
}

func decodeJSONValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		l := &value.List{}
		switch t {
		case '{':
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeJSONValue(d)
				if err != nil {
					return nil, err
				}
				l.AppendNamed(k.(string), v)
			}
		case '[':
			for d.More() {
				v, err := decodeJSONValue(d)
				if err != nil {
					return nil, err
				}
				l.Append(v)
			}
		default:
			return nil, fmt.Errorf("unexpected %v", t)
		}
		if _, err := d.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return l, nil
	case json.Number:
		if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return n, nil
		}
		// Valid JSON (json.Valid, which checkJSON uses, said so), so
		// the only error is a range one: a number beyond float64 reads
		// as ±Infinity, as Java's Double.parseDouble reads it.
		f, err := strconv.ParseFloat(string(t), 64)
		if errors.Is(err, strconv.ErrRange) {
			err = nil
		}
		return f, err
	default: // string, bool, nil
		return t, nil
	}
}
