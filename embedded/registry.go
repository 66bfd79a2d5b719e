package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl/internal/registry"
)

// DefaultRegistryPort is the schema registry's port when SchemaRegistry is
// given port -1: Confluent's well-known 8081.
const DefaultRegistryPort = 8081

// ErrRegistryPortInUse: the schema registry's port is taken. It also
// wraps ErrPortInUse.
var ErrRegistryPortInUse = fmt.Errorf("schema registry %w", ErrPortInUse)

// registryLogName is the file under the data dir that keeps the schema
// registry's changes, one JSON line each.
const registryLogName = "schema-registry.log"

// SchemaRegistry also starts a schema registry beside the cluster, on
// 127.0.0.1:port (0 picks a free port; -1 is [DefaultRegistryPort]),
// speaking Confluent's REST API (package internal/registry: subjects,
// versions, ids, references, contexts, compatibility levels and modes; it
// refuses invalid schemas and checks each new version's compatibility).
// Cluster.RegistryURL says where. With DataDir, every
// change (a schema registered, a subject or version deleted, a setting
// put) is appended to schema-registry.log in the directory, synced to disk
// as it is made, and replayed at the next Start, so schemas keep their
// ids across restarts and kill -9. Default: no registry.
func SchemaRegistry(port int) Option {
	return option(func(c *config) { c.registry, c.registryPort = true, port })
}

// registryServer is the schema registry (package internal/registry)
// served on its listener.
type registryServer struct {
	reg *registry.Registry
	srv *http.Server
	ln  net.Listener
	url string
}

func startRegistry(port int, dataDir string) (*registryServer, error) {
	if port == -1 {
		port = DefaultRegistryPort
	}
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("embedded: %w: schema registry port %d out of range 0-65535", ErrInvalidOption, port)
	}
	reg := registry.New()
	if dataDir != "" {
		var err error
		if reg, err = registry.Open(filepath.Join(dataDir, registryLogName)); err != nil {
			return nil, fmt.Errorf("embedded: %w", err)
		}
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		reg.Close()
		if errors.Is(err, ErrPortInUse) || strings.Contains(err.Error(), "address already in use") {
			return nil, fmt.Errorf("embedded: %w: %w; use port 0 for a free one", ErrRegistryPortInUse, err)
		}
		return nil, fmt.Errorf("embedded: schema registry: %w", err)
	}
	r := &registryServer{reg: reg, ln: ln, url: "http://" + ln.Addr().String()}
	r.srv = &http.Server{Handler: reg, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *registryServer) close() {
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if r.srv.Shutdown(ctx) != nil {
		r.srv.Close()
	}
	r.reg.Close()
}

// RegistryURL returns the schema registry's URL, "http://127.0.0.1:port",
// or "" when the cluster was started without SchemaRegistry.
func (c *Cluster) RegistryURL() string {
	if c.registry == nil {
		return ""
	}
	return c.registry.url
}
