"""The confluent-kafka side of TestRegistryInterop: Confluent's own Python
client and its schema registry serializers, against kafkabpl.

    peer_sr.py produce SERVERS REGISTRY TOPIC FORMAT
    peer_sr.py consume SERVERS REGISTRY TOPIC FORMAT N

FORMAT is avro, json, protobuf, protobuf-import or protobuf-registry. produce writes
READINGS, registering the schema under TOPIC-value; consume reads N
records from the start and prints each value as a JSON line (device,
temperature, count). protobuf-import's message lives in iot/reading.proto,
which imports iot/unit.proto, another file of its own: the serializer
registers that file too, as a reference, and its records carry a unit,
F. consume's protobuf-registry is protobuf read with the registry
client, as an application reads: the deserializer asks the registry for
the writer's schema with ?format=serialized, and reads the answer as a
base64 FileDescriptorProto.
"""
import faulthandler
import json
import os
import signal
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

# The tests send SIGQUIT to a peer that hangs: print where it is.
faulthandler.register(signal.SIGQUIT, all_threads=True)

AVRO = ('{"type":"record","name":"Reading","namespace":"iot","fields":['
        '{"name":"device","type":"string"},{"name":"temperature","type":"double"},'
        '{"name":"count","type":"long"}]}')
JSON_SCHEMA = ('{"title":"iot.Reading","type":"object","properties":{'
               '"device":{"type":"string"},"temperature":{"type":"number"},'
               '"count":{"type":"integer"}},"required":["device","temperature","count"]}')
READINGS = [
    {"device": "d1", "temperature": 21.5, "count": 1},
    {"device": "d2", "temperature": -3.25, "count": 9007199254740993},
]


def reading_class(imported=False):
    """iot.Reading; imported, in iot/reading.proto with a unit field of
    the enum iot.Unit, which iot/unit.proto declares."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    pool = descriptor_pool.DescriptorPool()
    fdp = descriptor_pb2.FileDescriptorProto(name="reading.proto", package="iot", syntax="proto3")
    msg = fdp.message_type.add(name="Reading")
    f = descriptor_pb2.FieldDescriptorProto
    msg.field.add(name="device", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    msg.field.add(name="temperature", number=2, type=f.TYPE_DOUBLE, label=f.LABEL_OPTIONAL)
    msg.field.add(name="count", number=3, type=f.TYPE_INT64, label=f.LABEL_OPTIONAL)
    if imported:
        unit = descriptor_pb2.FileDescriptorProto(name="iot/unit.proto", package="iot", syntax="proto3")
        enum = unit.enum_type.add(name="Unit")
        enum.value.add(name="C", number=0)
        enum.value.add(name="F", number=1)
        pool.Add(unit)
        fdp.name = "iot/reading.proto"
        fdp.dependency.append("iot/unit.proto")
        msg.field.add(name="unit", number=4, type=f.TYPE_ENUM, type_name=".iot.Unit", label=f.LABEL_OPTIONAL)
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("iot.Reading"))


def registry_conf(url):
    """The registry client's config. $PEER_SR_TIMEOUT (seconds) bounds each
    request, which the client then retries: the client's default waits
    forever, and TestApicurio sets it because Apicurio, freshly started,
    once in a while leaves a request unanswered."""
    conf = {"url": url}
    if os.environ.get("PEER_SR_TIMEOUT"):
        conf["timeout"] = float(os.environ["PEER_SR_TIMEOUT"])
    return conf


def main():
    mode, servers, registry, topic, fmt = sys.argv[1:6]
    client = SchemaRegistryClient(registry_conf(registry))
    ctx = SerializationContext(topic, MessageField.VALUE)
    if mode == "produce":
        if fmt == "avro":
            ser, conv = AvroSerializer(client, AVRO), lambda r: r
        elif fmt == "json":
            ser, conv = JSONSerializer(JSON_SCHEMA, client), lambda r: r
        elif fmt == "protobuf":
            cls = reading_class()
            ser, conv = ProtobufSerializer(cls, client, {"use.deprecated.format": False}), lambda r: cls(**r)
        else:
            cls = reading_class(imported=True)
            ser, conv = ProtobufSerializer(cls, client, {"use.deprecated.format": False}), lambda r: cls(unit=1, **r)
        p = Producer({"bootstrap.servers": servers})
        for r in READINGS:
            p.produce(topic, key=r["device"], value=ser(conv(r), ctx))
        if p.flush(30) != 0:
            sys.exit("not all records delivered")
        return
    n = int(sys.argv[6])
    if fmt == "avro":
        de, conv = AvroDeserializer(client), lambda v: v
    elif fmt == "json":
        de, conv = JSONDeserializer(JSON_SCHEMA, schema_registry_client=client), lambda v: v
    else:
        # With the registry client, as an application reads: it asks for
        # the writer's schema (?format=serialized) and finds the message
        # the record's indexes name; without, it trusts the class.
        client_or_none = client if fmt == "protobuf-registry" else None
        de = ProtobufDeserializer(reading_class(), {"use.deprecated.format": False}, schema_registry_client=client_or_none)
        conv = lambda m: {"device": m.device, "temperature": m.temperature, "count": m.count}
    c = Consumer({"bootstrap.servers": servers, "group.id": "peer-sr-" + topic + "-" + fmt, "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got = 0
    for _ in range(60):
        if got == n:
            break
        m = c.poll(1.0)
        if m is None:
            continue
        if m.error():
            sys.exit(str(m.error()))
        print(json.dumps(conv(de(m.value(), ctx)), sort_keys=True), flush=True)
        got += 1
    c.close()
    if got != n:
        sys.exit("read %d of %d records" % (got, n))


if __name__ == "__main__":
    main()
