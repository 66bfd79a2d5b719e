package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/value"
)

// Defaults of Config.
const (
	DefaultMaxBody      = 16 << 20          // bytes of a request body
	DefaultMaxEvalTime  = 300 * time.Second // brain4it's RestService.maxWaitTime
	DefaultPingInterval = 30 * time.Second  // brain4it's MonitorService.pingTime
	monitorEvalTime     = 10 * time.Second  // brain4it's MonitorService.maxWaitTime
)

// ErrShutdown is wrapped by the errors of requests made once the server is
// shutting down.
var ErrShutdown = errors.New("server: shutting down")

// Config configures a Server. The zero Config is a server without access
// key that keeps its modules in memory only.
type Config struct {
	// AccessKey is the server's access key: with it, any request may do
	// anything; without it, only what brain4it allows. "" means none:
	// every request is allowed, so expose such a server on loopback only.
	AccessKey string
	// Store keeps the modules' snapshots; nil keeps them in memory
	// (a new MemStore), lost when the process ends.
	Store Store
	// Servers, when not "", is set as kafka-servers in every module
	// when it is created or loaded, or its scope replaced (replacing the
	// value a snapshot holds).
	Servers string
	// RegistryURL, when not "", is set as schema-registry-url in every
	// module, as Servers is: the schema registry the Avro, Protobuf and
	// JSON Schema serdes use.
	RegistryURL string
	// Log receives the server's log and what modules print, a line each
	// with the module's name first; nil discards it.
	Log io.Writer
	// MaxBody bounds a request body in bytes; 0 means DefaultMaxBody
	// (16 MiB). A longer body is refused with 413.
	MaxBody int64
	// MaxEvalTime caps a POST evaluation and an exterior call; 0 means
	// DefaultMaxEvalTime (300 s).
	MaxEvalTime time.Duration
	// PingInterval is how long a monitor stream stays silent before a
	// ping (an empty line); 0 means DefaultPingInterval (30 s).
	PingInterval time.Duration
	// StateDir, when set, keeps the modules' stateful streams' state on
	// disk, each module's under StateDir/MODULE (see package stream's
	// Runtime.SetStateDir); "" keeps it in memory.
	StateDir string

	// OnLibrary, when set, is called with each kafkabpl.Library the
	// server makes for a module, before the module's code runs (when the
	// module is made or loaded, and when its scope is replaced): how
	// kafkabpl serve --metrics counts the modules' clients and streams.
	OnLibrary func(module string, lib *kafkabpl.Library)
	// URL, when not "", is where other processes reach this server, such
	// as "http://127.0.0.1:9999": each module's stateful streams advertise
	// URL/MODULE as their query endpoint (kafkabpl.Library's
	// SetQueryEndpoint), so that another server running the module in the
	// same group forwards them the store queries of the keys they hold
	// (see store_query.go). "" advertises none.
	URL string
	// Observer, when set, is told of every request, evaluation and
	// monitor stream: how kafkabpl serve --metrics counts them per
	// module (see Observer).
	Observer Observer
}

// Server is a brain4it server: its modules and the HTTP handler of
// brain4it's protocol (ServeHTTP). Make it with New, load the saved
// modules with Start, and end it with Shutdown, which saves them.
type Server struct {
	cfg   Config
	logMu sync.Mutex

	mu       sync.RWMutex
	modules  map[string]*Module
	closing  bool
	done     chan struct{} // closed by CloseMonitors: ends monitor streams
	monOnce  sync.Once
	sessions sync.Map     // monitor session id -> *session
	forwards *http.Client // forwards store queries (store_query.go)
}

// New returns a server with no modules.
func New(cfg Config) *Server {
	if cfg.Store == nil {
		cfg.Store = &MemStore{}
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxEvalTime <= 0 {
		cfg.MaxEvalTime = DefaultMaxEvalTime
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	return &Server{cfg: cfg, modules: map[string]*Module{}, done: make(chan struct{}), forwards: newForwardClient()}
}

// logWriter is the writer of a module's (or the server's) log lines.
func (s *Server) logWriter(name string) io.Writer {
	return logWriter{mu: &s.logMu, w: s.cfg.Log, prefix: name + ": "}
}

func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.logWriter("serve"), format+"\n", args...)
}

