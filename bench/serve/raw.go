package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// rawConn is one kept-alive HTTP/1.1 connection that sends POSTs of BPL
// text and reads their answers, for the evaluation and exterior-call
// workloads. At 20,000 requests a second on 2 cores the load tool's own
// work is a large share of what is measured, and net/http's client does
// much per request that these workloads do not need: three goroutines a
// connection handing each request and answer over, a Request and a
// Response with their header maps, a body reader. rawConn writes each
// request with one write from a buffer it keeps, and reads the answer into
// a buffer it keeps, on the caller's goroutine. Both servers get this same
// client: it sends the headers net/http's client sent (Host, User-Agent,
// Content-Length, Content-Type), so the servers' work is unchanged.
//
// It reads a body by Content-Length, chunked, or up to the end of the
// connection, and dials again after an answer that ends the connection
// (Connection: close, HTTP/1.0 without keep-alive, or no length). A
// connection that the server closed while idle (EOF or a reset before the
// first byte of an answer) is dialled again and the request sent again,
// once: the workloads' requests are pure evaluations, safe to repeat.
// Not safe for concurrent use: each worker has its own.
type rawConn struct {
	addr string // host:port, a loopback address checked by checkLoopback
	host string // the Host header

	mu     sync.Mutex // guards the changes of conn, for kill
	conn   net.Conn   // changed by its worker only, under mu
	killed bool

	br    *bufio.Reader
	req   []byte // the request being written
	body  []byte // the last answer's body
	reuse bool   // conn has carried an answer already
}

// maxAnswer bounds an answer's body, as do's io.LimitReader does.
const maxAnswer = 1 << 20

// errAnswerTooLong is returned for an answer body over maxAnswer.
var errAnswerTooLong = errors.New("answer body over 1 MiB")

func newRawConn(c *client) *rawConn {
	host := c.base[len("http://"):]
	return &rawConn{addr: host, host: host}
}

// close ends the connection; a later post dials again.
func (rc *rawConn) close() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.conn != nil {
		rc.conn.Close()
		rc.conn, rc.reuse = nil, false
	}
}

// kill closes the connection from another goroutine, so that a post
// waiting on it returns, and makes any later post fail.
func (rc *rawConn) kill() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.killed = true
	if rc.conn != nil {
		rc.conn.Close()
	}
}

// errKilled is post's error after kill.
var errKilled = errors.New("connection closed: the run ended")

