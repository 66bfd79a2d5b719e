package kafkabpl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kind is what a handle is: a producer, a consumer, an admin client or a
// stream.
type Kind string

// The kinds of handle, as kafka-create names them (streams are made by
// package stream (Runtime.Start)). A handle's id starts with the kind's letter: p, c,
// a or s; a share consumer's with c, as a consumer's (see
// [ShareConsumer]).
const (
	Producer Kind = "producer"
	Consumer Kind = "consumer"
	Admin    Kind = "admin"
	Stream   Kind = "stream"
	// ShareConsumer is a consumer in a share group (KIP-932, queues for
	// Kafka): the group's members share every partition's records, record
	// by record, and acknowledge each (see [Library.Ack]). It polls,
	// subscribes, commits and is destroyed as a consumer is; it cannot
	// seek. Its config needs "group". The package documentation (Share
	// consumers) says what becomes of records not acknowledged, and how
	// its "auto-offset-reset" sets the whole group's start.
	ShareConsumer Kind = "share-consumer"
)

// letter is the first letter of the ids of the kind's handles.
func (k Kind) letter() byte {
	if k == ShareConsumer {
		return 'c' // a consumer still: kafka-poll and kafka-commit take it
	}
	return k[0]
}

// handle is one live client. Its kgo client is safe for concurrent use; what
// the handle adds on top (a consumer's subscription) has its own locks.
//
// cl and adm are set before the handle is registered and never change,
// except an extension's (a stream's): Handle.SetClient replaces them, under
// swap, when a stream re-initializes its producer. Code that may run
// beside that reads the client with client().
type handle struct {
	id   string
	kind Kind
	cfg  *config
	cl   *kgo.Client
	adm  *kadm.Client
	net  *reachability

	// ctx is canceled by destroy, so calls in flight return promptly;
	// calls counts them, so destroy can wait for them before closing.
	ctx    context.Context
	cancel context.CancelFunc
	calls  sync.WaitGroup

	// stopClient ends the context the kgo client runs on (see
	// stoppable), failing its requests in flight: a stream's reinit
	// replaces it with its client.
	stopClient context.CancelFunc

	cons  *consumerState // consumers only
	group *groupStats    // consumers' and streams' only
	share *shareState    // share consumers only

	// commitMu is held by a consumer's commit while it is in flight, and
	// by the consumer's group callbacks while they note what the group
	// took away (consumers only): see consumerState.onLost.
	commitMu sync.Mutex

	// ext is the work of a package built over the Library behind the
	// handle (a stream's), which destroy stops; nil for the Library's
	// own kinds. swap guards cl, adm and stopClient of such a handle,
	// whose client may be replaced (see Handle.SetClient).
	ext  Extension
	swap sync.Mutex

	// bg is the library's, for what outlives a call on the handle (its
	// close during a rebalance, say); nil for an admin call's own
	// handle, which starts none.
	bg *background
}

// client returns the handle's kgo client, safely beside an extension
// that replaces it.
func (h *handle) client() *kgo.Client {
	if h.ext == nil {
		return h.cl
	}
	h.swap.Lock()
	defer h.swap.Unlock()
	return h.cl
}

// newID returns a fresh handle id: the kind's letter and 32 hex digits.
func newID(kind Kind) string {
	var b [16]byte
	rand.Read(b[:]) // never fails, per crypto/rand's documentation
	return string(kind.letter()) + hex.EncodeToString(b[:])
}

// kindOfID returns the kind an id's letter names, or "" for text that does
// not have the form of a handle id (a kind's letter and 32 lower-case hex
// digits; a server string never has it).
func kindOfID(id string) Kind {
	if len(id) != 33 {
		return ""
	}
	for _, c := range id[1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ""
		}
	}
	for _, k := range []Kind{Producer, Consumer, Admin, Stream} {
		if id[0] == k[0] {
			return k
		}
	}
	return ""
}

// acquire returns the live handle id of the given kind ("" for any kind)
// and counts the caller as a call in flight: the caller must call
// h.calls.Done when finished.
func (lib *Library) acquire(id string, kind Kind) (*handle, error) {
	if kind == "" {
		return lib.acquireOf(id)
	}
	return lib.acquireOf(id, kind)
}

// acquireOf is acquire for a handle of any of kinds (none: any kind); an
// error names the first.
func (lib *Library) acquireOf(id string, kinds ...Kind) (*handle, error) {
	lib.mu.RLock()
	defer lib.mu.RUnlock()
	h := lib.handles[id]
	if h == nil {
		what := "handle"
		if k := kindOfID(id); k != "" {
			what = string(k) // the kind its letter names
		} else if len(kinds) > 0 {
			what = string(kinds[0])
		}
		if lib.closed {
			return nil, Errorf(ErrClosed, "library closed; unknown %s id %q", what, id)
		}
		return nil, Errorf(ErrUnknownHandle, "unknown %s id %q", what, id)
	}
	if len(kinds) > 0 && !slices.Contains(kinds, h.kind) {
		return nil, Errorf(ErrWrongKind, "%q is %s id, not %s id", id, article(h.kind), article(kinds[0]))
	}
	h.calls.Add(1) // under the registry lock: destroy cannot be waiting yet
	return h, nil
}

