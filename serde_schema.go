package kafkabpl

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/sr"
)

// Schema serdes write and read Confluent's wire format: byte 0, the
// schema's id in 4 bytes big-endian, (for Protobuf, the message's
// indexes,) then the payload in the schema's format. The id comes from
// the schema registry; which schema is written is said by the config (see
// registryConfig), and the registry is asked once per topic and schema:
// the answers are kept for the life of the handle.

// schemaFormat is one schema language.
type schemaFormat struct {
	name    string // "Avro", for errors
	typ     sr.SchemaType
	compile func(reg *registry, s sr.Schema) (schemaCodec, error)
}

// schemaCodec writes and reads values of one schema.
type schemaCodec interface {
	// appendEncode appends v's payload (after the header) to dst; an
	// error is the value not fitting (an *avroError and the like).
	appendEncode(dst []byte, v any) ([]byte, error)
	// decode reads a payload (after the schema id; for Protobuf, with the
	// message indexes).
	decode(b []byte) (any, error)
	// fullName is the record's or message's full name, for the record
	// subject strategies; "" when the schema has none.
	fullName() string
	// index is Protobuf's message indexes, written after the id; nil for
	// the other formats.
	index() []int
	// canonical is a form that is equal for equal schemas.
	canonical() string
	// resolve returns a codec that reads data of this (writer) schema
	// in reader's layout.
	resolve(reader schemaCodec) (schemaCodec, error)
}

// schemaSerde is a schema serde bound to one config: its registry, key or
// value, and what the config says about schemas.
type schemaSerde struct {
	f      *schemaFormat
	reg    *registry
	rc     *registryConfig
	isKey  bool
	inline schemaCodec // the config's key-schema or value-schema, parsed; nil if none

	targets sync.Map // topic -> *schemaTarget, for encoding
	readers sync.Map // decodeKey -> schemaCodec (or error), for decoding
}

// schemaTarget is what a topic's records are written with.
type schemaTarget struct {
	prefix []byte // the header: magic byte, id, indexes
	codec  schemaCodec
	size   atomic.Int64 // the largest record written yet: the next one's buffer
}

type decodeKey struct {
	topic string // "" unless the reader schema depends on it
	id    int
}

var confluentHeader sr.ConfluentHeader

// recordError is a value that does not fit its schema: it fails its record
// alone, where other serializer errors fail the whole call.
type recordError struct{ err error }

func (e *recordError) Error() string { return e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }

// bindSchemaSerde returns the serde proto (a schema format's) bound to the
// config's registry.
func bindSchemaSerde(proto *serde, reg *registry, rc *registryConfig, isKey, deser bool) (*serde, error) {
	ss := &schemaSerde{f: proto.format, reg: reg, rc: rc, isKey: isKey}
	text, key := rc.valueSchema, "value-schema"
	if isKey {
		text, key = rc.keySchema, "key-schema"
	}
	if text != "" {
		c, err := ss.f.compile(reg, sr.Schema{Schema: text, Type: ss.f.typ})
		if err != nil {
			var ke *kindError
			if errors.As(err, &ke) && errors.Is(err, ErrSchemaRegistry) {
				return nil, err
			}
			return nil, wrapf(ErrInvalidConfig, err, "config %q: not a valid %s schema", key, ss.f.name)
		}
		ss.inline = c
	}
	strategy := rc.strategy
	if isKey {
		strategy = rc.keyStrategy
	}
	if !deser && strategy != topicStrategy && ss.inline == nil && (rc.useID == 0 || isKey) {
		return nil, errorf(ErrInvalidConfig, "config \"subject-name-strategy\": the record strategies need the schema: give %q or \"use-schema-id\"", key)
	}
	s := &serde{name: proto.name, format: proto.format, schema: ss}
	return s, nil
}

func (ss *schemaSerde) strategy() subjectStrategy {
	if ss.isKey {
		return ss.rc.keyStrategy
	}
	return ss.rc.strategy
}

