package kafkabpl

import (
	"bytes"
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

// serde converts BPL values to Kafka bytes and back. It is the only place
// where that happens. A nil value is Kafka's null (no bytes at all) both
// ways, whatever the format.
type serde struct {
	name   string
	encode func(v any) ([]byte, error)
	decode func(b []byte) (any, error)
	// check reports whether decode would fail, without building the value,
	// so a poll can flag bad records and still decode lazily; nil means
	// every byte string decodes.
	check func(b []byte) error

	// format is a schema serde's language (Avro...), nil for the others;
	// schema is it bound to a config's registry (config.check binds it).
	format *schemaFormat
	schema *schemaSerde
}

var (
	serdeString = &serde{name: "String", encode: encodeString, decode: func(b []byte) (any, error) { return string(b), nil }}
	serdeBytes  = &serde{name: "ByteArray", encode: encodeBytes, decode: func(b []byte) (any, error) { return b, nil }}
	serdeShort  = &serde{name: "Short", encode: encodeInt(16), decode: decodeInt(2), check: checkLen(2)}
	serdeInt    = &serde{name: "Integer", encode: encodeInt(32), decode: decodeInt(4), check: checkLen(4)}
	serdeLong   = &serde{name: "Long", encode: encodeInt(64), decode: decodeInt(8), check: checkLen(8)}
	serdeFloat  = &serde{name: "Float", encode: encodeFloat32, decode: decodeFloat32, check: checkLen(4)}
	serdeDouble = &serde{name: "Double", encode: encodeFloat64, decode: decodeFloat64, check: checkLen(8)}
	serdeJSON   = &serde{name: "JSON", encode: encodeJSON, decode: decodeJSON, check: checkJSON}
	serdeBPL    = &serde{name: "BPL", encode: encodeBPL, decode: decodeBPL, check: checkBPL}
	serdeAvro   = &serde{name: "Avro", format: avroFormat}
	serdeJSONSc = &serde{name: "JSON Schema", format: jsonSchemaFormat}
	serdeProto  = &serde{name: "Protobuf", format: protobufFormat}
)

// serdeByName maps the lower-case short names to serdes.
var serdeByName = map[string]*serde{
	"string": serdeString, "bytearray": serdeBytes, "bytes": serdeBytes,
	"short": serdeShort, "integer": serdeInt, "int": serdeInt, "long": serdeLong,
	"float": serdeFloat, "double": serdeDouble, "json": serdeJSON, "bpl": serdeBPL,
	// Confluent's: io.confluent.kafka.serializers.KafkaAvroSerializer and
	// its deserializer.
	"avro": serdeAvro, "kafkaavro": serdeAvro,
	// io.confluent.kafka.serializers.json.KafkaJsonSchemaSerializer
	// io.confluent.kafka.serializers.protobuf.KafkaProtobufSerializer
	"protobuf": serdeProto, "kafkaprotobuf": serdeProto,
	"json-schema": serdeJSONSc, "jsonschema": serdeJSONSc, "json schema": serdeJSONSc, "kafkajsonschema": serdeJSONSc,
}

// lookupSerde finds a serde by short name (String), Java class name
// (StringSerializer, org.apache.kafka.common.serialization.StringDeserializer)
// case-insensitively; nil when there is none.
func lookupSerde(name string) *serde {
	n := strings.ToLower(strings.TrimSpace(name))
	n = n[strings.LastIndex(n, ".")+1:]
	n = strings.TrimSuffix(n, "deserializer")
	n = strings.TrimSuffix(n, "serializer")
	return serdeByName[n]
}

// encodeAt runs the serde on a part of message pos (1-based; 0 for the
// call's own arguments) written to topic: part is "" for the value, or
// "key", or "header h". The error names both; it is only formatted on
// failure, as this is the send path. Only schema serdes read topic (their
// subject comes from it). A value that does not fit its schema is a
// *recordError, which fails its record alone.
func (s *serde) encodeAt(topic string, v any, pos int, part string) ([]byte, error) {
	switch v.(type) {
	case nil:
		return nil, nil
	case string, []byte, int64, float64, bool, *value.List:
	default: // a Go value (int, []string, map[string]any, ...) as its BPL value
		if bv, err := value.FromGo(v); err == nil {
			v = bv
		}
	}
	if s.schema != nil {
		return s.encodeSchema(topic, v, pos, part)
	}
	b, err := s.encode(v)
	if err != nil {
		return nil, errorf(ErrInvalidArgument, "%s: the %s serializer cannot encode %s: %v", partName(pos, part), s.name, value.Describe(v), err)
	}
	return b, nil
}

func partName(pos int, part string) string {
	if pos > 0 {
		return strings.TrimSpace(fmt.Sprintf("message %d %s", pos, part))
	}
	return part
}

func (s *serde) encodeSchema(topic string, v any, pos int, part string) ([]byte, error) {
	b, err := s.schema.encode(topic, v)
	if err == nil {
		return b, nil
	}
	var re *recordError
	if errors.As(err, &re) {
		return nil, &recordError{errorf(ErrInvalidArgument, "%s to topic %q: the %s serializer cannot encode %s: %v", partName(pos, part), topic, s.name, value.Describe(v), re.err)}
	}
	return nil, wrapf(ErrSchemaRegistry, err, "%s to topic %q: the %s serializer", partName(pos, part), topic, s.name)
}

// checkAt reports, for bytes received from topic, the error decodeAt would
// give.
func (s *serde) checkAt(topic string, b []byte, what string) error {
	if b == nil {
		return nil
	}
	if s.schema != nil {
		_, err := s.decodeAt(topic, b, what)
		return err
	}
	if s.check == nil {
		return nil
	}
	if err := s.check(b); err != nil {
		return wrapf(ErrDeserialization, err, "%s: the %s deserializer cannot decode %d bytes", what, s.name, len(b))
	}
	return nil
}

// decodeAt runs the serde on bytes received from topic, naming the part in
// the error.
func (s *serde) decodeAt(topic string, b []byte, what string) (any, error) {
	if b == nil {
		return nil, nil
	}
	var v any
	var err error
	if s.schema != nil {
		v, err = s.schema.decode(topic, b)
	} else {
		v, err = s.decode(b)
	}
	if err != nil {
		return nil, wrapf(ErrDeserialization, err, "%s: the %s deserializer cannot decode %d bytes", what, s.name, len(b))
	}
	return v, nil
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
			if n, ok = integral(v); !ok {
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
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := appendJSON(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func appendJSON(buf *bytes.Buffer, v any) error {
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
		named := v.Named()
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
			if err := appendJSON(buf, v.At(i)); err != nil {
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
