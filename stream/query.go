package stream

import (
	"context"
	"slices"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/store"
)

// Queries of a stream's store: its committed state, read from any
// goroutine while the stream runs.

// StoreEntry is a key's committed state in a stream's store.
type StoreEntry struct {
	Key       any   // as the stream's key deserializer reads it
	Partition int32 // the input partition that holds it
	State     any
	Standby   bool  // read from a standby copy (StoreStandbyGet, StoreStandbyRange); false: from a partition this process holds
	Lag       int64 // a standby copy's changelog offsets not applied yet; 0 otherwise
	Stale     bool  // Lag > 0: the owner's state may be ahead of this one
}

// StoreWindow is a committed window of a windowed stream's store.
type StoreWindow struct {
	Key        any
	Partition  int32
	Start, End time.Time // [Start, End) for a time window; a session's first and last input times
	Value      any       // the aggregate
}

// StoreGet returns the committed state of key in stream id's store (a
// per-key store's), and whether it has one. key is encoded with the
// stream's key serializer (a string as its bytes, by default), as the
// stream's inputs keyed their state.
//
// Consistency: a query reads what the stream's last committed batch left,
// never a batch in hand that may still abort. The key's partition is the
// one Kafka's default partitioner gives it (murmur2 of the encoded key,
// as kafkabpl's and Java's producers place keyed records; see Hazard).
// When this process holds that partition, restored, the key is read here.
// When it is restoring it, or the group has not assigned it here yet, the
// error wraps [kafkabpl.ErrNotReady], naming the store and the partition: never a
// half-restored state, nor a "not found" for a key that is there. When
// another process of the stream's group holds it, the query is forwarded
// to that process's query endpoint (see [Runtime.SetStoreForwarder] and
// the config's "query-endpoint"; kafkabpl serve does both), which answers
// it from its own committed state; the owner is read from the group's
// description, cached, and read again after a rebalance or a miss. A
// group that is rebalancing, or an owner that does not answer, gives
// [kafkabpl.ErrNotReady] once a fresh description was tried. Each forward
// waits for its answer at most the config's "query-forward-timeout" (5 s
// by default), however long ctx allows: an owner alive to TCP but not
// answering (a paused process) gives ErrNotReady naming it, and is not
// asked again by the same query while the group's fresh description still
// gives it the partition; the next query reads the description again, so
// it asks the partition's next owner once the group has moved it. An owner that
// advertises no endpoint, or a library without forwarder, gives
// [kafkabpl.ErrNotHeld]. The state of an input that a batch processed is seen once
// its transaction committed.
//
// Hazard: a key that its producer placed by another partitioner
// ("round-robin", "manual", a custom one) is found only when this process
// holds the partition it is in.
func (rt *Runtime) StoreGet(ctx context.Context, id string, key any) (any, bool, error) {
	const fn = "kafka-store-get"
	s, err := rt.queryStream(fn, id, false)
	if err != nil {
		return nil, false, err
	}
	st := s.store
	k, err := st.encodeKey(ctx, key)
	if err != nil {
		return nil, false, kafkabpl.NewError(fn, err)
	}
	p, err := s.keyPartition(ctx, k)
	if err != nil {
		return nil, false, kafkabpl.NewError(fn, err)
	}
	raw, found, local := st.getLocal(p, k)
	if !local && !found {
		a, err := rt.forward(ctx, s, &storeQuery{Op: opGet, Partition: p, Key: k})
		if err != nil {
			return nil, false, kafkabpl.NewError(fn, err)
		}
		raw, found = a.State, a.Found
	}
	if !found {
		return nil, false, nil
	}
	state, err := st.decodeState(raw)
	if err != nil {
		return nil, false, kafkabpl.NewError(fn, err)
	}
	return state, true, nil
}

// getLocal reads key k from partition p when this process holds it
// restored (local), else from any partition it holds (a key placed by
// another partitioner than murmur2).
func (st *kafkaStore) getLocal(p int32, k []byte) (raw []byte, found, local bool) {
	held := st.state.Partitions()
	local = slices.Contains(held, p)
	if local {
		if raw, found, err := st.state.Get(p, k); err == nil {
			return raw, found, true
		}
		local = false // revoked since Partitions
	}
	for _, q := range held {
		if raw, found, err := st.state.Get(q, k); err == nil && found {
			return raw, true, q == p
		}
	}
	return nil, false, local
}

