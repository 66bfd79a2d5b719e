package kafkabpl

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl/serde"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The seam for packages built over the Library, as kadm is built over
// kgo: package stream makes its streams' handles with what this file
// exports. A script or a Go program that uses the clients needs none of
// it.

// ClientConfig is a config as the Library reads it ([Library.Create]'s
// rules and keys), for a package that makes clients of its own.
type ClientConfig struct{ c *config }

// ParseConfig reads config as [Library.Create] does (a server string, a
// list of them, a named list of keys, or a [Config]) and returns it with
// the Library's log, client hooks and dialer attached. fn names the
// function in its errors.
func (lib *Library) ParseConfig(fn string, config any) (*ClientConfig, error) {
	cfg, err := parseConfig(config)
	if err != nil {
		return nil, NewError(fn, err)
	}
	cfg.clientLog, cfg.hooks, cfg.dial = lib.clientLog, lib.clientHooks(), lib.dialer()
	return &ClientConfig{cfg}, nil
}

// Given reports whether the config gave key (its canonical name, such as
// "group" or "max-poll-records"), rather than leaving its default.
func (c *ClientConfig) Given(key string) bool { return c.c.given[key] }

// Group is the config's "group"; a random name of its own when not given.
func (c *ClientConfig) Group() string { return c.c.group }

// Servers are the config's bootstrap servers, joined by commas.
func (c *ClientConfig) Servers() string { return joinServers(c.c.servers) }

// RequestTimeout is the config's "request-timeout".
func (c *ClientConfig) RequestTimeout() time.Duration { return c.c.requestTimeout }

// TransactionTimeout is the config's "transaction-timeout".
func (c *ClientConfig) TransactionTimeout() time.Duration { return c.c.transactionTimeout }

// MaxPollRecords is the config's "max-poll-records".
func (c *ClientConfig) MaxPollRecords() int { return c.c.maxPollRecords }

// ServerAssigns reports whether the config's "group-protocol" is
// "consumer" (KIP-848): the brokers assign partitions, and the client's
// balancers are not used.
func (c *ClientConfig) ServerAssigns() bool { return c.c.serverAssigns }

// Balancers are the config's "assignment-strategy".
func (c *ClientConfig) Balancers() []kgo.GroupBalancer { return c.c.balancers }

// Transactional reports whether the config allows transactions: "acks"
// "all" and "idempotence" on (the defaults).
func (c *ClientConfig) Transactional() bool {
	return c.c.acks == kgo.AllISRAcks() && c.c.idempotence
}

// KeySerializer and the two below are the config's serdes.
func (c *ClientConfig) KeySerializer() *serde.Serde { return c.c.keySer }

// ValueSerializer is the config's "value-serializer".
func (c *ClientConfig) ValueSerializer() *serde.Serde { return c.c.valSer }

// ValueDeserializer is the config's "value-deserializer".
func (c *ClientConfig) ValueDeserializer() *serde.Serde { return c.c.valDeser }

// ManualPartitioner reports whether the config's "partitioner" is
// "manual": a record without a partition cannot be sent.
func (c *ClientConfig) ManualPartitioner() bool { return c.c.partitioner.manual() }

// QueryEndpoint is the config's "query-endpoint" ("" when not given).
func (c *ClientConfig) QueryEndpoint() string { return c.c.queryEndpoint }

// SetQueryEndpoint replaces the config's "query-endpoint".
func (c *ClientConfig) SetQueryEndpoint(endpoint string) { c.c.queryEndpoint = endpoint }

// MaxTaskIdle is the config's "max-task-idle": how long a stateful
// stream's store partition holds its inputs' records while a
// co-partitioned input has none fetched (default 0: not at all).
func (c *ClientConfig) MaxTaskIdle() time.Duration { return c.c.maxTaskIdle }

// QueryForwardTimeout is the config's "query-forward-timeout": how long
// a store query forwarded to the process that holds its key waits for
// the answer (default 5 s).
func (c *ClientConfig) QueryForwardTimeout() time.Duration { return c.c.queryForward }

// CheckQueryEndpoint checks a stream's query endpoint, as config
// "query-endpoint" is checked: an http or https URL with a host.
func CheckQueryEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Errorf(ErrInvalidConfig, `config "query-endpoint": want an http or https URL with a host, such as "http://127.0.0.1:9999/module", got %q`, endpoint)
	}
	return nil
}

