package bpl

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/brain4it/kafkabpl/value"
)

// The http family: one function, http, a client of HTTP servers.

func init() {
	register(map[string]builtin{
		"http": biHTTP,
	})
}

// Defaults and bounds of http.
const (
	httpConnectTimeout = 30 * time.Second // brain4it's defaults
	httpReadTimeout    = 30 * time.Second
)

// maxHTTPBody bounds the bytes of a response body (a variable for tests).
var maxHTTPBody = maxText

// httpCheckAddr, when set, vets every address http dials (tests allow
// only 127.0.0.1, so that no script a test or fuzzer runs reaches the
// network).
var httpCheckAddr func(addr string) error

// (http method url body "body" => data "properties" => headers
// "connect-timeout" => ms "read-timeout" => ms "input-format" => format
// "output-format" => format) sends an HTTP request and gives its response
// as ("status" => 200 "message" => "OK" "headers" => ("content-type" =>
// "text/plain" ...) "body" => body).
//
// method is GET, POST, PUT, DELETE, ...; url an http or https URL. The
// request body, if any (body unnamed as third argument, or "body" =>),
// is data as text: a string as it is, anything else in BPL text, or with
// "input-format" => "bpl" always in BPL text ("string", the default, is the
// former). properties is a list of request headers ("Accept" =>
// "text/plain" ...); a POST or PUT without a Content-Type header sends
// "text/plain; charset=UTF-8". Response headers are named in lower case,
// one value each (the last one when a header repeats). A text response
// (text/* or application/json) gives its body as a string, decoded from
// UTF-8 or ISO-8859-1 as its charset says (other charsets are left as
// they are), or parsed as BPL with "output-format" => "bpl" (a body that
// is not one BPL value gives the parse error's text instead, as brain4it
// does); any other response gives its body as a byte array. Error
// statuses (404, 500, ...) are responses too, not exceptions.
//
// Connecting may take connect-timeout ms, and the response may pause for
// read-timeout ms between reads (30000 each by default; 0 waits without
// limit, but never past the end of the run). A response body over
// maxHTTPBody bytes, an unsupported format ("json", "xml") or option
// ("download-file", "upload-file"), or a bad URL is an InvalidArgument
// exception; a network failure or timeout an IOError. Certificates are
// verified (brain4it does not).
func biHTTP(t *task, f *frame, call *value.List) (any, error) {
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	var pos []any
	opts := map[string]any{}
	for name, v := range args.All() {
		switch name {
		case "":
			pos = append(pos, v)
		case "body", "properties", "connect-timeout", "read-timeout", "input-format", "output-format":
			opts[name] = v
		case "download-file", "upload-file":
			return nil, t.errorf(f, "InvalidArgument", "http: %s is not supported", name)
		default:
			return nil, t.errorf(f, "InvalidArgument", "http: unknown argument %s", strconv.Quote(name))
		}
	}
	if len(pos) < 2 || len(pos) > 3 {
		return nil, t.errorf(f, "InvalidArgument", "http: want a method, a URL and an optional body, got %s", plural(len(pos), "unnamed argument"))
	}
	if len(pos) == 3 {
		if _, ok := opts["body"]; !ok {
			opts["body"] = pos[2]
		}
	}
	method, ok := pos[0].(string)
	if !ok || method == "" {
		return nil, t.errorf(f, "InvalidArgument", "http: argument 1 is %s, want a method", value.Describe(pos[0]))
	}
	rawURL, ok := pos[1].(string)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "http: argument 2 is %s, want a URL", value.Describe(pos[1]))
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, t.errorf(f, "InvalidArgument", "http: %s is not an http or https URL", value.Describe(rawURL))
	}
	timeout := func(name string, def time.Duration) (time.Duration, error) {
		v, ok := opts[name]
		if !ok || v == nil {
			return def, nil
		}
		ms, ok := toFloat(v)
		if !ok || ms < 0 || ms != ms {
			return 0, t.errorf(f, "InvalidArgument", "http: %s is %s, want milliseconds", name, value.Describe(v))
		}
		if ms >= float64(24*time.Hour/time.Millisecond) {
			return 0, nil
		}
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	connectTimeout, err := timeout("connect-timeout", httpConnectTimeout)
	if err != nil {
		return nil, err
	}
	readTimeout, err := timeout("read-timeout", httpReadTimeout)
	if err != nil {
		return nil, err
	}
	format := func(name string) (string, error) {
		v := opts[name]
		if v == nil {
			return "string", nil
		}
		s, _ := v.(string)
		if s != "string" && s != "bpl" {
			return "", t.errorf(f, "InvalidArgument", `http: %s is %s, want "string" or "bpl"`, name, value.Describe(v))
		}
		return s, nil
	}
	inFormat, err := format("input-format")
	if err != nil {
		return nil, err
	}
	outFormat, err := format("output-format")
	if err != nil {
		return nil, err
	}

	header := http.Header{}
	if pv := opts["properties"]; pv != nil {
		props, ok := pv.(*value.List)
		if !ok {
			return nil, t.errorf(f, "InvalidArgument", "http: properties is %s, want a list of headers", value.Describe(pv))
		}
		for name, v := range props.All() {
			s, ok := atomText(v)
			if name == "" || !ok {
				return nil, t.errorf(f, "InvalidArgument", `http: properties want named values ("Name" => "value"), got %s`, value.Describe(v))
			}
			header.Set(name, s)
		}
	}
	var body io.Reader
	if bv, ok := opts["body"]; ok && bv != nil {
		var s string
		if inFormat == "bpl" {
			if l, ok := bv.(*value.List); ok && textSize(l, map[*value.List]int{}) > maxText {
				return nil, t.errorf(f, "InvalidArgument", "http: the body is too large to write as text (over %d bytes)", maxText)
			}
			s = value.Format(bv)
		} else if s, err = t.text(f, "http", bv); err != nil {
			return nil, err
		}
		body = strings.NewReader(s)
	}
	if (method == "POST" || method == "PUT") && header.Get("Content-Type") == "" {
		header.Set("Content-Type", "text/plain; charset=UTF-8")
	}

	ctx, cancel := context.WithCancel(t.ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, t.errorf(f, "InvalidArgument", "http: %v", err)
	}
	req.Header = header
	dialer := &net.Dialer{Timeout: connectTimeout}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if httpCheckAddr != nil {
				if err := httpCheckAddr(addr); err != nil {
					return nil, err
				}
			}
			return dialer.DialContext(ctx, network, addr)
		},
		TLSHandshakeTimeout:   connectTimeout,
		ResponseHeaderTimeout: readTimeout,
		DisableKeepAlives:     true,
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, t.httpError(f, err)
	}
	defer resp.Body.Close()

	// The body may pause for readTimeout between reads.
	var stalled atomic.Bool
	var idle *time.Timer
	if readTimeout > 0 {
		idle = time.AfterFunc(readTimeout, func() { stalled.Store(true); cancel() })
		defer idle.Stop()
	}
	var data []byte
	buf := make([]byte, 32<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		data = append(data, buf[:n]...)
		if len(data) > maxHTTPBody {
			return nil, t.errorf(f, "InvalidArgument", "http: the response body is over %d bytes", maxHTTPBody)
		}
		if idle != nil && n > 0 {
			idle.Reset(readTimeout)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if stalled.Load() && t.ctx.Err() == nil {
				return nil, t.exception(f, "IOError", "http: read timed out", rerr)
			}
			return nil, t.httpError(f, rerr)
		}
	}

	headers := &value.List{}
	names := make([]string, 0, len(resp.Header))
	for name := range resp.Header {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		vs := resp.Header[name]
		headers.AppendNamed(strings.ToLower(name), vs[len(vs)-1])
	}
	result := &value.List{}
	result.AppendNamed("status", int64(resp.StatusCode))
	result.AppendNamed("message", strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)+" "))
	result.AppendNamed("headers", headers)
	ctype := strings.ToLower(resp.Header.Get("Content-Type"))
	if !strings.HasPrefix(ctype, "text/") && !strings.HasPrefix(ctype, "application/json") {
		result.AppendNamed("body", data)
		return result, nil
	}
	text := string(data)
	if _, cs, ok := strings.Cut(ctype, "charset="); ok {
		cs = strings.Trim(strings.TrimSpace(strings.SplitN(cs, ";", 2)[0]), `"`)
		if cs == "iso-8859-1" || cs == "latin1" {
			text = latin1(data)
		}
	}
	var bodyValue any = text
	if outFormat == "bpl" {
		if vs, err := value.Parse(text); err != nil {
			bodyValue = err.Error()
		} else if len(vs) == 1 {
			bodyValue = vs[0]
		} else {
			bodyValue = "not one BPL value: " + plural(len(vs), "value")
		}
	}
	result.AppendNamed("body", bodyValue)
	return result, nil
}

// latin1 decodes ISO-8859-1.
func latin1(b []byte) string {
	r := make([]byte, 0, len(b)+len(b)/4)
	for _, c := range b {
		r = utf8.AppendRune(r, rune(c))
	}
	return string(r)
}

// httpError is the exception of a failed request: Interrupted when the
// run is being stopped, else an IOError.
func (t *task) httpError(f *frame, err error) error {
	if t.ctx.Err() != nil {
		return t.interrupted(f)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return t.exception(f, "IOError", "http: timed out: "+err.Error(), err)
	}
	return t.exception(f, "IOError", "http: "+err.Error(), err)
}
