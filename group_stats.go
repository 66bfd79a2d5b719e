package kafkabpl

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// What a consumer's or a stream's group does, for package metrics: its
// rebalances and commits, told to the hooks that implement GroupHook, and
// the lag of its partitions, which Library.ClientLags reports.

// GroupEvent is what a group did to the partitions of a consumer or a
// stream (see [GroupHook]).
type GroupEvent string

// The events of [GroupHook.OnGroupRebalance].
const (
	// PartitionsAssigned: the group handed the member its assignment, at
	// the end of every rebalance the member took part in, whether or not
	// it brought new partitions (under the cooperative protocols most
	// bring none); partitions is how many are new.
	PartitionsAssigned GroupEvent = "assigned"
	// PartitionsRevoked: the group took partitions away in a rebalance,
	// or the member gave them up as it left (destroyed), once it could
	// commit what it had read from them.
	PartitionsRevoked GroupEvent = "revoked"
	// PartitionsLost: the member lost partitions without a chance to
	// commit: its session ended (the brokers heard nothing from it for
	// "session-timeout"), or the group fenced it.
	PartitionsLost GroupEvent = "lost"
)

// GroupHook is told what the group of a consumer or a stream does. A hook
// that the Library's [ClientHooks] gives a consumer's or a stream's client
// may implement it, besides franz-go's hook interfaces; package metrics'
// hooks do, to count rebalances and commits. kafkabpl gives franz-go only
// the hooks that implement one of franz-go's interfaces, so a GroupHook
// needs none of them. A share consumer's hooks are told nothing.
//
// group is the "group" the config gave, or "" for a consumer given none
// (its group is then a random name of its own: as a metric label it would
// grow without bound).
//
// Hazard: the calls come from franz-go's goroutines and the handle's own,
// concurrently: a GroupHook must be safe for concurrent use, and quick
// (a rebalance waits for it).
type GroupHook interface {
	// OnGroupCommit is told of each offset commit sent to the brokers:
	// kafka-commit, an auto-commit (enable-auto-commit), the commit of a
	// revoked partition or of a destroyed consumer, a stream's commit of
	// a batch (under exactly-once, its transaction's end). err is nil
	// when the brokers took every offset; a commit that had nothing to
	// commit sends nothing and is not told, nor is an auto-commit cut
	// short by the client's close.
	OnGroupCommit(group string, err error)
	// OnGroupRebalance is told of each event of the group's rebalances,
	// with the number of partitions concerned; revoked and lost are told
	// only when there was at least one. Under exactly-once, franz-go
	// does not report a second revocation before the stream's next
	// transaction ends: a stream idle across two rebalances is told of
	// the first only.
	OnGroupRebalance(group string, event GroupEvent, partitions int)
}

// ClientLag is how far a consumer or a stream is behind on one
// partition its group assigned it (see [Library.ClientLags]).
type ClientLag struct {
	Kind      Kind   // Consumer or Stream
	Group     string // the config's "group"; "" for a consumer given none
	Topic     string
	Partition int32
	Lag       int64 // records
}

