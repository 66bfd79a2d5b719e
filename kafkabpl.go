package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Library holds the live handles of one BPL runtime (or one Go program).
// Handles are strings, so scripts can keep them in variables; every method
// takes the id and checks its kind. A Library and every handle in it are
// safe for concurrent use. The zero Library is not usable; call [New].
type Library struct {
	mu      sync.RWMutex
	handles map[string]*handle
	closed  bool
	bg      background // what outlives the calls that started it; Close waits for it

	logMu  sync.Mutex
	logOut io.Writer

	hooks atomic.Pointer[ClientHooks] // nil: none
	dial  atomic.Pointer[Dialer]      // nil: the default

	attached sync.Map // packages' per-Library values (see Attached)
}

// ClientHooks gives the franz-go hooks of a client the Library makes, for
// the kind and id of its handle (see [Library.SetClientHooks]).
type ClientHooks func(kind Kind, id string) []kgo.Hook

// New returns an empty Library. Close it to destroy what is left in it.
// Its log goes to standard error (see [Library.SetLogOutput]).
func New() *Library {
	return &Library{handles: make(map[string]*handle), logOut: os.Stderr}
}

// background follows the work a Library does on goroutines of its own
// that can outlive the call that started it, such as the close of a client
// whose group still rebalances, so that [Library.Close] can wait for it.
// Its zero value is ready to use.
type background struct {
	mu      sync.Mutex
	running map[string]int // what runs, as Close's error names it
	idle    chan struct{}  // closed when nothing runs any more
}

// Go runs f on a goroutine of its own, as what, until f returns.
func (b *background) Go(what string, f func()) {
	b.start(what)
	go func() {
		defer b.end(what)
		f()
	}()
}

// start counts what as running, until end(what).
func (b *background) start(what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.running) == 0 {
		b.running = map[string]int{}
		b.idle = make(chan struct{})
	}
	b.running[what]++
}

func (b *background) end(what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running[what]--; b.running[what] == 0 {
		delete(b.running, what)
	}
	if len(b.running) == 0 {
		close(b.idle)
	}
}

// wait returns once nothing runs, or when ctx ends: then with an error
// wrapping ctx's that names what still runs.
func (b *background) wait(ctx context.Context) error {
	for {
		b.mu.Lock()
		idle, n := b.idle, len(b.running)
		b.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-idle: // something may have started since: look again
		case <-ctx.Done():
			b.mu.Lock()
			defer b.mu.Unlock()
			if len(b.running) == 0 {
				return nil
			}
			return fmt.Errorf("gave up waiting for %s: %w", strings.Join(slices.Sorted(maps.Keys(b.running)), "; "), ctx.Err())
		}
	}
}

// SetLogOutput sets where the library writes what a user running scripts
// should see without asking, one line each, starting with the function's
// name: warnings from brain4it's functions kafka-producer and
// kafka-consumer about a config key they ignore, streams starting,
// failing and stopping, and the clients' own log when their config sets
// "log-level" (lines starting "kafka-client: HANDLE"). The default is
// standard error; nil discards it.
func (lib *Library) SetLogOutput(w io.Writer) {
	lib.logMu.Lock()
	defer lib.logMu.Unlock()
	lib.logOut = w
}

// SetClientHooks sets fn, which gives the franz-go hooks (kgo.Hook) of
// every client the Library makes from then on, for the kind and id of
// its handle: package metrics counts what the clients send and receive
// so. Clients made before keep what they had; nil removes fn. Hazard:
// kgo calls hooks on its own goroutines, some once per record: they must
// be safe for concurrent use, and quick.
func (lib *Library) SetClientHooks(fn ClientHooks) {
	if fn == nil {
		lib.hooks.Store(nil)
		return
	}
	lib.hooks.Store(&fn)
}

