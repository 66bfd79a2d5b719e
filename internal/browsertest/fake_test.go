package browsertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake is the least of brain4it's protocol that the page uses, answering
// as brain4it's Java server does: the page's own code strings only, one
// variable v, CORS headers unless cors is false.
type fake struct {
	cors    bool
	mu      sync.Mutex
	v       int
	notify  chan struct{}
	modules map[string]bool
}

func newFake(cors bool) *httptest.Server {
	f := &fake{cors: cors, notify: make(chan struct{}, 1), modules: map[string]bool{}}
	return httptest.NewServer(f)
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if f.cors {
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "server-time")
	}
	if r.Method == http.MethodOptions {
		if f.cors {
			h.Set("Access-Control-Allow-Methods", "GET,PUT,DELETE,POST,OPTIONS")
			h.Set("Access-Control-Allow-Headers", "access-key,monitor,session-id")
		}
		return
	}
	body, _ := io.ReadAll(r.Body)
	code := strings.TrimSpace(string(body))
	h.Set("server-time", fmt.Sprint(time.Now().UnixMilli()))
	h.Set("Content-Type", "text/plain; charset=UTF-8")
	name, fn, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodPut:
		f.mu.Lock()
		f.modules[name] = true
		f.mu.Unlock()
		fmt.Fprintf(w, "%q", "Module "+name+" created.")
	case r.Method == http.MethodDelete:
		fmt.Fprintf(w, "%q", "Module "+name+" destroyed.")
	case r.Method == http.MethodPost && r.Header.Get("monitor") != "" && strings.HasPrefix(code, "("):
		f.monitor(w, r)
	case r.Method == http.MethodPost && r.Header.Get("monitor") != "":
		fmt.Fprint(w, `"unwatched"`)
	case fn == "@inc" && code == "41":
		fmt.Fprint(w, "42")
	case strings.HasPrefix(code, "(do (set @inc"):
		fmt.Fprint(w, `"ready"`)
	case code == `(do (set v 42) (module-notify "@v"))`:
		f.mu.Lock()
		f.v = 42
		f.mu.Unlock()
		f.notify <- struct{}{}
		fmt.Fprint(w, "1")
	default:
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `("Exception" "message" => %q)`, "the fake does not know "+code)
	}
}

// monitor writes the session id, v's value, and v's value again after
// each notify, flushing each line as a chunk.
func (f *fake) monitor(w http.ResponseWriter, r *http.Request) {
	w.Header().Del("Content-Type")
	fl := w.(http.Flusher)
	fmt.Fprintln(w, `"0b1c2d3e-session"`)
	f.mu.Lock()
	v := f.v
	f.mu.Unlock()
	fmt.Fprintf(w, "(\"@v\" %d %d)\n", v, time.Now().UnixMilli())
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-f.notify:
			f.mu.Lock()
			v := f.v
			f.mu.Unlock()
			fmt.Fprintf(w, "(\"@v\" %d %d)\n", v, time.Now().UnixMilli())
			fl.Flush()
		}
	}
}

// TestFakeServer runs the page against a fake of brain4it's protocol on
// another origin: it passes only if the browser did every step.
func TestFakeServer(t *testing.T) {
	Require(t)
	srv := newFake(true)
	defer srv.Close()
	if err := Run(context.Background(), t, srv.URL); err != nil {
		t.Fatal(err)
	}
}

// TestNoCORS is the same fake without CORS headers: the browser must
// refuse the cross-origin answers, and Run must say the page failed.
func TestNoCORS(t *testing.T) {
	Require(t)
	srv := newFake(false)
	defer srv.Close()
	err := Run(context.Background(), t, srv.URL)
	if !errors.Is(err, ErrPage) {
		t.Fatalf("Run against a server without CORS headers: %v, want ErrPage", err)
	}
	t.Logf("as expected: %.300s", err)
}

// TestRefusesRemote: Run never points the browser beyond loopback.
func TestRefusesRemote(t *testing.T) {
	for _, u := range []string{"http://10.0.0.1:9999", "http://example.com:9999", "https://127.0.0.1:9999", "::"} {
		if err := Run(context.Background(), t, u); err == nil {
			t.Errorf("Run(%q) = nil, want an error", u)
		}
	}
}
