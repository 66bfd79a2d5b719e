// Package registrytest is a table of checks of a schema registry's REST
// API, what Confluent documents for each request, run by tests against
// kafkabpl's registry and against Apicurio Registry's Confluent API, so
// that both are held to the same answers; where Apicurio answers
// otherwise, the check says how and why.
package registrytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Step is one request and the answer Confluent documents for it.
type Step struct {
	Method, Path, Body string
	Status             int    // the HTTP status
	Code               int    // the error_code of an error; 0: none checked
	Has                string // text the body holds (after {s} is replaced)
	// Apicurio is Apicurio Registry's status and code where they differ
	// (a zero Status: as documented).
	Apicurio Answer
}

// Answer is a status, an error code (0: not checked) and text the body
// holds ("": not checked).
type Answer struct {
	Status, Code int
	Has          string
}

// Check is a named sequence of steps on subjects of its own ({s} in paths
// and bodies: a name no other check uses; {id} in paths: the id the last
// registration answered).
type Check struct {
	Name  string
	Steps []Step
	// Differs says why Apicurio answers a step otherwise; its steps'
	// Apicurio fields say how.
	Differs string
	// Skip says why Apicurio is not asked at all.
	Skip string
}

// Reporter is what Run reports to: a *testing.T, or one that only
// counts.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

var _ Reporter = (*testing.T)(nil)

// Target is a registry under test.
type Target struct {
	Name     string
	URL      string
	Apicurio bool // expect Apicurio's documented differences
}

var client = &http.Client{Timeout: 30 * time.Second}

// Run runs the checks against a target, one at a time (some change the
// registry's global settings, and restore them), and logs how many
// answered as documented. A check whose answer is neither documented nor
// a documented difference fails the test.
func Run(t Reporter, tg Target, run string) (documented, differ, skipped int) {
	t.Helper()
	for i, c := range Checks {
		if tg.Apicurio && c.Skip != "" {
			skipped++
			continue
		}
		s := fmt.Sprintf("rt_%s_%d", run, i)
		asDoc, ok, id := true, true, "0"
		for j, st := range c.Steps {
			path := strings.NewReplacer("{s}", s, "{id}", id).Replace(st.Path)
			status, body, err := do(tg.URL, st.Method, path, strings.ReplaceAll(st.Body, "{s}", s))
			var got struct {
				ID *int `json:"id"`
			}
			if json.Unmarshal([]byte(body), &got) == nil && got.ID != nil && st.Method == "POST" {
				id = fmt.Sprint(*got.ID)
			}
			if err != nil {
				t.Errorf("%s: %s: step %d: %v", tg.Name, c.Name, j+1, err)
				ok = false
				break
			}
			want := Answer{st.Status, st.Code, st.Has}
			if tg.Apicurio && st.Apicurio.Status != 0 {
				want = st.Apicurio
				asDoc = false
			}
			code := errorCode(body)
			has := strings.ReplaceAll(want.Has, "{s}", s)
			if status != want.Status || (want.Code != 0 && code != want.Code) || (has != "" && !strings.Contains(body, has)) {
				t.Errorf("%s: %s: step %d %s %s: %d %s, want %d (code %d) holding %q", tg.Name, c.Name, j+1, st.Method, st.Path, status, clip(body), want.Status, want.Code, has)
				ok = false
				break
			}
		}
		switch {
		case ok && asDoc:
			documented++
		case ok:
			differ++
		}
	}
	t.Logf("%s: %d of %d checks answered as Confluent documents, %d as documented differences, %d not asked", tg.Name, documented, len(Checks), differ, skipped)
	return documented, differ, skipped
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

func do(base, method, path, body string) (int, string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return 0, "", err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func errorCode(body string) int {
	var e struct {
		Code int `json:"error_code"`
	}
	json.Unmarshal([]byte(body), &e)
	return e.Code
}

// quote is a string as JSON.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Avro, Proto and JSONSchema are registration bodies; refs, if any, is
// the references' JSON array.
func Avro(schema string) string { return `{"schema":` + quote(schema) + `}` }

// Proto is a Protobuf registration body.
func Proto(schema string, refs ...string) string {
	return `{"schemaType":"PROTOBUF","schema":` + quote(schema) + refsJSON(refs) + `}`
}

// JSONSchema is a JSON Schema registration body.
func JSONSchema(schema string) string {
	return `{"schemaType":"JSON","schema":` + quote(schema) + `}`
}

// AvroRefs is an Avro registration body with references.
func AvroRefs(schema string, refs ...string) string {
	return `{"schema":` + quote(schema) + refsJSON(refs) + `}`
}

func refsJSON(refs []string) string {
	if len(refs) == 0 {
		return ""
	}
	return `,"references":[` + strings.Join(refs, ",") + `]`
}
