package testkit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// RegistryMode is what a FlakyRegistry does with a request.
type RegistryMode int32

// The modes of a FlakyRegistry.
const (
	RegistryUp   RegistryMode = iota // passes it on
	RegistryDown                     // answers HTTP 503
	RegistryHung                     // never answers (until the client gives up)
)

// FlakyRegistry is a schema registry in front of a fake one that can be
// taken down, or made to hang, and brought back.
type FlakyRegistry struct {
	*httptest.Server
	mode atomic.Int32
	Hits atomic.Int64 // requests answered while down or hung
}

// NewFlakyRegistry starts one, up, in front of a fake registry of its
// own; both stop when the test ends.
func NewFlakyRegistry(t *testing.T) *FlakyRegistry {
	t.Helper()
	fake := srfake.New()
	t.Cleanup(fake.Close)
	target := Must[*url.URL](t)(url.Parse(fake.URL()))
	proxy := httputil.NewSingleHostReverseProxy(target)
	f := &FlakyRegistry{}
	stop := make(chan struct{}) // ends hung requests when the test ends
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch RegistryMode(f.mode.Load()) {
		case RegistryDown:
			f.Hits.Add(1)
			http.Error(w, `{"error_code":50301,"message":"down for the test"}`, http.StatusServiceUnavailable)
		case RegistryHung:
			f.Hits.Add(1)
			io.Copy(io.Discard, r.Body) // then the server sees the client go
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(func() {
		close(stop)
		f.Close()
	})
	return f
}

// Set makes the registry do m with the requests from now on.
func (f *FlakyRegistry) Set(m RegistryMode) { f.mode.Store(int32(m)) }
