package server

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// plainContextList is contextList written plainly, as it was before its
// allocations were cut: what contextList must give.
func plainContextList(r *http.Request) *value.List {
	headers := &value.List{}
	if r.Host != "" {
		headers.AppendNamed("host", r.Host)
	}
	if len(r.TransferEncoding) > 0 {
		headers.AppendNamed("transfer-encoding", strings.Join(r.TransferEncoding, ","))
	}
	for _, name := range slices.Sorted(maps.Keys(r.Header)) {
		headers.AppendNamed(strings.ToLower(name), strings.Join(r.Header[name], ","))
	}
	host, port, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	p, _ := strconv.ParseInt(port, 10, 64)
	return requestContext(host, p, headers)
}

func TestContextListAsPlain(t *testing.T) {
	s := New(Config{})
	for _, n := range []int{0, 1, 5, inlineHeaders - 2, inlineHeaders, inlineHeaders + 3} {
		r, _ := http.NewRequest("POST", "http://127.0.0.1:9999/m/@f", nil)
		r.RemoteAddr = "127.0.0.1:54321"
		if n%2 == 1 {
			r.Host, r.RemoteAddr = "", "a-pipe" // no host; no port
			r.TransferEncoding = []string{"chunked"}
		}
		common := []string{"User-Agent", "Content-Type", "Accept", "Access-Key", "Session-Id", "Origin"}
		for i := range n {
			name := "X-Header-" + strconv.Itoa(n-i)
			if i < len(common) {
				name = common[i]
			}
			r.Header[name] = []string{"v" + strconv.Itoa(i)}
			if i == 2 {
				r.Header[name] = append(r.Header[name], "w")
			}
		}
		got, want := value.Format(s.contextList(r)), value.Format(plainContextList(r))
		if got != want {
			t.Errorf("%d headers:\n got %s\nwant %s", n, got, want)
		}
	}
}

// The context list is the function's own: changing one changes no other.
func TestContextListsAreApart(t *testing.T) {
	s := New(Config{})
	r, _ := http.NewRequest("POST", "http://127.0.0.1:9999/m/@f", nil)
	r.RemoteAddr = "127.0.0.1:1"
	r.Header.Set("Content-Type", bplContentType)
	a, b := s.contextList(r), s.contextList(r)
	ha, _ := a.Get("request-headers")
	ha.(*value.List).Put("content-type", "changed")
	ha.(*value.List).AppendNamed("x-new", int64(1))
	a.Put("response-headers", value.NewList())
	if got := value.Format(b); strings.Contains(got, "changed") || strings.Contains(got, "x-new") || !strings.HasSuffix(got, `"response-headers" => null)`) {
		t.Fatalf("a change to one context list reached another: %s", got)
	}
}

func TestLowerHeader(t *testing.T) {
	for _, name := range []string{"Accept", "Accept-Encoding", "Accept-Language", "Access-Key", "Authorization", "Cache-Control", "Connection", "Content-Length", "Content-Type", "Cookie", "Monitor", "Origin", "Referer", "Session-Id", "User-Agent", "X-Other-Name", "Já"} {
		if got, want := lowerHeader(name), strings.ToLower(name); got != want {
			t.Errorf("lowerHeader(%q) = %q, want %q", name, got, want)
		}
	}
}

// Every answer carries the server time of its own millisecond, although
// the answers of one millisecond share its value.
func TestServerTimeIsNow(t *testing.T) {
	for range 3 {
		before := fmt.Sprint(time.Now().UnixMilli())
		got := serverTime()[0]
		after := fmt.Sprint(time.Now().UnixMilli())
		if got < before || got > after || len(got) != len(before) {
			t.Fatalf("server-time %s, want between %s and %s", got, before, after)
		}
	}
}

func TestRequestHeaderAsGet(t *testing.T) {
	r, _ := http.NewRequest("POST", "http://127.0.0.1:9999/m", nil)
	for i, name := range []string{AccessKeyHeader, MonitorHeader, StoreQueryHeader, "content-type"} {
		r.Header.Set(name, "v"+strconv.Itoa(i))
	}
	for _, k := range []string{accessKeyKey, monitorKey, storeQueryKey, "Content-Type", "X-None"} {
		if got, want := requestHeader(r, k), r.Header.Get(k); got != want {
			t.Errorf("requestHeader(%q) = %q, want %q", k, got, want)
		}
	}
}
