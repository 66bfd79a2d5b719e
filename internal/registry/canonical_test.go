package registry_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/internal/registry"
)

// call sends method path with body (JSON, "" for none) to the registry at
// url and returns the status and the decoded answer.
func call(t *testing.T, url, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// avroBody is a registration of an Avro schema, with metadata
// properties when given.
func avroBody(schema string, props map[string]string) string {
	b := map[string]any{"schema": schema}
	if props != nil {
		b["metadata"] = map[string]any{"properties": props}
	}
	raw, _ := json.Marshal(b)
	return string(raw)
}

// TestAvroCanonicalForm registers Avro schemas as people write them and
// reads them back as Confluent's registry stores them: Java's
// Schema.toString of the parsed schema, so {"type": "string"} is
// "string", keys in Avro's order, names short within their namespace,
// no whitespace. The same schema written otherwise gets the same id.
func TestAvroCanonicalForm(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	for i, c := range []struct{ registered, stored string }{
		{`{"type": "string"}`, `"string"`},
		{`{"fields": [{"type": "string", "name": "device"}, {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}}],
		  "name": "Reading", "namespace": "iot", "type": "record"}`,
			`{"type":"record","name":"Reading","namespace":"iot","fields":[{"name":"device","type":"string"},{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}}]}`},
		{`{"type": "record", "name": "iot.R", "fields": [
		    {"name": "a", "type": {"type": "record", "name": "S", "fields": [{"name": "x", "type": {"type": "int"}}]}},
		    {"name": "b", "type": "S"},
		    {"name": "c", "type": {"type": "enum", "name": "other.E", "symbols": ["A", "B"], "default": "A"}},
		    {"name": "d", "type": "other.E", "default": "A"},
		    {"name": "e", "type": "iot.S"}]}`,
			`{"type":"record","name":"R","namespace":"iot","fields":[{"name":"a","type":{"type":"record","name":"S","fields":[{"name":"x","type":"int"}]}},{"name":"b","type":"S"},{"name":"c","type":{"type":"enum","name":"E","namespace":"other","symbols":["A","B"],"default":"A"}},{"name":"d","type":"other.E","default":"A"},{"name":"e","type":"S"}]}`},
		{`{"aliases": ["Old"], "type": "record", "name": "R", "doc": "a record", "fields": [
		    {"default": 1, "name": "n", "doc": "count", "type": "int", "order": "descending", "x-prop": true}], "x-owner": "iot"}`,
			`{"type":"record","name":"R","doc":"a record","fields":[{"name":"n","type":"int","doc":"count","default":1,"order":"descending","x-prop":true}],"x-owner":"iot","aliases":["Old"]}`},
		{`["null", {"type": "array", "items": {"type": "map", "values": "long"}}, {"type": "fixed", "size": 4, "name": "F"}]`,
			`["null",{"type":"array","items":{"type":"map","values":"long"}},{"type":"fixed","name":"F","size":4}]`},
	} {
		subject := fmt.Sprintf("canonical-%d", i)
		status, out := call(t, srv.URL, "POST", "/subjects/"+subject+"/versions", avroBody(c.registered, nil))
		if status != 200 {
			t.Fatalf("register %s: %d %v", c.registered, status, out)
		}
		id := out["id"]
		_, got := call(t, srv.URL, "GET", fmt.Sprintf("/schemas/ids/%v", id), "")
		if got["schema"] != c.stored {
			t.Errorf("registered %s\nstored %v\n  want %s", c.registered, got["schema"], c.stored)
		}
		_, again := call(t, srv.URL, "POST", "/subjects/"+subject+"/versions", avroBody(c.stored, nil))
		if again["id"] != id {
			t.Errorf("%s registered again in its stored form: id %v, want %v", subject, again["id"], id)
		}
	}
	// normalize=true keeps the normalized form: full names, "name" first.
	_, out := call(t, srv.URL, "POST", "/subjects/normalized/versions?normalize=true",
		avroBody(`{"type": "record", "name": "N", "namespace": "t", "fields": [{"name": "a", "type": {"type": "string"}}]}`, nil))
	if _, got := call(t, srv.URL, "GET", fmt.Sprintf("/schemas/ids/%v", out["id"]), ""); got["schema"] != `{"name":"t.N","type":"record","fields":[{"name":"a","type":"string"}]}` {
		t.Errorf("normalized: %v", got["schema"])
	}
}

// TestCompatibilityGroup sets a subject's compatibilityGroup and reads it
// back, across a restart too, and checks what it does, as Confluent's:
// a new version is checked only against the versions whose metadata
// property of that name has its value.
func TestCompatibilityGroup(t *testing.T) {
	file := filepath.Join(t.TempDir(), "schema-registry.log")
	reg, err := registry.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	const s = "/config/devices-value"
	status, out := call(t, srv.URL, "PUT", s, `{"compatibilityGroup": "application.major.version"}`)
	if status != 200 || out["compatibilityGroup"] != "application.major.version" {
		t.Fatalf("PUT %s: %d %v", s, status, out)
	}
	if _, got := call(t, srv.URL, "GET", s, ""); got["compatibilityGroup"] != "application.major.version" || got["compatibilityLevel"] != "BACKWARD" {
		t.Errorf("GET %s: %v", s, got)
	}
	v1 := `{"type": "record", "name": "D", "fields": [{"name": "id", "type": "string"}]}`
	v2 := `{"type": "record", "name": "D", "fields": [{"name": "id", "type": "long"}]}` // not BACKWARD of v1
	if status, out := call(t, srv.URL, "POST", "/subjects/devices-value/versions", avroBody(v1, map[string]string{"application.major.version": "1"})); status != 200 {
		t.Fatalf("v1: %d %v", status, out)
	}
	if status, out := call(t, srv.URL, "POST", "/subjects/devices-value/versions", avroBody(v2, map[string]string{"application.major.version": "2"})); status != 200 {
		t.Errorf("v2 in group 2: %d %v, want it taken: group 1's v1 is not checked", status, out)
	}
	if status, out := call(t, srv.URL, "POST", "/compatibility/subjects/devices-value/versions/latest", avroBody(v1, map[string]string{"application.major.version": "2"})); status != 200 || out["is_compatible"] != false {
		t.Errorf("v1 against group 2's latest: %d %v, want incompatible", status, out)
	}
	v3 := `{"type": "record", "name": "D", "fields": [{"name": "id", "type": "int"}]}`
	if status, _ := call(t, srv.URL, "POST", "/subjects/devices-value/versions", avroBody(v3, map[string]string{"application.major.version": "1"})); status != 409 {
		t.Errorf("v3 in group 1: %d, want 409: checked against v1", status)
	}
	srv.Close()
	reg.Close()

	reg, err = registry.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	srv = httptest.NewServer(reg)
	defer srv.Close()
	if _, got := call(t, srv.URL, "GET", s, ""); got["compatibilityGroup"] != "application.major.version" {
		t.Errorf("GET %s after a restart: %v", s, got)
	}
	if status, got := call(t, srv.URL, "DELETE", s, ""); status != 200 || got["compatibilityGroup"] != "application.major.version" {
		t.Errorf("DELETE %s: %d %v", s, status, got)
	}
	if status, _ := call(t, srv.URL, "GET", s, ""); status != 404 {
		t.Errorf("GET %s once deleted: %d, want 404", s, status)
	}
}
