package functions

import (
	"context"

	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// The BPL side of standby queries: kafka-store-standby-get and
// kafka-store-standby-range read the standby copies a stream keeps of
// partitions other members of its group hold (its "standbys").

// bplStoreStandbyGet is (kafka-store-standby-get id key): ("state" => s
// "partition" => n "lag" => n "stale" => bool) from this process's standby
// copies, or null when none holds the key.
func (lib table) bplStoreStandbyGet(ctx context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-store-standby-get", l)
	if err != nil {
		return nil, err
	}
	e, found, err := stream.Of(lib.Library).StoreStandbyGet(ctx, id, a.pos[1])
	if err != nil || !found {
		return nil, err
	}
	return standbyEntry(e), nil
}

// bplStoreStandbyRange is (kafka-store-standby-range id [from to]): (key =>
// ("state" => s "partition" => n "lag" => n "stale" => bool) ...) from
// this process's standby copies, by partition then key.
func (lib table) bplStoreStandbyRange(ctx context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-store-standby-range", l)
	if err != nil {
		return nil, err
	}
	from, to := a.rangeBounds()
	entries, err := stream.Of(lib.Library).StoreStandbyRange(ctx, id, from, to)
	if err != nil {
		return nil, err
	}
	out := &value.List{}
	for _, e := range entries {
		out.AppendNamed(keyName(e.Key), standbyEntry(e))
	}
	return out, nil
}

// rangeBounds is the optional from and to after a store range's id (nil
// when not given), for kafka-store-range and kafka-store-standby-range.
func (a *args) rangeBounds() (from, to any) {
	if len(a.pos) > 1 {
		from = a.pos[1]
	}
	if len(a.pos) > 2 {
		to = a.pos[2]
	}
	return from, to
}

// standbyEntry is a standby copy's entry as the BPL functions return it.
func standbyEntry(e stream.StoreEntry) *value.List {
	l := &value.List{}
	l.AppendNamed("state", e.State)
	l.AppendNamed("partition", int64(e.Partition))
	l.AppendNamed("lag", e.Lag)
	l.AppendNamed("stale", e.Stale)
	return l
}
