package bpl

import (
	"context"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// The concurrency family, continued: timer tasks (timer-schedule,
// timer-cancel, timer-tasks).

// milliseconds, truncated to a whole number as brain4it does.
func (t *task) timerMillis(f *frame, what string, v any) (time.Duration, error) {
	ms, ok := toFloat(v)
	if !ok || ms != ms {
		return 0, t.errorf(f, "InvalidArgument", "timer-schedule: %s is %s, want milliseconds", what, value.Describe(v))
	}
	ms = math.Trunc(ms)
	if ms >= float64(math.MaxInt64/time.Millisecond) {
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// (timer-schedule function delay period overlap) calls function, with no
// arguments, on an executor of its own after delay milliseconds, then
// every period milliseconds (period absent, null, or under 1 ms: once) at
// a fixed rate, and gives the task's id, from 0 to 32767. When a call is
// due while the last one is still running it is skipped, unless overlap
// is true. The task runs until timer-cancel, Close, or the end of the run
// that scheduled it; a task that runs once is gone once it has started.
func biTimerSchedule(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 2, 4); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	fn, ok := args.At(0).(value.Callable)
	if !ok || fn == nil || fn == (*Function)(nil) {
		return nil, t.errorf(f, "InvalidArgument", "timer-schedule: want a function, got %s", value.Describe(args.At(0)))
	}
	delay, err := t.timerMillis(f, "the delay", args.At(1))
	if err != nil {
		return nil, err
	}
	if delay < 0 {
		return nil, t.errorf(f, "InvalidArgument", "timer-schedule: the delay is %s, want 0 or more", value.Describe(args.At(1)))
	}
	var period time.Duration
	if args.Len() > 2 && args.At(2) != nil {
		if period, err = t.timerMillis(f, "the period", args.At(2)); err != nil {
			return nil, err
		}
	}
	overlap := args.Len() > 3 && truthy(args.At(3))

	c := &t.in.conc
	c.mu.Lock()
	c.init()
	if c.closed {
		c.mu.Unlock()
		return nil, t.closedError(f, "timer-schedule")
	}
	id, ok := nextID(c.timers, &c.lastTimer)
	if !ok {
		c.mu.Unlock()
		return nil, t.errorf(f, "TooManyTasks", "timer-schedule: %d timer tasks are scheduled, the most there can be", concIDs)
	}
	ctx, cancel := context.WithCancel(t.base)
	stop := context.AfterFunc(c.ctx, cancel)
	tt := &timerTask{id: id, fn: fn, overlap: overlap, cancel: cancel}
	c.timers[id] = tt
	c.wg.Add(1)
	c.mu.Unlock()

	base, src := t.base, f.src
	code := value.NewList(value.Reference("call"), fn)
	fire := func() {
		c.mu.Lock()
		if tt.running > 0 && !tt.overlap {
			c.mu.Unlock()
			return
		}
		tt.running++
		c.mu.Unlock()
		done := func() {
			c.mu.Lock()
			tt.running--
			c.mu.Unlock()
		}
		ft := &task{in: t.in, ctx: ctx, base: base}
		if _, err := ft.spawn(&frame{src: src}, "timer-schedule", base, src, code, done); err != nil {
			done()
			if e := ft.asException(&frame{src: src}, err); !e.interrupt {
				c.writeError(t.in, "timer task "+strconv.Itoa(id)+": "+err.Error())
			}
		}
	}
	go func() {
		defer c.wg.Done()
		defer func() {
			stop()
			cancel()
			c.mu.Lock()
			if c.timers[id] == tt {
				delete(c.timers, id)
			}
			c.mu.Unlock()
		}()
		timer := time.NewTimer(delay)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if period < time.Millisecond {
			c.mu.Lock()
			if c.timers[id] == tt {
				delete(c.timers, id) // gone once started, before it runs
			}
			c.mu.Unlock()
			fire()
			return
		}
		fire()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				fire()
			}
		}
	}()
	return int64(id), nil
}

// writeError writes a line to the error output.
func (c *concState) writeError(in *Interp, line string) {
	c.mu.Lock()
	w := c.errOut
	c.mu.Unlock()
	in.outMu.Lock()
	defer in.outMu.Unlock()
	if w == nil {
		w = in.out
	}
	io.WriteString(w, line+"\n")
}

// (timer-cancel id) cancels the timer task id, so that its function is
// not called again (a call running goes on), and gives true; false when
// there is no such task. (timer-cancel) cancels every timer task and gives
// true when there was one.
func biTimerCancel(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 0, 1); err != nil {
		return nil, err
	}
	id, err := t.optionalID(f, call, "timer-cancel")
	if err != nil {
		return nil, err
	}
	c := &t.in.conc
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	cancelled := false
	for tid, tt := range c.timers {
		if id == -2 || tid == id {
			delete(c.timers, tid)
			tt.cancel()
			cancelled = true
		}
	}
	return cancelled, nil
}

// (timer-tasks) gives the scheduled timer tasks of this interpreter as a
// list of their functions named by their ids, in the order of the ids:
// ("0" => (function () (check))).
func biTimerTasks(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 0, 0); err != nil {
		return nil, err
	}
	c := &t.in.conc
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	ids := make([]int, 0, len(c.timers))
	for id := range c.timers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	l := &value.List{}
	for _, id := range ids {
		l.AppendNamed(strconv.Itoa(id), c.timers[id].fn)
	}
	return l, nil
}

// optionalID reads the id argument of kill and timer-cancel: -2, for all,
// when there is none.
func (t *task) optionalID(f *frame, call *value.List, fn string) (int, error) {
	if call.Len() < 2 {
		return -2, nil
	}
	v, err := t.eval(f, call.At(1))
	if err != nil {
		return 0, err
	}
	return t.concID(f, fn, v)
}
