package stream

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Interval joins: a stream of two co-partitioned topics, whose records of
// the same key match when their timestamps are close enough (Kafka
// Streams' KStream-KStream join with JoinWindows). Each side's records
// are buffered in the stream's store, a per-key one: a key's state is the
// list of its buffered records, of both sides, so the buffer is in the
// changelog, exactly once, and restored with the store. A partition's
// stream time is the latest timestamp of a record it buffered, and
// records expire with it, which keeps the store bounded. An index of when
// each key's records expire is kept beside the store, rebuilt from the
// committed state when a partition is adopted and after an abort.

// IntervalKind is which records of an interval join have results.
type IntervalKind int8

const (
	// IntervalInner (the default) has results for pairs only.
	IntervalInner IntervalKind = iota
	// IntervalLeft has results for pairs, and for each left record that
	// matched no right one, with a nil right record, when it expires.
	IntervalLeft
	// IntervalOuter has what IntervalLeft has, and a result for each
	// right record that matched no left one, with a nil left record,
	// when it expires.
	IntervalOuter
)

// String returns "inner", "left" or "outer".
func (k IntervalKind) String() string {
	switch k {
	case IntervalLeft:
		return "left"
	case IntervalOuter:
		return "outer"
	}
	return "inner"
}

// IntervalJoin is a stream's interval join of its two inputs: From[0],
// the left, and From[1], the right, co-partitioned and keyed alike. A left
// record L and a right record R of the same key match when
//
//	L.ts - Before <= R.ts <= L.ts + After
//
// (timestamps in ms). A record is joined, when it is processed, with the
// other side's records of its key buffered in the window, in the order
// they came, then buffered itself: each pair is joined once, when its
// later record is processed, whatever the order the two come in.
//
// A partition's stream time is the latest timestamp of the records it
// buffered. A record is late, and not joined (see Late), when the stream
// time passed the end of its window (ts + After for a left record, ts +
// Before for a right one) by more than Grace. A buffered record expires
// once the stream time passes its timestamp by more than Before + After +
// Grace, when no record that is not late can match it any more: then it
// leaves the store (a tombstone in the changelog when it was its key's
// last), and, under IntervalLeft and IntervalOuter, one that matched
// nothing has its result (Joiner with nil for the other side).
//
// The store's reads ([Runtime.StoreGet], [Runtime.StoreRange]) show a
// key's buffer: a list of its records, each (side timestamp offset value
// headers matched), side 0 for the left, 1 for the right.
//
// Hazard: a key's records are one state, read and written whole for each
// of its inputs, so a key with many records within the window costs as
// many per input. Hazard: a partition's stream time moves only with its
// inputs: the unmatched results of its last records wait for later ones.
type IntervalJoin struct {
	Before time.Duration // how much earlier than a left record a right one may be; 0 or more
	After  time.Duration // how much later than a left record a right one may be; 0 or more
	Grace  time.Duration // how late a record may come (see above); default 0
	Kind   IntervalKind  // IntervalInner by default
	Late   LateRecords   // what becomes of a late record: DropLate by default (counted in the store's Late)

	// Joiner makes the outputs of a pair, or of a record that matched
	// nothing (the other is nil; IntervalLeft and IntervalOuter). Its
	// records are the input in hand and buffered ones, rebuilt from the
	// store: their topic, partition, offset, timestamp, key, value and
	// headers are the original's. An output that gives no timestamp
	// takes the later of the two records'. An error at an input goes to
	// OnError, and the input is not buffered; one at an expiry fails the
	// stream under StopOnError, and under the other policies that result
	// is skipped (counted in Skipped).
	Joiner func(ctx context.Context, left, right *kafkabpl.Record) ([]Output, error)
}

// checkInterval validates a spec's interval join.
func (spec *Spec) checkInterval() error {
	ij := spec.Interval
	switch {
	case len(spec.From) != 2:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"from" %q: an interval join takes two topics, the left then the right, got %d`, spec.From, len(spec.From))
	case spec.From[0] == spec.From[1]:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"from" %q: an interval join's two topics must differ`, spec.From)
	case ij.Before < 0:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `interval join "before" %v: want 0 or more`, ij.Before)
	case ij.After < 0:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `interval join "after" %v: want 0 or more`, ij.After)
	case ij.Grace < 0:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `interval join "grace" %v: want 0 or more`, ij.Grace)
	case ij.Kind < IntervalInner || ij.Kind > IntervalOuter:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "interval join kind %d: want IntervalInner, IntervalLeft or IntervalOuter", ij.Kind)
	case ij.Late < DropLate || ij.Late > DeadLetterLate:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "interval join late %d: want DropLate or DeadLetterLate", ij.Late)
	case ij.Joiner == nil:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `interval join: want a joiner, a function of the left and the right record`)
	case spec.Rekey != nil:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"rekey": an interval join joins its inputs by the keys they have`)
	case spec.Join != nil:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"join" %q: an interval join takes no table join (its joiner may look a table up)`, spec.Join.Table)
	}
	return nil
}