// Dialer makes a connection, as net.Dialer's DialContext does.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// SetDialer makes every client the Library makes from then on connect to
// the brokers with dial (TLS, when configured, goes over its
// connections). nil restores the default, a net.Dialer. It is for
// networks of one's own: a proxy, or an in-memory network such as
// package streamtest's, where a test runs in virtual time. Clients made
// before keep what they had.
func (lib *Library) SetDialer(dial Dialer) {
	if dial == nil {
		lib.dial.Store(nil)
		return
	}
	lib.dial.Store(&dial)
}

// dialer returns the dialer SetDialer set, or nil.
func (lib *Library) dialer() Dialer {
	if d := lib.dial.Load(); d != nil {
		return *d
	}
	return nil
}

// clientHooks returns the hooks SetClientHooks set, or nil.
func (lib *Library) clientHooks() ClientHooks {
	if fn := lib.hooks.Load(); fn != nil {
		return *fn
	}
	return nil
}

// log writes one line for BPL function fn.
func (lib *Library) log(fn, msg string) {
	lib.logMu.Lock()
	defer lib.logMu.Unlock()
	if lib.logOut != nil {
		fmt.Fprintf(lib.logOut, "%s: %s\n", fn, msg)
	}
}

// clientLog writes a line of a client's own log (config "log-level").
func (lib *Library) clientLog(line string) { lib.log("kafka-client", line) }

// Func is [value.Func], a BPL function as a runtime registers it.
type Func = value.Func

// Callable is [value.Callable], a BPL function value a runtime hands over.
type Callable = value.Callable

// List is [value.List], the BPL list.
type List = value.List

// Create makes a producer, consumer, share consumer ([ShareConsumer]) or
// admin client from a BPL-style config and returns its handle id: "p",
// "c" (a consumer's and a share consumer's) or "a" followed by 32 hex
// digits.
//
// config is a server string ("localhost:9092", or several joined by
// commas), a list of server strings, or a named list of config keys (a *value.List
// or a map[string]any); the package documentation lists the keys and their
// defaults. Creating a client dials nothing, with two exceptions: a
// consumer whose config names "topics" subscribes at once (see
// [Library.Subscribe]), which asks the brokers for the topics' end
// offsets; and a share consumer whose config gives "auto-offset-reset"
// sets its group's share.auto.offset.reset (see [ShareConsumer]).
func (lib *Library) Create(ctx context.Context, kind Kind, config any) (string, error) {
	fn := "kafka-create"
	if c, ok := config.(Config); ok && c.Brain4it {
		fn = "kafka-" + string(kind) // brain4it's kafka-producer or kafka-consumer
	}
	if kind != Producer && kind != Consumer && kind != ShareConsumer && kind != Admin {
		return "", NewError(fn, Errorf(ErrInvalidArgument, "kind %q: want \"producer\", \"consumer\", \"share-consumer\" or \"admin\"", string(kind)))
	}
	cfg, err := parseConfigAs(kafkaDialect, config, nil, func(msg string) { lib.log(fn, "warning: "+msg) })
	if err == nil && kind == ShareConsumer {
		err = checkShareConfig(cfg)
	}
	if err != nil {
		return "", NewError(fn, err)
	}
	cfg.clientLog, cfg.hooks, cfg.dial = lib.clientLog, lib.clientHooks(), lib.dialer()
	h, err := newHandle(kind, cfg)
	if err != nil {
		return "", NewError(fn, err)
	}
	h.bg = &lib.bg
	if kind == Consumer && len(cfg.topics) > 0 {
		if _, err := h.cons.subscribe(ctx, cfg.topics, false); err != nil {
			h.close(ctx)
			return "", NewError(fn, err)
		}
	}
	if kind == ShareConsumer {
		if err := h.share.start(ctx); err != nil {
			h.close(ctx)
			return "", NewError(fn, err)
		}
	}
	if !lib.add(h) {
		h.close(ctx)
		return "", NewError(fn, Errorf(ErrClosed, "library closed"))
	}
	return h.id, nil
}

