package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// module is the module every workload runs in, made by setup.
const module = "bench"

// setupCode defines the module's exterior functions: @add answers its
// body plus one, @v the variable v, which the fan-out workload changes.
const setupCode = `(do
  (set @add (function (ctx data) (+ data 1)))
  (set @v (function (ctx) v))
  (set v 0)
  "ready")`

// setup makes the module afresh (DELETE, then PUT with an empty body) and
// defines its functions.
func setup(ctx context.Context, c *client) error {
	_, _ = c.do(ctx, http.MethodDelete, "/"+module, "")
	if _, err := c.ok(ctx, http.MethodPut, "/"+module, "", ""); err != nil {
		return fmt.Errorf("creating module %s: %w", module, err)
	}
	if _, err := c.ok(ctx, http.MethodPost, "/"+module, setupCode, `"ready"`); err != nil {
		return fmt.Errorf("defining module %s's functions: %w", module, err)
	}
	return nil
}

// check exercises the protocol the workloads rely on and that brain4it's
// manager expects, and says what does not match brain4it's server.
func check(ctx context.Context, c *client) error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(args, errProtocol)...))
	}
	if err := setup(ctx, c); err != nil {
		return err
	}
	a, err := c.do(ctx, http.MethodGet, "/", "")
	if err != nil {
		return err
	}
	if a.status != 200 || !strings.Contains(a.body, `"`+module+`"`) {
		fail("GET /: status %d body %.200q, want 200 naming %q", a.status, a.body, module)
	}
	for _, h := range []string{"server-time", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers"} {
		if a.header.Get(h) == "" {
			fail("GET /: no %s header", h)
		}
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		fail("GET /: Content-Type %q, want text/plain; charset=UTF-8", ct)
	}
	a, err = c.do(ctx, http.MethodOptions, "/"+module, "")
	if err != nil {
		return err
	}
	allow := strings.ToLower(a.header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"access-key", "monitor", "session-id"} {
		if !strings.Contains(allow, h) {
			fail("OPTIONS: Access-Control-Allow-Headers %q lacks %s", allow, h)
		}
	}
	if m := a.header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "POST") || !strings.Contains(m, "PUT") {
		fail("OPTIONS: Access-Control-Allow-Methods %q", m)
	}
	if _, err := c.ok(ctx, http.MethodPost, "/"+module, "(+ 1 2 3)", "6"); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.ok(ctx, http.MethodPost, "/"+module+"/@add", "41", "42"); err != nil {
		errs = append(errs, err)
	}
	a, err = c.do(ctx, http.MethodPost, "/"+module, "(+ 1")
	if err != nil {
		return err
	}
	if a.status != 500 || !strings.Contains(a.body, "ParseException") {
		fail("POST bad BPL: status %d body %.200q, want 500 with a ParseException list", a.status, a.body)
	}
	a, err = c.do(ctx, http.MethodPut, "/"+module, "")
	if err != nil {
		return err
	}
	if a.status != 500 {
		fail("PUT on an existing module with no body: status %d, want 500 (brain4it: already exists)", a.status)
	}
	// The monitor: the first line is the session id, then the current
	// value, then each change after module-notify; unwatch ends it.
	w, err := c.watch(ctx, module, "@v")
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	defer w.close()
	got := make(chan change, 4)
	go func() {
		for {
			ch, err := w.next()
			if err != nil {
				close(got)
				return
			}
			got <- ch
		}
	}()
	first, ok := recvTimeout(got, 5*time.Second)
	if !ok || first.fn != "@v" || fmt.Sprint(first.value) != "0" {
		fail("monitor: first change %+v, want (\"@v\" 0 time)", first)
	}
	if _, err := c.ok(ctx, http.MethodPost, "/"+module, `(do (set v 7) (module-notify "@v"))`, ""); err != nil {
		errs = append(errs, err)
	}
	next, ok := recvTimeout(got, 5*time.Second)
	if !ok || next.fn != "@v" || fmt.Sprint(next.value) != "7" {
		fail("monitor: after (set v 7) and module-notify, change %+v, want (\"@v\" 7 time)", next)
	}
	if _, ok := next.serverTime.(int64); !ok {
		if _, ok := next.serverTime.(int); !ok {
			fail("monitor: server-time %v (%T) is not an integer", next.serverTime, next.serverTime)
		}
	}
	if err := c.unwatch(ctx, module, w.id); err != nil {
		errs = append(errs, err)
	}
	if _, ok := recvTimeout(got, 5*time.Second); ok {
		fail("monitor: a change after unwatch")
	}
	return errors.Join(errs...)
}

func recvTimeout(ch <-chan change, d time.Duration) (change, bool) {
	select {
	case c, ok := <-ch:
		return c, ok
	case <-time.After(d):
		return change{}, false
	}
}