// lateRecords is what becomes of spec's late inputs.
func (spec *Spec) lateRecords() LateRecords {
	switch {
	case spec.Window != nil:
		return spec.Window.Late
	case spec.Interval != nil:
		return spec.Interval.Late
	}
	return DropLate
}

// A buffered record is a list: its side (0 left, 1 right), timestamp
// (ms), offset, value (bytes or null), headers (null, or a list of their
// keys and values in turn) and whether it matched.
const (
	bufSide = iota
	bufTime
	bufOffset
	bufValue
	bufHeaders
	bufMatched
	bufLen
)

// intervals is a stream's interval join at work: the index of when its
// keys' records expire, per partition. The run goroutine's alone.
type intervals struct {
	spec   *IntervalJoin
	inputs []string
	cfg    *kafkabpl.ClientConfig
	parts  map[int32]*intervalPart
	stale  bool // an abort: rebuild every partition's index
}

// intervalPart is a partition's stream time and expiry index: a heap of
// hints, each checked against the key's buffer when it comes up. Every
// key with a buffer has an entry at or before its first expiry.
type intervalPart struct {
	time int64 // the latest timestamp buffered, ms; math.MinInt64 before any
	due  dueHeap
}

func newIntervals(spec *Spec, cfg *kafkabpl.ClientConfig) *intervals {
	if spec.Interval == nil {
		return nil
	}
	return &intervals{spec: spec.Interval, inputs: spec.From, cfg: cfg, parts: map[int32]*intervalPart{}}
}

// span is how long past a record's timestamp the stream time may go
// before it expires.
func (iv *intervals) span() int64 {
	j := iv.spec
	return j.Before.Milliseconds() + j.After.Milliseconds() + j.Grace.Milliseconds()
}

// expiry is the stream time at which a record of timestamp ts expires.
func (iv *intervals) expiry(ts int64) int64 {
	return satAdd(satAdd(ts, iv.span()), 1)
}

// satAdd adds without overflowing either way.
func satAdd(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

// part returns partition id's index, made empty if it has none.
func (iv *intervals) part(id int32) *intervalPart {
	ip := iv.parts[id]
	if ip == nil {
		ip = &intervalPart{time: math.MinInt64}
		iv.parts[id] = ip
	}
	return ip
}

// rebuild makes partition id's index from its committed state: every
// key's first expiry, and the latest timestamp buffered, which is the
// stream time (the record that set it expires only when a later one
// moved it on).
func (iv *intervals) rebuild(st *store.Store, id int32) error {
	if iv == nil {
		return nil
	}
	ip := &intervalPart{time: math.MinInt64}
	iv.parts[id] = ip
	var derr error
	err := st.Range(id, nil, nil, func(key, raw []byte) bool {
		var v any
		if v, derr = store.Decode(raw); derr != nil {
			return false
		}
		var buf []*value.List
		if buf, derr = decodeBuffer(v); derr != nil {
			return false
		}
		first := int64(math.MaxInt64)
		for _, e := range buf {
			ts := e.At(bufTime).(int64)
			ip.time = max(ip.time, ts)
			first = min(first, iv.expiry(ts))
		}
		if len(buf) > 0 {
			heap.Push(&ip.due, due{at: first, key: string(key)})
		}
		return true
	})
	if err != nil {
		return err
	}
	return derr
}

// drop forgets partition id's index (it was revoked).
func (iv *intervals) drop(id int32) {
	if iv != nil {
		delete(iv.parts, id)
	}
}

// rebuildStale rebuilds the held partitions' indexes after an abort,
// before the next batch's inputs (see stream.rebuildStale).
func (iv *intervals) rebuildStale(st *store.Store) error {
	if iv == nil || !iv.stale {
		return nil
	}
	for id := range iv.parts {
		if err := iv.rebuild(st, id); err != nil {
			return err
		}
	}
	iv.stale = false
	return nil
}

// decodeBuffer reads a key's state as an interval join's buffer.
func decodeBuffer(v any) ([]*value.List, error) {
	if v == nil {
		return nil, nil
	}
	bad := kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, "the store holds a state that no interval join wrote; give the join a store of its own")
	l, ok := v.(*value.List)
	if !ok {
		return nil, bad
	}
	buf := make([]*value.List, 0, l.Len())
	for _, e := range l.Values() {
		el, ok := e.(*value.List)
		if !ok || el.Len() != bufLen {
			return nil, bad
		}
		_, ok1 := el.At(bufSide).(int64)
		_, ok2 := el.At(bufTime).(int64)
		_, ok3 := el.At(bufOffset).(int64)
		_, ok4 := el.At(bufMatched).(bool)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return nil, bad
		}
		buf = append(buf, el)
	}
	return buf, nil
}

