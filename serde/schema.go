package serde

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/sr"
)

// Schema serdes write and read Confluent's wire format: byte 0, the
// schema's id in 4 bytes big-endian, (for Protobuf, the message's
// indexes,) then the payload in the schema's format. The id comes from
// the schema registry; which schema is written is said by the registry's
// config (see RegistryConfig), and the registry is asked once per topic
// and schema: the answers are kept for the life of the bound serde.

// schemaFormat is one schema language.
type schemaFormat struct {
	name    string // "Avro", for errors
	typ     sr.SchemaType
	compile func(ctx context.Context, reg *Registry, s sr.Schema) (schemaCodec, error)
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

// schemaSerde is a schema serde bound to a registry: key or value, and
// what the registry's config says about schemas.
type schemaSerde struct {
	f      *schemaFormat
	reg    *Registry
	rc     *RegistryConfig // &reg.cfg
	isKey  bool
	inline schemaCodec // the config's key or value schema, parsed; nil if none

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

// Role is what a bound schema serde is for: a key's or a value's, a
// serializer or a deserializer. The key's and the value's have subjects,
// schemas and strategies of their own (see [RegistryConfig]).
type Role uint8

const (
	ValueSerializer   Role = iota // a producer's value-serializer
	KeySerializer                 // a producer's key-serializer
	ValueDeserializer             // a consumer's value-deserializer
	KeyDeserializer               // a consumer's key-deserializer
)

func (r Role) isKey() bool { return r == KeySerializer || r == KeyDeserializer }

// Bind returns s, a schema serde ([Serde.NeedsRegistry]), bound to reg for
// role: it writes or reads with reg's registry, and with what reg's config
// says of schemas. Bind does no I/O: the schema given inline is parsed
// now, and the registry is asked at the first Encode or Decode. It is an
// [ErrInvalidConfig] error when the inline schema does not parse, or when
// a serializer with a record subject strategy has no schema to take the
// record's name from; s not a schema serde is one too. Binding a bound
// serde binds its format afresh.
func (s *Serde) Bind(reg *Registry, role Role) (*Serde, error) {
	if s.format == nil {
		return nil, errorf(ErrInvalidConfig, "the %s serde has no schema to bind to a registry", s.name)
	}
	rc := &reg.cfg
	ss := &schemaSerde{f: s.format, reg: reg, rc: rc, isKey: role.isKey()}
	text, key := rc.ValueSchema, "value-schema"
	if ss.isKey {
		text, key = rc.KeySchema, "key-schema"
	}
	if name, key := ss.fullName(); name != "" && ss.f != protobufFormat {
		return nil, errorf(ErrInvalidConfig, "config %q: %q names a Protobuf message; the %s serde has no messages to choose from", key, name, s.name)
	}
	if text != "" {
		// Text given inline has no references: nothing to ask the
		// registry for.
		c, err := ss.f.compile(context.Background(), reg, sr.Schema{Schema: text, Type: ss.f.typ})
		if err != nil {
			return nil, wrapf(ErrInvalidConfig, err, "config %q: not a valid %s schema", key, ss.f.name)
		}
		if ss.inline, err = ss.message(c); err != nil {
			return nil, err
		}
	}
	serializer := role == KeySerializer || role == ValueSerializer
	if serializer && ss.strategy() != TopicStrategy && ss.inline == nil && (rc.UseID == 0 || ss.isKey) {
		return nil, errorf(ErrInvalidConfig, "config \"subject-name-strategy\": the record strategies need the schema: give %q or \"use-schema-id\"", key)
	}
	return &Serde{name: s.name, format: s.format, schema: ss}, nil
}

// fullName is the message the config names for ss, and the config's
// key.
func (ss *schemaSerde) fullName() (name, key string) {
	if ss.isKey {
		return ss.rc.KeyFullName, "key-schema-full-name"
	}
	return ss.rc.ValueFullName, "value-schema-full-name"
}

// message is c writing, and reading into, the message the config names;
// c itself when it names none.
func (ss *schemaSerde) message(c schemaCodec) (schemaCodec, error) {
	name, key := ss.fullName()
	pc, ok := c.(*protobufCodec)
	if name == "" || !ok {
		return c, nil
	}
	m, err := pc.withMessage(name)
	if err != nil {
		return nil, wrapf(ErrInvalidConfig, err, "config %q", key)
	}
	return m, nil
}

func (ss *schemaSerde) strategy() SubjectStrategy {
	if ss.isKey {
		return ss.rc.KeyStrategy
	}
	return ss.rc.Strategy
}

// target finds what topic's records are written with, asking the registry,
// within ctx, the first time.
func (ss *schemaSerde) target(ctx context.Context, topic string) (*schemaTarget, error) {
	if t, ok := ss.targets.Load(topic); ok {
		return t.(*schemaTarget), nil
	}
	var (
		id    int
		codec = ss.inline
		err   error
	)
	switch {
	case ss.rc.UseID > 0 && !ss.isKey: // one id for one schema: the value's
		id = ss.rc.UseID
		var s sr.Schema
		if s, err = ss.reg.schemaByID(ctx, id); err != nil {
			return nil, err
		}
		if codec, err = ss.compile(ctx, s, id); err != nil {
			return nil, err
		}
		if codec, err = ss.message(codec); err != nil {
			return nil, err
		}
	case codec != nil && !ss.rc.UseLatest:
		subject := ss.strategy().Subject(topic, codec.fullName(), ss.isKey)
		text := ss.rc.ValueSchema
		if ss.isKey {
			text = ss.rc.KeySchema
		}
		forms := []sr.Schema{{Schema: text, Type: ss.f.typ}}
		if pc, ok := codec.(*protobufCodec); ok { // registered serialized, and looked up either way
			forms = append([]sr.Schema{{Schema: pc.registered(), Type: ss.f.typ}}, forms...)
		}
		if id, err = ss.reg.register(ctx, subject, forms, ss.rc.AutoRegister); err != nil {
			return nil, err
		}
	default: // the subject's latest version
		record := ""
		if codec != nil {
			record = codec.fullName()
		}
		var s sr.Schema
		if s, id, err = ss.reg.latest(ctx, ss.strategy().Subject(topic, record, ss.isKey)); err != nil {
			return nil, err
		}
		if codec, err = ss.compile(ctx, s, id); err != nil {
			return nil, err
		}
		if codec, err = ss.message(codec); err != nil {
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

// compile parses a schema the registry gave for id, asking it, within
// ctx, for the schema's references.
func (ss *schemaSerde) compile(ctx context.Context, s sr.Schema, id int) (schemaCodec, error) {
	if s.Type != ss.f.typ && !(s.Type == 0 && ss.f.typ == sr.TypeAvro) {
		return nil, errorf(ErrSchemaRegistry, "schema registry %s: schema id %d is a %s schema, not %s", ss.rc.URL, id, s.Type, ss.f.typ)
	}
	c, err := ss.f.compile(ctx, ss.reg, s)
	if err != nil && !errors.Is(err, ErrSchemaRegistry) && ctx.Err() == nil {
		err = wrapf(ErrSchemaRegistry, err, "schema registry %s: schema id %d is not a valid %s schema", ss.rc.URL, id, ss.f.name)
	}
	return c, err
}

// encode writes v for topic. A value that does not fit is a *RecordError;
// a registry that cannot be asked is an ErrSchemaRegistry error.
func (ss *schemaSerde) encode(ctx context.Context, topic string, v any) ([]byte, error) {
	t, err := ss.target(ctx, topic)
	if err != nil {
		return nil, err
	}
	dst := make([]byte, len(t.prefix), max(t.size.Load(), int64(len(t.prefix))+64))
	copy(dst, t.prefix)
	out, err := t.codec.appendEncode(dst, v)
	if err != nil {
		return nil, &RecordError{err}
	}
	if n := int64(len(out)); n > t.size.Load() && n <= 1<<20 {
		t.size.Store(n)
	}
	return out, nil
}

// reader is the schema records are read into: the config's inline schema,
// or with use-latest-version the subject's latest; nil to read them as
// written.
func (ss *schemaSerde) reader(ctx context.Context, topic string) (schemaCodec, bool, error) {
	if !ss.rc.UseLatest {
		return ss.inline, false, nil
	}
	t, err := ss.target(ctx, topic)
	if err != nil {
		return nil, true, err
	}
	return t.codec, true, nil
}

// decode reads a record's bytes written to topic.
func (ss *schemaSerde) decode(ctx context.Context, topic string, b []byte) (any, error) {
	id, rest, c, err := ss.readerOf(ctx, topic, b)
	if err != nil {
		return nil, err
	}
	v, err := c.decode(rest)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	return v, nil
}

// prepare makes sure the codec b is read with is known, asking the
// registry within ctx if not. Bytes not in the wire format need nothing.
func (ss *schemaSerde) prepare(ctx context.Context, topic string, b []byte) error {
	if len(b) < 5 || b[0] != 0 {
		return nil
	}
	_, _, _, err := ss.readerOf(ctx, topic, b)
	return err
}

// readerOf reads b's header and returns the schema id, the rest of b and
// the codec that reads it: from the cache, or made with what the
// registry says, within ctx.
func (ss *schemaSerde) readerOf(ctx context.Context, topic string, b []byte) (int, []byte, schemaCodec, error) {
	if len(b) < 5 || b[0] != 0 {
		return 0, nil, nil, errors.New("not in the schema registry's wire format (a 0 byte, then a 4-byte schema id)")
	}
	id, rest, err := confluentHeader.DecodeID(b)
	if err != nil {
		return 0, nil, nil, err
	}
	key := decodeKey{id: id}
	if ss.rc.UseLatest {
		key.topic = topic
	}
	c, ok := ss.readers.Load(key)
	if !ok {
		codec, err := ss.readerFor(ctx, topic, id)
		if err != nil {
			return 0, nil, nil, err
		}
		c, _ = ss.readers.LoadOrStore(key, codec)
	}
	return id, rest, c.(schemaCodec), nil
}

func (ss *schemaSerde) readerFor(ctx context.Context, topic string, id int) (schemaCodec, error) {
	s, err := ss.reg.schemaByID(ctx, id)
	if err != nil {
		return nil, err
	}
	w, err := ss.compile(ctx, s, id)
	if err != nil {
		return nil, err
	}
	r, _, err := ss.reader(ctx, topic)
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
