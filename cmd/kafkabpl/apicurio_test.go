package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/registry/registrytest"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/sr"
)

// apicurioDir holds Apicurio Registry 3.3.3's fast-jar
// (io.apicurio:apicurio-registry-app:3.3.3:tar.gz:all, unpacked), which
// .ci/run fetches; it needs Java 21 or later ($APICURIO_JAVA, else
// Temurin 25 where the machine has it, else java).
const apicurioDir = "testdata/apicurio"

// TestApicurio runs the schema serdes against a real schema registry,
// Apicurio Registry on in-memory storage, through its Confluent API
// (/apis/ccompat/v7), beside the embedded cluster: each format written
// and read back, and schema evolution, a record written with v1 read with
// v2 as the subject's latest; and Confluent's Python client exchanging each
// format with kafkabpl through it. $APICURIO_URL names a running one instead.
func TestApicurio(t *testing.T) {
	t.Parallel()
	url := startApicurio(t)
	c, err := embedded.Start(embedded.Port(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	lib := kafkabpl.New()
	defer lib.Close(context.Background())
	run := fmt.Sprint(time.Now().UnixNano()) // subjects of this run only, for a shared registry
	for _, tt := range []struct{ format, schema, value string }{
		{"Avro", `{"type":"record","name":"Reading","namespace":"iot","fields":[{"name":"device","type":"string"},{"name":"temperature","type":"double"},{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}}]}`,
			`("device" => "d1" "temperature" => 21.5 "at" => 1700000000123)`},
		{"Protobuf", `syntax = "proto3"; package iot; message Reading { string device = 1; double temperature = 2; repeated string alarms = 3; }`,
			`("device" => "d1" "temperature" => 21.5 "alarms" => ("hot"))`},
		{"JSON-Schema", `{"title":"iot.Reading","type":"object","properties":{"device":{"type":"string"},"temperature":{"type":"number"}}}`,
			`("device" => "d1" "temperature" => 21.5)`},
	} {
		t.Run(tt.format, func(t *testing.T) {
			topic := "apicurio-" + strings.ToLower(tt.format) + "-" + run
			reg := map[string]any{"servers": c.Servers(), "schema-registry-url": url}
			pcfg := map[string]any{"value-serializer": tt.format, "value-schema": tt.schema}
			ccfg := map[string]any{"value-deserializer": tt.format, "auto-offset-reset": "earliest", "topics": topic}
			for k, v := range reg {
				pcfg[k], ccfg[k] = v, v
			}
			p := mustT(t)(lib.Create(ctx, kafkabpl.Producer, pcfg))
			v, err := value.Parse(tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lib.Send(ctx, p, []string{topic}, []kafkabpl.Message{{Value: v[0]}}); err != nil {
				t.Fatal(err)
			}
			got := pollOne(t, ctx, lib, mustT(t)(lib.Create(ctx, kafkabpl.Consumer, ccfg)))
			if got != tt.value {
				t.Errorf("read %s, want %s", got, tt.value)
			}
		})
	}
	// Confluent's Python client through the same registry: what it writes
	// kafkabpl reads, and the other way.
	t.Run("confluent-kafka", func(t *testing.T) {
		python := apicurioPeer(t)
		serde := map[string]string{"avro": "Avro", "json": "JSON-Schema", "protobuf": "Protobuf"}
		schemas := map[string]string{
			"avro":     `{"type":"record","name":"Reading","namespace":"iot","fields":[{"name":"device","type":"string"},{"name":"temperature","type":"double"},{"name":"count","type":"long"}]}`,
			"json":     `{"title":"iot.Reading","type":"object","properties":{"device":{"type":"string"},"temperature":{"type":"number"},"count":{"type":"integer"}},"required":["device","temperature","count"]}`,
			"protobuf": `syntax = "proto3"; package iot; message Reading { string device = 1; double temperature = 2; int64 count = 3; }`,
		}
		for _, format := range []string{"avro", "json", "protobuf"} {
			topic := "apicurio-py-" + format + "-" + run
			runPeer(t, ctx, python[0], append(python[1:], "testdata/interop/peer_sr.py", "produce", c.Servers(), url, topic, format)...)
			cons := mustT(t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": c.Servers(), "schema-registry-url": url,
				"value-deserializer": serde[format], "auto-offset-reset": "earliest", "topics": topic}))
			if got := pollOne(t, ctx, lib, cons); got != `("device" => "d1" "temperature" => 21.5 "count" => 1)` {
				t.Errorf("%s from confluent-kafka: %s", format, got)
			}
			topic = "apicurio-bpl-" + format + "-" + run
			p := mustT(t)(lib.Create(ctx, kafkabpl.Producer, map[string]any{"servers": c.Servers(), "schema-registry-url": url,
				"value-serializer": serde[format], "value-schema": schemas[format]}))
			v, _ := value.Parse(`("device" => "d1" "temperature" => 21.5 "count" => 1)`)
			if _, err := lib.Send(ctx, p, []string{topic}, []kafkabpl.Message{{Value: v[0]}}); err != nil {
				t.Fatal(err)
			}
			out := runPeer(t, ctx, python[0], append(python[1:], "testdata/interop/peer_sr.py", "consume", c.Servers(), url, topic, format, "1")...)
			if want := `{"count": 1, "device": "d1", "temperature": 21.5}` + "\n"; out != want {
				t.Errorf("%s to confluent-kafka: %q, want %q", format, out, want)
			}
		}
	})
	// The registry API table (internal/registry/registrytest), as the
	// embedded registry answers it in TestRegistryChecks: Apicurio answers
	// each check as Confluent documents, or as its documented difference.
	t.Run("registry-api", func(t *testing.T) {
		doc, differ, skipped := registrytest.Run(t, registrytest.Target{Name: "Apicurio", URL: url, Apicurio: true}, run)
		if doc+differ+skipped != len(registrytest.Checks) {
			t.Errorf("Apicurio: %d of %d checks as documented, %d as documented differences, %d not asked", doc, len(registrytest.Checks), differ, skipped)
		}
	})
	// Confluent's SchemaRegistryClient, as TestRegistryClient runs it: some
	// checks fail against Apicurio (serialized Protobuf, an unset subject
	// level, hard delete codes, metadata); the figure is logged.
	t.Run("registry-client", func(t *testing.T) {
		python := apicurioPeer(t)
		out := runPeer(t, ctx, python[0], append(python[1:], "testdata/interop/peer_srclient.py", url, "py-"+run)...)
		t.Log(strings.TrimSpace(out))
		if !strings.Contains(out, "checks: ") {
			t.Errorf("SchemaRegistryClient against Apicurio:\n%s", out)
		}
	})
	t.Run("evolution", func(t *testing.T) {
		topic := "apicurio-evolution-" + run
		v1 := `{"type":"record","name":"User","fields":[{"name":"name","type":"string"}]}`
		v2 := `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"age","type":"int","default":-1}]}`
		p := mustT(t)(lib.Create(ctx, kafkabpl.Producer, map[string]any{"servers": c.Servers(), "schema-registry-url": url, "value-serializer": "Avro", "value-schema": v1}))
		v, _ := value.Parse(`("name" => "ann")`)
		if _, err := lib.Send(ctx, p, []string{topic}, []kafkabpl.Message{{Value: v[0]}}); err != nil {
			t.Fatal(err)
		}
		cl, err := sr.NewClient(sr.URLs(url))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.CreateSchema(ctx, topic+"-value", sr.Schema{Schema: v2, Type: sr.TypeAvro}); err != nil {
			t.Fatal(err)
		}
		cons := mustT(t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": c.Servers(), "schema-registry-url": url,
			"value-deserializer": "Avro", "use-latest-version": true, "auto-offset-reset": "earliest", "topics": topic}))
		if got := pollOne(t, ctx, lib, cons); got != `("name" => "ann" "age" => -1)` {
			t.Errorf("v1 read as v2: %s", got)
		}
	})
}

