package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/murmur2"
)

// Store queries across the processes of a stream's group: a query for a
// key of a partition held elsewhere is sent, through the forwarder a
// program sets (kafkabpl serve's is an HTTP POST), to the owner's query
// endpoint, where AnswerStoreQuery answers it from that process's own
// committed state.

// StoreForwarder sends a store query to the process whose query endpoint
// is endpoint, and returns its answer: query is what that process's
// [Runtime.AnswerStoreQuery] takes, and the answer what it returns, both
// opaque bytes. An error the owner answered with (say, its
// AnswerStoreQuery's ErrNotReady) is best returned wrapping the same
// sentinel; any error makes the library read the group's description
// again and try once more (but not of the same owner when it did not
// answer in time), then report [kafkabpl.ErrNotReady]. ctx is the query's,
// bounded by the asking stream's config "query-forward-timeout" (5 s by
// default); a forwarder must not outlast it.
type StoreForwarder func(ctx context.Context, endpoint string, query []byte) ([]byte, error)

// SetStoreForwarder sets how the library's streams forward a store query
// for a key held by another process of their group (nil: they do not,
// and such a query fails with [kafkabpl.ErrNotHeld]). kafkabpl serve sets one that
// posts the query to the owner's module, with the module's access key.
func (rt *Runtime) SetStoreForwarder(f StoreForwarder) {
	if f == nil {
		rt.forwarder.Store(nil)
		return
	}
	rt.forwarder.Store(&f)
}

// SetQueryEndpoint sets the query endpoint that the library's stateful
// streams started from now on advertise in their group membership when
// their config gives no "query-endpoint": the URL where the process
// answers store queries (kafkabpl serve sets "http://ADDR/MODULE" for
// each module). "" sets none. The error wraps ErrInvalidConfig for
// anything but an http or https URL with a host.
func (rt *Runtime) SetQueryEndpoint(endpoint string) error {
	if endpoint == "" {
		rt.endpoint.Store(nil)
		return nil
	}
	if err := kafkabpl.CheckQueryEndpoint(endpoint); err != nil {
		return kafkabpl.NewError("query-endpoint", err)
	}
	rt.endpoint.Store(&endpoint)
	return nil
}

// Peers returns the query endpoints that the other processes of the
// groups of the library's running stateful streams advertise (distinct,
// sorted; none for a stream that advertises no endpoint itself): where a
// program tells its peers what changed, as kafkabpl serve forwards
// module-notify to the same module in the group's other servers. Each
// stream's group is described at most every 5 s, and again after its
// assignment changed; a group that cannot be described now (it is
// rebalancing) gives the endpoints it last had, and the error, which
// wraps kafkabpl.ErrNotReady, names the store.
func (rt *Runtime) Peers(ctx context.Context) ([]string, error) {
	var all []string
	var first error
	for _, s := range rt.streams() {
		peers, err := s.peers(ctx)
		if err != nil && first == nil {
			first = err
		}
		for _, p := range peers {
			if !slices.Contains(all, p) {
				all = append(all, p)
			}
		}
	}
	slices.Sort(all)
	if first != nil {
		return all, first
	}
	return all, nil
}

// queryEndpoint settles the query endpoint a stream advertises: its
// config's, else the library's. A stateless stream advertises none; under
// the consumer group protocol, none can be advertised.
func (rt *Runtime) queryEndpoint(cfg *kafkabpl.ClientConfig, spec *Spec) error {
	if spec.Transform != nil {
		cfg.SetQueryEndpoint("")
		return nil
	}
	if cfg.ServerAssigns() {
		if cfg.Given("query-endpoint") {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, `config "query-endpoint": a stream advertises it in its group membership, which "group-protocol" "consumer" (KIP-848) does not carry; use the classic protocol, or query the process that holds the key`)
		}
		cfg.SetQueryEndpoint("")
		return nil
	}
	if cfg.QueryEndpoint() == "" {
		if e := rt.endpoint.Load(); e != nil {
			cfg.SetQueryEndpoint(*e)
		}
	}
	return nil
}

// The operations of a store query.
const (
	opGet     = "get"
	opWindows = "windows"
)

// storeQuery is a store query as it is forwarded: the store by its group
// and name (handle ids differ between processes) and the key encoded.
type storeQuery struct {
	Group     string `json:"group"`
	Store     string `json:"store"`
	Op        string `json:"op"`
	Partition int32  `json:"partition"`
	Key       []byte `json:"key"`
	Since     int64  `json:"since,omitempty"` // ms, windows only
	Until     int64  `json:"until,omitempty"`
}

