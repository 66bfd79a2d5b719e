package functions

import (
	"context"
	"math"
	"time"

	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// The BPL side of store queries: kafka-store-get, kafka-store-range and
// kafka-store-windows.

// bplStoreGet is (kafka-store-get id key): the key's committed state, or
// null.
func (lib table) bplStoreGet(ctx context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-store-get", l)
	if err != nil {
		return nil, err
	}
	v, _, err := stream.Of(lib.Library).StoreGet(ctx, id, a.pos[1])
	return v, err
}

// bplStoreRange is (kafka-store-range id [from to]): (key => state ...),
// by partition then key.
func (lib table) bplStoreRange(ctx context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-store-range", l)
	if err != nil {
		return nil, err
	}
	from, to := a.rangeBounds()
	entries, err := stream.Of(lib.Library).StoreRange(ctx, id, from, to)
	if err != nil {
		return nil, err
	}
	out := &value.List{}
	for _, e := range entries {
		out.AppendNamed(keyName(e.Key), e.State)
	}
	return out, nil
}

// bplStoreWindows is (kafka-store-windows id key [since until]): the key's
// windows, (("start" => ms "end" => ms "value" => v) ...), in start order;
// since and until are ms, all of them by default.
func (lib table) bplStoreWindows(ctx context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-store-windows", l)
	if err != nil {
		return nil, err
	}
	since, until := int64(math.MinInt64), int64(math.MaxInt64)
	if len(a.pos) > 2 {
		if since, err = a.int(a.pos[2], "since (ms)", math.MinInt64, math.MaxInt64); err != nil {
			return nil, err
		}
	}
	if len(a.pos) > 3 {
		if until, err = a.int(a.pos[3], "until (ms)", math.MinInt64, math.MaxInt64); err != nil {
			return nil, err
		}
	}
	ws, err := stream.Of(lib.Library).StoreWindows(ctx, id, a.pos[1], time.UnixMilli(since), time.UnixMilli(until))
	if err != nil {
		return nil, err
	}
	out := &value.List{}
	for _, w := range ws {
		e := &value.List{}
		e.AppendNamed("start", w.Start.UnixMilli())
		e.AppendNamed("end", w.End.UnixMilli())
		e.AppendNamed("value", w.Value)
		out.Append(e)
	}
	return out, nil
}

// keyName is the name a key gives its entry, as kafka-poll names a
// message: a string as it is, bytes as text, any other value as BPL text.
func keyName(k any) string {
	switch k := k.(type) {
	case string:
		return k
	case []byte:
		return string(k)
	}
	return value.Format(k)
}