// rate runs n requests from conc goroutines, each with a kept-alive
// connection of its own (rawConn), each request built by req(rc, i), and
// answers requests per second. Every answer is checked; the first failure
// stops the run. When ctx ends, the connections are closed, so that a
// request waiting on a server that does not answer ends too.
func rate(ctx context.Context, c *client, conc, n int, req func(ctx context.Context, rc *rawConn, i int) error) (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conns := make([]*rawConn, conc)
	for g := range conns {
		conns[g] = newRawConn(c)
	}
	killAll := func() {
		for _, rc := range conns {
			rc.kill()
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	start := time.Now()
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func(rc *rawConn) {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := req(ctx, rc, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}(conns[g])
	}
	stop := context.AfterFunc(ctx, killAll)
	wg.Wait()
	elapsed := time.Since(start)
	stop()
	for _, rc := range conns {
		rc.close()
	}
	if first != nil {
		return 0, first
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return float64(n) / elapsed.Seconds(), nil
}

// postOK sends one POST with rc and wants a 200 whose body, trimmed, is
// want.
func postOK(ctx context.Context, rc *rawConn, path string, body, want []byte) error {
	status, got, err := rc.post(ctx, path, body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("POST %s: status %d, body %.200q: %w", path, status, string(got), errProtocol)
	}
	if !bytes.Equal(bytes.TrimSpace(got), want) {
		// string copies: got and want are the caller's buffers
		return fmt.Errorf("POST %s: body %.200q, want %q: %w", path, string(got), string(want), errProtocol)
	}
	return nil
}

// evals is the evaluation workload: POST /bench with a small expression,
// (+ i 1 2), whose answer is checked.
func evals(ctx context.Context, c *client, conc, n int) (float64, error) {
	const path = "/" + module
	return rate(ctx, c, conc, n, func(ctx context.Context, rc *rawConn, i int) error {
		var code, want [32]byte
		b := append(strconv.AppendInt(append(code[:0], "(+ "...), int64(i), 10), " 1 2)"...)
		return postOK(ctx, rc, path, b, strconv.AppendInt(want[:0], int64(i+3), 10))
	})
}

// calls is the exterior-call workload: POST /bench/@add with a number,
// whose answer is checked.
func calls(ctx context.Context, c *client, conc, n int) (float64, error) {
	const path = "/" + module + "/@add"
	return rate(ctx, c, conc, n, func(ctx context.Context, rc *rawConn, i int) error {
		var data, want [24]byte
		return postOK(ctx, rc, path, strconv.AppendInt(data[:0], int64(i), 10), strconv.AppendInt(want[:0], int64(i+1), 10))
	})
}

// fanout opens watchers monitor sessions on @v, then makes changes
// changes, one at a time: each sets v and calls module-notify, and is timed
// from just before its POST to the moment the last watcher has read the
// new value. It answers those times, sorted.
func fanout(ctx context.Context, c *client, watchers, changes int, wait time.Duration) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// v starts at a value no change uses, so every watcher's first line
	// (the current value) is told apart from the changes.
	if _, err := c.ok(ctx, http.MethodPost, "/"+module, "(set v -1)", ""); err != nil {
		return nil, err
	}
	ws := make([]*watcher, 0, watchers)
	defer func() {
		for _, w := range ws {
			uctx, ucancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = c.unwatch(uctx, module, w.id)
			ucancel()
			w.close()
		}
	}()
	feed := make(chan seen, watchers*4)
	errc := make(chan error, watchers)
	for i := 0; i < watchers; i++ {
		w, err := c.watch(ctx, module, "@v")
		if err != nil {
			return nil, fmt.Errorf("watcher %d: %w", i, err)
		}
		ws = append(ws, w)
		go func() {
			for {
				ch, err := w.next()
				if err != nil {
					if ctx.Err() == nil {
						errc <- err
					}
					return
				}
				feed <- seen{fmt.Sprint(ch.value), ch.at}
			}
		}()
	}
	// Every watcher's first line is v's current value.
	if err := collect(ctx, feed, errc, watchers, "-1", wait, nil); err != nil {
		return nil, fmt.Errorf("initial values: %w", err)
	}
	times := make([]time.Duration, 0, changes)
	for k := 1; k <= changes; k++ {
		start := time.Now()
		code := fmt.Sprintf(`(do (set v %d) (module-notify "@v"))`, k)
		if _, err := c.ok(ctx, http.MethodPost, "/"+module, code, ""); err != nil {
			return nil, err
		}
		var last time.Time
		if err := collect(ctx, feed, errc, watchers, fmt.Sprint(k), wait, &last); err != nil {
			return nil, fmt.Errorf("change %d: %w", k, err)
		}
		times = append(times, last.Sub(start))
	}
	slices.Sort(times)
	return times, nil
}

// collect waits for n lines of value want on feed, one per watcher, and
// sets *last to the latest read time.
func collect(ctx context.Context, feed <-chan seen, errc <-chan error, n int, want string, wait time.Duration, last *time.Time) error {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for got := 0; got < n; {
		select {
		case v := <-feed:
			if v.value != want {
				return fmt.Errorf("a watcher read %s, want %s: %w", v.value, want, errProtocol)
			}
			got++
			if last != nil && v.at.After(*last) {
				*last = v.at
			}
		case err := <-errc:
			return fmt.Errorf("a watcher's stream: %w", err)
		case <-timer.C:
			return fmt.Errorf("%d of %d watchers read %s within %v: %w", got, n, want, wait, errProtocol)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// seen is one watcher's reading of @v: its value and when it was read.
type seen struct {
	value string
	at    time.Time
}

// percentile of sorted times, p in [0, 1], nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