// storeAnswer is the owner's answer: a key's encoded state, or its
// windows with their encoded values.
type storeAnswer struct {
	Found   bool        `json:"found,omitempty"`
	State   []byte      `json:"state,omitempty"`
	Windows []rawWindow `json:"windows,omitempty"`
}

type rawWindow struct {
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Value []byte `json:"value"`
}

// keyPartition is the store partition of key k.
func (s *stream) keyPartition(ctx context.Context, k []byte) (int32, error) {
	n, err := s.partitionCount(ctx)
	if err != nil {
		return 0, err
	}
	return murmur2.Partition(k, n), nil
}

// restoringErr is the error of a query of partition p when this process
// is assigned it but has not restored it yet; nil when it is not.
func (st *kafkaStore) restoringErr(p int32) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, ok := st.assigned[p]; !ok {
		return nil
	}
	if r := st.restoring[p]; r != nil {
		return kafkabpl.Errorf(kafkabpl.ErrNotReady, "store %q partition %d is being restored from %q (%d of %d changelog offsets read): its keys are answered once the restore ends", st.name, p, st.topic, r.read, r.total)
	}
	if st.parts[p] != nil {
		return nil // adopted since the caller looked
	}
	return kafkabpl.Errorf(kafkabpl.ErrNotReady, "store %q partition %d was just assigned to this process, and its restore is about to start", st.name, p)
}

// restoringAny is the error of a range while a partition assigned to this
// process is not restored yet.
func (st *kafkaStore) restoringAny() error {
	st.mu.Lock()
	var first int32 = -1
	for p := range st.assigned {
		if st.parts[p] == nil && (first < 0 || p < first) {
			first = p
		}
	}
	st.mu.Unlock()
	if first < 0 {
		return nil
	}
	if err := st.restoringErr(first); err != nil {
		return err
	}
	return st.restoringAny()
}

// forward answers q, of a partition this process does not hold restored,
// through the process that holds it.
func (rt *Runtime) forward(ctx context.Context, s *stream, q *storeQuery) (*storeAnswer, error) {
	st := s.store
	if err := st.restoringErr(q.Partition); err != nil {
		return nil, err
	}
	if s.cfg.ServerAssigns() {
		return nil, kafkabpl.Errorf(kafkabpl.ErrNotHeld, `store %q partition %d is held by another process of group %q: under "group-protocol" "consumer" (KIP-848) members advertise no query endpoint; query the process that holds it, or use the classic protocol`, st.name, q.Partition, s.cfg.Group())
	}
	q.Group, q.Store = s.cfg.Group(), st.name
	body, err := json.Marshal(q)
	if err != nil {
		return nil, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "store query: %v", err)
	}
	self, _ := s.h.Client().GroupMetadata()
	bound := s.cfg.QueryForwardTimeout()
	var last error
	var lastOwner *asked
	for attempt := range 2 {
		w, err := s.owner(ctx, q.Partition, attempt > 0)
		if err != nil {
			return nil, err
		}
		if lastOwner != nil && lastOwner.timedOut && w.member == lastOwner.member {
			// The group still gives the partition to the owner that did
			// not answer: asking it again would wait as long again. The
			// next query reads the group's description afresh, and asks
			// the partition's next owner once the group has moved it.
			s.forgetOwners()
			return nil, kafkabpl.Errorf(kafkabpl.ErrNotReady, "store %q partition %d: %v (the group still gives it the partition: a process paused or cut off loses it at its session's end; ask again)", st.name, q.Partition, last)
		}
		lastOwner = &asked{owner: w}
		switch {
		case w.member == self:
			last = kafkabpl.Errorf(kafkabpl.ErrNotReady, "the group's description says this process holds it, which it does not (any more): a rebalance is under way")
			continue
		case w.endpoint == "":
			return nil, kafkabpl.Errorf(kafkabpl.ErrNotHeld, "store %q partition %d is held by %v: run it with a \"query-endpoint\" (kafkabpl serve sets one) to have it answer queries", st.name, q.Partition, w)
		}
		f := rt.forwarder.Load()
		if f == nil {
			return nil, kafkabpl.Errorf(kafkabpl.ErrNotHeld, "store %q partition %d is held by %v; this library forwards no store queries (see kafkabpl.Runtime.SetStoreForwarder; kafkabpl serve sets one)", st.name, q.Partition, w)
		}
		fctx, cancel := context.WithTimeout(ctx, bound)
		raw, err := (*f)(fctx, w.endpoint, body)
		lastOwner.timedOut = err != nil && fctx.Err() != nil && ctx.Err() == nil
		cancel()
		if err == nil {
			var a storeAnswer
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, kafkabpl.Errorf(kafkabpl.ErrNotReady, "store %q partition %d: the answer of %v is not a store answer: %v", st.name, q.Partition, w, err)
			}
			return &a, nil
		}
		if ctx.Err() != nil {
			return nil, kafkabpl.Wrapf(kafkabpl.ErrNotReady, ctx.Err(), "store %q partition %d: forwarding to %v", st.name, q.Partition, w)
		}
		last = err
		if lastOwner.timedOut {
			// Its text, not the error: the forward's own deadline is no
			// timeout of the caller's, which a script catches as NotReady.
			last = fmt.Errorf("its owner, %v, did not answer within %v (the config's \"query-forward-timeout\")", w, bound)
		}
	}
	s.forgetOwners() // neither description gave an owner that answered
	// The owner's own error (NotHeld, say, from a stale description)
	// is told, not typed: the query is NotReady here.
	return nil, kafkabpl.Errorf(kafkabpl.ErrNotReady, "store %q partition %d, held by %v, gave no answer (tried again with the group's latest description): %v", st.name, q.Partition, lastOwner.owner, last)
}

