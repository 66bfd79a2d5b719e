package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// Store queries between servers: a module's stateful stream, run by
// several servers in one group, holds part of its store's partitions in
// each. Each module's library advertises Config.URL/MODULE as its
// streams' query endpoint, and forwards a query (kafka-store-get,
// kafka-store-windows) for a key that another server holds to that
// server's module, which answers it from its own committed state.
//
// The route is brain4it's POST /MODULE with a header of its own,
// kafka-store-query: 1, and the query as its body (opaque: what
// kafkabpl.Library's AnswerStoreQuery reads). It needs the module's
// access key or the server's, as evaluating does: a store holds what no
// stranger may read, unlike an exterior function's answer. A forwarded
// query carries the module's access-key (its variable), else the
// server's Config.AccessKey: servers that run a module together share its
// key. The answer is 200 with the owner's answer, or brain4it's error
// answer, whose exception type (NotReady, NotHeld, ...) becomes the
// matching kafkabpl sentinel on the asking side.

// StoreQueryHeader marks a POST /MODULE as a forwarded store query.
const StoreQueryHeader = "kafka-store-query"

// newForwardClient is the HTTP client of forwarded queries: connections
// kept alive to each owner, enough for many queries at once.
func newForwardClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.Proxy = nil // owners are the group's own servers
	return &http.Client{Transport: tr}
}

// routeStoreQueries makes lib's streams advertise the module's endpoint
// (when the server knows its URL) and forward store queries.
func (m *Module) routeStoreQueries(lib *kafkabpl.Library) {
	if u := m.srv.cfg.URL; u != "" {
		if err := stream.Of(lib).SetQueryEndpoint(strings.TrimRight(u, "/") + "/" + url.PathEscape(m.name)); err != nil {
			m.srv.logf("module %s: advertises no query endpoint: %v", m.name, err)
		}
	}
	stream.Of(lib).SetStoreForwarder(m.forwardStoreQuery)
}

// accessKey is the key a forwarded query carries: the module's
// access-key, else the server's.
func (m *Module) accessKey() string {
	if v, ok := m.Interp().Global(AccessKeyVar); ok && v != nil {
		if s, ok := v.(string); ok {
			return s
		}
		return value.Format(v)
	}
	return m.srv.cfg.AccessKey
}

// forwardStoreQuery is the module's stream.StoreForwarder: it posts
// query to endpoint (another server's URL/MODULE), for as long as ctx
// lets it: the asking stream bounds each forward by its config's
// "query-forward-timeout" (5 s by default), well inside an evaluation's
// own deadline, so that an owner that accepts the connection and never
// answers (a process paused, a half-broken network) ends in a NotReady a
// script catches, not in the evaluation's interruption.
func (m *Module) forwardStoreQuery(ctx context.Context, endpoint string, query []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(query))
	if err != nil {
		return nil, fmt.Errorf("%w: query endpoint %q: %v", kafkabpl.ErrNotHeld, endpoint, err)
	}
	req.Header.Set(StoreQueryHeader, "1")
	req.Header.Set("Content-Type", "application/json")
	if key := m.accessKey(); key != "" {
		req.Header.Set(AccessKeyHeader, key)
	}
	resp, err := m.srv.forwards.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", kafkabpl.ErrNotReady, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, m.srv.cfg.MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the answer of %s: %v", kafkabpl.ErrNotReady, endpoint, err)
	}
	if resp.StatusCode == http.StatusOK {
		return body, nil
	}
	return nil, answerError(endpoint, resp.StatusCode, body)
}

// answerError is the error of an owner's error answer: its exception
// type's sentinel, with its message.
func answerError(endpoint string, code int, body []byte) error {
	typ, msg := "", strings.TrimSpace(string(body))
	if vs, err := value.Parse(string(body)); err == nil && len(vs) > 0 {
		if l, ok := vs[0].(*value.List); ok && l.Len() > 0 {
			typ, _ = l.At(0).(string)
			if m, ok := l.Get("message"); ok {
				msg = fmt.Sprint(m)
			}
		}
	}
	var kind error
	switch typ {
	case "NotReady":
		kind = kafkabpl.ErrNotReady
	case "NotHeld", "UnknownHandle":
		kind = kafkabpl.ErrNotHeld // stale, or the stream not started there yet
	case "SecurityException":
		return fmt.Errorf("%w: %s refused the store query's access key (servers that run a module together need its access-key, or the same server key): %s", kafkabpl.ErrNotHeld, endpoint, msg)
	default:
		kind = kafkabpl.ErrNotReady
	}
	return fmt.Errorf("%w: %s answered HTTP %d %s: %s", kind, endpoint, code, typ, msg)
}

// peerRequest reads a request another server of a module's group posts
// to it, what it is (a store query, a module-notify): it needs the
// module's key or the server's, and is posted to the module itself. It
// returns the module and the body.
func (s *Server) peerRequest(w http.ResponseWriter, r *http.Request, t Target, what string) (*Module, string, error) {
	if err := s.checkAccess(t, requestHeader(r, accessKeyKey)); err != nil {
		return nil, "", err
	}
	m, err := s.getModule(t.Module)
	if err != nil {
		return nil, "", err
	}
	if t.Path != "" {
		return nil, "", &javaError{typ: "IOException", msg: what + " is posted to its module, /" + t.Module + ", not to a path in it"}
	}
	body, err := s.readAll(w, r)
	return m, body, err
}

// storeQuery answers POST /MODULE with a kafka-store-query header.
func (s *Server) storeQuery(w http.ResponseWriter, r *http.Request, t Target) error {
	m, body, err := s.peerRequest(w, r, t, "a store query")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.MaxEvalTime)
	defer cancel()
	answer, err := stream.Of(m.Library()).AnswerStoreQuery(ctx, []byte(body))
	if err != nil {
		return err
	}
	return writeText(w, "application/json", string(answer))
}
