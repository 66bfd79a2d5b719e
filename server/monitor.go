package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// A monitor stream, as brain4it's MonitorService serves it: POST /module
// with the header monitor: N (milliseconds; 0 or less: only when told) and
// a list of exterior function names as body. The answer is a chunked
// stream of lines: first the session id, a quoted string; then, whenever a
// watched function's value differs from the one last sent (or was never
// sent), ("@fn" value server-time). The functions are evaluated every N
// ms, and at once for those module-notify names; an evaluation that fails
// sends nothing. An empty line is sent after PingInterval of silence, so
// that a gone client is noticed. POST with the session id string as body
// (and a monitor header) ends the stream: "unwatched".

// session is one monitor stream.
type session struct {
	id    string
	queue fnQueue
}

// fnQueue is brain4it's FunctionQueue: the functions to evaluate next,
// each once, and an end mark.
type fnQueue struct {
	mu    sync.Mutex
	fns   []string
	ended bool
	wake  chan struct{} // cap 1
}

func (q *fnQueue) add(fns ...string) {
	q.mu.Lock()
	for _, fn := range fns {
		if !slices.Contains(q.fns, fn) {
			q.fns = append(q.fns, fn)
		}
	}
	q.mu.Unlock()
	q.signal()
}

func (q *fnQueue) end() {
	q.mu.Lock()
	q.ended, q.fns = true, nil
	q.mu.Unlock()
	q.signal()
}

func (q *fnQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// next returns the next function, waiting up to d; ended reports the end.
func (q *fnQueue) next(ctx context.Context, done <-chan struct{}, d time.Duration) (fn string, ended bool) {
	for range 2 {
		q.mu.Lock()
		if q.ended {
			q.mu.Unlock()
			return "", true
		}
		if len(q.fns) > 0 {
			fn = q.fns[0]
			q.fns = q.fns[1:]
			q.mu.Unlock()
			return fn, false
		}
		q.mu.Unlock()
		if d <= 0 {
			return "", false
		}
		t := time.NewTimer(d)
		select {
		case <-q.wake:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return "", true
		case <-done:
			t.Stop()
			return "", true
		}
		t.Stop()
		d = 0
	}
	return "", false
}

// newSessionID is a random UUID (version 4), as brain4it's.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// watch serves a monitor stream until the client goes, the session is
// unwatched or the server shuts down.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, m *Module, fnList *value.List, interval int) error {
	var fns []string
	for _, v := range fnList.Values() {
		if fn, ok := v.(string); ok {
			fns = append(fns, fn)
		}
	}
	reqCtx := s.contextList(r)
	sess := &session{id: newSessionID(), queue: fnQueue{wake: make(chan struct{}, 1)}}
	s.sessions.Store(sess.id, sess)
	m.watch(sess, fns)
	if o := s.cfg.Observer; o != nil {
		o.ServeMonitors(m.name, 1)
		defer o.ServeMonitors(m.name, -1)
	}
	defer func() {
		m.unwatch(sess, fns)
		s.sessions.Delete(sess.id)
	}()

	h := w.Header()
	h.Set("Content-Type", bplContentType)
	setHeader(h, "x-content-type-options", "nosniff")
	setHeader(h, ServerTimeHeader, strconv.FormatInt(time.Now().UnixMilli(), 10))
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(text string) error {
		if _, err := io.WriteString(w, text); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	if err := send(value.Format(sess.id) + "\n"); err != nil {
		return nil
	}

	ping := s.cfg.PingInterval
	poll := time.Duration(interval) * time.Millisecond
	if interval <= 0 {
		poll = ping
	}
	wait := min(poll, ping)
	last := map[string]string{}
	var lastSent, lastPoll time.Time
	ctx := r.Context()
	for {
		now := time.Now()
		if now.Sub(lastPoll) > poll {
			sess.queue.add(fns...)
			lastPoll = now
		}
		fn, ended := sess.queue.next(ctx, s.done, wait)
		if ended {
			return nil
		}
		if fn != "" {
			line, ok := s.monitorLine(ctx, m, fn, reqCtx, last)
			if ok {
				if err := send(line); err != nil {
					return nil
				}
				lastSent = time.Now()
			}
		}
		if time.Since(lastSent) > ping {
			if err := send("\n"); err != nil {
				return nil
			}
			lastSent = time.Now()
		}
	}
}

// monitorLine evaluates fn and gives its line when its value changed.
func (s *Server) monitorLine(ctx context.Context, m *Module, fn string, reqCtx *value.List, last map[string]string) (string, bool) {
	serverTime := time.Now().UnixMilli()
	ctx, cancel := context.WithTimeout(ctx, monitorEvalTime)
	defer cancel()
	start := time.Now()
	v, err := m.CallExterior(ctx, fn, reqCtx, nil)
	if errors.Is(err, ErrNotExterior) {
		v, err = nil, nil // brain4it sends null for it
	} else {
		s.evaluated(m.name, EvalMonitor, start, err)
	}
	if err != nil {
		return "", false
	}
	text, err := m.Interp().FormatValue(ctx, v)
	if err != nil {
		return "", false
	}
	if prev, ok := last[fn]; ok && prev == text {
		return "", false
	}
	last[fn] = text
	return "(" + value.Format(fn) + " " + text + " " + strconv.FormatInt(serverTime, 10) + ")\n", true
}

// unwatch ends a monitor session; brain4it answers "unwatched" whether or
// not there was one.
func (s *Server) unwatch(id string) string {
	if v, ok := s.sessions.Load(id); ok {
		v.(*session).queue.end()
	}
	return "unwatched"
}