// buffered is the record a buffer entry holds, as it came.
func (iv *intervals) buffered(e *value.List, key []byte, partition int32) *kafkabpl.Record {
	r := &kgo.Record{Topic: iv.inputs[e.At(bufSide).(int64)], Partition: partition, Offset: e.At(bufOffset).(int64),
		Timestamp: time.UnixMilli(e.At(bufTime).(int64)), Key: key}
	r.Value, _ = e.At(bufValue).([]byte)
	if hs, ok := e.At(bufHeaders).(*value.List); ok {
		for i := 0; i+1 < hs.Len(); i += 2 {
			k, _ := hs.At(i).(string)
			v, _ := hs.At(i + 1).([]byte)
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: k, Value: v})
		}
	}
	rec := iv.cfg.Record(r)
	return &rec
}

// entry is the buffer entry of input in, of side side.
func entry(in *kafkabpl.Record, side int64, matched bool) *value.List {
	var hs any
	if len(in.Kgo().Headers) > 0 {
		l := &value.List{}
		for _, h := range in.Kgo().Headers {
			l.Append(h.Key)
			l.Append(h.Value)
		}
		hs = l
	}
	var val any
	if in.Kgo().Value != nil {
		val = in.Kgo().Value // encoded into the state at once: not kept
	}
	return value.NewList(side, in.Kgo().Timestamp.UnixMilli(), in.Kgo().Offset, val, hs, matched)
}

// join calls the joiner for a pair, or a record alone, and gives its
// outputs without a timestamp the later of the records'.
func (iv *intervals) join(ctx context.Context, left, right *kafkabpl.Record) ([]Output, error) {
	outs, err := iv.spec.Joiner(ctx, left, right)
	if err != nil {
		return nil, err
	}
	var ts time.Time
	for _, r := range []*kafkabpl.Record{left, right} {
		if r != nil && r.Timestamp().After(ts) {
			ts = r.Timestamp()
		}
	}
	for i := range outs {
		if outs[i].Timestamp.IsZero() {
			outs[i].Timestamp = ts
		}
	}
	return outs, nil
}

// intervalTransform is the Transform of an interval join: it joins the
// input with the other side's records of its key within the window, then
// buffers it.
func (st *kafkaStore) intervalTransform() Transform {
	iv, j := st.interval, st.interval.spec
	return func(ctx context.Context, in *kafkabpl.Record) ([]Output, error) {
		p, err := st.partOf(in)
		if err != nil {
			return nil, err
		}
		key, err := stateKey(in)
		if err != nil {
			return nil, err
		}
		side, ts := int64(0), in.Timestamp().UnixMilli()
		// The other side's timestamps that match, and how far past the
		// input's the stream time may be before it is late.
		lo, hi, end := ts-j.Before.Milliseconds(), ts+j.After.Milliseconds(), j.After
		if in.Topic() != iv.inputs[0] {
			side = 1
			lo, hi, end = ts-j.After.Milliseconds(), ts+j.Before.Milliseconds(), j.Before
		}
		ip := iv.part(in.Partition())
		if ip.time != math.MinInt64 && satAdd(ts, end.Milliseconds()+j.Grace.Milliseconds()) < ip.time {
			return nil, fmt.Errorf("%w: timestamp %d, and the stream time %d passed the end of its join window by more than the grace, %v", kafkabpl.ErrLate, ts, ip.time, j.Grace)
		}
		state, err := st.state.State(p, key)
		if err != nil {
			return nil, err
		}
		buf, err := decodeBuffer(state)
		if err != nil {
			return nil, err
		}
		var outs []Output
		matched := false
		first := int64(math.MaxInt64)
		for _, e := range buf {
			ets := e.At(bufTime).(int64)
			first = min(first, iv.expiry(ets))
			if e.At(bufSide).(int64) == side || ets < lo || ets > hi {
				continue
			}
			other := iv.buffered(e, in.KeyBytes(), in.Partition())
			left, right := in, other
			if side == 1 {
				left, right = other, in
			}
			o, err := iv.join(ctx, left, right)
			if err != nil {
				return nil, err
			}
			outs = append(outs, o...)
			matched = true
			e.Set(bufMatched, true)
		}
		l := &value.List{}
		for _, e := range buf {
			l.Append(e)
		}
		l.Append(entry(in, side, matched))
		if err := st.state.SetState(p, key, l); err != nil {
			return nil, err
		}
		ip.time = max(ip.time, ts)
		if at := iv.expiry(ts); at < first {
			heap.Push(&ip.due, due{at: at, key: key})
		}
		return outs, nil
	}
}

