package kafkabpl

import (
	"context"
	"crypto/tls"
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

// registryConfig is what a config says about its schema registry.
type registryConfig struct {
	url          string
	userInfo     string // "user:password" for basic auth; "" for none
	tls          *tls.Config
	autoRegister bool
	useLatest    bool
	useID        int // 0: none
	strategy     subjectStrategy
	keyStrategy  subjectStrategy
	keySchema    string // inline schema text; "" for none
	valueSchema  string

	// dial, when set, dials every connection to the registry in place of
	// a net.Dialer: the tests' guard that refuses any address off
	// loopback. A field rather than a package variable, so that a test
	// may give one config a dialer of its own while others run.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// subjectStrategy is subject.name.strategy: how a topic and a schema give
// the subject the schema is registered under.
type subjectStrategy int8

const (
	topicStrategy       subjectStrategy = iota // <topic>-key, <topic>-value (the default)
	recordStrategy                             // the record's full name
	topicRecordStrategy                        // <topic>-<record full name>
)

// subject returns the subject of a key (isKey) or value schema whose
// record's full name is record, written to topic.
func (s subjectStrategy) subject(topic, record string, isKey bool) string {
	switch s {
	case recordStrategy:
		return record
	case topicRecordStrategy:
		return topic + "-" + record
	}
	if isKey {
		return topic + "-key"
	}
	return topic + "-value"
}

// registry is one config's schema registry client. franz-go's sr.Client
// caches nothing, so every id and subject it looks up is kept here, for
// the life of the handle: a registered schema's id never changes.
// Lookups that fail are remembered for a second, so that a poll of many
// records with an unknown id asks once, not once per record.
type registry struct {
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

// newRegistry makes the client; nothing is dialed until a schema is
// needed. timeout bounds each request.
func newRegistry(rc *registryConfig, timeout time.Duration) (*registry, error) {
	u, err := url.Parse(rc.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errorf(ErrInvalidConfig, "config \"schema-registry-url\": want an http:// or https:// URL, got %q", rc.url)
	}
	tr := &http.Transport{
		Proxy:               nil, // loopback registries in tests; a proxy is never wanted implicitly
		TLSClientConfig:     rc.tls,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
	d := &net.Dialer{Timeout: min(10*time.Second, timeout)}
	tr.DialContext = d.DialContext
	if rc.dial != nil {
		tr.DialContext = rc.dial
	}
	hc := &http.Client{Transport: tr, Timeout: timeout}
	opts := []sr.ClientOpt{sr.URLs(strings.TrimRight(rc.url, "/")), sr.HTTPClient(hc), sr.UserAgent("kafkabpl")}
	if rc.userInfo != "" {
		user, pass, _ := strings.Cut(rc.userInfo, ":")
		opts = append(opts, sr.BasicAuth(user, pass))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, wrapf(ErrInvalidConfig, err, "config \"schema-registry-url\" %q", rc.url)
	}
	return &registry{url: rc.url, cl: cl, http: hc, timeout: timeout, byID: map[int]sr.Schema{}, failedID: map[int]failure{}}, nil
}

// close drops the idle connections to the registry.
func (r *registry) close() {
	if r != nil {
		r.http.CloseIdleConnections()
	}
}

// fail words a registry error: what was asked, the URL, and why; a
// response the registry gave keeps its code and message.
func (r *registry) fail(what string, err error) error {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		msg := re.Message
		if msg == "" {
			msg = strings.TrimSpace(re.Error())
		}
		return errorf(ErrSchemaRegistry, "schema registry %s: %s: HTTP %d, error %d: %s", r.url, what, re.StatusCode, re.ErrorCode, msg)
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return wrapf(ErrSchemaRegistry, err, "schema registry %s: %s: no answer within %v", r.url, what, r.timeout)
	}
	return wrapf(ErrSchemaRegistry, err, "schema registry %s: %s", r.url, what)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (r *registry) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), r.timeout)
}

// schemaByID returns the schema with the given id, from the cache or the
// registry.
func (r *registry) schemaByID(id int) (sr.Schema, error) {
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
	ctx, cancel := r.ctx()
	defer cancel()
	s, err := r.cl.SchemaByID(ctx, id)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		err = r.fail(fmt.Sprintf("schema id %d", id), err)
		r.failedID[id] = failure{err, time.Now().Add(time.Second)}
		return sr.Schema{}, err
	}
	r.byID[id] = s
	delete(r.failedID, id)
	return s, nil
}

// register registers s under subject (or, when register is false, looks
// it up there) and returns its id.
func (r *registry) register(subject string, s sr.Schema, register bool) (int, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	var ss sr.SubjectSchema
	var err error
	if register {
		ss, err = r.cl.CreateSchema(ctx, subject, s)
	} else {
		ss, err = r.cl.LookupSchema(ctx, subject, s)
	}
	if err != nil {
		what := "register a schema under subject " + subject
		if !register {
			what = "look up the schema under subject " + subject + " (auto-register-schemas is off)"
		}
		return 0, r.fail(what, err)
	}
	r.mu.Lock()
	r.byID[ss.ID] = s
	r.mu.Unlock()
	return ss.ID, nil
}

// latest returns the latest version of subject's schema and its id.
func (r *registry) latest(subject string) (sr.Schema, int, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	ss, err := r.cl.SchemaByVersion(ctx, subject, -1)
	if err != nil {
		return sr.Schema{}, 0, r.fail("the latest schema of subject "+subject, err)
	}
	r.mu.Lock()
	r.byID[ss.ID] = ss.Schema
	r.mu.Unlock()
	return ss.Schema, ss.ID, nil
}

// reference returns the schema a reference names.
func (r *registry) reference(ref sr.SchemaReference) (sr.Schema, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	ss, err := r.cl.SchemaByVersion(ctx, ref.Subject, ref.Version)
	if err != nil {
		return sr.Schema{}, r.fail(fmt.Sprintf("reference %q (subject %s version %d)", ref.Name, ref.Subject, ref.Version), err)
	}
	return ss.Schema, nil
}