// StoreRange returns the committed states of the keys of stream id's store
// (a per-key store's) from from to to, both included, comparing the keys'
// encodings bytewise (nil: no bound), of every partition this process
// holds, by partition then key: a range is not forwarded to the group's
// other processes. While a partition assigned to this process is being
// restored, the error wraps [kafkabpl.ErrNotReady] (the range would miss its keys).
// See StoreGet for the consistency.
func (rt *Runtime) StoreRange(ctx context.Context, id string, from, to any) ([]StoreEntry, error) {
	const fn = "kafka-store-range"
	st, lo, hi, err := rt.rangeStore(ctx, fn, id, from, to)
	if err != nil {
		return nil, err
	}
	if err := st.restoringAny(); err != nil {
		return nil, kafkabpl.NewError(fn, err)
	}
	var out []StoreEntry
	var derr error
	for _, p := range st.state.Partitions() {
		st.state.Range(p, lo, hi, func(key, raw []byte) bool {
			state, err := st.decodeState(raw)
			if err != nil {
				derr = err
				return false
			}
			out = append(out, StoreEntry{Key: st.decodeKey(string(key)), Partition: p, State: state})
			return true
		})
		if derr != nil {
			return nil, kafkabpl.NewError(fn, derr)
		}
	}
	return out, nil
}

// StoreWindows returns the committed open windows of key in stream id's
// store (a windowed store's) that start from since to until, both
// included, in start order: a window that closed is gone from the store,
// its result written to the stream's output. A key of a partition another
// process holds is forwarded to it, and one of a partition being restored
// here is refused, as StoreGet does.
func (rt *Runtime) StoreWindows(ctx context.Context, id string, key any, since, until time.Time) ([]StoreWindow, error) {
	const fn = "kafka-store-windows"
	s, err := rt.queryStream(fn, id, true)
	if err != nil {
		return nil, err
	}
	st := s.store
	k, err := st.encodeKey(ctx, key)
	if err != nil {
		return nil, kafkabpl.NewError(fn, err)
	}
	p, err := s.keyPartition(ctx, k)
	if err != nil {
		return nil, kafkabpl.NewError(fn, err)
	}
	q := &storeQuery{Op: opWindows, Partition: p, Key: k, Since: since.UnixMilli(), Until: until.UnixMilli()}
	ws, local := st.windowsLocal(q)
	if !local {
		a, err := rt.forward(ctx, s, q)
		if err != nil {
			return nil, kafkabpl.NewError(fn, err)
		}
		ws = a.Windows
	}
	out := make([]StoreWindow, 0, len(ws))
	for _, w := range ws {
		v, err := store.Decode(w.Value)
		if err != nil {
			return nil, kafkabpl.NewError(fn, err)
		}
		out = append(out, StoreWindow{Key: key, Partition: p, Start: time.UnixMilli(w.Start), End: time.UnixMilli(w.End), Value: v})
	}
	return out, nil
}

// windowsLocal reads q's windows from its partition, when this process
// holds it restored (local).
func (st *kafkaStore) windowsLocal(q *storeQuery) (ws []rawWindow, local bool) {
	err := st.state.Windows(q.Partition, q.Key, q.Key, q.Since, q.Until, func(_ []byte, start, end int64, raw []byte) bool {
		ws = append(ws, rawWindow{Start: start, End: end, Value: raw}) // a copy already
		return true
	})
	return ws, err == nil
}

// queryStream returns stream id, whose store is of the kind the query
// reads.
func (rt *Runtime) queryStream(fn, id string, windowed bool) (*stream, error) {
	h, release, err := rt.lib.Acquire(id, kafkabpl.Stream)
	if err != nil {
		return nil, kafkabpl.NewError(fn, err)
	}
	defer release()
	s := h.Extension().(*stream)
	st := s.store
	switch {
	case st == nil:
		return nil, kafkabpl.NewError(fn, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "stream %s is stateless: it has no store to query", id))
	case windowed && st.win == nil:
		return nil, kafkabpl.NewError(fn, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "store %q keeps state per key, not per window: query it with kafka-store-get or kafka-store-range", st.name))
	case !windowed && st.win != nil:
		return nil, kafkabpl.NewError(fn, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "store %q is windowed: query its windows with kafka-store-windows", st.name))
	}
	return s, nil
}

// encodeKey is key as the store keys it: encoded by the stream's key
// serializer.
func (st *kafkaStore) encodeKey(ctx context.Context, key any) ([]byte, error) {
	if key == nil {
		return nil, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "key: null; a store keys its state by the inputs' keys, never null")
	}
	return st.cfg.KeySerializer().Encode(ctx, st.inputs[0], key, 1, "key")
}

// decodeState decodes a stored state, unwrapping it from its timers in a
// store with them.
func (st *kafkaStore) decodeState(raw []byte) (any, error) {
	v, err := store.Decode(raw)
	if err != nil || !st.timed {
		return v, err
	}
	t, err := decodeTimed(v)
	return t.state, err
}
