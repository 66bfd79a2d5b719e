package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/value"
)

// functions are brain4it's ModuleLibrary, bound to m: module-name,
// module-start, module-stop, module-init, module-save, module-load,
// module-snapshots, module-delete, module-notify (and its alias
// module-publish), module-monitor and remote-call. Each is documented
// where it is defined.
func (m *Module) functions() map[string]value.Func {
	fs := m.moduleFunctions()
	for name, f := range fs {
		fs[name] = func(ctx context.Context, args *value.List) (any, error) {
			v, err := f(ctx, args)
			var je *javaError
			if err != nil && !errors.As(err, &je) && value.ErrorType(err) == "Exception" {
				err = ioError{err} // a store's or module's error, not Kafka's
			}
			return v, err
		}
	}
	return fs
}

// ioError is an error of the module functions that is brain4it's
// IOException in BPL.
type ioError struct{ err error }

func (e ioError) Error() string         { return strings.TrimPrefix(e.err.Error(), "server: ") }
func (e ioError) Unwrap() error         { return e.err }
func (e ioError) ExceptionType() string { return "IOException" }

func (m *Module) moduleFunctions() map[string]value.Func {
	return map[string]value.Func{
		"module-name":      m.fnName,
		"module-start":     m.fnStart,
		"module-stop":      m.fnStop,
		"module-init":      m.fnInit,
		"module-save":      m.fnSave,
		"module-load":      m.fnLoad,
		"module-snapshots": m.fnSnapshots,
		"module-delete":    m.fnDelete,
		"module-notify":    m.fnNotify("module-notify"),
		"module-publish":   m.fnNotify("module-publish"),
		"module-monitor":   m.fnMonitor,
		"remote-call":      m.fnRemoteCall,
	}
}

// argError is the error of a bad argument: it names the function, the
// argument and the value.
func argError(fn, arg string, v any) error {
	return fmt.Errorf("%w: %s: %s must be a string, got %s", kafkabpl.ErrInvalidArgument, fn, arg, value.Format(v))
}

// optString reads the optional string argument at i ("" when absent or null).
func optString(fn, arg string, args *value.List, i int) (string, error) {
	if i >= args.Len() || args.At(i) == nil {
		return "", nil
	}
	s, ok := args.At(i).(string)
	if !ok {
		return "", argError(fn, arg, args.At(i))
	}
	return s, nil
}

// (module-name) gives the module's name.
func (m *Module) fnName(context.Context, *value.List) (any, error) { return m.name, nil }

// (module-start) evaluates the module's start code: "Module NAME
// started.", or brain4it's Exception "Start failed: ...".
func (m *Module) fnStart(ctx context.Context, _ *value.List) (any, error) {
	if err := m.Start(ctx); err != nil {
		return nil, brain4itError(err)
	}
	return "Module " + m.name + " started.", nil
}

// offCaller runs f on a goroutine of its own and waits for it or for ctx:
// module-stop and module-init close the interpreter their caller may be
// an executor of, which waits for that executor to end; its context ends
// then, and the call gives Interrupted while the stop finishes.
func offCaller(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("the module stops: %w", ctx.Err())
	}
}

// (module-stop) stops the module (see Module.Stop): "Module NAME
// stopped.", or brain4it's Exception "Stop failed: ...".
func (m *Module) fnStop(ctx context.Context, _ *value.List) (any, error) {
	if err := offCaller(ctx, func() error { return m.Stop(context.WithoutCancel(ctx)) }); err != nil {
		return nil, brain4itError(err)
	}
	return "Module " + m.name + " stopped.", nil
}

// (module-init) stops the module and empties its scope: "Module NAME
// initialized.". When its stop code fails, the scope is kept and the
// error is brain4it's "Stop failed: ...", as brain4it's
// ModuleInitFunction empties it only after a stop that succeeded.
func (m *Module) fnInit(ctx context.Context, _ *value.List) (any, error) {
	err := offCaller(ctx, func() error {
		m.life.Lock()
		defer m.life.Unlock()
		err := m.stopLocked(context.WithoutCancel(ctx))
		var pe *phaseError
		if !errors.As(err, &pe) {
			m.Init(nil)
		}
		return err
	})
	if err != nil {
		return nil, brain4itError(err)
	}
	return "Module " + m.name + " initialized.", nil
}

