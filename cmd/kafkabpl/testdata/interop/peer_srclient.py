"""TestRegistryClient's peer: Confluent's Python SchemaRegistryClient
(PyPI's confluent-kafka) against a schema registry, each check what
Confluent documents for the call.

    peer_srclient.py REGISTRY PREFIX

Prints a line per check, "ok NAME" or "FAIL NAME: what happened", then
"checks: N of M as documented". Subjects start with PREFIX.
"""
import faulthandler
import signal
import sys

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
from peer_sr import registry_conf

faulthandler.register(signal.SIGQUIT, all_threads=True)

V1 = '{"type":"record","name":"User","namespace":"py","fields":[{"name":"name","type":"string"}]}'
V2 = ('{"type":"record","name":"User","namespace":"py","fields":[{"name":"name","type":"string"},'
      '{"name":"age","type":"int","default":-1}]}')
NO_DEFAULT = ('{"type":"record","name":"User","namespace":"py","fields":[{"name":"name","type":"string"},'
              '{"name":"age","type":"int"}]}')
PROTO = 'syntax = "proto3"; package py; message User { string name = 1; }'
PROTO_SPACED = 'syntax = "proto3";\n\npackage py;\n\nmessage User {\n  string name = 1;\n}\n'
JSON_V1 = '{"type":"object","properties":{"name":{"type":"string"}},"additionalProperties":false}'
JSON_REQ = ('{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},'
            '"required":["age"],"additionalProperties":false}')


def fails(code, call):
    """call raises SchemaRegistryError with that error code."""
    try:
        call()
    except SchemaRegistryError as e:
        assert e.error_code == code, f"error code {e.error_code} ({e.error_message}), want {code}"
        return
    raise AssertionError(f"no error, want {code}")


