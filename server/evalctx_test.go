package server

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

type ctxKey struct{}

func newCapped(parent context.Context, d time.Duration) *cappedCtx {
	return &cappedCtx{parent: parent, start: time.Now(), max: d}
}

// waitErr polls Err until it is not nil, for a minute at most.
func waitErr(t *testing.T, c context.Context) error {
	t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if err := c.Err(); err != nil {
			return err
		}
	}
	t.Fatal("the context did not end within a minute")
	return nil
}

func TestCappedCtxDeadlineWithoutTimer(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	c := newCapped(parent, 20*time.Millisecond)
	if err := c.Err(); err != nil {
		t.Fatalf("Err at once: %v", err)
	}
	if d, ok := c.Deadline(); !ok || !d.Equal(c.start.Add(20*time.Millisecond)) {
		t.Fatalf("Deadline %v %v", d, ok)
	}
	if c.Value(ctxKey{}) != "v" {
		t.Fatal("the parent's value is lost")
	}
	time.Sleep(25 * time.Millisecond)
	if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err after the deadline: %v", err)
	}
	if c.real.Load() != nil {
		t.Fatal("a timer context was made without a Done call")
	}
	c.release()
	if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err after release, the deadline past: %v, want DeadlineExceeded kept", err)
	}
	if cause := context.Cause(c); !errors.Is(cause, context.DeadlineExceeded) {
		t.Fatalf("Cause %v", cause)
	}
}

func TestCappedCtxDoneAtTheDeadline(t *testing.T) {
	c := newCapped(context.Background(), 20*time.Millisecond)
	defer c.release()
	child, cancel := context.WithCancel(c)
	defer cancel()
	select {
	case <-c.Done():
	case <-time.After(time.Minute):
		t.Fatal("Done not closed a minute after a 20 ms deadline")
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(c), context.DeadlineExceeded) {
		t.Fatalf("Err %v Cause %v", c.Err(), context.Cause(c))
	}
	select {
	case <-child.Done():
	case <-time.After(time.Minute):
		t.Fatal("a child context did not end with it")
	}
}

func TestCappedCtxFollowsItsParent(t *testing.T) {
	for _, upgraded := range []bool{false, true} {
		parent, cancel := context.WithCancel(context.Background())
		c := newCapped(parent, time.Hour)
		if upgraded {
			c.Done()
		}
		cancel()
		if err := waitErr(t, c); !errors.Is(err, context.Canceled) {
			t.Fatalf("upgraded %v: Err %v after the parent's cancel", upgraded, err)
		}
		select {
		case <-c.Done():
		case <-time.After(time.Minute):
			t.Fatalf("upgraded %v: Done not closed after the parent's cancel", upgraded)
		}
		c.release()
	}
	// a parent's earlier deadline is its deadline
	parent, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pd, _ := parent.Deadline()
	if d, _ := newCapped(parent, time.Hour).Deadline(); !d.Equal(pd) {
		t.Fatalf("Deadline %v, want the parent's %v", d, pd)
	}
}

func TestCappedCtxRelease(t *testing.T) {
	c := newCapped(context.Background(), time.Hour)
	c.release()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("Err after release: %v", c.Err())
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done not closed after release")
	}
	u := newCapped(context.Background(), time.Hour)
	u.Done()
	u.release()
	if !errors.Is(u.Err(), context.Canceled) {
		t.Fatalf("Err after the release of an upgraded one: %v", u.Err())
	}
}

// A long evaluation, which checks Err at every call, gets a timer context
// after upgradeAfter checks; checks and waits from several goroutines
// agree.
func TestCappedCtxUpgradesUnderChecks(t *testing.T) {
	c := newCapped(context.Background(), 50*time.Millisecond)
	defer c.release()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if g == 0 {
				<-c.Done()
				return
			}
			for c.Err() == nil {
			}
		}()
	}
	wg.Wait()
	if c.real.Load() == nil {
		t.Fatal("no timer context after many checks")
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v", c.Err())
	}
}

// An evaluation through evalContext ends at its cap, and a finished one's
// context is cancelled.
func TestEvalContextCaps(t *testing.T) {
	ctx, capped := evalContext(context.Background(), 10*time.Millisecond)
	if err := waitErr(t, ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err %v", err)
	}
	capped.release()
	ctx, capped = evalContext(context.Background(), time.Hour)
	capped.release()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err after cancel: %v", ctx.Err())
	}
}

// What evalContext costs an evaluation that ends at once (most requests'):
// make, one check, release.
func BenchmarkEvalContext(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		ctx, capped := evalContext(parent, DefaultMaxEvalTime)
		if ctx.Err() != nil {
			b.Fatal("ended")
		}
		capped.release()
	}
}