// target finds what topic's records are written with, asking the registry
// the first time.
func (ss *schemaSerde) target(topic string) (*schemaTarget, error) {
	if t, ok := ss.targets.Load(topic); ok {
		return t.(*schemaTarget), nil
	}
	var (
		id    int
		codec = ss.inline
		err   error
	)
	switch {
	case ss.rc.useID > 0 && !ss.isKey: // one id for one schema: the value's
		id = ss.rc.useID
		var s sr.Schema
		if s, err = ss.reg.schemaByID(id); err != nil {
			return nil, err
		}
		if codec, err = ss.compile(s, id); err != nil {
			return nil, err
		}
	case codec != nil && !ss.rc.useLatest:
		subject := ss.strategy().subject(topic, codec.fullName(), ss.isKey)
		text := ss.rc.valueSchema
		if ss.isKey {
			text = ss.rc.keySchema
		}
		if id, err = ss.reg.register(subject, sr.Schema{Schema: text, Type: ss.f.typ}, ss.rc.autoRegister); err != nil {
			return nil, err
		}
	default: // the subject's latest version
		record := ""
		if codec != nil {
			record = codec.fullName()
		}
		var s sr.Schema
		if s, id, err = ss.reg.latest(ss.strategy().subject(topic, record, ss.isKey)); err != nil {
			return nil, err
		}
		if codec, err = ss.compile(s, id); err != nil {
			return nil, err
		}
	}
	prefix, err := confluentHeader.AppendEncode(nil, id, codec.index())
	if err != nil {
		return nil, err
	}
	t := &schemaTarget{prefix: prefix, codec: codec}
	ss.targets.Store(topic, t)
	return t, nil
}

// compile parses a schema the registry gave for id.
func (ss *schemaSerde) compile(s sr.Schema, id int) (schemaCodec, error) {
	if s.Type != ss.f.typ && !(s.Type == 0 && ss.f.typ == sr.TypeAvro) {
		return nil, errorf(ErrSchemaRegistry, "schema registry %s: schema id %d is a %s schema, not %s", ss.reg.url, id, s.Type, ss.f.typ)
	}
	c, err := ss.f.compile(ss.reg, s)
	if err != nil && !errors.Is(err, ErrSchemaRegistry) {
		err = wrapf(ErrSchemaRegistry, err, "schema registry %s: schema id %d is not a valid %s schema", ss.reg.url, id, ss.f.name)
	}
	return c, err
}

// encode writes v for topic. A value that does not fit is a *recordError;
// a registry that cannot be asked is an ErrSchemaRegistry error.
func (ss *schemaSerde) encode(topic string, v any) ([]byte, error) {
	t, err := ss.target(topic)
	if err != nil {
		return nil, err
	}
	dst := make([]byte, len(t.prefix), max(t.size.Load(), int64(len(t.prefix))+64))
	copy(dst, t.prefix)
	out, err := t.codec.appendEncode(dst, v)
	if err != nil {
		return nil, &recordError{err}
	}
	if n := int64(len(out)); n > t.size.Load() && n <= 1<<20 {
		t.size.Store(n)
	}
	return out, nil
}

// reader is the schema records are read into: the config's inline schema,
// or with use-latest-version the subject's latest; nil to read them as
// written.
func (ss *schemaSerde) reader(topic string) (schemaCodec, bool, error) {
	if !ss.rc.useLatest {
		return ss.inline, false, nil
	}
	t, err := ss.target(topic)
	if err != nil {
		return nil, true, err
	}
	return t.codec, true, nil
}

// decode reads a record's bytes written to topic.
func (ss *schemaSerde) decode(topic string, b []byte) (any, error) {
	if len(b) < 5 || b[0] != 0 {
		return nil, errors.New("not in the schema registry's wire format (a 0 byte, then a 4-byte schema id)")
	}
	id, rest, err := confluentHeader.DecodeID(b)
	if err != nil {
		return nil, err
	}
	key := decodeKey{id: id}
	if ss.rc.useLatest {
		key.topic = topic
	}
	c, ok := ss.readers.Load(key)
	if !ok {
		codec, err := ss.readerFor(topic, id)
		if err != nil {
			return nil, err
		}
		c, _ = ss.readers.LoadOrStore(key, codec)
	}
	v, err := c.(schemaCodec).decode(rest)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	return v, nil
}

func (ss *schemaSerde) readerFor(topic string, id int) (schemaCodec, error) {
	s, err := ss.reg.schemaByID(id)
	if err != nil {
		return nil, err
	}
	w, err := ss.compile(s, id)
	if err != nil {
		return nil, err
	}
	r, _, err := ss.reader(topic)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return w, nil
	}
	rw, err := w.resolve(r)
	if err != nil {
		return nil, fmt.Errorf("schema id %d cannot be read with the reader schema: %w", id, err)
	}
	return rw, nil
}
