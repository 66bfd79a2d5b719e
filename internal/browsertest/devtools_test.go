package browsertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPage opens a page and reads it from outside: a value the page's
// script wrote into the DOM, a promise awaited, a thrown exception as
// ErrEval, and WaitFor's end with the last value it saw.
func TestPage(t *testing.T) {
	Require(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!DOCTYPE html><body><p id="p">before</p><script>
			setTimeout(() => { document.getElementById("p").textContent = "after"; }, 200);
		</script></body>`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := Open(ctx, t, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got, err := p.WaitFor(ctx, `document.getElementById("p").textContent`, func(s string) bool { return s == "after" })
	if err != nil || got != "after" {
		t.Fatalf("WaitFor: %q, %v", got, err)
	}
	if v, err := p.Eval(ctx, `new Promise(r => setTimeout(() => r(6 * 7), 10))`); err != nil || v != float64(42) {
		t.Errorf("Eval of a promise: %v, %v", v, err)
	}
	if _, err := p.Eval(ctx, `(() => { throw new Error("mine") })()`); !errors.Is(err, ErrEval) || !strings.Contains(err.Error(), "mine") {
		t.Errorf("Eval of a throw: %v, want ErrEval with the message", err)
	}
	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancelShort()
	if got, err := p.WaitFor(short, `document.getElementById("p").textContent`, func(string) bool { return false }); err == nil || got != "after" {
		t.Errorf("WaitFor never satisfied: %q, %v; want an error and the last value", got, err)
	}
}

// TestOpenRefusesRemote: Open and Dashboard never point the browser
// beyond loopback.
func TestOpenRefusesRemote(t *testing.T) {
	for _, u := range []string{"http://10.0.0.1:9999", "http://example.com:9999", "https://127.0.0.1:9999"} {
		if p, err := Open(context.Background(), t, u); err == nil {
			p.Close()
			t.Errorf("Open(%q) = nil error", u)
		}
		if p, err := Dashboard(context.Background(), t, u, "m"); err == nil {
			p.Close()
			t.Errorf("Dashboard(%q) = nil error", u)
		}
	}
}
