package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// client is the tests' own brain4it client: it speaks the protocol as
// brain4it's Java client and web manager do (BPL bodies in text/plain, the
// access-key and monitor headers).
type client struct {
	t    testing.TB
	base string
	key  string
}

// response is an answer: its status, headers, text and the value read.
type response struct {
	status int
	header http.Header
	text   string
	value  any
}

// newTestServer serves srv on a loopback httptest server.
func newTestServer(t testing.TB, cfg Config) (*Server, *client) {
	t.Helper()
	srv := New(cfg)
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Shutdown(context.Background())
		hs.Close()
	})
	return srv, &client{t: t, base: hs.URL}
}

func (c *client) withKey(key string) *client {
	cc := *c
	cc.key = key
	return &cc
}

// do sends a request; body "" sends none. hdr are name, value pairs.
func (c *client) do(method, path, body string, hdr ...string) response {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain; charset=UTF-8")
	if c.key != "" {
		req.Header.Set(AccessKeyHeader, c.key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, text: string(b)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") && len(b) > 0 {
		if vs, err := value.Parse(string(b)); err == nil && len(vs) == 1 {
			r.value = vs[0]
		}
	}
	return r
}

// ok sends a request and wants 200; it returns the answer's text.
func (c *client) ok(method, path, body string, hdr ...string) string {
	c.t.Helper()
	r := c.do(method, path, body, hdr...)
	if r.status != http.StatusOK {
		c.t.Fatalf("%s %s %q: HTTP %d %s", method, path, body, r.status, r.text)
	}
	return r.text
}

// fails sends a request and wants a 500 whose exception list has type typ
// and a message containing msg; it returns the message.
func (c *client) fails(method, path, body, typ, msg string, hdr ...string) string {
	c.t.Helper()
	r := c.do(method, path, body, hdr...)
	l, _ := r.value.(*value.List)
	if r.status != http.StatusInternalServerError || l == nil || l.Len() == 0 || l.At(0) != typ {
		c.t.Fatalf("%s %s %q: want 500 %s, got HTTP %d %s", method, path, body, typ, r.status, r.text)
	}
	m, _ := l.Get("message")
	ms, _ := m.(string)
	if !strings.Contains(ms, msg) {
		c.t.Fatalf("%s %s %q: message %q lacks %q", method, path, body, ms, msg)
	}
	return ms
}

// monitor is a monitor stream, as the web manager follows one.
type monitor struct {
	id    string
	lines chan string // the lines after the session id; closed at the end
	resp  *http.Response
}

// watch opens a monitor stream on module for fns, with interval ms.
func (c *client) watch(ctx context.Context, module string, interval int, fns ...string) *monitor {
	c.t.Helper()
	l := &value.List{}
	for _, fn := range fns {
		l.Append(fn)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+module, strings.NewReader(value.Format(l)))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain; charset=UTF-8")
	req.Header.Set(MonitorHeader, itoa(interval))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.t.Fatalf("watch %s: HTTP %d %s", module, resp.StatusCode, b)
	}
	if te := resp.TransferEncoding; len(te) != 1 || te[0] != "chunked" {
		c.t.Errorf("watch %s: transfer encoding %v, want chunked", module, te)
	}
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() {
		c.t.Fatalf("watch %s: no session id: %v", module, sc.Err())
	}
	vs, err := value.Parse(sc.Text())
	if err != nil || len(vs) != 1 {
		c.t.Fatalf("watch %s: first line %q is not a session id", module, sc.Text())
	}
	id, ok := vs[0].(string)
	if !ok || len(id) != 36 {
		c.t.Fatalf("watch %s: first line %q is not a session id", module, sc.Text())
	}
	m := &monitor{id: id, lines: make(chan string, 1000), resp: resp}
	go func() {
		defer close(m.lines)
		defer resp.Body.Close()
		for sc.Scan() {
			m.lines <- sc.Text()
		}
	}()
	return m
}

// change is one line of a monitor stream.
type change struct {
	fn         string
	value      any
	text       string // the value in BPL text
	serverTime int64
}

// next returns the next change (skipping pings), failing after d.
func (m *monitor) next(t testing.TB, d time.Duration) change {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-m.lines:
			if !ok {
				t.Fatal("the monitor stream ended")
			}
			if line == "" {
				continue // a ping
			}
			vs, err := value.Parse(line)
			l, _ := firstList(vs)
			if err != nil || l == nil || l.Len() != 3 {
				t.Fatalf("monitor line %q is not (fn value time)", line)
			}
			fn, _ := l.At(0).(string)
			st, _ := l.At(2).(int64)
			return change{fn: fn, value: l.At(1), text: value.Format(l.At(1)), serverTime: st}
		case <-timer.C:
			t.Fatalf("no monitor change in %v", d)
		}
	}
}

func firstList(vs []any) (*value.List, bool) {
	if len(vs) != 1 {
		return nil, false
	}
	l, ok := vs[0].(*value.List)
	return l, ok
}

func itoa(n int) string { return value.Format(int64(n)) }

// headerNames sends a request on a connection of its own and returns the
// answer's header names as they were written on the wire (net/http's
// client would canonicalize them), mapped to their values. It reads no
// body, so it suits monitor streams too.
func (c *client) headerNames(method, path, body string, hdr ...string) map[string]string {
	c.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.base, "http://"))
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var req strings.Builder
	req.WriteString(method + " " + path + " HTTP/1.1\r\nHost: " + strings.TrimPrefix(c.base, "http://") + "\r\n")
	req.WriteString("Content-Type: text/plain; charset=UTF-8\r\nContent-Length: " + itoa(len(body)) + "\r\n")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.WriteString(hdr[i] + ": " + hdr[i+1] + "\r\n")
	}
	req.WriteString("\r\n" + body)
	if _, err := io.WriteString(conn, req.String()); err != nil {
		c.t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	status, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 ") {
		c.t.Fatalf("%s %s: status line %q: %v", method, path, status, err)
	}
	names := map[string]string{}
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			c.t.Fatalf("%s %s: reading the headers: %v", method, path, err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return names
		}
		name, value, _ := strings.Cut(line, ":")
		names[name] = strings.TrimSpace(value)
	}
}
