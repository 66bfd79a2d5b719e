// Package serde converts BPL values (package value's) to the bytes of
// Kafka records and back: the serializers and deserializers of package
// kafkabpl's producers, consumers and streams, and the schema registry
// client that the schema formats need. It sits beside the client, as
// franz-go's sr beside kgo: it knows BPL values and the registry, never a
// Kafka client, so it can be used, and tested, without one.
//
// A [Serde] is one format both ways. [Lookup] finds one by the names a
// config gives (String, Long, JSON, BPL, Avro, or a Java class name such
// as org.apache.kafka.common.serialization.LongSerializer); each is also a
// package variable ([String], [Long]...). [Serde.Encode] writes a value
// and [Serde.Decode] reads one; [Serde.Check] says whether bytes decode,
// without building the value when it can.
//
// The schema formats ([Avro], [Protobuf], [JSONSchema]) write and read
// Confluent's wire format: a 0 byte, the schema's id in 4 bytes, (for
// Protobuf, the message's indexes,) then the payload. They need a
// [Registry], made by [NewRegistry] from a [RegistryConfig], which also
// says which schema is written; [Serde.Bind] ties a schema serde to it, as
// a key's or a value's serializer or deserializer. The registry is asked
// once per topic and schema, within the caller's context and the
// registry's own timeout; the answers are kept for the life of the
// Registry.
//
// Errors wrap the package's sentinels ([ErrInvalidConfig],
// [ErrDeserialization], [ErrSchemaRegistry]) or value.ErrInvalidArgument,
// which package kafkabpl returns under the same names; a value that does
// not fit its schema is a [*RecordError], which fails its record alone.
package serde
