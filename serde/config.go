package serde

import (
	"context"
	"crypto/tls"
	"net"
	"time"
)

// RegistryConfig is a schema registry client's settings and what the
// schema serdes bound to it ([Serde.Bind]) write. Its zero value is not
// usable: URL is required. Package kafkabpl fills it from a config's
// keys, named here by each field; the errors of NewRegistry and
// [Serde.Bind] name the settings by those keys.
type RegistryConfig struct {
	// URL is the registry's, "http://host:port" or https
	// (schema-registry-url). Required.
	URL string
	// UserInfo is "user:password" for basic auth, "" for none
	// (basic-auth-user-info). Errors never show it.
	UserInfo string
	// TLS is the registry's TLS config (schema-registry-tls); nil verifies
	// an https URL against the system's roots.
	TLS *tls.Config
	// Timeout bounds each request to the registry, dial included; 0 is
	// 10 s. A caller's context that ends first ends the request sooner.
	Timeout time.Duration
	// Dial, when not nil, dials every connection to the registry in place
	// of a net.Dialer with Timeout (kgo.Dialer is the model): a proxy, or
	// a test's guard that refuses any address off loopback.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// AutoRegister makes a serializer register its schema under the
	// subject (auto-register-schemas); off, it only looks the schema up
	// there, and fails when the registry does not hold it. Hazard: the
	// zero value is off, where Confluent's serializers and kafkabpl's
	// config default to on.
	AutoRegister bool
	// UseLatest writes with the subject's latest schema, and reads into
	// it (use-latest-version).
	UseLatest bool
	// UseID writes every value with the schema of this id, as registered
	// (use-schema-id); 0 for none. Keys are not affected.
	UseID int
	// Strategy and KeyStrategy give a value's and a key's subject
	// (subject-name-strategy, key-subject-name-strategy); the zero value
	// is TopicStrategy.
	Strategy, KeyStrategy SubjectStrategy
	// KeySchema and ValueSchema are the schema text a serializer writes
	// with and a deserializer reads into (key-schema, value-schema); ""
	// for none: a serializer then writes with the subject's latest, a
	// deserializer reads as the record was written.
	KeySchema, ValueSchema string
	// KeyFullName and ValueFullName name, by full name ("iot.Reading",
	// or a nested "iot.Reading.Where"), the Protobuf message of the
	// schema that a serializer writes and a deserializer reads into when
	// the record's own has no namesake (key-schema-full-name,
	// value-schema-full-name, as ksqlDB's KEY_SCHEMA_FULL_NAME and
	// VALUE_SCHEMA_FULL_NAME); "" for the file's first message. Only
	// Protobuf has several messages to choose from.
	KeyFullName, ValueFullName string
}

// SubjectStrategy is subject.name.strategy: how a topic and a schema give
// the subject the schema is registered under.
type SubjectStrategy int8

const (
	// TopicStrategy: "<topic>-key" and "<topic>-value", the default.
	TopicStrategy SubjectStrategy = iota
	// RecordStrategy: the record's (or message's, or JSON schema's
	// title's) full name. A serializer needs the schema, given inline or,
	// for a value, by UseID.
	RecordStrategy
	// TopicRecordStrategy: "<topic>-<record's full name>". A serializer
	// needs the schema, as for RecordStrategy.
	TopicRecordStrategy
)

// Subject returns the subject of a key (isKey) or value schema whose
// record's full name is record, written to topic.
func (s SubjectStrategy) Subject(topic, record string, isKey bool) string {
	switch s {
	case RecordStrategy:
		return record
	case TopicRecordStrategy:
		return topic + "-" + record
	}
	if isKey {
		return topic + "-key"
	}
	return topic + "-value"
}