// (module-save [snapshot [backup]]) saves the scope as the snapshot (head
// by default); with backup true an older one of the name is kept as
// NAME_yyyyMMddHHmmss. "Module NAME saved.".
func (m *Module) fnSave(ctx context.Context, args *value.List) (any, error) {
	name, err := optString("module-save", "snapshot_name", args, 0)
	if err != nil {
		return nil, err
	}
	backup := false
	if args.Len() > 1 {
		b, ok := args.At(1).(bool)
		if !ok && args.At(1) != nil {
			return nil, fmt.Errorf("%w: module-save: backup must be a boolean, got %s", kafkabpl.ErrInvalidArgument, value.Format(args.At(1)))
		}
		backup = b
	}
	if err := m.Save(ctx, name, backup); err != nil {
		return nil, err
	}
	return "Module " + m.name + " saved.", nil
}

// (module-load [snapshot]) replaces the scope with the snapshot (head by
// default): "Module NAME loaded.".
func (m *Module) fnLoad(_ context.Context, args *value.List) (any, error) {
	name, err := optString("module-load", "snapshot_name", args, 0)
	if err != nil {
		return nil, err
	}
	if err := m.Load(name); err != nil {
		return nil, err
	}
	return "Module " + m.name + " loaded.", nil
}

// (module-snapshots [pattern]) lists the snapshots whose name matches
// pattern (* is any text), each ("name" => n "last-modified" => ms
// "length" => bytes).
func (m *Module) fnSnapshots(_ context.Context, args *value.List) (any, error) {
	pattern, err := optString("module-snapshots", "snapshot_pattern", args, 0)
	if err != nil {
		return nil, err
	}
	snaps, err := m.srv.cfg.Store.List(m.name, pattern)
	if err != nil {
		return nil, err
	}
	l := &value.List{}
	for _, s := range snaps {
		l.Append((&value.List{}).AppendNamed("name", s.Name).
			AppendNamed("last-modified", s.LastModified.UnixMilli()).
			AppendNamed("length", s.Length))
	}
	return l, nil
}

// (module-delete pattern) deletes the matching snapshots: "Snapshots
// deleted.".
func (m *Module) fnDelete(_ context.Context, args *value.List) (any, error) {
	if args.Len() < 1 {
		return nil, fmt.Errorf("%w: module-delete: want a snapshot_pattern", kafkabpl.ErrInvalidArgument)
	}
	pattern, err := optString("module-delete", "snapshot_pattern", args, 0)
	if err != nil {
		return nil, err
	}
	if _, err := m.srv.cfg.Store.Delete(m.name, pattern); err != nil {
		return nil, err
	}
	return "Snapshots deleted.", nil
}

// (module-notify "@fn"...) makes the monitors watching those exterior
// functions evaluate them at once, and gives how many were told here; the
// same module in the other servers of its streams' groups is told too, in
// the background (peer_notify.go).
func (m *Module) fnNotify(fn string) value.Func {
	return func(_ context.Context, args *value.List) (any, error) {
		if args.Len() < 1 {
			return nil, fmt.Errorf("%w: %s: want one function name at least", kafkabpl.ErrInvalidArgument, fn)
		}
		var fns []string
		for i, v := range args.Values() {
			s, ok := v.(string)
			if !ok {
				return nil, argError(fn, fmt.Sprintf("argument %d", i+1), v)
			}
			fns = append(fns, s)
		}
		n := m.Notify(fns...)
		m.notifyPeers(fns)
		return int64(n), nil
	}
}

