package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/registry/registrytest"
)

// TestBrokerRegistry: kafkabpl broker serves a schema registry too, and
// says where on its second line.
func TestBrokerRegistry(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"broker", "--port", "0", "--brokers", "1"}, pw, io.Discard)
		pw.Close()
		done <- code
	}()
	defer func() {
		stop()
		select {
		case <-done:
		case <-time.After(testTimeout):
			t.Error("broker did not stop")
		}
	}()
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	for len(got) < 2 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("broker printed only %q", got)
			}
			got = append(got, l)
		case <-time.After(testTimeout):
			t.Fatalf("broker printed only %q", got)
		}
	}
	url, ok := strings.CutPrefix(got[1], "schema registry on ")
	if !ok || !regexp.MustCompile(`^http://127\.0\.0\.1:\d+$`).MatchString(url) || strings.HasSuffix(url, ":8081") {
		t.Fatalf("second line %q, want schema registry on a free port of 127.0.0.1", got[1])
	}
	resp, err := http.Get(url + "/subjects")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("GET /subjects: %d %s", resp.StatusCode, body)
	}
}

// TestRegistryURLVariable: run and eval set schema-registry-url to the
// embedded registry, else to $SCHEMA_REGISTRY_URL.
func TestRegistryURLVariable(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runT(t, "eval", "--embedded", "--port", "0", "schema-registry-url")
	if code != exitOK || !regexp.MustCompile(`^"http://127\.0\.0\.1:\d+"\n$`).MatchString(stdout) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "SCHEMA_REGISTRY_URL" {
				return v
			}
			return ""
		}
	}
	if got := registryURL(nil, env("http://127.0.0.1:8081")); got != "http://127.0.0.1:8081" {
		t.Errorf("from the environment: %q", got)
	}
	if got := registryURL(nil, env("")); got != "" {
		t.Errorf("with none: %q", got)
	}
	if code, _, stderr := runT(t, "eval", "--registry-port", "0", "1"); code != exitUsage || !strings.Contains(stderr, "--registry-port only apply with --embedded") {
		t.Errorf("--registry-port without --embedded: exit %d, %s", code, stderr)
	}
}

// TestRegistryChecks runs the registry API table
// (internal/registry/registrytest) against the embedded cluster's
// registry: every check answers as Confluent documents. TestApicurio runs
// the same table against Apicurio Registry.
func TestRegistryChecks(t *testing.T) {
	t.Parallel()
	c, err := embedded.Start(embedded.Port(0), embedded.SchemaRegistry(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	doc, _, _ := registrytest.Run(t, registrytest.Target{Name: "embedded", URL: c.RegistryURL()}, "e")
	if doc != len(registrytest.Checks) {
		t.Errorf("embedded: %d of %d checks as documented", doc, len(registrytest.Checks))
	}
}
