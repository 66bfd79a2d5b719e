package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// errNotLoopback is returned for a server URL whose host is not a loopback
// address: this tool sends load, so it never dials anything else.
var errNotLoopback = errors.New("not a loopback address")

// errProtocol is wrapped by every answer that does not follow brain4it's
// HTTP protocol.
var errProtocol = errors.New("brain4it protocol")

// bplType is the content type brain4it's clients send and its server
// answers with for BPL text. A POST without it (curl's form type, say)
// reaches brain4it's server as a string, not as code.
const bplType = "text/plain; charset=UTF-8"

// checkLoopback refuses a server URL whose host is not 127.0.0.0/8, ::1
// or localhost, without resolving any name.
func checkLoopback(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", raw, err)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("server URL %q: scheme %q: only http is spoken", raw, u.Scheme)
	}
	host := u.Hostname()
	if host == "localhost" {
		return u, nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("server URL %q: host %q: %w", raw, host, errNotLoopback)
	}
	return u, nil
}

// client speaks brain4it's HTTP protocol to one server.
type client struct {
	base string // the server URL, no trailing slash
	http *http.Client
}

func newClient(base string, conns int) *client {
	tr := &http.Transport{
		// Every dial goes to the loopback URL checked by checkLoopback.
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		IdleConnTimeout:     4 * time.Second, // under brain4it's keep-alive of 5 s
		DisableCompression:  true,
	}
	return &client{base: strings.TrimRight(base, "/"), http: &http.Client{Transport: tr}}
}

func (c *client) close() { c.http.CloseIdleConnections() }

// answer is one response: status, body, headers.
type answer struct {
	status int
	body   string
	header http.Header
}

// do sends one request; body "" sends no body. headers are name, value
// pairs.
func (c *client) do(ctx context.Context, method, path, body string, headers ...string) (answer, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return answer{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", bplType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	return answer{status: resp.StatusCode, body: string(b), header: resp.Header}, nil
}

// ok sends one request and wants a 200 whose body is want ("" takes any).
func (c *client) ok(ctx context.Context, method, path, body, want string, headers ...string) (string, error) {
	a, err := c.do(ctx, method, path, body, headers...)
	if err != nil {
		return "", err
	}
	if a.status != http.StatusOK {
		return a.body, fmt.Errorf("%s %s: status %d, body %.200q: %w", method, path, a.status, a.body, errProtocol)
	}
	if want != "" && strings.TrimSpace(a.body) != want {
		return a.body, fmt.Errorf("%s %s: body %.200q, want %q: %w", method, path, a.body, want, errProtocol)
	}
	return a.body, nil
}

// watcher is one monitor session: a POST with the monitor header whose
// chunked answer is the session id, then one line per change.
type watcher struct {
	id     string // the session id, unquoted
	resp   *http.Response
	lines  *bufio.Reader
	cancel context.CancelFunc
}

// change is one monitor line, ("@fn" value server-time).
type change struct {
	fn         string
	value      any
	serverTime any
	at         time.Time // when this client read it
}

// watch opens a monitor session on module for fns and reads its session
// id. The session ends with unwatch or when ctx ends.
func (c *client) watch(ctx context.Context, module string, fns ...string) (*watcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	list := value.NewList()
	for _, f := range fns {
		list.Append(f)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+module, strings.NewReader(value.Format(list)))
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Content-Type", bplType)
	req.Header.Set("monitor", "0")
	// Each watcher gets a connection of its own: a monitor stream holds
	// its connection until it ends.
	resp, err := c.http.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	w := &watcher{resp: resp, lines: bufio.NewReader(resp.Body), cancel: cancel}
	if resp.StatusCode != http.StatusOK {
		w.close()
		return nil, fmt.Errorf("monitor %s: status %d: %w", module, resp.StatusCode, errProtocol)
	}
	line, err := w.lines.ReadString('\n')
	if err != nil {
		w.close()
		return nil, fmt.Errorf("monitor %s: reading the session id: %w", module, err)
	}
	v, err := value.Parse(line)
	if err != nil || len(v) != 1 {
		w.close()
		return nil, fmt.Errorf("monitor %s: first line %q is not a session id: %w", module, line, errProtocol)
	}
	id, ok := v[0].(string)
	if !ok || id == "" {
		w.close()
		return nil, fmt.Errorf("monitor %s: first line %q is not a quoted session id: %w", module, line, errProtocol)
	}
	w.id = id
	return w, nil
}

// next reads the next change, skipping the empty lines that are pings.
func (w *watcher) next() (change, error) {
	for {
		line, err := w.lines.ReadString('\n')
		if err != nil {
			return change{}, err
		}
		at := time.Now()
		if strings.TrimSpace(line) == "" {
			continue // a ping
		}
		v, err := value.Parse(line)
		if err != nil {
			return change{}, fmt.Errorf("monitor line %q: %w", line, err)
		}
		l, ok := v[0].(*value.List)
		if len(v) != 1 || !ok || l.Len() != 3 {
			return change{}, fmt.Errorf("monitor line %q is not (\"@fn\" value server-time): %w", line, errProtocol)
		}
		fn, _ := l.At(0).(string)
		return change{fn: fn, value: l.At(1), serverTime: l.At(2), at: at}, nil
	}
}

// close ends the stream from this side.
func (w *watcher) close() {
	w.cancel()
	w.resp.Body.Close()
}

// unwatch asks the server to end session id: a POST with the monitor
// header whose body is the quoted id. brain4it answers "unwatched".
func (c *client) unwatch(ctx context.Context, module, id string) error {
	_, err := c.ok(ctx, http.MethodPost, "/"+module, value.Format(id), `"unwatched"`, "monitor", "0")
	return err
}
