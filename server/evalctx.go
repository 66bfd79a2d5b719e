package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl/bpl"
)

// evalContext is ctx capped at d, whose spawned executors outlive it.
// The cap costs no timer while it is not needed (see cappedCtx): most
// requests' evaluations end within microseconds of starting, and
// context.WithTimeout's timer, its cancellation and its link to the
// request's context were a tenth of such a request's CPU time.
// The caller calls the second result's release once done, as it would a
// CancelFunc (a method, not a func value, which would be one allocation
// more).
func evalContext(ctx context.Context, d time.Duration) (context.Context, *cappedCtx) {
	c := &cappedCtx{parent: ctx, start: time.Now(), max: d}
	return bpl.WithSpawnContext(c, context.Background()), c
}

// upgradeAfter is how many Err calls a cappedCtx answers itself before it
// makes its timer context: the evaluator checks Err at every call, so an
// evaluation that checks this often is a long one, which a timer context
// serves at the cost of an atomic load a check.
const upgradeAfter = 64

// cappedCtx is its parent ended at start+max at the latest, as
// context.WithDeadline is, made lazily: until something asks for its Done
// channel (a select that waits: a sleep, an HTTP call, a child context) or
// it has answered Err upgradeAfter times, Err compares the clock to the
// deadline itself and no timer exists. Then a context.WithDeadline of the
// parent takes over, and every method asks it. release cancels that
// context; when there is none, Err and Done answer as a cancelled context
// from then on.
type cappedCtx struct {
	parent context.Context
	start  time.Time
	max    time.Duration
	checks atomic.Int32

	mu     sync.Mutex
	real   atomic.Pointer[context.Context] // set once, under mu
	cancel context.CancelFunc
}

// canceledCtx is what a released cappedCtx without a timer context
// answers from: a context that has ended, Canceled.
var canceledCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (c *cappedCtx) deadline() time.Time { return c.start.Add(c.max) }

// Deadline is the earlier of the parent's deadline and start+max.
func (c *cappedCtx) Deadline() (time.Time, bool) {
	d := c.deadline()
	if pd, ok := c.parent.Deadline(); ok && pd.Before(d) {
		return pd, true
	}
	return d, true
}

// Done is the timer context's Done channel, made on the first call.
func (c *cappedCtx) Done() <-chan struct{} { return c.upgrade().Done() }

// Err is context.DeadlineExceeded once start+max has passed, the
// parent's error once it has ended, Canceled once released, else nil.
func (c *cappedCtx) Err() error {
	if r := c.real.Load(); r != nil {
		return (*r).Err()
	}
	if c.checks.Add(1) > upgradeAfter {
		return c.upgrade().Err()
	}
	return c.errNow()
}

// errNow is Err before the upgrade.
func (c *cappedCtx) errNow() error {
	if err := c.parent.Err(); err != nil {
		return err
	}
	if time.Since(c.start) >= c.max {
		return context.DeadlineExceeded
	}
	return nil
}

// Value is the timer context's value (its own cancellation, for
// context.Cause) once there is one, else the parent's.
func (c *cappedCtx) Value(key any) any {
	if r := c.real.Load(); r != nil {
		return (*r).Value(key)
	}
	return c.parent.Value(key)
}

// upgrade makes the timer context once, and answers it.
func (c *cappedCtx) upgrade() context.Context {
	if r := c.real.Load(); r != nil {
		return *r
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.upgradeLocked()
}

func (c *cappedCtx) upgradeLocked() context.Context {
	if r := c.real.Load(); r != nil {
		return *r
	}
	ctx, cancel := context.WithDeadline(c.parent, c.deadline())
	c.cancel = cancel
	c.real.Store(&ctx)
	return ctx
}

// release ends the context as a CancelFunc does: an error it already has
// stays.
func (c *cappedCtx) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.real.Load() == nil {
		if c.errNow() == nil {
			c.real.Store(&canceledCtx)
			return
		}
		c.upgradeLocked() // ended already: the timer context has its error
	}
	if c.cancel != nil {
		c.cancel()
	}
}

// String names it, as context's own types do.
func (c *cappedCtx) String() string { return "server.evalContext" }
