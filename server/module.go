package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/functions"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// The variables of a module's scope that the server reads, as brain4it's.
const (
	StartVar     = "start"               // code run when the module starts
	StopVar      = "stop"                // code run when it stops
	MetadataVar  = "module-metadata"     // what GET / lists (icon, description)
	AccessKeyVar = "access-key"          // the module's own access key
	SetupVar     = "setup"               // setup/remote-modules, for remote-call
	ServersVar   = "kafka-servers"       // the Kafka servers, set when known
	RegistryVar  = "schema-registry-url" // the schema registry, set when known
	headSnapshot = "head"                // the snapshot loaded at start
)

// startStopTime bounds a module's start and stop code, as brain4it's
// Module.MAX_WAIT_TIME does.
const startStopTime = 60 * time.Second

// ErrModule is matched (errors.Is) by the errors about modules: one that
// does not exist, exists already, or has an invalid name. Their texts
// are brain4it's, such as "Module m not found.".
var ErrModule = errors.New("server: module")

// Module is one module of a Server: a global scope with its own BPL
// interpreter and its own kafkabpl.Library, so that stopping or destroying
// it kills its executors and destroys its Kafka handles and nothing of
// another module's. Its methods are safe for concurrent use.
type Module struct {
	srv  *Server
	name string

	life sync.Mutex // serialises start, stop, init and load

	mu  sync.RWMutex // guards in and lib
	in  *bpl.Interp
	lib *kafkabpl.Library

	lmu      sync.Mutex
	watchers map[string]map[*session]struct{}
	remotes  map[string]*remoteMonitor // module-monitor's, by server/module

	peers peerNotify // module-notify told to the servers of its streams' groups (peer_notify.go)
}

// newModule makes a module with an empty scope.
func newModule(s *Server, name string) *Module {
	m := &Module{srv: s, name: name, watchers: map[string]map[*session]struct{}{}, remotes: map[string]*remoteMonitor{}}
	m.in, m.lib = m.runtime()
	m.ensureServers(m.in)
	return m
}

// runtime makes the module's interpreter and its first library, with
// the kafka and module functions defined.
func (m *Module) runtime() (*bpl.Interp, *kafkabpl.Library) {
	log := m.srv.logWriter(m.name)
	in := bpl.New(log)
	in.SetErrorOutput(log)
	for name, f := range m.functions() {
		in.Define(name, f)
	}
	return in, m.newLibrary(in)
}

// newLibrary makes a kafkabpl.Library and defines its functions in in.
func (m *Module) newLibrary(in *bpl.Interp) *kafkabpl.Library {
	lib := kafkabpl.New()
	if dir := m.srv.cfg.StateDir; dir != "" {
		stream.Of(lib).SetStateDir(filepath.Join(dir, m.name)) // a module's name is letters, digits and _
	}
	lib.SetLogOutput(m.srv.logWriter(m.name))
	if m.srv.cfg.OnLibrary != nil {
		m.srv.cfg.OnLibrary(m.name, lib)
	}
	for name, f := range functions.Table(lib) {
		in.Define(name, f)
	}
	m.routeStoreQueries(lib)
	return lib
}

// ensureServers sets kafka-servers (and schema-registry-url) when the
// server knows them: a module loaded from a snapshot made with other
// servers talks to this server's.
func (m *Module) ensureServers(in *bpl.Interp) {
	if m.srv.cfg.Servers != "" {
		in.SetGlobal(ServersVar, m.srv.cfg.Servers)
	}
	if m.srv.cfg.RegistryURL != "" {
		in.SetGlobal(RegistryVar, m.srv.cfg.RegistryURL)
	}
}

// Name returns the module's name.
func (m *Module) Name() string { return m.name }

// Interp returns the module's interpreter: the same for the module's
// life (stopping the module closes and reopens it).
func (m *Module) Interp() *bpl.Interp {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.in
}

// Library returns the module's current kafkabpl.Library: stopping the
// module closes it (destroying its handles) and makes a new one.
func (m *Module) Library() *kafkabpl.Library {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.lib
}

// Eval evaluates code in the module's scope, as POST /module does, capped
// at the server's MaxEvalTime (300 s by default) and ended sooner when ctx
// ends (an Interrupted exception). Executors it spawns run on until they
// end, are killed or the module stops. A Go panic becomes an InternalError
// exception. Errors are *bpl.Exception.
func (m *Module) Eval(ctx context.Context, code any) (any, error) {
	ctx, capped := evalContext(ctx, m.srv.cfg.MaxEvalTime)
	defer capped.release()
	return m.Interp().SafeEval(ctx, code)
}

