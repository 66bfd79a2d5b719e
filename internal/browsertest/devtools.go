package browsertest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"
)

// ErrEval is wrapped by Page.Eval's error when the page's JavaScript
// throws, or chromium answers a DevTools command with an error.
var ErrEval = errors.New("browsertest: evaluation failed")

// Page is a page open in headless chromium that a test reads and drives
// from outside, through the DevTools protocol on a pipe
// (--remote-debugging-pipe: commands on the child's descriptor 3, answers
// and events on 4, each a JSON message ended by a NUL byte), so that what
// it checks is the rendered page itself, not what the page says of it.
// Close it when done.
type Page struct {
	proc    *chromium
	toChild *os.File
	session string // the page target's session, flattened

	mu      sync.Mutex // guards nextID, waiting and readErr
	nextID  int
	waiting map[int]chan devtoolsAnswer
	readErr error
	writeMu sync.Mutex
	closers []func() // run by Close after chromium ends
}

type devtoolsAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Open opens pageURL (http, on a loopback address) in headless chromium
// and attaches to it, waiting up to 30 s or ctx's end for the browser. Its
// host resolver rules let the page reach no host but loopback ones
// (localhost, 127.0.0.1 and pageURL's host). It logs chromium's path with
// t.Logf. It answers ErrNoChromium without chromium: callers use Require
// first.
func Open(ctx context.Context, t testing.TB, pageURL string) (*Page, error) {
	t.Helper()
	u, err := loopbackURL("browsertest.Open", pageURL)
	if err != nil {
		return nil, err
	}
	bin, err := Chromium()
	if err != nil {
		return nil, err
	}
	childIn, toChild, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	fromChild, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		toChild.Close()
		return nil, err
	}
	proc, err := startChromium(bin, u.Hostname(), pageURL, []*os.File{childIn, childOut}, "--remote-debugging-pipe")
	childIn.Close() // the child's ends, now the child's alone
	childOut.Close()
	if err != nil {
		toChild.Close()
		fromChild.Close()
		return nil, err
	}
	t.Logf("browsertest: chromium %s opened %s", bin, pageURL)
	p := &Page{proc: proc, toChild: toChild, waiting: map[int]chan devtoolsAnswer{}}
	go p.read(fromChild)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.attach(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("browsertest.Open: %w\nchromium's output:\n%s", err, proc.out.tail())
	}
	return p, nil
}

// attach finds the page target and attaches to it in flat mode, where a
// command names its session.
func (p *Page) attach(ctx context.Context) error {
	for {
		var targets struct {
			TargetInfos []struct {
				TargetID string `json:"targetId"`
				Type     string `json:"type"`
			} `json:"targetInfos"`
		}
		if err := p.call(ctx, "", "Target.getTargets", nil, &targets); err != nil {
			return err
		}
		for _, ti := range targets.TargetInfos {
			if ti.Type != "page" {
				continue
			}
			var att struct {
				SessionID string `json:"sessionId"`
			}
			if err := p.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": ti.TargetID, "flatten": true}, &att); err != nil {
				return err
			}
			p.session = att.SessionID
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no page target: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// read hands each answer to its caller and drops events, until the pipe
// ends; then every caller gets the error.
func (p *Page) read(r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<16)
	var err error
	for {
		var msg []byte
		if msg, err = br.ReadBytes(0); err != nil {
			break
		}
		var m struct {
			ID *int `json:"id"`
			devtoolsAnswer
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID == nil {
			continue // an event, or noise
		}
		p.mu.Lock()
		ch := p.waiting[*m.ID]
		delete(p.waiting, *m.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- m.devtoolsAnswer
		}
	}
	p.mu.Lock()
	p.readErr = fmt.Errorf("browsertest: the DevTools pipe ended: %w", err)
	for id, ch := range p.waiting {
		close(ch)
		delete(p.waiting, id)
	}
	p.mu.Unlock()
}

// call sends a DevTools command (to the browser if session is "") and
// decodes its result into out, if not nil.
func (p *Page) call(ctx context.Context, session, method string, params any, out any) error {
	ch := make(chan devtoolsAnswer, 1)
	p.mu.Lock()
	if p.readErr != nil {
		p.mu.Unlock()
		return p.readErr
	}
	p.nextID++
	id := p.nextID
	p.waiting[id] = ch
	p.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	p.writeMu.Lock()
	_, err = p.toChild.Write(append(b, 0))
	p.writeMu.Unlock()
	if err != nil {
		return fmt.Errorf("browsertest: %s: %w", method, err)
	}
	select {
	case a, ok := <-ch:
		if !ok {
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.readErr
		}
		if a.Error != nil {
			return fmt.Errorf("%w: %s: %s", ErrEval, method, a.Error.Message)
		}
		if out == nil {
			return nil
		}
		return json.Unmarshal(a.Result, out)
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.waiting, id)
		p.mu.Unlock()
		return fmt.Errorf("browsertest: %s: %w", method, ctx.Err())
	}
}

// Eval evaluates a JavaScript expression in the page and answers its
// value, as JSON decodes it (a promise is awaited). A thrown exception is
// an error wrapping ErrEval.
func (p *Page) Eval(ctx context.Context, expr string) (any, error) {
	var res struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := p.call(ctx, p.session, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true}, &res)
	if err != nil {
		return nil, err
	}
	if d := res.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil {
			msg = d.Exception.Description
		}
		return nil, fmt.Errorf("%w: %s: %s", ErrEval, expr, msg)
	}
	return res.Result.Value, nil
}

// WaitFor evaluates expr, a string-valued JavaScript expression, every
// 100 ms until ok accepts its value, and answers that value; after ctx's
// end it answers an error with the last value seen.
func (p *Page) WaitFor(ctx context.Context, expr string, ok func(string) bool) (string, error) {
	var last string
	for {
		v, err := p.Eval(ctx, expr)
		if err != nil && ctx.Err() == nil && !errors.Is(err, ErrEval) {
			return "", err
		}
		if s, isString := v.(string); err == nil && isString {
			if last = s; ok(s) {
				return s, nil
			}
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("browsertest: %s: never as wanted: %w; last %q", expr, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Output is the tail of chromium's output, for a failure's message.
func (p *Page) Output() string { return p.proc.out.tail() }

// Close ends chromium and the pipe.
func (p *Page) Close() {
	p.proc.stop()
	p.toChild.Close()
	for _, c := range p.closers {
		c()
	}
}
