package bpl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// No test (nor the fuzzer) may make http reach beyond 127.0.0.1.
func init() {
	httpCheckAddr = func(addr string) error {
		if host, _, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" {
			return fmt.Errorf("tests may only connect to 127.0.0.1, not %s", addr)
		}
		return nil
	}
}

// httpServer serves the paths the tests call, on 127.0.0.1.
func httpServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Add("X-Twice", "first")
		w.Header().Add("X-Twice", "second")
		fmt.Fprintf(w, "%s|%s|%s|%s", r.Method, r.Header.Get("Content-Type"), r.Header.Get("X-Token"), b)
	})
	mux.HandleFunc("/bpl", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, `("a" => 1 (2 3))`)
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"a": 1}`)
	})
	mux.HandleFunc("/bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte{0, 1, 2, 255})
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=ISO-8859-1")
		w.Write([]byte{'c', 'a', 'f', 0xe9})
	})
	mux.HandleFunc("/teapot", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "short and stout")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("x", 5000))
	})
	// /hang waits for the client to go away (or a minute).
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})
	// /stall sends part of a body, then waits.
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTP(t *testing.T) {
	u := `"` + httpServer(t).URL
	checkValues(t, []valueTest{
		{`(set r (http "GET" ` + u + `/echo")) (list (get r "status") (get r "message") (get r "body"))`, `(200 "OK" "GET|||")`},
		{`(get (get (http "GET" ` + u + `/echo") "headers") "content-type")`, `"text/plain; charset=utf-8"`},
		{`(get (get (http "GET" ` + u + `/echo") "headers") "x-twice")`, `"second"`},
		{`(get (http "POST" ` + u + `/echo" "hello") "body")`, `"POST|text/plain; charset=UTF-8||hello"`},
		{`(get (http "PUT" ` + u + `/echo" "body" => (1 "k" => "v")) "body")`, `"PUT|text/plain; charset=UTF-8||(1 \"k\" => \"v\")"`},
		{`(get (http "POST" ` + u + `/echo" "body" => "s" "input-format" => "bpl") "body")`, `"POST|text/plain; charset=UTF-8||\"s\""`},
		{`(get (http "POST" ` + u + `/echo" "body" => 12 "properties" => ("Content-Type" => "application/x-num" "X-Token" => 7)) "body")`, `"POST|application/x-num|7|12"`},
		{`(get (http "DELETE" ` + u + `/echo" "body" => null) "body")`, `"DELETE|||"`},
		{`(get (http "GET" ` + u + `/bpl") "body")`, `"(\"a\" => 1 (2 3))"`},
		{`(get (http "GET" ` + u + `/bpl" "output-format" => "bpl") "body")`, `("a" => 1 (2 3))`},
		{`(get (http "GET" ` + u + `/json") "body")`, `"{\"a\": 1}"`},
		{`(size (get (http "GET" ` + u + `/bin") "body"))`, `4`},
		{`(get (http "GET" ` + u + `/latin1") "body")`, `"café"`},
		{`(set r (http "GET" ` + u + `/teapot")) (list (get r "status") (get r "message") (get r "body"))`, `(418 "I'm a teapot" "short and stout")`},
		{`(get (http "GET" ` + u + `/nothing") "status")`, `404`},
		{`(size (get (http "GET" ` + u + `/big") "body"))`, `5000`},
		{`(get (http "GET" ` + u + `/echo" "connect-timeout" => 0 "read-timeout" => null) "status")`, `200`},
		// a body that does not parse gives the error's text
		{`(= (get (http "POST" ` + u + `/echo" "(" "output-format" => "bpl") "body") (get (http "POST" ` + u + `/echo" "(") "body"))`, `false`},
		{`(> (length (get (http "POST" ` + u + `/echo" "(" "output-format" => "bpl") "body")) 0)`, `true`},
	})
}