// StateDir is the config's "state-dir" ("" when not given).
func (c *ClientConfig) StateDir() string { return c.c.stateDir }

// SetStateDir replaces the config's "state-dir".
func (c *ClientConfig) SetStateDir(dir string) { c.c.stateDir = dir }

// StateCleanupDelay is the config's "state-cleanup-delay": how long a
// partition's state on disk that this process no longer holds nor keeps
// a standby copy of stays there before it is deleted (10 minutes by
// default, as Kafka Streams' state.cleanup.delay.ms).
func (c *ClientConfig) StateCleanupDelay() time.Duration { return c.c.stateCleanup }

// StartEarliest makes a group with no committed offset start at the
// earliest, unless the config gave "auto-offset-reset".
func (c *ClientConfig) StartEarliest() {
	if !c.c.given["auto-offset-reset"] {
		c.c.autoOffsetReset = resetEarliest
	}
}

// PrepareSchemas asks the schema registry, within ctx, for the schemas
// recs were written with that the deserializers do not know yet, so that
// the [Record]s made of them decode without I/O. It fails with
// [ErrRegistryUnavailable] when the registry cannot answer.
func (c *ClientConfig) PrepareSchemas(ctx context.Context, recs []*kgo.Record) error {
	return c.c.prepareSchemas(ctx, recs)
}

// Record returns kr as a [Record] read with the config's deserializers.
// The Record refers to kr, which must not change.
func (c *ClientConfig) Record(kr *kgo.Record) Record { return Record{r: kr, cfg: c.c} }

// ClientOpts returns the options of a kgo client of kind, named id in the
// client's log, made from the config (servers, security, timeouts,
// retries, the Library's hooks and dialer) as the Library makes its own;
// for a client that is no handle's (a stream's table follower, say).
func (c *ClientConfig) ClientOpts(kind Kind, id string) []kgo.Opt {
	return c.c.kgoOpts(kind, id, &reachability{servers: joinServers(c.c.servers)}, nil)
}

// An Extension is the work behind a handle of a package built over the
// Library, such as a running stream: what destroying the handle stops.
type Extension interface {
	// Stop stops the work for a destroy of its handle, within ctx (as
	// [Library.Destroy]'s), before the handle's client is closed.
	// detached reports that the client left its group while a
	// rebalance held its join ([Handle.LeaveGroup]): the client is then
	// closed in the background, and [Library.Close] waits for it.
	Stop(ctx context.Context) (detached bool, err error)
}

// Handle is a handle of a Library as a package built over it sees it:
// an id, a config, and the kgo client the package makes for it. The
// Library counts its group's work (package metrics' lags, rebalances,
// commits) and words its request errors as for its own handles.
type Handle struct{ h *handle }

// NewHandle returns a handle of kind for cfg, with a fresh id, not yet
// registered (see [Library.Register]); it dials nothing. Its client is
// the package's to make, with [Handle.ClientOpts], and to set with
// [Handle.SetClient].
func (lib *Library) NewHandle(kind Kind, cfg *ClientConfig) *Handle {
	h := &handle{id: newID(kind), kind: kind, cfg: cfg.c, net: &reachability{servers: joinServers(cfg.c.servers)}}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.group = newGroupStats(kind, cfg.c)
	h.bg = &lib.bg
	h.stopClient = func() {}
	return &Handle{h}
}

// Register adds h to the Library, with ext, which its destroy stops: from
// then on [Library.Destroy], [Library.Close] and [Library.Acquire] know
// its id. It fails with [ErrClosed] once the Library is closed.
func (lib *Library) Register(h *Handle, ext Extension) error {
	h.h.ext = ext
	if !lib.add(h.h) {
		return Errorf(ErrClosed, "library closed")
	}
	return nil
}

// Acquire returns the live handle id of kind, counted as a call in
// flight until release: a destroy waits for it. It fails with
// [ErrUnknownHandle] or [ErrWrongKind].
func (lib *Library) Acquire(id string, kind Kind) (h *Handle, release func(), err error) {
	hh, err := lib.acquire(id, kind)
	if err != nil {
		return nil, nil, err
	}
	return &Handle{hh}, hh.calls.Done, nil
}

