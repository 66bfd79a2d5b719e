// Package benchloop holds the stream loops a franz-go program writes, the
// baselines that the streams benchmarks (the root package's and
// bench/clients') measure the library's streams against. Each runs until
// ctx is done: Transact and Commit copy their inputs' keys and values to
// topic out, Join joins them with a table ReadTable loaded.
package benchloop

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Committed is the sum of group's committed offsets on topic: the
// watcher both sides of a streams benchmark are timed by. A group that
// has not joined yet has committed 0.
func Committed(ctx context.Context, adm *kadm.Client, group, topic string) (int64, error) {
	offs, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var n int64
	for _, o := range offs[topic] {
		if o.Err != nil {
			return 0, o.Err
		}
		n += o.At
	}
	return n, nil
}

// Transact is the exactly-once loop of a GroupTransactSession: poll,
// begin, produce each record to out, end with a commit when every produce
// succeeded. produced counts the outputs of committed transactions. It
// returns nil when ctx ends it, and closes sess.
func Transact(ctx context.Context, sess *kgo.GroupTransactSession, out string, produced *atomic.Int64) error {
	defer sess.Close()
	for {
		fs := sess.PollRecords(ctx, 500)
		if ctx.Err() != nil {
			return nil
		}
		if err := fs.Err0(); err != nil {
			return err
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			return err
		}
		var failed atomic.Bool
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			sess.Produce(ctx, &kgo.Record{Topic: out, Key: r.Key, Value: r.Value}, func(_ *kgo.Record, err error) {
				if err != nil {
					failed.Store(true)
				}
			})
			n++
		})
		committed, err := sess.End(ctx, kgo.TransactionEndTry(!failed.Load()))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if committed {
			produced.Add(int64(n))
		}
	}
}

// Commit is the at-least-once loop: poll with rebalances held (cl needs
// kgo.BlockRebalanceOnPoll and kgo.DisableAutoCommit), produce each record
// to out, flush, commit what was polled, allow rebalances. produced counts
// the committed outputs. It returns nil when ctx ends it, and closes cl.
func Commit(ctx context.Context, cl *kgo.Client, out string, produced *atomic.Int64) error {
	defer cl.Close()
	for {
		fs := cl.PollRecords(ctx, 500)
		if ctx.Err() != nil {
			cl.AllowRebalance()
			return nil
		}
		if err := fs.Err0(); err != nil {
			return err
		}
		recs := fs.Records()
		if len(recs) == 0 {
			cl.AllowRebalance()
			continue
		}
		var failed atomic.Bool
		for _, r := range recs {
			cl.Produce(ctx, &kgo.Record{Topic: out, Key: r.Key, Value: r.Value}, func(_ *kgo.Record, err error) {
				if err != nil {
					failed.Store(true)
				}
			})
		}
		if err := cl.Flush(ctx); err != nil || failed.Load() {
			cl.AllowRebalance()
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("a produce failed (flush: %v)", err)
		}
		if err := cl.CommitRecords(ctx, recs...); err != nil {
			cl.AllowRebalance()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		produced.Add(int64(len(recs)))
		cl.AllowRebalance()
	}
}

// ReadTable reads topic whole, read_committed, to the end offsets it finds
// first: the latest value per key (a null value deletes it). It is how a
// franz-go program loads the table of a stream–table join.
func ReadTable(ctx context.Context, seeds kgo.Opt, topic string) (map[string][]byte, error) {
	cl, err := kgo.NewClient(seeds, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
		}
	})
	table := map[string][]byte{}
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return nil, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Value == nil {
				delete(table, string(r.Key))
			} else {
				table[string(r.Key)] = r.Value
			}
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
	}
	return table, nil
}

// Join is the exactly-once loop of a stream–table join: poll, begin, look
// each input's key up in table and produce "<joined>|<value>" to out (an
// input whose key the table lacks is dropped, as an inner join drops it),
// end with a commit when every produce succeeded. produced counts the
// inputs of committed transactions. A transaction the brokers abort is an
// error. It returns nil when ctx ends it, and closes sess.
func Join(ctx context.Context, sess *kgo.GroupTransactSession, table map[string][]byte, out string, produced *atomic.Int64) error {
	defer sess.Close()
	for {
		fs := sess.PollRecords(ctx, 500)
		if ctx.Err() != nil {
			return nil
		}
		if err := fs.Err0(); err != nil {
			return err
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			return err
		}
		var failed atomic.Bool
		promise := func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Store(true)
			}
		}
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			t, ok := table[string(r.Key)]
			if !ok {
				return
			}
			v := make([]byte, 0, len(t)+1+len(r.Value))
			v = append(append(append(v, t...), '|'), r.Value...)
			sess.Produce(ctx, &kgo.Record{Topic: out, Key: r.Key, Value: v}, promise)
		})
		committed, err := sess.End(ctx, kgo.TransactionEndTry(!failed.Load()))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if !committed {
			return errors.New("a transaction was aborted")
		}
		produced.Add(int64(n))
	}
}