// ClientLags returns the lag of each partition the Library's consumers and
// streams are assigned, sorted by kind, group, topic and partition. It
// sends no request: a lag is the partition's high watermark, as the
// latest fetch response said, less the handle's position, as its client
// last computed them:
//
//   - when a poll (or a stream's batch) returns the partition's records:
//     the high watermark of the fetch that brought them, less the offset
//     after the last of them;
//   - when the client sends its next fetch request to the partition's
//     broker, which franz-go does once every record it had fetched from
//     that broker was polled: the high watermark less the offset the
//     request fetches from. A partition caught up is fetched again every
//     fetch-max-wait (500 ms) and a few milliseconds, so its lag is that
//     fresh; this figure also steps past transaction markers, which the
//     first counts until the next fetch.
//
// Records a consumer took from its client and holds, not yet returned to
// the script (those of topics a poll did not ask for, those held back
// while the schema registry does not answer), count as consumed, as does
// a stream's batch in hand.
//
// Hazards: a handle that stops polling stops fetching, and its lags stay
// what they were (records fetched and not yet polled are then in package
// metrics' kafkabpl_buffered_fetch_records; the brokers' view of a
// group's lag is [Library.DescribeGroup]'s, a request). Under
// read_committed, records of transactions still open count until they
// end. A partition appears once its client computed a lag for it, and not
// while a stateful stream restores its store. Two handles of one group in
// one Library report their own partitions, each once; during a rebalance
// both may report one partition.
func (lib *Library) ClientLags() []ClientLag {
	lib.mu.RLock()
	var stats []*groupStats
	for _, h := range lib.handles {
		if h.group != nil {
			stats = append(stats, h.group)
		}
	}
	lib.mu.RUnlock()
	var out []ClientLag
	for _, gs := range stats {
		gs.mu.Lock()
		for t, ps := range gs.lag {
			for p, l := range ps {
				if l >= 0 {
					out = append(out, ClientLag{Kind: gs.kind, Group: gs.group, Topic: t, Partition: p, Lag: l})
				}
			}
		}
		gs.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b ClientLag) int {
		return cmp.Or(strings.Compare(string(a.Kind), string(b.Kind)), strings.Compare(a.Group, b.Group),
			strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// groupStats keeps what a consumer's or a stream's group did, and tells
// its GroupHooks.
type groupStats struct {
	kind  Kind
	group string      // as GroupHook and ClientLag name it: "" when the config gave none
	hooks []GroupHook // set by kgoOpts, before the client exists

	mu  sync.Mutex
	lag partitions[int64] // the assigned partitions' lags; -1 until one is computed
}

// newGroupStats returns the stats of a handle of kind made from cfg.
func newGroupStats(kind Kind, cfg *config) *groupStats {
	gs := &groupStats{kind: kind, lag: partitions[int64]{}}
	if cfg.given["group"] {
		gs.group = cfg.group
	}
	return gs
}

// kgoHooks returns, of hs, what franz-go takes: the hooks that implement
// one of its interfaces, and those that are no GroupHook (franz-go then
// says what is wrong with them). The GroupHooks among hs are kept in gs
// (nil: a handle that has no group).
func (gs *groupStats) kgoHooks(hs []kgo.Hook) []kgo.Hook {
	var out []kgo.Hook
	for _, h := range hs {
		gh, isGroup := h.(GroupHook)
		if isGroup && gs != nil {
			gs.hooks = append(gs.hooks, gh)
		}
		if !isGroup || franzHook(h) {
			out = append(out, h)
		}
	}
	return out
}

// franzHook tells whether h implements one of franz-go's hook interfaces
// (kgo v1.22.3 hooks.go).
func franzHook(h kgo.Hook) bool {
	switch h.(type) {
	case kgo.HookNewClient, kgo.HookClientClosed, kgo.HookBrokerConnect, kgo.HookBrokerDisconnect,
		kgo.HookBrokerWrite, kgo.HookBrokerRead, kgo.HookBrokerE2E, kgo.HookBrokerThrottle,
		kgo.HookGroupManageError, kgo.HookProduceBatchWritten, kgo.HookFetchBatchRead,
		kgo.HookProduceRecordBuffered, kgo.HookProduceRecordPartitioned, kgo.HookProduceRecordUnbuffered,
		kgo.HookFetchRecordBuffered, kgo.HookFetchRecordUnbuffered, kgo.HookPollStart:
		return true
	}
	return false
}

// rebalanceFn is the type of kgo's OnPartitionsAssigned, Revoked and Lost.
type rebalanceFn = func(context.Context, *kgo.Client, map[string][]int32)

// rebalanceOpts returns kgo's group callbacks, and the option that has
// kgo give the partitions' lags at each fetch: each callback notes the
// event, then calls the handle's own (nil: none).
func (gs *groupStats) rebalanceOpts(assigned, revoked, lost rebalanceFn) []kgo.Opt {
	return []kgo.Opt{
		kgo.OnPartitionsAssigned(gs.noting(PartitionsAssigned, assigned)),
		kgo.OnPartitionsRevoked(gs.noting(PartitionsRevoked, revoked)),
		kgo.OnPartitionsLost(gs.noting(PartitionsLost, lost)),
		kgo.ConsumePreferringLagFn(gs.fetchLags),
	}
}

// noting returns fn with the event noted first.
func (gs *groupStats) noting(event GroupEvent, fn rebalanceFn) rebalanceFn {
	return func(ctx context.Context, cl *kgo.Client, ps map[string][]int32) {
		gs.rebalanced(event, ps)
		if fn != nil {
			fn(ctx, cl, ps)
		}
	}
}

// rebalanced notes what the group assigned or took away, and tells the
// hooks.
func (gs *groupStats) rebalanced(event GroupEvent, ps map[string][]int32) {
	n := 0
	gs.mu.Lock()
	for t, parts := range ps {
		n += len(parts)
		for _, p := range parts {
			if event == PartitionsAssigned {
				if !gs.lag.has(t, p) {
					gs.lag.set(t, p, -1)
				}
			} else if m := gs.lag[t]; m != nil {
				delete(m, p)
				if len(m) == 0 {
					delete(gs.lag, t)
				}
			}
		}
	}
	gs.mu.Unlock()
	if n == 0 && event != PartitionsAssigned {
		return
	}
	for _, h := range gs.hooks {
		h.OnGroupRebalance(gs.group, event, n)
	}
}

// fetchLags is kgo's PreferLagFn, called as kgo writes a fetch request:
// it keeps the lags kgo computed (the high watermark of the previous
// response less the offset fetched from) of the partitions still
// assigned, and leaves kgo's order alone.
func (gs *groupStats) fetchLags(lags map[string]map[int32]int64, _ []string, _ map[string][]int32) ([]string, map[string][]int32) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	for t, ps := range lags {
		mine := gs.lag[t]
		if mine == nil {
			continue
		}
		for p, l := range ps {
			if _, ok := mine[p]; ok {
				mine[p] = l
			}
		}
	}
	return nil, nil
}

// polled notes the lags of the partitions of fetches that brought records:
// each one's high watermark less the offset after its last record.
func (gs *groupStats) polled(fetches kgo.Fetches) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		gs.polledLocked(p.Topic, p.Partition, p.HighWatermark, p.Records)
	})
}

