package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake answers the tool's requests as brain4it's Java server does, for
// the code strings the tool sends only. noCORS leaves out the CORS
// headers, so that check has something to catch.
type fake struct {
	noCORS   bool
	mu       sync.Mutex
	modules  map[string]bool
	v        int
	sessions map[string]chan int // session id -> its stream's feed
	next     int
}

func newFake() *fake { return &fake{modules: map[string]bool{}, sessions: map[string]chan int{}} }

var (
	sumRe    = regexp.MustCompile(`^\(\+ (-?\d+) 1 2\)$`)
	setRe    = regexp.MustCompile(`^\(set v (-?\d+)\)$`)
	notifyRe = regexp.MustCompile(`^\(do \(set v (-?\d+)\) \(module-notify "@v"\)\)$`)
)

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if !f.noCORS {
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "server-time")
	}
	if r.Method == http.MethodOptions {
		if !f.noCORS {
			h.Set("Access-Control-Allow-Methods", "GET,PUT,DELETE,POST,OPTIONS")
			h.Set("Access-Control-Allow-Headers", "access-key,monitor,session-id")
		}
		return
	}
	b, _ := io.ReadAll(r.Body)
	code := strings.TrimSpace(string(b))
	name, fn, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if r.Method == http.MethodPost && r.Header.Get("monitor") != "" && strings.HasPrefix(code, "(") {
		f.monitor(w, r)
		return
	}
	h.Set("server-time", fmt.Sprint(time.Now().UnixMilli()))
	h.Set("Content-Type", "text/plain; charset=UTF-8")
	f.mu.Lock()
	defer f.mu.Unlock()
	fail := func(typ, msg string) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "(%q \"message\" => %q)", typ, msg)
	}
	switch {
	case r.Method == http.MethodGet && name == "":
		var names []string
		for m := range f.modules {
			names = append(names, strconv.Quote(m))
		}
		fmt.Fprintf(w, "(%s)", strings.Join(names, " "))
	case r.Method == http.MethodPut && f.modules[name]:
		fail("Exception", "Module "+name+" already exists.")
	case r.Method == http.MethodPut:
		f.modules[name] = true
		fmt.Fprintf(w, "%q", "Module "+name+" created.")
	case r.Method == http.MethodDelete:
		delete(f.modules, name)
		fmt.Fprintf(w, "%q", "Module "+name+" destroyed.")
	case r.Method == http.MethodPost && r.Header.Get("monitor") != "":
		id, _ := strconv.Unquote(code)
		if ch, ok := f.sessions[id]; ok {
			close(ch)
			delete(f.sessions, id)
		}
		fmt.Fprint(w, `"unwatched"`)
	case fn == "@add":
		n, err := strconv.Atoi(code)
		if err != nil {
			fail("TypeError", code)
			return
		}
		fmt.Fprint(w, n+1)
	case code == setupCode:
		f.v = 0
		fmt.Fprint(w, `"ready"`)
	case code == "(+ 1 2 3)":
		fmt.Fprint(w, 6)
	case code == "(+ 1":
		fail("ParseException", "Unmatched parenthesis")
	case sumRe.MatchString(code):
		n, _ := strconv.Atoi(sumRe.FindStringSubmatch(code)[1])
		fmt.Fprint(w, n+3)
	case setRe.MatchString(code):
		f.v, _ = strconv.Atoi(setRe.FindStringSubmatch(code)[1])
		fmt.Fprint(w, f.v)
	case notifyRe.MatchString(code):
		f.v, _ = strconv.Atoi(notifyRe.FindStringSubmatch(code)[1])
		for _, ch := range f.sessions {
			select {
			case ch <- f.v:
			default:
			}
		}
		fmt.Fprint(w, len(f.sessions))
	default:
		fail("Exception", "the fake does not know "+code)
	}
}

// monitor streams the session id, v, and v after each notify, a chunk a
// line, until unwatch or the client goes.
func (f *fake) monitor(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.next++
	id := fmt.Sprintf("session-%d", f.next)
	ch := make(chan int, 16)
	f.sessions[id] = ch
	v := f.v
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.sessions, id)
		f.mu.Unlock()
	}()
	fl := w.(http.Flusher)
	fmt.Fprintf(w, "%q\n(\"@v\" %d %d)\n", id, v, time.Now().UnixMilli())
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case v, ok := <-ch:
			if !ok {
				return
			}
			fmt.Fprintf(w, "(\"@v\" %d %d)\n", v, time.Now().UnixMilli())
			fl.Flush()
		}
	}
}

func TestCheckPassesOnFake(t *testing.T) {
	srv := httptest.NewServer(newFake())
	defer srv.Close()
	c := newClient(srv.URL, 4)
	defer c.close()
	if err := check(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

func TestCheckCatchesMissingCORS(t *testing.T) {
	f := newFake()
	f.noCORS = true
	srv := httptest.NewServer(f)
	defer srv.Close()
	c := newClient(srv.URL, 4)
	defer c.close()
	err := check(context.Background(), c)
	if !errors.Is(err, errProtocol) || !strings.Contains(err.Error(), "Access-Control-Allow-Origin") {
		t.Fatalf("check against a server without CORS headers: %v, want errProtocol naming Access-Control-Allow-Origin", err)
	}
}

func TestWorkloadsOnFake(t *testing.T) {
	srv := httptest.NewServer(newFake())
	defer srv.Close()
	ctx := context.Background()
	c := newClient(srv.URL, 4+20)
	defer c.close()
	if err := setup(ctx, c); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]func(context.Context, *client, int, int) (float64, error){"evals": evals, "calls": calls} {
		r, err := w(ctx, c, 4, 200)
		if err != nil || r <= 0 {
			t.Fatalf("%s: %v per second, %v", name, r, err)
		}
	}
	times, err := fanout(ctx, c, 20, 5, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 5 || times[0] <= 0 || times[0] > times[4] {
		t.Fatalf("fan-out times %v: want 5, positive, sorted", times)
	}
}

// A server that answers wrongly stops the workload with an error.
func TestWorkloadCatchesWrongAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "7") }))
	defer srv.Close()
	c := newClient(srv.URL, 2)
	defer c.close()
	if _, err := evals(context.Background(), c, 2, 50); !errors.Is(err, errProtocol) {
		t.Fatalf("evals against a server that always answers 7: %v, want errProtocol", err)
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:9999", "http://127.3.2.1:1/", "http://localhost:9999", "http://[::1]:9999"} {
		if _, err := checkLoopback(u); err != nil {
			t.Errorf("checkLoopback(%q): %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1:9999", "http://192.168.1.2", "http://example.com:9999", "http://[::]:9999", "https://127.0.0.1:9999"} {
		if _, err := checkLoopback(u); err == nil {
			t.Errorf("checkLoopback(%q) = nil, want an error", u)
		}
	}
	if _, err := checkLoopback("http://8.8.8.8"); !errors.Is(err, errNotLoopback) {
		t.Errorf("checkLoopback(8.8.8.8): %v, want errNotLoopback", err)
	}
}

func TestPercentileAndMedian(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i))
	}
	if p := percentile(ds, 0.5); p != 50 {
		t.Errorf("median of 1..100 = %v, want 50", p)
	}
	if p := percentile(ds, 0.99); p != 99 {
		t.Errorf("p99 of 1..100 = %v, want 99", p)
	}
	if m := median([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median(3 1 2 10) = %v, want 2.5", m)
	}
}