def main():
    url, prefix = sys.argv[1:3]

    def client():
        return SchemaRegistryClient(registry_conf(url))

    checks = []

    def check(fn):
        checks.append(fn)
        return fn

    @check
    def register_and_read_back():
        c, s = client(), prefix + "-a"
        sid = c.register_schema(s, Schema(V1, "AVRO"))
        assert c.register_schema(s, Schema(V1, "AVRO")) == sid
        assert '"User"' in client().get_schema(sid).schema_str
        reg = client().get_latest_version(s)
        assert (reg.schema_id, reg.version, reg.subject) == (sid, 1, s), reg
        assert client().get_version(s, 1).schema_id == sid
        assert client().get_versions(s) == [1]
        assert s in client().get_subjects()
        assert client().lookup_schema(s, Schema(V1, "AVRO")).version == 1

    @check
    def lookup_unknown_schema():
        c, s = client(), prefix + "-b"
        c.register_schema(s, Schema(V1, "AVRO"))
        fails(40403, lambda: client().lookup_schema(s, Schema(V2, "AVRO")))
        fails(40401, lambda: client().get_versions(prefix + "-none"))

    @check
    def invalid_avro_is_42201():
        fails(42201, lambda: client().register_schema(prefix + "-c", Schema('{"type":"record","name":"A"}', "AVRO")))

    @check
    def invalid_protobuf_is_42201():
        fails(42201, lambda: client().register_schema(prefix + "-d", Schema("syntax = \"proto3\"; message {", "PROTOBUF")))

    @check
    def invalid_json_schema_is_42201():
        fails(42201, lambda: client().register_schema(prefix + "-e", Schema('{"type":"foo"}', "JSON")))

    @check
    def backward_refuses_a_field_without_default():
        c, s = client(), prefix + "-f"
        c.set_compatibility(s, "BACKWARD")
        c.register_schema(s, Schema(V1, "AVRO"))
        assert c.test_compatibility(s, Schema(V2, "AVRO")) is True
        assert c.test_compatibility(s, Schema(NO_DEFAULT, "AVRO")) is False
        fails(409, lambda: client().register_schema(s, Schema(NO_DEFAULT, "AVRO")))
        assert client().register_schema(s, Schema(V2, "AVRO")) > 0

    @check
    def forward_takes_a_field_without_default():
        c, s = client(), prefix + "-g"
        c.set_compatibility(s, "FORWARD")
        assert c.get_compatibility(s) == "FORWARD"
        c.register_schema(s, Schema(V1, "AVRO"))
        assert c.register_schema(s, Schema(NO_DEFAULT, "AVRO")) > 0

    @check
    def transitive_checks_every_version():
        c, s = client(), prefix + "-h"
        c.set_compatibility(s, "BACKWARD_TRANSITIVE")
        c.register_schema(s, Schema(V1, "AVRO"))
        c.register_schema(s, Schema(V2, "AVRO"))
        age_only = '{"type":"record","name":"User","namespace":"py","fields":[{"name":"age","type":"int"}]}'
        assert c.test_compatibility(s, Schema(age_only, "AVRO")) is True  # the latest alone
        assert c.test_compatibility_all_versions(s, Schema(age_only, "AVRO")) is False

    @check
    def json_schema_required_property_is_incompatible():
        c, s = client(), prefix + "-i"
        c.set_compatibility(s, "BACKWARD")
        c.register_schema(s, Schema(JSON_V1, "JSON"))
        assert c.test_compatibility(s, Schema(JSON_REQ, "JSON")) is False

    @check
    def protobuf_normalize_ignores_whitespace():
        c, s = client(), prefix + "-j"
        a = c.register_schema(s, Schema(PROTO, "PROTOBUF"), normalize_schemas=True)
        b = client().register_schema(s, Schema(PROTO_SPACED, "PROTOBUF"), normalize_schemas=True)
        assert a == b and client().get_versions(s) == [1]

    @check
    def protobuf_serialized_format():
        c, s = client(), prefix + "-k"
        sid = c.register_schema(s, Schema(PROTO, "PROTOBUF"))
        got = client().get_schema(sid, fmt="serialized").schema_str
        assert "syntax" not in got and len(got) > 10, got

    @check
    def unset_subject_compatibility_is_40408():
        c, s = client(), prefix + "-l"
        c.register_schema(s, Schema(V1, "AVRO"))
        fails(40408, lambda: client().get_compatibility(s))

    @check
    def soft_then_hard_delete():
        c, s = client(), prefix + "-m"
        c.set_compatibility(s, "NONE")
        c.register_schema(s, Schema(V1, "AVRO"))
        c.register_schema(s, Schema(NO_DEFAULT, "AVRO"))
        fails(40405, lambda: client().delete_subject(s, permanent=True))
        assert client().delete_version(s, 1) == 1
        assert client().delete_subject(s) == [2]
        fails(40404, lambda: client().delete_subject(s))
        assert client().get_versions(s, deleted=True) == [1, 2]
        assert client().delete_subject(s, permanent=True) == [1, 2]
        fails(40401, lambda: client().get_versions(s, deleted=True))

    @check
    def register_after_soft_delete():
        c, s = client(), prefix + "-n"
        c.register_schema(s, Schema(V1, "AVRO"))
        c.delete_subject(s)
        client().register_schema(s, Schema(V1, "AVRO"))
        assert client().get_versions(s) == [2]

    @check
    def metadata_lookup():
        c, s = client(), prefix + "-o"
        from confluent_kafka.schema_registry.schema_registry_client import Metadata, MetadataProperties
        sch = Schema(V1, "AVRO", metadata=Metadata(None, MetadataProperties({"owner": "ann"}), None))
        c.register_schema(s, sch)
        assert client().get_latest_with_metadata(s, {"owner": "ann"}).version == 1

    ok = 0
    for fn in checks:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - each check reports what failed
            print(f"FAIL {fn.__name__}: {type(e).__name__}: {e}")
        else:
            ok += 1
            print(f"ok {fn.__name__}")
    print(f"checks: {ok} of {len(checks)} as documented")


if __name__ == "__main__":
    main()