// polledLocked notes one partition's lag from what a fetch brought; call
// it with gs.mu held.
func (gs *groupStats) polledLocked(t string, p int32, hwm int64, recs []*kgo.Record) {
	if len(recs) == 0 || hwm < 0 {
		return
	}
	mine := gs.lag[t]
	if _, ok := mine[p]; !ok {
		return // revoked since
	}
	mine[p] = max(0, hwm-recs[len(recs)-1].Offset-1)
}

// committed tells the hooks of a commit sent, with its error.
func (gs *groupStats) committed(err error) {
	for _, h := range gs.hooks {
		h.OnGroupCommit(gs.group, err)
	}
}

// autoCommitted is kgo's AutoCommitCallback: it tells the hooks of an
// auto-commit, and logs its failure as kgo's own callback does (this one
// replaces it). One canceled as the group is left is not told.
func (gs *groupStats) autoCommitted(cl *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
	if errors.Is(err, context.Canceled) {
		return // the group is being left: kgo's own callback says nothing either
	}
	if err == nil && resp != nil {
	partitions:
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err = kerr.ErrorForCode(p.ErrorCode); err != nil {
					err = Wrapf(ErrKafka, err, "topic %q partition %d", t.Topic, p.Partition)
					break partitions
				}
			}
		}
	}
	gs.committed(err)
	if err == nil {
		return
	}
	if l, ok := cl.OptValue(kgo.WithLogger).(kgo.Logger); ok && l != nil && l.Level() >= kgo.LogLevelError {
		l.Log(kgo.LogLevelError, "auto-commit failed", "group", cl.OptValue(kgo.ConsumerGroup), "err", err)
	}
}
