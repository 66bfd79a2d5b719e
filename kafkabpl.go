package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

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

	logMu  sync.Mutex
	logOut io.Writer
}

// New returns an empty Library. Close it to destroy what is left in it.
// Its log goes to standard error (see [Library.SetLogOutput]).
func New() *Library {
	return &Library{handles: make(map[string]*handle), logOut: os.Stderr}
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

// Create makes a producer, consumer or admin client from a BPL-style config
// and returns its handle id: "p", "c" or "a" followed by 32 hex digits.
//
// config is a server string ("localhost:9092", or several joined by
// commas), a list of server strings, or a named list of config keys (a *value.List
// or a map[string]any); the package documentation lists the keys and their
// defaults. Creating a client dials nothing, with one exception: a consumer
// whose config names "topics" subscribes at once (see [Library.Subscribe]),
// which asks the brokers for the topics' end offsets.
func (lib *Library) Create(ctx context.Context, kind Kind, config any) (string, error) {
	return lib.create(ctx, "kafka-create", kind, config, nil, kafkaDialect)
}

// create makes a handle for BPL function fn; extra holds config keys
// given as named arguments, read in dialect d.
func (lib *Library) create(ctx context.Context, fn string, kind Kind, config any, extra *value.List, d dialect) (string, error) {
	if kind != Producer && kind != Consumer && kind != Admin {
		return "", newError(fn, errorf(ErrInvalidArgument, "kind %q: want \"producer\", \"consumer\" or \"admin\"", string(kind)))
	}
	cfg, err := parseConfigAs(d, config, extra, func(msg string) { lib.log(fn, "warning: "+msg) })
	if err != nil {
		return "", newError(fn, err)
	}
	cfg.clientLog = lib.clientLog
	h, err := newHandle(kind, cfg)
	if err != nil {
		return "", newError(fn, err)
	}
	if kind == Consumer && len(cfg.topics) > 0 {
		if _, err := h.cons.subscribe(ctx, cfg.topics, false); err != nil {
			h.close(ctx)
			return "", newError(fn, err)
		}
	}
	if !lib.add(h) {
		h.close(ctx)
		return "", newError(fn, errorf(ErrClosed, "library closed"))
	}
	return h.id, nil
}

// newHandle makes the client of a handle of kind from cfg. It dials
// nothing.
func newHandle(kind Kind, cfg *config) (*handle, error) {
	h := &handle{id: newID(kind), kind: kind, cfg: cfg, net: &reachability{servers: joinServers(cfg.servers)}}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	opts := cfg.kgoOpts(kind, h.id, h.net)
	if kind == Consumer {
		h.cons = newConsumerState(h)
		h.net.epochAnswered = h.cons.rv.epochAnswered
		opts = append(opts, h.cons.groupOpts()...)
	}
	var err error
	if h.cl, err = kgo.NewClient(opts...); err != nil {
		h.cancel()
		return nil, wrapf(ErrInvalidConfig, err, "config")
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
func (lib *Library) Destroy(ctx context.Context, id string) (bool, error) {
	return lib.destroy(ctx, "kafka-destroy", id)
}

// destroy is Destroy, its error worded for BPL function fn.
func (lib *Library) destroy(ctx context.Context, fn, id string) (bool, error) {
	h := lib.remove(id)
	if h == nil {
		return false, nil
	}
	if err := h.close(ctx); err != nil {
		return true, newError(fn, err)
	}
	return true, nil
}

// Close destroys every handle left and makes later calls fail with
// [ErrClosed]. It returns the errors of the destroys that failed.
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
				errs = append(errs, newError("kafka-destroy", fmt.Errorf("%s %q: %w", h.kind, h.id, err)))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
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
			// It left the group, but kgo holds the client until the
			// rebalance it was in is over: close it then.
			go h.cl.Close()
			return err
		}
	case Stream:
		if err = h.stream.stop(ctx); h.stream.detached {
			go h.cl.Close()
			return err
		}
	}
	h.net.dialer.close()
	h.cl.Close()
	return err
}
