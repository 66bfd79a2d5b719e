package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer answers each request on a loopback listener with the answers
// of script in turn, one a request, written as they are: what rawConn
// must read whatever the server's framing. An answer "" closes the
// connection without answering, and so does one with neither a length
// nor chunks, after it; hold never answers and keeps the connection open. It reports the requests' bodies and
// how many connections it accepted.
type rawServer struct {
	ln     net.Listener
	script []string
	next   atomic.Int64
	conns  atomic.Int64
	bodies chan string
}

// hold is a rawServer answer that never comes.
const hold = "hold"

func newRawServer(t *testing.T, script ...string) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, script: script, bodies: make(chan string, 100)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			go s.serve(conn)
		}
	}()
	return s
}

func (s *rawServer) serve(conn net.Conn) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		b, _ := io.ReadAll(req.Body)
		if req.Header.Get("Content-Type") != bplType || req.Header.Get("User-Agent") == "" || req.Host == "" || req.ContentLength != int64(len(b)) {
			s.bodies <- "bad headers: " + strconv.Quote(req.Host) + " " + strconv.Quote(req.Header.Get("Content-Type"))
		} else {
			s.bodies <- req.Method + " " + req.URL.Path + " " + string(b)
		}
		i := int(s.next.Add(1)) - 1
		if i >= len(s.script) || s.script[i] == "" {
			return
		}
		if s.script[i] == hold {
			io.Copy(io.Discard, conn) // until the client closes it
			return
		}
		if _, err := io.WriteString(conn, s.script[i]); err != nil {
			return
		}
		if a := strings.ToLower(s.script[i]); !strings.Contains(a, "content-length") && !strings.Contains(a, "chunked") {
			return // a body the end of the connection ends
		}
	}
}

func (s *rawServer) client() *client {
	return &client{base: "http://" + s.ln.Addr().String()}
}

func TestRawConnFramings(t *testing.T) {
	s := newRawServer(t,
		"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nserver-time: 1\r\n\r\n42",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n4\r\n2;x=y\r\n3\n\r\n0\r\nTrailer: z\r\n\r\n",
		"HTTP/1.1 500 INTERNAL_SERVER_ERROR\r\nContent-Length: 5\r\nConnection: close\r\n\r\n(\"x\")",
		"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n7",
		"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n8",
		"HTTP/1.1 200 OK\r\n\r\nto the end",
	)
	rc := newRawConn(s.client())
	defer rc.close()
	ctx := context.Background()
	want := []struct {
		status int
		body   string
		conns  int64 // accepted after this answer's request
	}{
		{200, "42", 1},
		{200, "43\n", 1},
		{500, `("x")`, 1}, // Connection: close: the next dials again
		{200, "7", 2},     // HTTP/1.0: closes
		{200, "8", 3},     // HTTP/1.0 keep-alive: kept
		{200, "to the end", 3},
	}
	for i, w := range want {
		status, body, err := rc.post(ctx, "/bench", []byte("(+ "+strconv.Itoa(i)+" 1 2)"))
		if err != nil || status != w.status || string(body) != w.body {
			t.Fatalf("answer %d: status %d body %q err %v, want %d %q", i, status, body, err, w.status, w.body)
		}
		if got := <-s.bodies; got != "POST /bench (+ "+strconv.Itoa(i)+" 1 2)" {
			t.Fatalf("request %d reached the server as %q", i, got)
		}
		if n := s.conns.Load(); n != w.conns {
			t.Fatalf("after answer %d: %d connections, want %d", i, n, w.conns)
		}
	}
}

// A kept-alive connection that the server closes while idle is dialled
// again, and the request sent again, once; a fresh connection closed
// before its answer is an error.
func TestRawConnRedialsAnIdleClose(t *testing.T) {
	s := newRawServer(t,
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1",
		"", // closed instead of answering the second request
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n2",
		"", // and the next, on a fresh connection
	)
	rc := newRawConn(s.client())
	defer rc.close()
	ctx := context.Background()
	for i, want := range []string{"1", "2"} {
		if _, body, err := rc.post(ctx, "/bench/@add", []byte("0")); err != nil || string(body) != want {
			t.Fatalf("post %d: %q, %v, want %q", i, body, err, want)
		}
	}
	if n := s.conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
	rc.close()
	if _, _, err := rc.post(ctx, "/bench/@add", []byte("0")); !errors.Is(err, errIdleClosed) {
		t.Fatalf("a fresh connection closed before answering: %v, want errIdleClosed", err)
	}
}

func TestRawConnRefusesBadAnswers(t *testing.T) {
	for _, answer := range []string{
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"SMTP ready\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(maxAnswer+1) + "\r\n\r\n",
	} {
		s := newRawServer(t, answer)
		rc := newRawConn(s.client())
		_, _, err := rc.post(context.Background(), "/bench", []byte("1"))
		rc.close()
		if !errors.Is(err, errProtocol) && !errors.Is(err, errAnswerTooLong) {
			t.Errorf("answer %q: %v, want errProtocol or errAnswerTooLong", answer, err)
		}
	}
}

// A run whose context ends while a server holds every request returns,
// since rate closes its connections.
func TestRateEndsWithItsContext(t *testing.T) {
	s := newRawServer(t, hold, hold, hold)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := evals(ctx, s.client(), 3, 10); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "POST /bench") && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("evals against a server that never answers: %v, want an error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("evals did not return 30 s after its context ended")
	}
}
