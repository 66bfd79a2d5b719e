// Package benchloop holds the stream loops a franz-go program writes, the
// baselines that the streams benchmarks (the root package's and
// bench/clients') measure the library's streams against. Each copies its
// inputs' keys and values to topic out until ctx is done.
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
