package serde

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// Registry is a schema registry client, on franz-go's sr.Client. That
// client caches nothing, so every id and subject it looks up is kept here
// for the life of the Registry: a registered schema's id never changes.
// Lookups that fail are remembered for a second, so that a poll of many
// records with an unknown id asks once, not once per record. A Registry
// is safe for concurrent use.
type Registry struct {
	cfg     RegistryConfig
	url     string
	cl      *sr.Client
	http    *http.Client
	timeout time.Duration

	mu       sync.Mutex
	byID     map[int]sr.Schema
	failedID map[int]failure
}

type failure struct {
	err   error
	until time.Time
}

// NewRegistry makes a client of cfg's registry; nothing is dialed until a
// schema is needed. A URL that is not http or https is an
// [ErrInvalidConfig] error.
func NewRegistry(cfg RegistryConfig) (*Registry, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errorf(ErrInvalidConfig, "config \"schema-registry-url\": want an http:// or https:// URL, got %q", cfg.URL)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	tr := &http.Transport{
		Proxy:               nil, // loopback registries in tests; a proxy is never wanted implicitly
		TLSClientConfig:     cfg.TLS,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
	d := &net.Dialer{Timeout: min(10*time.Second, timeout)}
	tr.DialContext = d.DialContext
	if cfg.Dial != nil {
		tr.DialContext = cfg.Dial
	}
	hc := &http.Client{Transport: tr, Timeout: timeout}
	opts := []sr.ClientOpt{sr.URLs(strings.TrimRight(cfg.URL, "/")), sr.HTTPClient(hc), sr.UserAgent("kafkabpl")}
	if cfg.UserInfo != "" {
		user, pass, _ := strings.Cut(cfg.UserInfo, ":")
		opts = append(opts, sr.BasicAuth(user, pass))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, wrapf(ErrInvalidConfig, err, "config \"schema-registry-url\" %q", cfg.URL)
	}
	return &Registry{cfg: cfg, url: cfg.URL, cl: cl, http: hc, timeout: timeout, byID: map[int]sr.Schema{}, failedID: map[int]failure{}}, nil
}

// Close drops the idle connections to the registry. A nil Registry may be
// closed. The Registry still works after: Close is for when it is done
// with.
func (r *Registry) Close() {
	if r != nil {
		r.http.CloseIdleConnections()
	}
}

// fail words a registry error: what was asked, the URL, and why; a
// response the registry gave keeps its code and message. When ctx (the
// caller's) ended first, the error is ctx's, wrapped, and not an
// ErrSchemaRegistry one: the registry did not fail, the caller stopped
// waiting.
func (r *Registry) fail(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("schema registry %s: %s: %w", r.url, what, ctx.Err())
	}
	var re *sr.ResponseError
	if errors.As(err, &re) {
		msg := re.Message
		if msg == "" {
			msg = strings.TrimSpace(re.Error())
		}
		err := errorf(ErrSchemaRegistry, "schema registry %s: %s: HTTP %d, error %d: %s", r.url, what, re.StatusCode, re.ErrorCode, msg)
		if re.StatusCode >= 500 {
			return &unavailable{err}
		}
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return &unavailable{wrapf(ErrSchemaRegistry, err, "schema registry %s: %s: no answer within %v", r.url, what, r.timeout)}
	}
	return &unavailable{wrapf(ErrSchemaRegistry, err, "schema registry %s: %s", r.url, what)}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// ctx is a request's context: the caller's, cut at the registry's own
// timeout.
func (r *Registry) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.timeout)
}

// schemaByID returns the schema with the given id, from the cache or the
// registry.
func (r *Registry) schemaByID(ctx context.Context, id int) (sr.Schema, error) {
	r.mu.Lock()
	s, ok := r.byID[id]
	f, failed := r.failedID[id]
	r.mu.Unlock()
	if ok {
		return s, nil
	}
	if failed && time.Now().Before(f.until) {
		return sr.Schema{}, f.err
	}
	rctx, cancel := r.ctx(ctx)
	defer cancel()
	s, err := r.cl.SchemaByID(rctx, id)
	if err != nil && ctx.Err() != nil {
		return sr.Schema{}, r.fail(ctx, fmt.Sprintf("schema id %d", id), err) // not the registry's failure: not remembered
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		err = r.fail(ctx, fmt.Sprintf("schema id %d", id), err)
		r.failedID[id] = failure{err, time.Now().Add(time.Second)}
		return sr.Schema{}, err
	}
	r.byID[id] = s
	delete(r.failedID, id)
	return s, nil
}

// register registers forms[0] under subject and returns its id; when
// register is false it looks the schema up there instead, in each of its
// forms in turn, until one is found (a registry that compares texts
// finds the schema in the form it was registered in).
func (r *Registry) register(ctx context.Context, subject string, forms []sr.Schema, register bool) (int, error) {
	rctx, cancel := r.ctx(ctx)
	defer cancel()
	var ss sr.SubjectSchema
	var err error
	s := forms[0]
	if register {
		ss, err = r.cl.CreateSchema(rctx, subject, s)
	} else {
		for _, s = range forms {
			var re *sr.ResponseError
			if ss, err = r.cl.LookupSchema(rctx, subject, s); !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
				break
			}
		}
	}
	if err != nil {
		what := "register a schema under subject " + subject
		if !register {
			what = "look up the schema under subject " + subject + " (auto-register-schemas is off)"
		}
		return 0, r.fail(ctx, what, err)
	}
	r.mu.Lock()
	r.byID[ss.ID] = s
	r.mu.Unlock()
	return ss.ID, nil
}

// latest returns the latest version of subject's schema and its id.
func (r *Registry) latest(ctx context.Context, subject string) (sr.Schema, int, error) {
	rctx, cancel := r.ctx(ctx)
	defer cancel()
	ss, err := r.cl.SchemaByVersion(rctx, subject, -1)
	if err != nil {
		return sr.Schema{}, 0, r.fail(ctx, "the latest schema of subject "+subject, err)
	}
	r.mu.Lock()
	r.byID[ss.ID] = ss.Schema
	r.mu.Unlock()
	return ss.Schema, ss.ID, nil
}

// reference returns the schema a reference names.
func (r *Registry) reference(ctx context.Context, ref sr.SchemaReference) (sr.Schema, error) {
	rctx, cancel := r.ctx(ctx)
	defer cancel()
	ss, err := r.cl.SchemaByVersion(rctx, ref.Subject, ref.Version)
	if err != nil {
		return sr.Schema{}, r.fail(ctx, fmt.Sprintf("reference %q (subject %s version %d)", ref.Name, ref.Subject, ref.Version), err)
	}
	return ss.Schema, nil
}
