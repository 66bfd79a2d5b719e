package stream

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kadm"
)

// What a stream reports: its status, and the library's streams.

// Status is a stream's state and counts since it started. Counts
// cover committed work only: what an aborted transaction did is counted
// again when its inputs are processed again.
type Status struct {
	State        State
	Processed    int64            // inputs processed (filtered, skipped and dead-lettered ones included)
	Produced     int64            // outputs written, dead-letter records not included
	Dropped      int64            // inputs the transform filtered out (no outputs; a window's or a re-keyed input's wait is none) and inputs an inner join dropped
	Skipped      int64            // inputs skipped by SkipOnError
	DeadLettered int64            // inputs written to the dead-letter topic
	Lag          int64            // the group's lag on the input topics; -1 when the brokers did not say
	InputLag     map[string]int64 // the lag per input topic (a re-keying stream's repartition topic too); nil when the brokers did not say. A topic written in transactions (a repartition topic) lags by 1 per partition once read to its end: its last commit marker
	Transactions int64            // transactions committed (under at-least-once: offset commits)
	Aborted      int64            // transactions aborted (a rebalance, a stop, or by the brokers)
	Reinits      int64            // producers re-initialized after the brokers aborted a transaction (exactly-once only)
	LastError    error            // the error that failed the stream, or the last one it skipped or dead-lettered; nil if none
	Store        *StoreStatus     // a stateful stream's store; nil for a stateless stream
	Tables       []TableStatus    // the stream's tables, by name
}

// status returns the stream's state and counts; the lag is asked of the
// brokers, within request-timeout.
func (s *stream) status(ctx context.Context) *Status {
	s.mu.Lock()
	st := &Status{State: s.state, LastError: s.err}
	adm := kadm.NewClient(s.cl) // reinit replaces s.cl
	s.mu.Unlock()
	st.Processed = s.totals.processed.Load()
	st.Produced = s.totals.produced.Load()
	st.Dropped = s.totals.dropped.Load()
	st.Skipped = s.totals.skipped.Load()
	st.DeadLettered = s.totals.deadLettered.Load()
	st.Transactions = s.totals.transactions.Load()
	st.Aborted = s.totals.aborted.Load()
	st.Reinits = s.totals.reinits.Load()
	if s.store != nil {
		st.Store = s.store.status()
		if s.timers != nil {
			st.Store.Timers, st.Store.Fired = s.timers.pending.Load(), s.timers.fired.Load()
		}
	}
	st.Tables = s.tables.status()
	st.Lag = -1
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout())
	defer cancel()
	if lags, err := adm.Lag(ctx, s.cfg.Group()); err == nil {
		if l, ok := lags[s.cfg.Group()]; ok && l.Error() == nil {
			st.Lag, st.InputLag = 0, map[string]int64{}
			byTopic := l.Lag.TotalByTopic()
			for _, t := range s.spec.consumed(s.cfg) {
				st.InputLag[t] = byTopic[t].Lag
				st.Lag += byTopic[t].Lag
			}
		}
	}
	return st
}

// Status returns a stream's state and counts. It asks the brokers
// for the group's lag, within request-timeout; Lag is -1 when they do not
// answer.
func (rt *Runtime) Status(ctx context.Context, id string) (*Status, error) {
	h, release, err := rt.lib.Acquire(id, kafkabpl.Stream)
	if err != nil {
		return nil, kafkabpl.NewError("kafka-stream-status", err)
	}
	defer release()
	return h.Extension().(*stream).status(ctx), nil
}

// IDs returns the ids of the library's streams, running or not, that
// are not destroyed yet, sorted.
func (rt *Runtime) IDs() []string {
	var ids []string
	for _, s := range rt.streams() {
		ids = append(ids, s.h.ID())
	}
	return ids
}

// Running returns how many of the library's streams are running.
func (rt *Runtime) Running() int {
	n := 0
	for _, s := range rt.streams() {
		s.mu.Lock()
		if s.state == Running {
			n++
		}
		s.mu.Unlock()
	}
	return n
}

// Failed returns the errors of the library's streams that failed
// and are not destroyed yet, each naming its stream, in id order.
func (rt *Runtime) Failed() []error {
	var errs []error
	for _, s := range rt.streams() {
		s.mu.Lock()
		if s.state == Failed {
			errs = append(errs, fmt.Errorf("stream %s failed: %w", s.h.ID(), s.err))
		}
		s.mu.Unlock()
	}
	return errs
}

// streams returns the library's live streams, in id order.
func (rt *Runtime) streams() []*stream {
	var out []*stream
	for _, ext := range rt.lib.Handles(kafkabpl.Stream) {
		out = append(out, ext.(*stream))
	}
	slices.SortFunc(out, func(a, b *stream) int { return strings.Compare(a.h.ID(), b.h.ID()) })
	return out
}

// List returns the status as kafka-stream-status shows it: ("state" =>
// "running" "processed" => n "produced" => n "dropped" => n "skipped" => n
// "dead-lettered" => n "lag" => n "transactions" => n "aborted" => n
// "reinits" => n "last-error" => "..." or null), for a stateful stream
// "store" => the store's status (see [StoreStatus.List]), and for a stream
// with tables "tables" => (name => status ...) (see [TableStatus.List]).
func (st *Status) List() *value.List {
	l := &value.List{}
	l.AppendNamed("state", string(st.State))
	l.AppendNamed("processed", st.Processed)
	l.AppendNamed("produced", st.Produced)
	l.AppendNamed("dropped", st.Dropped)
	l.AppendNamed("skipped", st.Skipped)
	l.AppendNamed("dead-lettered", st.DeadLettered)
	l.AppendNamed("lag", st.Lag)
	if len(st.InputLag) > 1 {
		lags := &value.List{}
		for _, t := range slices.Sorted(maps.Keys(st.InputLag)) {
			lags.AppendNamed(t, st.InputLag[t])
		}
		l.AppendNamed("input-lag", lags)
	}
	l.AppendNamed("transactions", st.Transactions)
	l.AppendNamed("aborted", st.Aborted)
	l.AppendNamed("reinits", st.Reinits)
	l.AppendNamed("last-error", errorValue(st.LastError))
	if st.Store != nil {
		l.AppendNamed("store", st.Store.List())
	}
	if len(st.Tables) > 0 {
		tables := &value.List{}
		for i := range st.Tables {
			tables.AppendNamed(st.Tables[i].Name, st.Tables[i].List())
		}
		l.AppendNamed("tables", tables)
	}
	return l
}

// errorValue is err as a status list shows it: its text, or null.
func errorValue(err error) any {
	if err != nil {
		return err.Error()
	}
	return nil
}