// expireIntervals drops the buffered records of the held partitions that
// expired, in the batch in hand, handing the results of the unmatched
// ones (IntervalLeft, IntervalOuter) to write. A joiner's error fails
// the batch under StopOnError; under the others that result is skipped.
func (s *stream) expireIntervals(b *batchCounts, write func(Output) error) error {
	st := s.store
	if st == nil || st.interval == nil {
		return nil
	}
	iv := st.interval
	for _, id := range slices.Sorted(maps.Keys(iv.parts)) {
		ip, p := iv.parts[id], st.state.Part(id)
		if p == nil {
			continue
		}
		// The keys due, in the order of their due times, then of the
		// keys, each once.
		var keys []due
		for ip.due.Len() > 0 && ip.due[0].at <= ip.time {
			keys = append(keys, heap.Pop(&ip.due).(due))
		}
		slices.SortFunc(keys, func(a, b due) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.key, b.key)) })
		seen := map[string]bool{}
		for _, d := range keys {
			if seen[d.key] {
				continue
			}
			seen[d.key] = true
			outs, err := s.expireKey(p, ip, id, d.key, b)
			if err != nil {
				return err
			}
			for _, o := range outs {
				if err := write(o); err != nil {
					return err
				}
			}
			b.produced += int64(len(outs))
		}
	}
	return nil
}

// expireKey drops key's expired records and returns the results of the
// unmatched ones that have one.
func (s *stream) expireKey(p *store.Part, ip *intervalPart, id int32, key string, b *batchCounts) ([]Output, error) {
	st := s.store
	iv := st.interval
	state, err := st.state.State(p, key)
	if err != nil {
		return nil, err
	}
	buf, err := decodeBuffer(state)
	if err != nil || len(buf) == 0 {
		return nil, err
	}
	kept := &value.List{}
	first := int64(math.MaxInt64)
	var outs []Output
	for _, e := range buf {
		ts := e.At(bufTime).(int64)
		if at := iv.expiry(ts); at > ip.time {
			kept.Append(e)
			first = min(first, at)
			continue
		}
		side := e.At(bufSide).(int64)
		if e.At(bufMatched).(bool) || iv.spec.Kind == IntervalInner || side == 1 && iv.spec.Kind != IntervalOuter {
			continue
		}
		rec := iv.buffered(e, []byte(key), id)
		left, right := rec, (*kafkabpl.Record)(nil)
		if side == 1 {
			left, right = nil, rec
		}
		o, err := iv.join(s.workCtx, left, right)
		if err != nil {
			err = fmt.Errorf("the unmatched result of key %q's record at offset %d of %q: %w", key, rec.Offset(), rec.Topic(), err)
			if s.spec.OnError == StopOnError {
				return nil, err
			}
			b.skipped++
			b.lastErr = err
			continue
		}
		outs = append(outs, o...)
	}
	if kept.Len() == len(buf) {
		heap.Push(&ip.due, due{at: first, key: key}) // a hint that came early
		return nil, nil
	}
	var next any
	if kept.Len() > 0 {
		next = kept
		heap.Push(&ip.due, due{at: first, key: key})
	}
	if err := st.state.SetState(p, key, next); err != nil {
		return nil, err
	}
	return outs, nil
}
