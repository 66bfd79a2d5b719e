package kafkabpl

import (
	"context"
	"time"

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
// never a batch in hand that may still abort, and only partitions this
// process holds and has restored: a partition being restored, or held by
// another process of the stream's group, has no key here (StoreGet reports
// it as not found). The state of an input that a batch processed is seen
// once its transaction committed.
func (lib *Library) StoreGet(ctx context.Context, id string, key any) (any, bool, error) {
	const fn = "kafka-store-get"
	st, err := lib.queryStore(fn, id, false)
	if err != nil {
		return nil, false, err
	}
	k, err := st.encodeKey(ctx, key)
	if err != nil {
		return nil, false, newError(fn, err)
	}
	for _, p := range st.state.Partitions() {
		raw, found, err := st.state.Get(p, k)
		if err != nil || !found {
			continue // revoked since Partitions: not held
		}
		state, err := st.decodeState(raw)
		if err != nil {
			return nil, false, newError(fn, err)
		}
		return state, true, nil
	}
	return nil, false, nil
}

// StoreRange returns the committed states of the keys of stream id's store
// (a per-key store's) from from to to, both included, comparing the keys'
// encodings bytewise (nil: no bound), of every partition this process
// holds, by partition then key. See StoreGet for the consistency.
func (lib *Library) StoreRange(ctx context.Context, id string, from, to any) ([]StoreEntry, error) {
	const fn = "kafka-store-range"
	st, lo, hi, err := lib.rangeStore(ctx, fn, id, from, to)
	if err != nil {
		return nil, err
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
			return nil, newError(fn, derr)
		}
	}
	return out, nil
}

// StoreWindows returns the committed open windows of key in stream id's
// store (a windowed store's) that start from since to until, both
// included, in start order: a window that closed is gone from the store,
// its result written to the stream's output. See StoreGet for the
// consistency.
func (lib *Library) StoreWindows(ctx context.Context, id string, key any, since, until time.Time) ([]StoreWindow, error) {
	const fn = "kafka-store-windows"
	st, err := lib.queryStore(fn, id, true)
	if err != nil {
		return nil, err
	}
	k, err := st.encodeKey(ctx, key)
	if err != nil {
		return nil, newError(fn, err)
	}
	var out []StoreWindow
	var derr error
	for _, p := range st.state.Partitions() {
		st.state.Windows(p, k, k, since.UnixMilli(), until.UnixMilli(), func(_ []byte, start, end int64, raw []byte) bool {
			v, err := store.Decode(raw)
			if err != nil {
				derr = err
				return false
			}
			out = append(out, StoreWindow{Key: key, Partition: p, Start: time.UnixMilli(start), End: time.UnixMilli(end), Value: v})
			return true
		})
		if derr != nil {
			return nil, newError(fn, derr)
		}
	}
	return out, nil
}

// queryStore returns stream id's store, of the kind the query reads.
func (lib *Library) queryStore(fn, id string, windowed bool) (*kafkaStore, error) {
	h, err := lib.acquire(id, Stream)
	if err != nil {
		return nil, newError(fn, err)
	}
	defer h.calls.Done()
	st := h.stream.store
	switch {
	case st == nil:
		return nil, newError(fn, errorf(ErrInvalidArgument, "stream %s is stateless: it has no store to query", id))
	case windowed && st.win == nil:
		return nil, newError(fn, errorf(ErrInvalidArgument, "store %q keeps state per key, not per window: query it with kafka-store-get or kafka-store-range", st.name))
	case !windowed && st.win != nil:
		return nil, newError(fn, errorf(ErrInvalidArgument, "store %q is windowed: query its windows with kafka-store-windows", st.name))
	}
	return st, nil
}

// encodeKey is key as the store keys it: encoded by the stream's key
// serializer.
func (st *kafkaStore) encodeKey(ctx context.Context, key any) ([]byte, error) {
	if key == nil {
		return nil, errorf(ErrInvalidArgument, "key: null; a store keys its state by the inputs' keys, never null")
	}
	return st.cfg.keySer.Encode(ctx, st.inputs[0], key, 1, "key")
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