// asked is an owner a query was forwarded to, and whether the forward
// ran out of its own time ("query-forward-timeout").
type asked struct {
	*owner
	timedOut bool
}

// AnswerStoreQuery answers a store query that another process of a
// stream's group forwarded (see [StoreForwarder]): from the committed
// state of the partition it names, which this process must hold
// restored; it never forwards the query on. The stream is the library's
// stateful stream of the query's group and store. The error wraps
// [kafkabpl.ErrNotReady] while the partition is being restored here,
// [kafkabpl.ErrNotHeld] when this process does not hold it (the asker's view of
// the group is stale: it asks again), [kafkabpl.ErrUnknownHandle] when no such
// stream runs here, [kafkabpl.ErrInvalidArgument] for a query that does not read.
func (rt *Runtime) AnswerStoreQuery(ctx context.Context, query []byte) ([]byte, error) {
	var q storeQuery
	if err := json.Unmarshal(query, &q); err != nil || (q.Op != opGet && q.Op != opWindows) {
		return nil, kafkabpl.NewError("kafka-store-get", kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "query: not a forwarded store query (op %q, %v)", q.Op, err))
	}
	fn := "kafka-store-" + q.Op // the function asked on the other side
	s, release, err := rt.storeOf(q.Group, q.Store)
	if err != nil {
		return nil, kafkabpl.NewError(fn, err)
	}
	defer release()
	st := s.store
	var a storeAnswer
	local := false
	switch {
	case q.Op == opGet && st.win == nil:
		var raw []byte
		raw, a.Found, err = st.state.Get(q.Partition, q.Key)
		local = err == nil
		if a.Found {
			a.State = raw
		}
	case q.Op == opWindows && st.win != nil:
		a.Windows, local = st.windowsLocal(&q)
	default:
		return nil, kafkabpl.NewError(fn, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "query %q of store %q, which is of the other kind", q.Op, q.Store))
	}
	if !local {
		if err := st.restoringErr(q.Partition); err != nil {
			return nil, kafkabpl.NewError(fn, err)
		}
		return nil, kafkabpl.NewError(fn, kafkabpl.Errorf(kafkabpl.ErrNotHeld, "store %q partition %d: this process (group %q) does not hold it", q.Store, q.Partition, q.Group))
	}
	out, err := json.Marshal(&a)
	if err != nil {
		return nil, kafkabpl.NewError(fn, fmt.Errorf("%w: %v", kafkabpl.ErrInvalidArgument, err))
	}
	return out, nil
}

// storeOf returns the library's running stateful stream of group and
// store, counted as a call in flight until release.
func (rt *Runtime) storeOf(group, store string) (*stream, func(), error) {
	for _, s := range rt.streams() {
		if s.store == nil || s.cfg.Group() != group || s.store.name != store {
			continue
		}
		if _, release, err := rt.lib.Acquire(s.h.ID(), kafkabpl.Stream); err == nil {
			return s, release, nil
		}
	}
	return nil, nil, kafkabpl.Errorf(kafkabpl.ErrUnknownHandle, "no stream of group %q with store %q runs here", group, store)
}