// EvalText reads src (one or more BPL values) and evaluates each in turn as
// Eval does, giving the last value. A syntax error is a
// *value.SyntaxError.
func (m *Module) EvalText(ctx context.Context, src string) (any, error) {
	vs, err := value.Parse(src)
	if err != nil {
		return nil, err
	}
	var v any
	for _, x := range vs {
		if v, err = m.Eval(ctx, x); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// runVar evaluates the code a variable holds (start or stop), as
// brain4it's Module.start and stop do: start => (do (spawn (eval main)))
// runs that code. A function value is not called, since brain4it
// evaluates a function to itself and a module must behave the same on
// both servers; as that is an easy mistake, it is logged.
func (m *Module) runVar(ctx context.Context, name string) error {
	in := m.Interp()
	code, _ := in.Global(name)
	if code == nil {
		return nil
	}
	if _, ok := code.(value.Callable); ok {
		m.srv.logf("module %s: %s holds a function, which is not called (brain4it's server does not call it either): write the code itself, as in (set %s (quote (do ...)))", m.name, name, name)
	}
	ectx, capped := evalContext(ctx, startStopTime)
	defer capped.release()
	kind := EvalStart
	if name == StopVar {
		kind = EvalStop
	}
	start := time.Now()
	_, err := in.SafeEval(ectx, code)
	m.srv.evaluated(m.name, kind, start, err)
	if err != nil {
		return &phaseError{module: m.name, phase: name, err: err, timedOut: timedOut(ectx, ctx)}
	}
	return nil
}

// Start evaluates the module's start code (bounded by 60 s, as
// brain4it's); the executors it spawns go on. The error says the start
// failed.
func (m *Module) Start(ctx context.Context) error {
	m.life.Lock()
	defer m.life.Unlock()
	return m.runVar(ctx, StartVar)
}

// Stop stops the module as brain4it's does: it ends the module's own
// monitors of other modules (module-monitor), evaluates its stop code
// (bounded by 60 s), then kills every executor and timer task and destroys every
// Kafka handle the module made, whatever the stop code did. The scope
// stays: the module can be started again. It must not be called from code
// running on the module (module-stop does that safely).
func (m *Module) Stop(ctx context.Context) error {
	m.life.Lock()
	defer m.life.Unlock()
	return m.stopLocked(ctx)
}

func (m *Module) stopLocked(ctx context.Context) error {
	m.closeRemotes()
	err := m.runVar(ctx, StopVar)
	in, lib := m.Interp(), m.Library()
	in.Close()
	cerr := lib.Close(context.WithoutCancel(ctx))
	in.Reopen()
	nlib := m.newLibrary(in)
	m.mu.Lock()
	m.lib = nlib
	m.mu.Unlock()
	switch {
	case err != nil:
		return err
	case cerr != nil:
		return fmt.Errorf("module %s: destroying its Kafka handles: %w", m.name, cerr)
	}
	return nil
}

// Init replaces the module's scope with scope (nil empties it), as PUT
// /module with a list does; the module keeps scope. kafka-servers is set
// again when the server knows its servers (Config.Servers).
func (m *Module) Init(scope *value.List) {
	in := m.Interp()
	if scope != nil {
		makeFunctions(in, scope, map[*value.List]bool{})
	}
	in.ReplaceScope(scope)
	m.ensureServers(in)
}

// makeFunctions replaces, within l, each list (function (params) body...)
// by the function value it defines: read from a snapshot or a request
// body, a function is such a list, which brain4it calls as it is and this
// evaluator must evaluate first.
func makeFunctions(in *bpl.Interp, l *value.List, seen map[*value.List]bool) {
	if seen[l] {
		return
	}
	seen[l] = true
	for i, v := range l.Values() {
		sub, ok := v.(*value.List)
		if !ok {
			continue
		}
		if fv, ok := functionValue(in, sub); ok {
			l.Set(i, fv)
			continue
		}
		makeFunctions(in, sub, seen)
	}
}

// functionValue evaluates a list (function (params) body...).
func functionValue(in *bpl.Interp, l *value.List) (any, bool) {
	if l.Len() < 2 || l.At(0) != value.Reference("function") {
		return nil, false
	}
	if _, ok := l.At(1).(*value.List); !ok {
		return nil, false
	}
	fv, err := in.SafeEval(context.Background(), l)
	if _, ok := fv.(value.Callable); !ok || err != nil {
		return nil, false
	}
	return fv, true
}

// importValue is a value from a request body, with its functions made.
func (m *Module) importValue(v any) any {
	l, ok := v.(*value.List)
	if !ok {
		return v
	}
	in := m.Interp()
	if fv, ok := functionValue(in, l); ok {
		return fv
	}
	makeFunctions(in, l, map[*value.List]bool{})
	return l
}

// Save writes the module's scope as the snapshot name ("" is head, the one
// loaded at start). With backup, a snapshot of that name already there is
// renamed NAME_yyyyMMddHHmmss first, as brain4it's module-save does.
func (m *Module) Save(ctx context.Context, name string, backup bool) error {
	if name == "" {
		name = headSnapshot
	}
	if !validSnapshotName(m.name, name) {
		return invalidSnapshot(m.name, name)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	text, err := m.Interp().FormatScope(ctx)
	if err != nil {
		return fmt.Errorf("module %s: saving snapshot %s: %w", m.name, name, err)
	}
	st := m.srv.cfg.Store
	if backup {
		if snaps, err := st.List(m.name, name); err == nil && len(snaps) == 1 {
			to := name + "_" + snaps[0].LastModified.Format("20060102150405")
			if err := st.Rename(m.name, name, to); err != nil {
				return fmt.Errorf("module %s: backing up snapshot %s: %w", m.name, name, err)
			}
		}
	}
	return st.Write(m.name, name, []byte(text))
}

// Load replaces the module's scope with the snapshot name ("" is head).
// It does not stop or start the module.
func (m *Module) Load(name string) error {
	if name == "" {
		name = headSnapshot
	}
	if !validSnapshotName(m.name, name) {
		return invalidSnapshot(m.name, name)
	}
	b, err := m.srv.cfg.Store.Read(m.name, name)
	if err != nil {
		return err
	}
	vs, err := value.Parse(string(b))
	if err != nil {
		return fmt.Errorf("module %s: snapshot %s: %w", m.name, name, err)
	}
	var scope *value.List
	if len(vs) == 1 {
		scope, _ = vs[0].(*value.List)
	}
	if scope == nil && !(len(vs) == 1 && vs[0] == nil) {
		return fmt.Errorf("module %s: snapshot %s does not hold one list", m.name, name)
	}
	m.Init(scope)
	return nil
}

// Notify tells the monitors watching the exterior functions fns that their
// values may have changed, so they evaluate them at once (module-notify).
// It returns how many watchers were told.
func (m *Module) Notify(fns ...string) int {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	n := 0
	for _, fn := range fns {
		for s := range m.watchers[fn] {
			s.queue.add(fn)
			n++
		}
	}
	return n
}

// watch registers a monitor session for fns; unwatch drops it.
func (m *Module) watch(s *session, fns []string) {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	for _, fn := range fns {
		if m.watchers[fn] == nil {
			m.watchers[fn] = map[*session]struct{}{}
		}
		m.watchers[fn][s] = struct{}{}
	}
}

func (m *Module) unwatch(s *session, fns []string) {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	for _, fn := range fns {
		delete(m.watchers[fn], s)
		if len(m.watchers[fn]) == 0 {
			delete(m.watchers, fn)
		}
	}
}

// requestContext is brain4it's ctx list of an exterior function call;
// headers nil leaves request-headers null, as brain4it's remote-call
// does when its setup has none.
func requestContext(remoteAddr string, remotePort int64, headers *value.List) *value.List {
	var h any
	if headers != nil {
		h = headers
	}
	// brain4it's order (its REQUEST_CONTEXT_STRUCTURE), and
	// response-headers null, as its getContextList leaves it: a function
	// sets the whole list, (set ctx/response-headers ("content-type" =>
	// "application/json")), as brain4it's own modules do
	return (&value.List{}).
		AppendNamed("remote-address", remoteAddr).
		AppendNamed("remote-port", remotePort).
		AppendNamed("request-headers", h).
		AppendNamed("response-headers", nil)
}

// ErrNotExterior is wrapped by CallExterior's error when the path names no
// function value whose name (or that of a list on its way) starts with @.
var ErrNotExterior = errors.New("server: not an exterior function")

// CallExterior calls the exterior function fnPath names (such as @temp or
// fns/@get) as brain4it does: (call fn ctx data), where ctx is the request
// context list (request-headers, response-headers, remote-address,
// remote-port) and data is left out when nil. It is capped at
// MaxEvalTime. The error wraps ErrNotExterior when fnPath names no
// function, else it is a *bpl.Exception.
func (m *Module) CallExterior(ctx context.Context, fnPath string, reqCtx *value.List, data any) (any, error) {
	return m.callExterior(ctx, fnPath, nil, reqCtx, data)
}

// callExterior is CallExterior with fnPath already read by ParsePath into
// parts, as SplitPath reads a request's path (nil: read it here). parts
// are used only when fnPath does not start with /, which CallExterior
// trims before reading it.
func (m *Module) callExterior(ctx context.Context, fnPath string, parts []any, reqCtx *value.List, data any) (any, error) {
	if parts == nil || strings.HasPrefix(fnPath, "/") {
		var err error
		if parts, err = ParsePath(strings.TrimPrefix(fnPath, "/")); err != nil {
			return nil, fmt.Errorf("%w: %s", ErrNotExterior, fnPath)
		}
	}
	if !exterior(parts) {
		return nil, fmt.Errorf("%w: %s", ErrNotExterior, fnPath)
	}
	in := m.Interp()
	ctx, capped := evalContext(ctx, m.srv.cfg.MaxEvalTime)
	defer capped.release()
	v, err := in.GetPath(ctx, parts)
	if err != nil {
		return nil, err
	}
	if l, ok := v.(*value.List); ok {
		// (function ...) written inside a data list, as brain4it's
		// scopes hold them: brain4it calls it as it is
		if fv, ok := functionValue(in, l); ok {
			v = fv
		}
	}
	fn, ok := v.(*bpl.Function)
	if !ok || fn == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotExterior, fnPath)
	}
	args := value.NewList(reqCtx)
	if data != nil {
		args.Append(data)
	}
	return bpl.SafeCall(ctx, fn, args)
}

// logWriter writes a module's output lines with its name first.
type logWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
}

func (l logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if line == "" {
			continue
		}
		if _, err := io.WriteString(l.w, l.prefix+line); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