func TestHTTPErrors(t *testing.T) {
	u := `"` + httpServer(t).URL
	checkErrors(t, []errorTest{
		{`(http "GET")`, "InvalidArgument", "http: want a method, a URL and an optional body, got 1 unnamed argument", 1},
		{`(http "GET" ` + u + `/echo" 1 2)`, "InvalidArgument", "got 4 unnamed arguments", 1},
		{`(http null ` + u + `/echo")`, "InvalidArgument", "http: argument 1 is null, want a method", 1},
		{`(http "GET" null)`, "InvalidArgument", "http: argument 2 is null, want a URL", 1},
		{`(http "GET" "ftp://127.0.0.1/x")`, "InvalidArgument", `http: the string "ftp://127.0.0.1/x" is not an http or https URL`, 1},
		{`(http "GET" "no url")`, "InvalidArgument", "is not an http or https URL", 1},
		{`(http "GET" "http://")`, "InvalidArgument", "is not an http or https URL", 1},
		{`(http "BAD METHOD" ` + u + `/echo")`, "InvalidArgument", `http: net/http: invalid method "BAD METHOD"`, 1},
		{`(http "GET" ` + u + `/echo" "download-file" => "x")`, "InvalidArgument", "http: download-file is not supported", 1},
		{`(http "GET" ` + u + `/echo" "upload-file" => "x")`, "InvalidArgument", "http: upload-file is not supported", 1},
		{`(http "GET" ` + u + `/echo" "headers" => ())`, "InvalidArgument", `http: unknown argument "headers"`, 1},
		{`(http "GET" ` + u + `/echo" "read-timeout" => -1)`, "InvalidArgument", "http: read-timeout is -1, want milliseconds", 1},
		{`(http "GET" ` + u + `/echo" "connect-timeout" => "1")`, "InvalidArgument", `http: connect-timeout is the string "1", want milliseconds`, 1},
		{`(http "GET" ` + u + `/echo" "output-format" => "json")`, "InvalidArgument", `http: output-format is the string "json", want "string" or "bpl"`, 1},
		{`(http "POST" ` + u + `/echo" "x" "input-format" => "xml")`, "InvalidArgument", `http: input-format is the string "xml", want "string" or "bpl"`, 1},
		{`(http "GET" ` + u + `/echo" "properties" => "x")`, "InvalidArgument", `http: properties is the string "x", want a list of headers`, 1},
		{`(http "GET" ` + u + `/echo" "properties" => ("a"))`, "InvalidArgument", `http: properties want named values ("Name" => "value"), got the string "a"`, 1},
		{`(http "GET" ` + u + `/echo" "properties" => ("X" => (1)))`, "InvalidArgument", `got the list (1)`, 1},
		{`(http "GET" ` + u + `/hang" "read-timeout" => 50)`, "IOError", "http: timed out", 1},
		{`(http "GET" ` + u + `/stall" "read-timeout" => 50)`, "IOError", "http: read timed out", 1},
		{`(http "GET" "http://127.0.0.1:1/")`, "IOError", "http: ", 1},
		{`(http "GET" "http://example.com/")`, "IOError", "tests may only connect to 127.0.0.1, not example.com:80", 1},
	})
}

func TestHTTPBodyBound(t *testing.T) {
	u := `"` + httpServer(t).URL
	saved := maxHTTPBody
	maxHTTPBody = 4096
	defer func() { maxHTTPBody = saved }()
	checkErrors(t, []errorTest{
		{`(http "GET" ` + u + `/big")`, "InvalidArgument", "http: the response body is over 4096 bytes", 1},
	})
}

// A request ends with the run's context: the script is interrupted, not
// left waiting for the server.
func TestHTTPInterrupted(t *testing.T) {
	u := `"` + httpServer(t).URL
	for _, path := range []string{"/hang", "/stall"} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- New(io.Discard).Run(ctx, "test.bpl", `(try (http "GET" `+u+path+`" "read-timeout" => 0) (ex "*" => "caught"))`, nil)
		}()
		time.Sleep(20 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			var e *Exception
			if !errors.As(err, &e) || e.Type != "Interrupted" {
				t.Errorf("%s: got %v, want an Interrupted exception", path, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: the run did not end within a minute of its cancellation", path)
		}
	}
}