// Handles returns the extensions of the live handles of kind, in no
// order.
func (lib *Library) Handles(kind Kind) []Extension {
	lib.mu.RLock()
	defer lib.mu.RUnlock()
	var out []Extension
	for _, h := range lib.handles {
		if h.kind == kind && h.ext != nil {
			out = append(out, h.ext)
		}
	}
	return out
}

// Extension returns h's extension ([Library.Register]).
func (h *Handle) Extension() Extension { return h.h.ext }

// ID is the handle's id.
func (h *Handle) ID() string { return h.h.id }

// Config is the handle's config.
func (h *Handle) Config() *ClientConfig { return &ClientConfig{h.h.cfg} }

// ClientOpts returns the options of the handle's kgo client, as
// [ClientConfig.ClientOpts] gives them, with the Library's counting of
// the handle's connections and its group's fetches, and the group
// callbacks assigned, revoked and lost (nil: none), which the Library
// calls after noting the event for package metrics.
func (h *Handle) ClientOpts(assigned, revoked, lost func(context.Context, *kgo.Client, map[string][]int32)) []kgo.Opt {
	opts := h.h.cfg.kgoOpts(h.h.kind, h.h.id, h.h.net, h.h.group)
	return append(opts, h.h.group.rebalanceOpts(assigned, revoked, lost)...)
}

// SetClient makes cl the handle's client, and stop what ends the context
// it runs on (kgo.WithContext; [Handle.LeaveGroup] and the destroy end
// it). A handle's client may be replaced while the handle lives, as a
// stream's is when the brokers fenced its producer.
func (h *Handle) SetClient(cl *kgo.Client, stop context.CancelFunc) {
	h.h.swap.Lock()
	defer h.h.swap.Unlock()
	h.h.cl, h.h.adm, h.h.stopClient = cl, kadm.NewClient(cl), stop
	h.h.net.dialer.setClient(cl)
}

// Client is the handle's client, as SetClient set it last.
func (h *Handle) Client() *kgo.Client { return h.h.client() }

// StopClient ends the context the handle's client runs on, as SetClient
// was given it.
func (h *Handle) StopClient() context.CancelFunc {
	h.h.swap.Lock()
	defer h.h.swap.Unlock()
	return h.h.stopClient
}

// Polled notes a poll's fetches for the group's lag.
func (h *Handle) Polled(fetches kgo.Fetches) { h.h.group.polled(fetches) }

// Committed notes a commit of the group's offsets (under exactly-once, a
// transaction's end that tried to commit): err nil once committed.
func (h *Handle) Committed(err error) { h.h.group.committed(err) }

// LeaveGroup has the handle's client leave its group within the config's
// request-timeout. detached reports that a rebalance held the client's
// join: the client left, but kgo holds it until the rebalance ends, so
// close it with CloseDetached.
func (h *Handle) LeaveGroup(ctx context.Context) (detached bool, err error) {
	return h.h.leaveGroup(ctx)
}

// CloseDetached closes cl, a client that left its group while a
// rebalance held its join, in the background, ending its context with
// stop first; [Library.Close] waits for it.
func (h *Handle) CloseDetached(cl interface{ Close() }, stop context.CancelFunc) {
	h.h.closeDetached(cl, stop)
}

// CloseDialer stops the client's dialer from watching for a refused
// broker, before the client is closed.
func (h *Handle) CloseDialer() { h.h.net.dialer.close() }

// RequestError words the failure of a request the handle's client made
// within ctx: an [ErrTimeout] naming the servers when time ran out or no
// broker could be reached, [ErrClosed] once the client is closed, else
// the brokers' error, as [ErrKafka].
func (h *Handle) RequestError(ctx context.Context, err error) error {
	return h.h.requestError(ctx, err)
}

// Log writes a line to the Library's log output ([Library.SetLogOutput])
// for BPL function fn.
func (lib *Library) Log(fn, msg string) { lib.log(fn, msg) }

// Attached returns the value the Library keeps for key, made by make the
// first time key is asked for: a package built over the Library keeps its
// per-Library settings so (package stream, its streams' query endpoint
// and forwarder). key should be a value of an unexported type of the
// package, as a context key is.
func (lib *Library) Attached(key any, make func() any) any {
	v, _ := lib.attached.LoadOrStore(key, sync.OnceValue(make))
	return v.(func() any)()
}
