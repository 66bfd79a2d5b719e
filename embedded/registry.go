package embedded

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr/srfake"
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
// speaking Confluent's REST API (franz-go's srfake: subjects, versions,
// ids, references, compatibility settings and modes; it does not check
// compatibility). Cluster.RegistryURL says where. With DataDir, every
// change (a schema registered, a subject or version deleted, a setting
// put) is appended to schema-registry.log in the directory, synced to disk
// as it is made, and replayed at the next Start, so schemas keep their
// ids across restarts and kill -9. Default: no registry.
func SchemaRegistry(port int) Option {
	return option(func(c *config) { c.registry, c.registryPort = true, port })
}

// registryServer is the schema registry: srfake's handler behind one that
// writes the changes to the log.
type registryServer struct {
	fake *srfake.Registry
	h    http.Handler
	srv  *http.Server
	ln   net.Listener
	url  string

	mu  sync.Mutex // one change at a time, so the log's order is the registry's
	log *os.File   // nil without a data dir
}

// loggedLine is one change in the log: a request the registry took.
type loggedLine struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Body   json.RawMessage `json:"body,omitempty"`
}

func startRegistry(port int, dataDir string) (*registryServer, error) {
	if port == -1 {
		port = DefaultRegistryPort
	}
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("embedded: %w: schema registry port %d out of range 0-65535", ErrInvalidOption, port)
	}
	fake := srfake.NewRegistry()
	r := &registryServer{fake: fake, h: fake.Handler()}
	if dataDir != "" {
		if err := r.replay(filepath.Join(dataDir, registryLogName)); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		r.log.Close()
		if errors.Is(err, ErrPortInUse) || strings.Contains(err.Error(), "address already in use") {
			return nil, fmt.Errorf("embedded: %w: %w; use port 0 for a free one", ErrRegistryPortInUse, err)
		}
		return nil, fmt.Errorf("embedded: schema registry: %w", err)
	}
	r.ln = ln
	r.url = "http://" + ln.Addr().String()
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

// replay applies the log's changes in order, then opens it for more. A
// line cut short (the process killed while writing it) is dropped.
func (r *registryServer) replay(file string) error {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("embedded: schema registry log: %w", err)
	}
	var good int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var l loggedLine
		if json.Unmarshal(line, &l) != nil {
			break
		}
		req := httptest.NewRequest(l.Method, l.Path, bytes.NewReader(l.Body))
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		r.h.ServeHTTP(httptest.NewRecorder(), req)
		good += int64(len(line)) + 1
	}
	if err := f.Truncate(good); err != nil { // drop a torn last line
		f.Close()
		return fmt.Errorf("embedded: schema registry log: %w", err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return fmt.Errorf("embedded: schema registry log: %w", err)
	}
	r.log = f
	return nil
}

// changes reports whether a request changes the registry: what the log
// keeps.
func changes(req *http.Request) bool {
	switch req.Method {
	case http.MethodPut, http.MethodDelete:
		return true
	case http.MethodPost:
		return strings.HasSuffix(strings.TrimSuffix(req.URL.Path, "/"), "/versions") && strings.Contains(req.URL.Path, "/subjects/") &&
			!strings.HasPrefix(req.URL.Path, "/compatibility/")
	}
	return false
}

func (r *registryServer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if r.log == nil || !changes(req) {
		r.h.ServeHTTP(w, req)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20+1))
	if err != nil || len(body) > 1<<20 {
		http.Error(w, `{"error_code":413,"message":"request body too large or unreadable"}`, http.StatusRequestEntityTooLarge)
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, req)
	if rec.Code < 300 {
		line, _ := json.Marshal(loggedLine{Method: req.Method, Path: req.URL.RequestURI(), Body: json.RawMessage(bytes.TrimSpace(body))})
		if len(bytes.TrimSpace(body)) == 0 {
			line, _ = json.Marshal(loggedLine{Method: req.Method, Path: req.URL.RequestURI()})
		}
		if _, err := r.log.Write(append(line, '\n')); err == nil {
			err = r.log.Sync()
		}
		if err != nil {
			http.Error(w, fmt.Sprintf(`{"error_code":50001,"message":%q}`, "cannot persist the change: "+err.Error()), http.StatusInternalServerError)
			return
		}
	}
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.log != nil {
		r.log.Close()
		r.log = nil
	}
}

// RegistryURL returns the schema registry's URL, "http://127.0.0.1:port",
// or "" when the cluster was started without SchemaRegistry.
func (c *Cluster) RegistryURL() string {
	if c.registry == nil {
		return ""
	}
	return c.registry.url
}