// newHandle makes the client of a handle of kind from cfg. It dials
// nothing.
func newHandle(kind Kind, cfg *config) (*handle, error) {
	h := &handle{id: newID(kind), kind: kind, cfg: cfg, net: &reachability{servers: joinServers(cfg.servers)}}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	if kind == Consumer {
		h.group = newGroupStats(kind, cfg)
	}
	opts := cfg.kgoOpts(kind, h.id, h.net, h.group)
	if kind == Consumer {
		h.cons = newConsumerState(h)
		h.net.epochAnswered = h.cons.rv.epochAnswered
		opts = append(opts, h.cons.groupOpts()...)
	}
	if kind == ShareConsumer {
		h.share = newShareState(h)
		opts = append(opts, h.share.opts()...)
	}
	var err error
	opts, h.stopClient = stoppable(opts)
	if h.cl, err = kgo.NewClient(opts...); err != nil {
		h.cancel()
		h.stopClient()
		return nil, Wrapf(ErrInvalidConfig, err, "config")
	}
	h.net.dialer.setClient(h.cl)
	h.adm = kadm.NewClient(h.cl)
	return h, nil
}

// Destroy closes a handle: a producer first delivers what it has buffered
// (nothing sent is lost), a consumer commits what it polled when auto-commit
// is on, leaves its group and closes. It returns false, and no error, when
// id names no live handle. Polls in flight on the handle return at once;
// sends and commits in flight finish first. Any later use of the id fails
// with [ErrUnknownHandle].
//
// A consumer or stream destroyed while its group rebalances has left the
// group when Destroy returns, but franz-go would hold its client until the
// brokers answer the join it has in flight, which they may do only when
// the rebalance is over: the client's requests are then ended, and its
// close finishes in the background, at once; [Library.Close] waits for
// it.
func (lib *Library) Destroy(ctx context.Context, id string) (bool, error) {
	h := lib.remove(id)
	if h == nil {
		return false, nil
	}
	defer lib.bg.end(destroying(h))
	if err := h.close(ctx); err != nil {
		return true, NewError("kafka-destroy", err)
	}
	return true, nil
}

// destroying is what a destroy in flight is, as background work: Close
// waits for it, as for what it leaves running.
func destroying(h *handle) string { return fmt.Sprintf("the destroy of %s %s", h.kind, h.id) }

// Close destroys every handle left and makes later calls fail with
// [ErrClosed]. It returns the errors of the destroys that failed.
//
// It returns once the destroys, those in flight included, and every
// goroutine the library started are done; or once ctx ends, then with an
// error that wraps ctx's and names what still runs (calling Close again
// waits for it again).
func (lib *Library) Close(ctx context.Context) error {
	lib.mu.Lock()
	lib.closed = true
	hs := lib.handles
	lib.handles = map[string]*handle{}
	lib.mu.Unlock()

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, h := range hs {
		wg.Go(func() {
			if err := h.close(ctx); err != nil {
				mu.Lock()
				errs = append(errs, NewError("kafka-destroy", fmt.Errorf("%s %q: %w", h.kind, h.id, err)))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := lib.bg.wait(ctx); err != nil {
		errs = append(errs, NewError("kafka-destroy", err))
	}
	return errors.Join(errs...)
}

// close stops h once it is out of the registry: it cancels polls in flight,
// waits for the other calls in flight, then flushes or commits and closes
// the client.
func (h *handle) close(ctx context.Context) error {
	h.cancel()
	h.calls.Wait()
	defer h.cfg.reg.Close()
	var err error
	switch h.kind {
	case Producer:
		err = h.flush(ctx)
	case Consumer:
		var detached bool
		if detached, err = h.cons.leave(ctx); detached {
			h.closeDetached(h.cl, h.stopClient)
			return err
		}
	case ShareConsumer:
		err = h.share.leave(ctx)
	}
	if h.ext != nil {
		var detached bool
		if detached, err = h.ext.Stop(ctx); detached {
			h.closeDetached(h.cl, h.stopClient)
			return err
		}
	}
	h.net.dialer.close()
	h.cl.Close()
	h.stopClient()
	return err
}
