package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
)

// TestRegistryInterop exchanges schema registry records with Confluent's
// own Python client (PyPI's confluent-kafka, with its Avro, JSON Schema
// and Protobuf serializers; testdata/interop/peer_sr.py), through the
// embedded cluster and its registry: what it writes kafkabpl reads, and
// what kafkabpl writes it reads. The interpreter is $CONFLUENT_PYTHON,
// else python3; it needs confluent-kafka[avro,json,protobuf,schemaregistry].
func TestRegistryInterop(t *testing.T) {
	t.Parallel()
	python := needConfluentPython(t)
	c, err := embedded.Start(embedded.Port(0), embedded.SchemaRegistry(0), embedded.Partitions(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	lib := kafkabpl.New()
	defer lib.Close(context.Background())
	schemas := map[string]string{
		"avro":     `{"type":"record","name":"Reading","namespace":"iot","fields":[{"name":"device","type":"string"},{"name":"temperature","type":"double"},{"name":"count","type":"long"}]}`,
		"json":     `{"title":"iot.Reading","type":"object","properties":{"device":{"type":"string"},"temperature":{"type":"number"},"count":{"type":"integer"}},"required":["device","temperature","count"]}`,
		"protobuf": `syntax = "proto3"; package iot; message Reading { string device = 1; double temperature = 2; int64 count = 3; }`,
	}
	serde := map[string]string{"avro": "io.confluent.kafka.serializers.KafkaAvroSerializer", "json": "io.confluent.kafka.serializers.json.KafkaJsonSchemaSerializer", "protobuf": "io.confluent.kafka.serializers.protobuf.KafkaProtobufSerializer"}
	want := []string{`("device" => "d1" "temperature" => 21.5 "count" => 1)`, `("device" => "d2" "temperature" => -3.25 "count" => 9007199254740993)`}
	for _, format := range []string{"avro", "json", "protobuf"} {
		t.Run("confluent-kafka to kafkabpl "+format, func(t *testing.T) {
			got := peerToBPL(t, ctx, lib, python, c, "py-"+format, format, serde[format], len(want))
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("kafkabpl read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
		t.Run("kafkabpl to confluent-kafka "+format, func(t *testing.T) {
			topic := "bpl-" + format
			p, err := lib.Create(ctx, kafkabpl.Producer, map[string]any{"servers": c.Servers(), "schema-registry-url": c.RegistryURL(),
				"value-serializer": serde[format], "value-schema": schemas[format]})
			if err != nil {
				t.Fatal(err)
			}
			var msgs []kafkabpl.Message
			for _, w := range want {
				v, err := value.Parse(w)
				if err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, kafkabpl.Message{Value: v[0]})
			}
			if _, err := lib.Send(ctx, p, []string{topic}, msgs); err != nil {
				t.Fatal(err)
			}
			formats := []string{format}
			if format == "protobuf" { // and as an application reads, through the registry
				formats = append(formats, "protobuf-registry")
			}
			for _, f := range formats {
				out := runPeer(t, ctx, python, "testdata/interop/peer_sr.py", "consume", c.Servers(), c.RegistryURL(), topic, f, "2")
				wantPy := `{"count": 1, "device": "d1", "temperature": 21.5}` + "\n" + `{"count": 9007199254740993, "device": "d2", "temperature": -3.25}` + "\n"
				if out != wantPy {
					t.Errorf("confluent-kafka (%s) read\n%s\nwant\n%s", f, out, wantPy)
				}
			}
		})
	}
	// A message whose file imports another file of the writer's own: the
	// serializer registers both, the imported one as a reference.
	t.Run("confluent-kafka to kafkabpl protobuf with an imported file", func(t *testing.T) {
		got := peerToBPL(t, ctx, lib, python, c, "py-protobuf-import", "protobuf-import", serde["protobuf"], len(want))
		var wantUnit []string
		for _, w := range want {
			wantUnit = append(wantUnit, strings.TrimSuffix(w, ")")+` "unit" => "F")`)
		}
		if strings.Join(got, "\n") != strings.Join(wantUnit, "\n") {
			t.Errorf("kafkabpl read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantUnit, "\n"))
		}
	})
}

// peerToBPL has confluent-kafka write its readings to topic in format
// (peer_sr.py's), and returns the values kafkabpl reads there with
// deserializer, n of them.
func peerToBPL(t *testing.T, ctx context.Context, lib *kafkabpl.Library, python string, c *embedded.Cluster, topic, format, deserializer string, n int) []string {
	t.Helper()
	runPeer(t, ctx, python, "testdata/interop/peer_sr.py", "produce", c.Servers(), c.RegistryURL(), topic, format)
	cons, err := lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": c.Servers(), "schema-registry-url": c.RegistryURL(),
		"value-deserializer": strings.Replace(deserializer, "Serializer", "Deserializer", 1), "auto-offset-reset": "earliest", "topics": topic})
	if err != nil {
		t.Fatal(err)
	}
	return pollValues(t, ctx, lib, cons, n)
}

func needConfluentPython(t *testing.T) string {
	t.Helper()
	python := os.Getenv("CONFLUENT_PYTHON")
	if python == "" {
		python = "python3"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", "import confluent_kafka, fastavro, google.protobuf, jsonschema; print(confluent_kafka.version())").CombinedOutput()
	if err != nil {
		missingTool(t, python+" with confluent-kafka", err, `pip install "confluent-kafka[avro,json,protobuf,schemaregistry]" and set $CONFLUENT_PYTHON`)
	}
	t.Logf("confluent-kafka %s", bytes.TrimSpace(out))
	return python
}

// TestRegistryClient runs Confluent's Python SchemaRegistryClient against
// the embedded cluster's registry (testdata/interop/peer_srclient.py):
// each of its checks gets the answer Confluent documents. TestApicurio
// logs how Apicurio's fares.
func TestRegistryClient(t *testing.T) {
	t.Parallel()
	python := needConfluentPython(t)
	c, err := embedded.Start(embedded.Port(0), embedded.SchemaRegistry(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	out := runPeer(t, ctx, python, "testdata/interop/peer_srclient.py", c.RegistryURL(), "py")
	t.Log(strings.TrimSpace(out))
	if strings.Contains(out, "FAIL") || !strings.Contains(out, "checks: ") {
		t.Errorf("SchemaRegistryClient against the embedded registry:\n%s", out)
	}
}
