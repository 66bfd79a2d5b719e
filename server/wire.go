package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/brain4it/kafkabpl/value"
)

// What every request costs on the HTTP side, kept small: a small request
// (an evaluation or an exterior call) takes tens of microseconds, and the
// allocations below were a large share of them.

// Header values that every answer carries, shared by all of them: a
// header's value slice is only read (net/http clones the header map when
// the answer begins and writes it out), and a slice is never changed in
// place, only replaced, so one slice serves every answer.
var (
	anyOriginValue = []string{"*"}
	exposeValue    = []string{ServerTimeHeader}
	bplTypeValue   = []string{bplContentType}
)

// The canonical spellings of the request headers the server reads, for
// requestHeader.
var (
	accessKeyKey  = http.CanonicalHeaderKey(AccessKeyHeader)
	monitorKey    = http.CanonicalHeaderKey(MonitorHeader)
	storeQueryKey = http.CanonicalHeaderKey(StoreQueryHeader)
	peerNotifyKey = http.CanonicalHeaderKey(PeerNotifyHeader)
)

// requestHeader is r.Header.Get(canonical) for a name already canonical:
// Get makes the canonical spelling of its argument again at every call,
// an allocation for a name such as monitor.
func requestHeader(r *http.Request, canonical string) string {
	if v := r.Header[canonical]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// serverTimes is the server-time header value of the current
// millisecond, shared by the answers given within it.
var serverTimes atomic.Pointer[msValue]

type msValue struct {
	ms    int64
	value []string
}

// serverTime is the server-time header's value now, the Unix time in
// milliseconds, as brain4it's server gives it.
func serverTime() []string {
	now := time.Now().UnixMilli()
	if v := serverTimes.Load(); v != nil && v.ms == now {
		return v.value
	}
	v := &msValue{ms: now, value: []string{strconv.FormatInt(now, 10)}}
	serverTimes.Store(v)
	return v.value
}

// readKnown reads a body whose length n net/http knows from its
// Content-Length (which it enforces: a shorter body is an error, and no
// more than n is read), into one allocation, the string's own.
func readKnown(body io.Reader, n int64) (string, error) {
	if n == 0 {
		return "", nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(body, b); err != nil {
		return "", fmt.Errorf("reading the request body: %w", err)
	}
	// b is not kept anywhere else, and never written again
	return unsafe.String(&b[0], len(b)), nil
}

// contextList is brain4it's request context of an exterior call. Its
// request-headers hold every header the request came with, names in
// lowercase as brain4it's standalone server reads them, sorted: net/http
// takes Host (and Transfer-Encoding) out of r.Header, so they are put
// back from r.Host and r.TransferEncoding, since a function may read
// ctx/request-headers/host (to write its own URLs) as it can on brain4it.
// Both lists and their slices are one allocation (for up to
// inlineHeaders headers); the function called may keep or change them.
func (s *Server) contextList(r *http.Request) *value.List {
	a := &contextAlloc{}
	n := len(r.Header)
	if r.Host != "" {
		n++
	}
	if len(r.TransferEncoding) > 0 {
		n++
	}
	values, names := a.hv[:0], a.hn[:0]
	if n > inlineHeaders {
		values, names = make([]any, 0, n), make([]string, 0, n)
	}
	if r.Host != "" {
		values, names = append(values, r.Host), append(names, "host")
	}
	if len(r.TransferEncoding) > 0 {
		values, names = append(values, strings.Join(r.TransferEncoding, ",")), append(names, "transfer-encoding")
	}
	var keyBuf [inlineHeaders]string
	keys := keyBuf[:0]
	for name := range r.Header {
		keys = append(keys, name)
	}
	slices.Sort(keys)
	for _, name := range keys {
		values, names = append(values, strings.Join(r.Header[name], ",")), append(names, lowerHeader(name))
	}
	a.headers.Reset(values, names)

	host, port, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	p, _ := strconv.ParseInt(port, 10, 64)
	// brain4it's order (its REQUEST_CONTEXT_STRUCTURE), and
	// response-headers null (see requestContext)
	a.cv = [4]any{host, p, &a.headers, nil}
	a.cn = [4]string{"remote-address", "remote-port", "request-headers", "response-headers"}
	a.ctx.Reset(a.cv[:], a.cn[:])
	return &a.ctx
}

// inlineHeaders is how many request headers contextList keeps in its one
// allocation; more take two more.
const inlineHeaders = 12

// contextAlloc is the request context list of an exterior call and its
// request-headers list, with their elements, in one allocation.
type contextAlloc struct {
	ctx, headers value.List
	cv           [4]any
	cn           [4]string
	hv           [inlineHeaders]any
	hn           [inlineHeaders]string
}

// lowerHeader is a canonical header name in lowercase, as brain4it's
// server reads names; the common ones without allocating.
func lowerHeader(name string) string {
	switch name {
	case "Accept":
		return "accept"
	case "Accept-Encoding":
		return "accept-encoding"
	case "Accept-Language":
		return "accept-language"
	case "Access-Key":
		return "access-key"
	case "Authorization":
		return "authorization"
	case "Cache-Control":
		return "cache-control"
	case "Connection":
		return "connection"
	case "Content-Length":
		return "content-length"
	case "Content-Type":
		return "content-type"
	case "Cookie":
		return "cookie"
	case "Monitor":
		return "monitor"
	case "Origin":
		return "origin"
	case "Referer":
		return "referer"
	case "Session-Id":
		return "session-id"
	case "User-Agent":
		return "user-agent"
	}
	return strings.ToLower(name)
}