// remoteMonitor is a monitor stream module-monitor keeps open to a
// module, here or on another server, for one function.
type remoteMonitor struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// (module-monitor server_url module_name function_name listener
// "polling-interval" => ms "access-key" => key) watches an exterior
// function of a module (of this or another server) and calls (listener
// function_name value server_time) with each value it sends: "registered".
// A null listener stops it: "unregistered". The watches end when the
// module stops.
func (m *Module) fnMonitor(ctx context.Context, args *value.List) (any, error) {
	const fn = "module-monitor"
	var pos []any
	interval, key := int64(0), ""
	for name, v := range args.All() {
		switch name {
		case "":
			pos = append(pos, v)
		case "polling-interval":
			n, ok := v.(int64)
			if !ok && v != nil {
				return nil, fmt.Errorf("%w: %s: polling-interval must be an integer, got %s", kafkabpl.ErrInvalidArgument, fn, value.Format(v))
			}
			interval = n
		case "access-key":
			s, ok := v.(string)
			if !ok && v != nil {
				return nil, argError(fn, "access-key", v)
			}
			key = s
		default:
			return nil, fmt.Errorf("%w: %s: unknown named argument %q", kafkabpl.ErrInvalidArgument, fn, name)
		}
	}
	if len(pos) != 4 {
		return nil, fmt.Errorf("%w: %s: want (module-monitor server_url module_name function_name listener), got %d arguments", kafkabpl.ErrInvalidArgument, fn, len(pos))
	}
	var strs [3]string
	for i, arg := range []string{"server_url", "module_name", "function_name"} {
		s, ok := pos[i].(string)
		if !ok {
			return nil, argError(fn, arg, pos[i])
		}
		strs[i] = s
	}
	target := strings.TrimSuffix(strs[0], "/") + "/" + strs[1] + "|" + strs[2]
	m.lmu.Lock()
	old := m.remotes[target]
	delete(m.remotes, target)
	m.lmu.Unlock()
	if old != nil {
		old.cancel()
		<-old.done
	}
	if pos[3] == nil {
		return "unregistered", nil
	}
	listener, ok := pos[3].(value.Callable)
	if !ok {
		return nil, fmt.Errorf("%w: %s: listener must be a function, got %s", kafkabpl.ErrInvalidArgument, fn, value.Format(pos[3]))
	}
	rctx, cancel := context.WithCancel(context.Background())
	rm := &remoteMonitor{cancel: cancel, done: make(chan struct{})}
	m.lmu.Lock()
	m.remotes[target] = rm
	m.lmu.Unlock()
	url := strings.TrimSuffix(strs[0], "/") + "/" + strs[1]
	go func() {
		defer close(rm.done)
		for rctx.Err() == nil {
			err := m.followMonitor(rctx, url, strs[2], key, interval, listener)
			if rctx.Err() != nil {
				return
			}
			if err != nil {
				fmt.Fprintf(m.srv.logWriter(m.name), "module-monitor %s %s: %v; again in 1 s\n", url, strs[2], err)
			}
			select {
			case <-rctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return "registered", nil
}

// followMonitor reads one monitor stream and calls listener for each
// change, until the stream or ctx ends.
func (m *Module) followMonitor(ctx context.Context, url, fn, key string, interval int64, listener value.Callable) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(value.Format(value.NewList(fn))))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", bplContentType)
	req.Header.Set(MonitorHeader, fmt.Sprint(interval))
	if key != "" {
		req.Header.Set(AccessKeyHeader, key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		vs, err := value.Parse(sc.Text())
		if err != nil || len(vs) != 1 {
			continue
		}
		l, ok := vs[0].(*value.List)
		if !ok || l.Len() < 2 {
			continue
		}
		var st any = int64(0)
		if l.Len() > 2 {
			st = l.At(2)
		}
		cctx, capped := evalContext(ctx, m.srv.cfg.MaxEvalTime)
		if _, err := bpl.SafeCall(cctx, listener, value.NewList(l.At(0), l.At(1), st)); err != nil {
			fmt.Fprintf(m.srv.logWriter(m.name), "module-monitor %s %s: the listener failed: %v\n", url, fn, err)
		}
		capped.release()
	}
	return sc.Err()
}

// closeRemotes ends module-monitor's streams.
func (m *Module) closeRemotes() {
	m.lmu.Lock()
	rms := m.remotes
	m.remotes = map[string]*remoteMonitor{}
	m.lmu.Unlock()
	var wg sync.WaitGroup
	for _, rm := range rms {
		rm.cancel()
		wg.Add(1)
		go func() { defer wg.Done(); <-rm.done }()
	}
	wg.Wait()
}

// (remote-call setup arg...) calls an exterior function with the
// arguments (none: no data; one: it; more: a list of them, names kept), as
// brain4it's does. setup is a list: with "url" => the function's full URL,
// a POST to it (with "request-headers" => list); else "module" => name
// (this one by default) and "function" => "@fn", a call of the function of
// a module of this server, with "request-headers" as the ctx's. setup may
// be a URL string, or "SERVER:@fn" with SERVER a name of the module's
// setup/remote-modules list holding a base URL. A result that is a list is
// a copy; a remote error raises its exception.
func (m *Module) fnRemoteCall(ctx context.Context, args *value.List) (any, error) {
	const fn = "remote-call"
	if args.Len() < 1 {
		return nil, fmt.Errorf("%w: %s: want a function setup", kafkabpl.ErrInvalidArgument, fn)
	}
	var setup *value.List
	switch s := args.At(0).(type) {
	case string:
		url, err := m.remoteURL(s)
		if err != nil {
			return nil, err
		}
		setup = (&value.List{}).AppendNamed("url", url)
	case *value.List:
		setup = s
	default:
		return nil, &bpl.Exception{Type: "InvalidFunctionSetup", Message: "function setup must be a string or a list",
			Value: value.NewList("InvalidFunctionSetup").AppendNamed("message", "function setup must be a string or a list")}
	}
	var data any
	switch args.Len() {
	case 1:
	case 2:
		data = args.At(1)
	default:
		l := &value.List{}
		for i := 1; i < args.Len(); i++ {
			l.AppendNamed(args.Name(i), args.At(i))
		}
		data = l
	}
	headers, _ := getList(setup, "request-headers")
	if u, ok := setup.Get("url"); ok {
		url, ok := u.(string)
		if !ok {
			return nil, argError(fn, "url", u)
		}
		return networkCall(ctx, url, headers, data)
	}
	target := m
	if mv, ok := setup.Get("module"); ok && mv != nil {
		name, ok := mv.(string)
		if !ok {
			return nil, argError(fn, "module", mv)
		}
		t, err := m.srv.getModule(name)
		if err != nil {
			return nil, err
		}
		target = t
	}
	fv, _ := setup.Get("function")
	fname, ok := fv.(string)
	if !ok {
		return nil, argError(fn, "function", fv)
	}
	// brain4it's directCall: request-headers only when the setup has
	// them, and null (no call) for a name that is no exterior function,
	// as a POST to it gives
	v, err := target.CallExterior(ctx, fname, requestContext("127.0.0.1", 0, headers), data)
	if errors.Is(err, ErrNotExterior) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if l, ok := v.(*value.List); ok {
		// a copy, made holding the list's monitor
		text, err := target.Interp().FormatValue(ctx, l)
		if err != nil {
			return nil, err
		}
		vs, err := value.Parse(text)
		if err == nil && len(vs) == 1 {
			return vs[0], nil
		}
	}
	return v, nil
}

func getList(l *value.List, name string) (*value.List, bool) {
	v, _ := l.Get(name)
	r, ok := v.(*value.List)
	return r, ok
}

// remoteURL resolves remote-call's string setup.
func (m *Module) remoteURL(s string) (string, error) {
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		return s, nil
	}
	bad := &bpl.Exception{Type: "InvalidURL", Message: s, Value: value.NewList("InvalidURL").AppendNamed("message", s)}
	server, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", bad
	}
	setup, _ := m.Interp().Global(SetupVar)
	sl, _ := setup.(*value.List)
	rms, _ := getList(sl, "remote-modules")
	bv, _ := rms.Get(server)
	base, ok := bv.(string)
	if !ok {
		return "", bad
	}
	if !strings.HasSuffix(base, "/") && !strings.HasPrefix(rest, "/") {
		base += "/"
	}
	return base + rest, nil
}