// add registers h, unless the library is closed.
func (lib *Library) add(h *handle) bool {
	lib.mu.Lock()
	defer lib.mu.Unlock()
	if lib.closed {
		return false
	}
	lib.handles[h.id] = h
	return true
}

// remove unregisters id and returns its handle, or nil if it was unknown.
// From then on acquire fails, so only calls already in flight remain. The
// destroy that removes a handle counts as background work, from here,
// where Close cannot have begun waiting, until the caller ends it with
// lib.bg.end(destroying(h)).
func (lib *Library) remove(id string) *handle {
	lib.mu.Lock()
	defer lib.mu.Unlock()
	h := lib.handles[id]
	if h != nil {
		delete(lib.handles, id)
		lib.bg.start(destroying(h))
	}
	return h
}

// reachability follows a client's connections through kgo's hooks, so that
// a call that times out can say whether any broker could be reached at all.
type reachability struct {
	servers string
	dialer  *brokerDialer // the client's, set by kgoOpts
	// epochAnswered, set before the client is made (consumers only), is
	// told of each OffsetForLeaderEpoch answer read (see revalidation).
	epochAnswered func(node int32)
	mu            sync.Mutex
	dials         int   // connection attempts so far
	open          int   // connections open now
	dialErr       error // the last failed dial since the last successful one
}

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (r *reachability) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dials++
	if err != nil {
		r.dialErr = err
		return
	}
	r.open++
	r.dialErr = nil
}

// OnBrokerRead implements kgo.HookBrokerRead.
func (r *reachability) OnBrokerRead(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil && key == kmsg.OffsetForLeaderEpoch.Int16() && r.epochAnswered != nil {
		r.epochAnswered(meta.NodeID)
	}
}

// OnBrokerDisconnect implements kgo.HookBrokerDisconnect.
func (r *reachability) OnBrokerDisconnect(kgo.BrokerMetadata, net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.open--
}

// unreachable returns a Timeout error naming the servers when no connection
// is open and the last dial failed; nil otherwise.
func (r *reachability) unreachable() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open > 0 || r.dialErr == nil {
		return nil
	}
	if isKafkaErr(r.dialErr) { // the broker answered, refusing us (SASL, say)
		return Wrapf(ErrKafka, r.dialErr, "cannot connect to %s", r.servers)
	}
	return Wrapf(ErrTimeout, r.dialErr, "no broker reachable at %s", r.servers)
}

// timeoutError returns the Timeout error for a call that ran out of time
// after d: the servers, and the dial error when none could be reached.
func (r *reachability) timeoutError(d time.Duration, cause error) error {
	if err := r.unreachable(); err != nil {
		return err
	}
	return Wrapf(ErrTimeout, cause, "no answer from %s within %v", r.servers, d)
}

// dialFailure returns a Timeout error naming the servers when err is a
// failure to connect (a broker down or unreachable), else nil.
func (r *reachability) dialFailure(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return Wrapf(ErrTimeout, err, "no broker reachable at %s", r.servers)
	}
	return nil
}

// requestError words the failure of a request to the brokers: a Timeout
// naming the servers when time ran out or no broker could be reached, else
// the Kafka error.
func (h *handle) requestError(ctx context.Context, err error) error {
	if unreachable := h.net.unreachable(); unreachable != nil {
		return unreachable
	}
	if down := h.net.dialFailure(err); down != nil {
		return down
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return h.net.timeoutError(h.cfg.requestTimeout, err)
	}
	if errors.Is(err, kgo.ErrClientClosed) {
		return Errorf(ErrClosed, "handle destroyed")
	}
	return Wrapf(ErrKafka, err, "request failed")
}

// article returns the kind with its indefinite article: "a producer",
// "an admin", "a share-consumer".
func article(k Kind) string {
	if k == Admin {
		return "an " + string(k)
	}
	return "a " + string(k)
}

func joinServers(servers []string) string { return strings.Join(servers, ",") }

// stoppable adds to a kgo client's opts a context of its own, and returns
// what ends it. A client that left its group while a rebalance held its
// join is stopped with it before Close: kgo's Close waits for the join's
// answer, which the coordinator gives only when the rebalance ends (a dead
// member's session timeout, or max-poll-interval on some brokers).
func stoppable(opts []kgo.Opt) ([]kgo.Opt, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	return append(opts[:len(opts):len(opts)], kgo.WithContext(ctx)), cancel
}

// closeDetached closes cl, a client that left its group while a rebalance
// held its join, in the background: its context is ended first, so the
// held join fails at once and the close does not wait for the rebalance.
// Library.Close waits for it.
func (h *handle) closeDetached(cl interface{ Close() }, stop context.CancelFunc) {
	h.bg.Go(fmt.Sprintf("the close of %s %s's client, which left its group during a rebalance", h.kind, h.id), func() {
		stop()
		cl.Close()
	})
}
