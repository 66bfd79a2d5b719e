package registry_test

import (
	"net/http/httptest"
	"testing"

	"github.com/brain4it/kafkabpl/internal/registry"
	"github.com/brain4it/kafkabpl/internal/registry/registrytest"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// TestChecks runs the table of API checks against the registry: each
// answers as Confluent documents.
func TestChecks(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	doc, _, _ := registrytest.Run(t, registrytest.Target{Name: "registry", URL: srv.URL}, "t")
	if doc != len(registrytest.Checks) {
		t.Errorf("%d of %d checks as documented", doc, len(registrytest.Checks))
	}
}

// TestChecksSrfake measures franz-go's srfake, which the embedded cluster
// served before, with the same table; it only logs the figure.
func TestChecksSrfake(t *testing.T) {
	fake := srfake.New()
	defer fake.Close()
	doc, _, _ := registrytest.Run(logOnly{t}, registrytest.Target{Name: "srfake", URL: fake.URL()}, "t")
	t.Logf("srfake: %d of %d checks as documented", doc, len(registrytest.Checks))
}

// logOnly reports a failed check as a log line.
type logOnly struct{ *testing.T }

func (l logOnly) Errorf(format string, args ...any) { l.Logf(format, args...) }