func mustT(t *testing.T) func(string, error) string {
	return func(s string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// pollOne polls c until it has a record, and returns its value in BPL.
func pollOne(t *testing.T, ctx context.Context, lib *kafkabpl.Library, c string) string {
	t.Helper()
	got := pollValues(t, ctx, lib, c, 1)
	if len(got) == 0 {
		t.Fatal("no record")
	}
	return got[0]
}

// pollValues polls c until it has n records, or for testTimeout, and
// returns their values in BPL (a poll's records past the n-th too).
func pollValues(t *testing.T, ctx context.Context, lib *kafkabpl.Library, c string, n int) []string {
	t.Helper()
	var got []string
	deadline := time.Now().Add(testTimeout)
	for len(got) < n && time.Now().Before(deadline) {
		p, err := lib.Poll(ctx, c, 500*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range p.Topics {
			for _, r := range tr.Records {
				if err := r.Err(); err != nil {
					t.Fatalf("record %d: %v", r.Offset(), err)
				}
				got = append(got, value.Format(r.Value()))
			}
		}
	}
	return got
}

// startApicurio returns the Confluent API's URL of $APICURIO_URL, or of an
// Apicurio Registry it starts on a free port of 127.0.0.1 and stops at the
// end of the test.
// apicurioPeer is the command line that runs Confluent's Python client
// against Apicurio: each registry request bounded to 15 s, then retried
// (peer_sr.py's $PEER_SR_TIMEOUT), since a freshly started Apicurio now and
// then leaves a request unanswered, which the client's default would wait
// on forever. The peers against kafkabpl's own registry have no such bound.
func apicurioPeer(t *testing.T) []string {
	return []string{"env", "PEER_SR_TIMEOUT=15", needConfluentPython(t)}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func startApicurio(t *testing.T) string {
	t.Helper()
	if u := os.Getenv("APICURIO_URL"); u != "" {
		return strings.TrimRight(u, "/") + "/apis/ccompat/v7"
	}
	jar, err := filepath.Abs(filepath.Join(apicurioDir, "quarkus-run.jar"))
	if err == nil {
		_, err = os.Stat(jar)
	}
	if err != nil {
		missingTool(t, "Apicurio Registry 3.3.3", err, "fetch it as .ci/run does: mvn dependency:copy -Dartifact=io.apicurio:apicurio-registry-app:3.3.3:tar.gz:all -Dtransitive=false, unpacked into "+apicurioDir)
	}
	java := os.Getenv("APICURIO_JAVA")
	if java == "" {
		java = "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java"
		if _, err := os.Stat(java); err != nil {
			java = "java"
		}
	}
	port := freePort(t)
	cmd := exec.Command(java, fmt.Sprintf("-Dquarkus.http.port=%d", port), "-Dquarkus.http.host=127.0.0.1", "-jar", jar)
	cmd.Dir = filepath.Dir(jar)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		missingTool(t, "java 21 or later for Apicurio Registry", err, "install a JDK 21+ and set $APICURIO_JAVA")
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			// Its threads' stacks, to tell a registry that hung from a
			// client that did.
			cmd.Process.Signal(syscall.SIGQUIT)
			time.Sleep(time.Second)
			t.Logf("Apicurio Registry's output, the last 64 KiB, with its threads:\n%s", tail(out.String(), 64<<10))
		}
		cmd.Process.Kill()
		<-exited
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/apis/ccompat/v7", port)
	deadline := time.Now().Add(3 * time.Minute) // a JVM start on a loaded machine
	for {
		resp, err := http.Get(url + "/subjects")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		select {
		case <-exited:
			t.Fatalf("Apicurio Registry exited before it served %s; its output:\n%s", url, out.String())
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("Apicurio Registry did not come up at %s; its output:\n%s", url, out.String())
		}
	}
}