func (rc *rawConn) dial(ctx context.Context) error {
	d := net.Dialer{Timeout: 10 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", rc.addr)
	if err != nil {
		return err
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.killed {
		conn.Close()
		return errKilled
	}
	rc.conn, rc.reuse = conn, false
	if rc.br == nil {
		rc.br = bufio.NewReaderSize(conn, 4096)
	} else {
		rc.br.Reset(conn)
	}
	return nil
}

// post sends POST path with body (BPL text) and answers the status and the
// body, which is valid until the next post.
func (rc *rawConn) post(ctx context.Context, path string, body []byte) (int, []byte, error) {
	rc.req = append(rc.req[:0], "POST "...)
	rc.req = append(rc.req, path...)
	rc.req = append(rc.req, " HTTP/1.1\r\nHost: "...)
	rc.req = append(rc.req, rc.host...)
	rc.req = append(rc.req, "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: "...)
	rc.req = strconv.AppendInt(rc.req, int64(len(body)), 10)
	rc.req = append(rc.req, "\r\nContent-Type: "+bplType+"\r\n\r\n"...)
	rc.req = append(rc.req, body...)
	for attempt := 0; ; attempt++ {
		if rc.conn == nil {
			if err := rc.dial(ctx); err != nil {
				return 0, nil, err
			}
		}
		reused := rc.reuse
		status, err := rc.roundTrip()
		if err == nil {
			return status, rc.body, nil
		}
		rc.close()
		if !reused || attempt > 0 || !errors.Is(err, errIdleClosed) || ctx.Err() != nil {
			return 0, nil, err
		}
	}
}

// errIdleClosed is roundTrip's error when the connection ended before
// the first byte of the answer.
var errIdleClosed = errors.New("connection closed before an answer")

// roundTrip writes rc.req and reads the answer into rc.body. After an
// error the connection is unusable.
func (rc *rawConn) roundTrip() (int, error) {
	if _, err := rc.conn.Write(rc.req); err != nil {
		return 0, fmt.Errorf("%w: %v", errIdleClosed, err)
	}
	line, err := rc.br.ReadSlice('\n')
	if err != nil {
		if len(line) == 0 && (errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)) {
			return 0, fmt.Errorf("%w: %v", errIdleClosed, err)
		}
		return 0, fmt.Errorf("reading the status line: %w", err)
	}
	// HTTP/1.x NNN reason
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, fmt.Errorf("status line %q: %w", line, errProtocol)
	}
	http10 := line[7] == '0'
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("status line %q: %w", line, errProtocol)
	}
	length, chunked, keep := -1, false, !http10
	for {
		h, err := rc.br.ReadSlice('\n')
		if err != nil {
			return 0, fmt.Errorf("reading a header: %w", err)
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		name, val, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return 0, fmt.Errorf("header %q: %w", h, errProtocol)
		}
		val = bytes.TrimSpace(val)
		switch {
		case bytes.EqualFold(name, []byte("content-length")):
			n, err := strconv.Atoi(string(val))
			if err != nil || n < 0 {
				return 0, fmt.Errorf("content-length %q: %w", val, errProtocol)
			}
			length = n
		case bytes.EqualFold(name, []byte("transfer-encoding")):
			chunked = bytes.EqualFold(val, []byte("chunked"))
		case bytes.EqualFold(name, []byte("connection")):
			if bytes.EqualFold(val, []byte("close")) {
				keep = false
			} else if bytes.EqualFold(val, []byte("keep-alive")) {
				keep = true
			}
		}
	}
	rc.body = rc.body[:0]
	switch {
	case chunked:
		err = rc.readChunked()
	case length >= 0:
		if length > maxAnswer {
			return 0, errAnswerTooLong
		}
		rc.body = append(rc.body, make([]byte, length)...)
		_, err = io.ReadFull(rc.br, rc.body)
	default:
		keep = false
		err = rc.readToEnd()
	}
	if err != nil {
		return 0, fmt.Errorf("reading the answer body: %w", err)
	}
	if keep {
		rc.reuse = true
	} else {
		rc.close()
	}
	return status, nil
}

// readChunked reads a chunked body and its trailers.
func (rc *rawConn) readChunked() error {
	for {
		line, err := rc.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("chunk size %q: %w", line, errProtocol)
		}
		if n == 0 {
			for { // trailers, up to the blank line
				t, err := rc.br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(bytes.TrimRight(t, "\r\n")) == 0 {
					return nil
				}
			}
		}
		if int64(len(rc.body))+n > maxAnswer {
			return errAnswerTooLong
		}
		start := len(rc.body)
		rc.body = append(rc.body, make([]byte, n)...)
		if _, err := io.ReadFull(rc.br, rc.body[start:]); err != nil {
			return err
		}
		if crlf, err := rc.br.ReadSlice('\n'); err != nil || len(bytes.TrimRight(crlf, "\r\n")) != 0 {
			return fmt.Errorf("no CRLF after a chunk: %w", errProtocol)
		}
	}
}

// readToEnd reads a body that the end of the connection ends.
func (rc *rawConn) readToEnd() error {
	for {
		if len(rc.body) > maxAnswer {
			return errAnswerTooLong
		}
		if cap(rc.body)-len(rc.body) < 512 {
			rc.body = append(rc.body, make([]byte, 4096)...)[:len(rc.body)]
		}
		n, err := rc.br.Read(rc.body[len(rc.body):cap(rc.body)])
		rc.body = rc.body[:len(rc.body)+n]
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// isReset reports a connection reset by the server.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