// Start loads every module the store holds from its head snapshot and runs
// its start code, as brain4it's server does when it starts. A module that
// does not load is logged and left out; one whose start fails is logged
// and kept. The error is the store's, when it cannot list its modules.
func (s *Server) Start(ctx context.Context) error {
	names, err := s.cfg.Store.Modules()
	if err != nil {
		return err
	}
	for _, name := range names {
		m := newModule(s, name)
		if err := m.Load(""); err != nil {
			s.logf("module %s: load failed: %v", name, err)
			continue
		}
		s.mu.Lock()
		s.modules[name] = m
		s.mu.Unlock()
		s.logf("module %s loaded", name)
		if err := m.Start(ctx); err != nil {
			s.logf("%v", err)
		}
	}
	return nil
}

// Shutdown ends every monitor stream, then stops every module (its stop
// code, executors and Kafka handles) and saves its head snapshot, as
// brain4it's does on a clean shutdown. ctx bounds the stop code (which
// is interrupted once it ends), not the saving. Modules created afterwards
// fail with ErrShutdown. It returns the errors joined.
func (s *Server) Shutdown(ctx context.Context) error {
	s.CloseMonitors()
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	mods := s.sortedLocked()
	s.mu.Unlock()
	var errs []error
	for _, m := range mods {
		if err := m.Stop(ctx); err != nil {
			s.logf("%v", err)
			errs = append(errs, err)
		}
		// saved even when ctx has ended: a stop that took too long
		// must not lose the module
		if err := m.Save(context.WithoutCancel(ctx), "", false); err != nil {
			s.logf("module %s: save failed: %v", m.name, err)
			errs = append(errs, err)
		} else {
			s.logf("module %s saved", m.name)
		}
	}
	return errors.Join(errs...)
}

// CloseMonitors ends every monitor stream, and any started later at once.
// A program calls it before http.Server.Shutdown, which would otherwise
// wait for the streams, and then Shutdown, once the requests in flight
// are done, so that what they did is saved. Shutdown calls it too.
func (s *Server) CloseMonitors() {
	s.monOnce.Do(func() { close(s.done) })
}

// Module returns the module named name, or nil.
func (s *Server) Module(name string) *Module {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.modules[name]
}

// Modules returns the modules sorted by name.
func (s *Server) Modules() []*Module {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sortedLocked()
}

func (s *Server) sortedLocked() []*Module {
	ms := make([]*Module, 0, len(s.modules))
	for _, m := range s.modules {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
	return ms
}

// CreateModule creates a module named name (letters, digits and _) with
// scope (nil: empty) and saves its head snapshot. The error wraps
// ErrModule when the name is invalid or taken, ErrShutdown after Shutdown.
func (s *Server) CreateModule(ctx context.Context, name string, scope *value.List) (*Module, error) {
	if !validModuleName(name) {
		return nil, moduleError("IOException", "Invalid module name: "+name)
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil, ErrShutdown
	}
	if s.modules[name] != nil {
		s.mu.Unlock()
		return nil, moduleError("IOException", "Module "+name+" already exists")
	}
	m := newModule(s, name)
	s.modules[name] = m
	s.mu.Unlock()
	if scope != nil {
		m.Init(scope)
	}
	if err := m.Save(ctx, "", false); err != nil {
		s.logf("module %s: creation saved nothing: %v", name, err)
	}
	s.logf("module %s created", name)
	return m, nil
}

// DestroyModule stops the module named name (see Module.Stop), removes it
// and deletes its snapshots. The error wraps ErrModule when there is none.
func (s *Server) DestroyModule(ctx context.Context, name string) error {
	s.mu.Lock()
	m := s.modules[name]
	delete(s.modules, name)
	s.mu.Unlock()
	if m == nil {
		return moduleError("IOException", "Module does not exist: "+name)
	}
	if err := m.Stop(ctx); err != nil {
		s.logf("%v", err)
	}
	s.logf("module %s destroyed", name)
	return s.cfg.Store.DeleteModule(name)
}

// getModule is Module with brain4it's error when there is none.
func (s *Server) getModule(name string) (*Module, error) {
	if m := s.Module(name); m != nil {
		return m, nil
	}
	if name == "" {
		name = "null" // a monitor at the root: Java's string of no name
	}
	return nil, moduleError("IOException", "Module "+name+" not found.")
}