// networkCall POSTs data to an exterior function's URL.
func networkCall(ctx context.Context, url string, headers *value.List, data any) (any, error) {
	var body io.Reader
	if data != nil {
		body = strings.NewReader(value.Format(data))
	}
	ctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return nil, fmt.Errorf("%w: remote-call: %v", kafkabpl.ErrInvalidArgument, err)
	}
	req.Header.Set("Content-Type", bplContentType)
	for name, v := range headers.All() {
		if name != "" {
			req.Header.Set(name, xmlText(v))
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, &bpl.Exception{Type: "IOException", Message: err.Error(), Value: value.NewList("IOException").AppendNamed("message", err.Error())}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, DefaultMaxBody))
	if err != nil {
		return nil, &bpl.Exception{Type: "IOException", Message: err.Error(), Value: value.NewList("IOException").AppendNamed("message", err.Error())}
	}
	ct := resp.Header.Get("Content-Type")
	if ct != "" && !strings.Contains(ct, "text/plain") {
		return nil, nil
	}
	var v any
	if len(bytes.TrimSpace(b)) > 0 {
		vs, err := value.Parse(string(b))
		if err != nil {
			return nil, err
		}
		if len(vs) > 0 {
			v = vs[0]
		}
	}
	if resp.StatusCode == http.StatusOK {
		return v, nil
	}
	if l, ok := v.(*value.List); ok && l.Len() > 0 {
		typ, _ := l.At(0).(string)
		msg, _ := l.Get("message")
		ms, _ := msg.(string)
		return nil, &bpl.Exception{Type: typ, Message: ms, Value: l}
	}
	msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if s, ok := v.(string); ok {
		msg = s
	}
	return nil, &bpl.Exception{Type: "IOException", Message: msg, Value: value.NewList("IOException").AppendNamed("message", msg)}
}
