package bpl

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// Concurrency tests wait on conditions, never for a time: every wait is
// bounded by concTimeout, which only a broken implementation reaches.
const concTimeout = 20 * time.Second

// syncBuffer is an output several executors write to at once.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// concPrelude defines (signal) and (await): await waits, on the monitor
// of the list ready, until signal has set done.
const concPrelude = `
(set ready (list))
(set done false)
(set signal (function () (sync ready (set done true) (notify ready))))
(set await (function () (sync ready (while (not done) (wait ready 1000))) done))
`

// concInterp returns an interpreter that is closed (within a bound) when
// the test ends, and its output.
func concInterp(t *testing.T) (*Interp, *syncBuffer) {
	t.Helper()
	out := &syncBuffer{}
	in := New(out)
	t.Cleanup(func() { closeWithin(t, in) })
	return in, out
}

// closeWithin closes in, failing the test if Close does not return.
func closeWithin(t *testing.T, in *Interp) {
	t.Helper()
	done := make(chan struct{})
	go func() { in.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(concTimeout):
		t.Fatal("Close did not return")
	}
}

// concRun runs concPrelude and src on in and gives the last value in BPL
// text, and the error.
func concRun(t *testing.T, in *Interp, src string) (string, error) {
	t.Helper()
	// The executors a run spawns end with its context: it ends with the
	// test, not when the run returns.
	ctx, cancel := context.WithTimeout(t.Context(), concTimeout)
	t.Cleanup(cancel)
	var last any
	err := in.Run(ctx, "test.bpl", concPrelude+src, func(v any) { last = v })
	return value.Format(last), err
}

// checkConc runs each script on an interpreter of its own, closed after it.
func checkConc(t *testing.T, tests []valueTest) {
	t.Helper()
	for _, tt := range tests {
		in, _ := concInterp(t)
		got, err := concRun(t, in, tt.src)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
		} else if got != tt.want {
			t.Errorf("%s = %s, want %s", tt.src, got, tt.want)
		}
		closeWithin(t, in)
	}
	checkMonitorsFreed(t)
}

// eventually waits until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(concTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// evalConc runs src on in and gives its last value in BPL text, failing the
// test on an error.
func evalConc(t *testing.T, in *Interp, src string) string {
	t.Helper()
	got, err := concRun(t, in, src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return got
}

// checkMonitorsFreed checks that no monitor is left once nothing runs.
func checkMonitorsFreed(t *testing.T) {
	t.Helper()
	monitors.Lock()
	n := len(monitors.m)
	monitors.Unlock()
	if n != 0 {
		t.Errorf("%d monitors left after the scripts ended", n)
	}
}

func TestSpawn(t *testing.T) {
	checkConc(t, []valueTest{
		// spawn gives the id at once; ids start at 0 and go up
		{`(spawn 1)`, `0`},
		{`(list (spawn 1) (spawn 2) (spawn null))`, `(0 1 2)`},
		// the code runs, with the globals
		{`(set x 1) (spawn (do (set x (+ x 1)) (signal))) (await) x`, `2`},
		// a spawned executor has locals of its own, not the spawner's
		{`(local x) (set x 1) (spawn (do (set y (list x)) (signal))) (await) (list x y)`, `(1 (null))`},
		{`(spawn (do (local z) (set z 5) (signal))) (await) z`, `null`},
		// the code is not evaluated by spawn
		{`(set x 0) (spawn (set x 7)) (spawn (signal)) (await) (while (!= x 7) (sleep 1)) x`, `7`},
		// a function value spawned
		{`(set f (function (a) (set got a) (signal))) (spawn (f 3)) (await) got`, `3`},
		// an executor outlives the executor that spawned it
		{`(spawn (spawn (do (sleep 1) (signal)))) (await)`, `true`},
		// a spawned executor can kill and list executors
		{`(spawn (do (set r (list (kill 99) (executors))) (signal))) (await) r`, `(false ("0" => (do (set r (list (kill 99) (executors))) (signal))))`},
		// kill of itself is false; the executor goes on
		{`(spawn (do (set r (kill 0)) (signal))) (await) r`, `false`},
		{`(spawn (do (set r (kill)) (signal))) (await) r`, `false`},
	})
	checkErrors(t, []errorTest{
		{`(spawn)`, "InvalidArgument", "spawn: want 1 argument, got 0", 1},
		{`(spawn 1 2)`, "InvalidArgument", "spawn: want 1 argument, got 2", 1},
	})
}

func TestExecutorsAndKill(t *testing.T) {
	in, out := concInterp(t)
	if got := evalConc(t, in, `(list (executors) (kill) (kill 0))`); got != `(() false false)` {
		t.Errorf("with no executors: %s", got)
	}
	// One executor that loops and one that waits on a monitor forever;
	// try catches neither's interruption.
	src := `
(spawn (try (while true (sleep 5)) (ex "*" => (set caught true)) (set finally true)))
(spawn (try (wait (list)) (ex "*" => (set caught true))))
(executors)`
	if got, want := evalConc(t, in, src), `("0" => (try (while true (sleep 5)) (ex "*" => (set caught true)) (set finally true)) "1" => (try (wait (list)) (ex "*" => (set caught true))))`; got != want {
		t.Errorf("executors = %s\nwant %s", got, want)
	}
	// executors gives a copy.
	if got := evalConc(t, in, `(set e (executors)) (set e/0/0 x) (size (get (executors) "0"))`); got != "4" {
		t.Errorf("after changing executors' list: %s", got)
	}
	// Ids can be given as strings, and as floats (truncated).
	for _, tt := range []valueTest{
		{`(kill 2)`, `false`},
		{`(kill -1)`, `false`},
		{`(kill 1e20)`, `false`},
		{`(kill NaN)`, `false`},
		{`(kill "0.5")`, `true`},
		{`(kill 1.9)`, `true`},
	} {
		if got := evalConc(t, in, tt.src); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.src, got, tt.want)
		}
	}
	eventually(t, "the killed executors to end", func() bool { return evalConc(t, in, `(executors)`) == "()" })
	if got := evalConc(t, in, `(list caught finally (kill 0) (kill))`); got != `(null null false false)` {
		t.Errorf("after kill: %s; want (null null false false)", got)
	}
	// (kill) kills them all.
	evalConc(t, in, `(spawn (while true (sleep 5))) (spawn (while true (sleep 5)))`)
	if got := evalConc(t, in, `(list (size (executors)) (kill))`); got != `(2 true)` {
		t.Errorf("(kill) = %s", got)
	}
	eventually(t, "the executors to end", func() bool { return evalConc(t, in, `(executors)`) == "()" })
	if s := out.String(); s != "" {
		t.Errorf("killed executors wrote %q", s)
	}
	checkErrors(t, []errorTest{
		{`(kill null)`, "InvalidArgument", "kill: want an id, got null", 1},
		{`(kill "x")`, "InvalidArgument", `kill: the string "x" is not a number`, 1},
		{`(kill "")`, "InvalidArgument", `kill: the string "" is not a number`, 1},
		{`(kill (1))`, "InvalidArgument", "kill: want an id, got the list (1)", 1},
		{`(kill true)`, "InvalidArgument", "kill: want an id, got true", 1},
		{`(kill 1 2)`, "InvalidArgument", "kill: want 0 to 1 argument, got 2", 1},
		{`(executors 1)`, "InvalidArgument", "executors: want 0 arguments, got 1", 1},
	})
}

func TestUncaughtExceptions(t *testing.T) {
	// By default to the print output, as a line.
	in, out := concInterp(t)
	evalConc(t, in, "(spawn (do\n  (print \"a\") (throw \"E\" \"boom\")))")
	eventually(t, "the exception to be written", func() bool { return strings.Contains(out.String(), "boom") })
	line := strings.Count(concPrelude, "\n") + 2 // the throw's, after the prelude
	if got, want := out.String(), "a\nexecutor 0: uncaught E: boom (test.bpl:"+strconv.Itoa(line)+")\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	// To the error output when there is one.
	var errOut syncBuffer
	in.SetErrorOutput(&errOut)
	evalConc(t, in, `(spawn (/ 1 0))`)
	eventually(t, "the exception to be written", func() bool { return errOut.String() != "" })
	if got := errOut.String(); !strings.HasPrefix(got, "executor ") || !strings.Contains(got, ": uncaught DivisionByZero: ") {
		t.Errorf("error output %q", got)
	}
	// A timer task's too.
	evalConc(t, in, `(timer-schedule (function () (throw "T" "tick")) 0)`)
	eventually(t, "the exception to be written", func() bool { return strings.Contains(errOut.String(), "T: tick") })
	// Back to the output.
	in.SetErrorOutput(nil)
	evalConc(t, in, `(spawn (throw "F"))`)
	eventually(t, "the exception to be written", func() bool { return strings.Contains(out.String(), "uncaught F") })
}

func TestSync(t *testing.T) {
	checkConc(t, []valueTest{
		{`(set l (list)) (sync l)`, `null`},
		{`(set l (list)) (sync l 1 2)`, `2`},
		{`(sync (list) (+ 1 2))`, `3`},
		{`(sync ("a" => 1) 4)`, `4`},
		{`(set f (function () 1)) (sync f (f))`, `1`},
		// reentrant
		{`(set l (list)) (sync l (sync l (sync l 5)))`, `5`},
		// an exception lets go of the monitor
		{`(set l (list)) (try (sync l (throw "E")) (ex "E" => 1)) (spawn (sync l (signal))) (await)`, `true`},
		{`(set l (list)) (try (sync l (sync l (throw "E"))) (ex "E" => 1)) (spawn (sync l (signal))) (await)`, `true`},
		// wait with a limit, null or 0 meaning none
		{`(set l (list)) (wait l 1)`, `null`},
		{`(set l (list)) (wait l 0.5)`, `null`},
		{`(set l (list)) (sync l (sync l (wait l 1) 6))`, `6`},
		{`(set l (list)) (spawn (do (await) (notify l))) (sync l (signal) (wait l null) 7)`, `7`},
		{`(set l (list)) (spawn (do (await) (notify l))) (sync l (signal) (wait l 0) 8)`, `8`},
		{`(set l (list)) (spawn (do (await) (notify l))) (sync l (signal) (wait l))`, `null`},
		// notify with no one waiting
		{`(set l (list)) (notify l)`, `null`},
		{`(set l (list)) (sync l (notify l) (notify l) 9)`, `9`},
		// notify wakes every waiter, not one
		{`(set l (list)) (set n 0) (set woke 0)
		  (set waiter (function () (sync l (set n (+ n 1)) (wait l) (set woke (+ woke 1)))))
		  (spawn (waiter)) (spawn (waiter)) (spawn (waiter))
		  (sync l (while (< n 3) (wait l 1)) (notify l) (while (< woke 3) (wait l 1)))
		  woke`, `3`},
	})
	checkErrors(t, []errorTest{
		{`(sync)`, "InvalidArgument", "sync: want at least 1 argument, got 0", 1},
		{`(sync null 1)`, "InvalidArgument", "sync: want a list, a function or a string to synchronise on, got null", 1},
		{`(sync 1 1)`, "InvalidArgument", "sync: want a list, a function or a string to synchronise on, got 1", 1},
		{`(sync (list) (throw "E" "in sync"))`, "E", "in sync", 1},
		{`(wait)`, "InvalidArgument", "wait: want 1 to 2 arguments, got 0", 1},
		{`(wait (list) 1 2)`, "InvalidArgument", "wait: want 1 to 2 arguments, got 3", 1},
		{`(wait null)`, "InvalidArgument", "wait: want a list, a function or a string to synchronise on, got null", 1},
		{`(wait 5 1)`, "InvalidArgument", "wait: want a list, a function or a string to synchronise on, got 5", 1},
		{`(wait (list) -1)`, "InvalidArgument", "wait: want milliseconds, 0 or more, got -1", 1},
		{`(wait (list) "1")`, "InvalidArgument", `wait: want milliseconds, 0 or more, got the string "1"`, 1},
		{`(wait (list) NaN)`, "InvalidArgument", "wait: want milliseconds, 0 or more, got NaN", 1},
		{`(notify)`, "InvalidArgument", "notify: want 1 argument, got 0", 1},
		{`(notify (list) 1)`, "InvalidArgument", "notify: want 1 argument, got 2", 1},
		{`(notify null)`, "InvalidArgument", "notify: want a list, a function or a string to synchronise on, got null", 1},
		{`(notify true)`, "InvalidArgument", "notify: want a list, a function or a string to synchronise on, got true", 1},
	})
	checkMonitorsFreed(t)
}

// TestSyncExcludes has executors change a shared list inside sync: with
// -race, the race detector checks that sync orders them.
func TestSyncExcludes(t *testing.T) {
	in, _ := concInterp(t)
	src := `
(set c (list 0))
(set ended 0)
(set work (function ()
  (local i)
  (set i 0)
  (while (< i 200) (sync c (set c/0 (+ c/0 1)) (push c i)) (set i (+ i 1)))
  (sync ready (set ended (+ ended 1)) (notify ready))))
(spawn (work)) (spawn (work)) (spawn (work)) (spawn (work))
(sync ready (while (< ended 4) (wait ready 1000)))
(sync c (list c/0 (size c)))`
	if got := evalConc(t, in, src); got != "(800 801)" {
		t.Errorf("counted %s, want (800 801)", got)
	}
	checkMonitorsFreed(t)
}

func TestWaitEnds(t *testing.T) {
	// A wait, and a sync waiting for a monitor another executor holds,
	// end with the run's context, with Interrupted.
	in, _ := concInterp(t)
	for _, src := range []string{
		`(wait (list))`,
		`(set l (list)) (spawn (sync l (signal) (wait (list)))) (await) (sync l 1)`,
		`(set l (list)) (spawn (sync l (signal) (wait (list)))) (await) (notify l)`,
		`(set l (list)) (sync l (sync l (wait l)))`,
	} {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- in.Run(ctx, "test.bpl", concPrelude+src, nil) }()
		time.Sleep(5 * time.Millisecond) // let it block, or not: the result is the same
		cancel()
		var err error
		select {
		case err = <-errc:
		case <-time.After(concTimeout):
			t.Fatalf("%s did not end with its context", src)
		}
		var e *Exception
		if !errors.As(err, &e) || e.Type != "Interrupted" {
			t.Errorf("%s: %v, want Interrupted", src, err)
		}
	}
	// Killing an executor waiting in (wait l) lets go of l.
	got := evalConc(t, in, `
(set l (list))
(set id (spawn (sync l (sync l (signal) (wait l)))))
(await)
(sync l (kill id))
(while (> (size (executors)) 0) (sleep 1))
(sync l "free")`)
	if got != `"free"` {
		t.Errorf("after killing a waiting executor: %s", got)
	}
	closeWithin(t, in)
	checkMonitorsFreed(t)
}

func TestWatch(t *testing.T) {
	saved := watchPoll
	watchPoll = time.Millisecond
	defer func() { watchPoll = saved }()
	checkConc(t, []valueTest{
		// the value differs at once
		{`(set x 5) (watch x 1)`, `5`},
		{`(watch 3 null)`, `3`},
		{`(watch (list 1 "a" => 2) (1 "b" => 2))`, `(1 "a" => 2)`},
		// a change another executor makes
		{`(set x 1) (spawn (do (await) (set x 2))) (watch (do (signal) x) 1)`, `2`},
		{`(set x 1) (spawn (set x 2)) (watch x)`, `2`},
		// no change in 300 evaluations: the last value
		{`(set x 1) (watch x)`, `1`},
		{`(set n 0) (watch (do (set n (+ n 1)) 0) 0) n`, `300`},
		{`(watch (list 1 2))`, `(1 2)`},
		{`(watch null)`, `null`},
		// = compares
		{`(set n 0) (watch (do (set n (+ n 1)) 1.0) 1) n`, `300`},
	})
	checkErrors(t, []errorTest{
		{`(watch)`, "InvalidArgument", "watch: want 1 to 2 arguments, got 0", 1},
		{`(watch 1 2 3)`, "InvalidArgument", "watch: want 1 to 2 arguments, got 3", 1},
		{`(watch (throw "E" "w"))`, "E", "w", 1},
		{`(watch 1 (throw "E" "v"))`, "E", "v", 1},
	})
	// watch ends with the context.
	_, _, err := runTimeout(t, `(watch 1)`, 20*time.Millisecond)
	if e := (*Exception)(nil); !errors.As(err, &e) || e.Type != "Interrupted" {
		t.Errorf("watch with an ending context: %v", err)
	}
}

func TestTimers(t *testing.T) {
	checkConc(t, []valueTest{
		{`(timer-tasks)`, `()`},
		{`(list (timer-cancel) (timer-cancel 0) (timer-cancel "3") (timer-cancel -1) (timer-cancel 1e9))`, `(false false false false false)`},
		// once, after the delay
		{`(timer-schedule signal 0) (await)`, `true`},
		{`(timer-schedule signal 1 null) (await)`, `true`},
		{`(timer-schedule signal 0.9 0.9 true) (await)`, `true`},
		// listed until it starts, with its function, by id
		{`(list (timer-schedule signal 1000000) (timer-schedule (function () 1) 1000000 5) (timer-tasks))`, `(0 1 ("0" => (function () (sync ready (set done true) (notify ready))) "1" => (function () 1)))`},
		{`(timer-schedule signal 1000000) (list (timer-cancel 0) (timer-cancel 0) (timer-tasks))`, `(true false ())`},
		{`(timer-schedule signal 1000000) (timer-schedule signal 1000000) (list (timer-cancel) (timer-cancel) (timer-tasks))`, `(true false ())`},
		{`(timer-schedule signal 1000000) (list (timer-cancel "0") (timer-tasks))`, `(true ())`},
		{`(timer-schedule signal 1000000) (timer-cancel 0.7)`, `true`},
		// a task that runs once is gone once started
		{`(timer-schedule signal 0) (await) (while (> (size (timer-tasks)) 0) (sleep 1)) (timer-tasks)`, `()`},
		// a repeating task runs until cancelled
		{`(set n 0) (set id (timer-schedule (function () (sync ready (set n (+ n 1)) (notify ready))) 0 1))
		  (sync ready (while (< n 3) (wait ready 1000)))
		  (list id (timer-cancel id) (timer-tasks))`, `(0 true ())`},
		// a repeating task's first call is after the delay
		{`(set n 0) (timer-schedule (function () (set n 1) (signal)) 0 1000000) (await) (timer-cancel) n`, `1`},
		// a timer's call is an executor, (call function)
		{`(timer-schedule (function () (signal) (wait (list))) 0) (await) (executors)`, `("0" => (call (function () (signal) (wait (list)))))`},
	})
	checkErrors(t, []errorTest{
		{`(timer-schedule)`, "InvalidArgument", "timer-schedule: want 2 to 4 arguments, got 0", 1},
		{`(timer-schedule (function () 1))`, "InvalidArgument", "timer-schedule: want 2 to 4 arguments, got 1", 1},
		{`(timer-schedule (function () 1) 1 2 3 4)`, "InvalidArgument", "timer-schedule: want 2 to 4 arguments, got 5", 1},
		{`(timer-schedule 1 0)`, "InvalidArgument", "timer-schedule: want a function, got 1", 1},
		{`(timer-schedule null 0)`, "InvalidArgument", "timer-schedule: want a function, got null", 1},
		{`(timer-schedule (1) 0)`, "InvalidArgument", "timer-schedule: want a function, got the list (1)", 1},
		{`(timer-schedule (function () 1) -1)`, "InvalidArgument", "timer-schedule: the delay is -1, want 0 or more", 1},
		{`(timer-schedule (function () 1) null)`, "InvalidArgument", "timer-schedule: the delay is null, want milliseconds", 1},
		{`(timer-schedule (function () 1) "5")`, "InvalidArgument", `timer-schedule: the delay is the string "5", want milliseconds`, 1},
		{`(timer-schedule (function () 1) NaN)`, "InvalidArgument", "timer-schedule: the delay is NaN, want milliseconds", 1},
		{`(timer-schedule (function () 1) 0 "x")`, "InvalidArgument", `timer-schedule: the period is the string "x", want milliseconds`, 1},
		{`(timer-cancel 1 2)`, "InvalidArgument", "timer-cancel: want 0 to 1 argument, got 2", 1},
		{`(timer-cancel null)`, "InvalidArgument", "timer-cancel: want an id, got null", 1},
		{`(timer-cancel "x")`, "InvalidArgument", `timer-cancel: the string "x" is not a number`, 1},
		{`(timer-cancel (function () 1))`, "InvalidArgument", "timer-cancel: want an id, got a function", 1},
		{`(timer-tasks 1)`, "InvalidArgument", "timer-tasks: want 0 arguments, got 1", 1},
	})
}

func TestTimerOverlap(t *testing.T) {
	// Without overlap, a call due while the last one runs is skipped:
	// while the first call blocks, no other starts.
	in, _ := concInterp(t)
	evalConc(t, in, `
(set gate (list))
(set calls 0)
(set f (function ()
  (sync gate (set calls (+ calls 1)) (notify gate) (while (not open) (wait gate 1000)))))
(timer-schedule f 0 1)
(sync gate (while (< calls 1) (wait gate 1000)))`)
	time.Sleep(30 * time.Millisecond) // many periods: calls that must be skipped
	if got := evalConc(t, in, `(sync gate (set open true) (notify gate) calls)`); got != "1" {
		t.Errorf("calls while the first ran: %s, want 1", got)
	}
	// Then the calls go on.
	evalConc(t, in, `(sync gate (while (< calls 3) (wait gate 1000)))`)
	evalConc(t, in, `(timer-cancel)`)

	// With overlap, they run at once.
	in2, _ := concInterp(t)
	evalConc(t, in2, `
(set gate (list))
(set calls 0)
(set f (function ()
  (sync gate (set calls (+ calls 1)) (notify gate) (while (not open) (wait gate 1000)))))
(timer-schedule f 0 1 true)
(sync gate (while (< calls 3) (wait gate 1000)) (set open true) (notify gate))
(timer-cancel)`)
}

// TestRunEndStopsItsExecutors: the executors and timer tasks of a run end
// when its context does, but not when it returns.
func TestRunEndStopsItsExecutors(t *testing.T) {
	in, _ := concInterp(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := in.Run(ctx, "test.bpl", `(spawn (while true (sleep 5))) (spawn (spawn (wait (list)))) (timer-schedule (function () 1) 1000000 1000000)`, nil)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the executors to be listed", func() bool {
		return evalConc(t, in, `(list (size (executors)) (size (timer-tasks)))`) == "(2 1)"
	})
	cancel()
	eventually(t, "the executors and timers to end", func() bool {
		return evalConc(t, in, `(list (executors) (timer-tasks))`) == "(() ())"
	})
}

func TestClose(t *testing.T) {
	in, out := concInterp(t)
	evalConc(t, in, `
(spawn (while true (sleep 5)))
(spawn (wait (list)))
(spawn (do (signal) (wait (list))))
(await)
(timer-schedule (function () (while true (sleep 5))) 0 1)
(timer-schedule (function () 1) 1000000)`)
	eventually(t, "the timer's executor to start", func() bool {
		return evalConc(t, in, `(size (executors))`) == "4"
	})
	closeWithin(t, in)
	if got := evalConc(t, in, `(list (executors) (timer-tasks) (kill) (timer-cancel))`); got != "(() () false false)" {
		t.Errorf("after Close: %s", got)
	}
	for _, src := range []string{`(spawn 1)`, `(timer-schedule (function () 1) 0)`} {
		_, err := concRun(t, in, `(try `+src+` (ex "*" => "caught"))`)
		var e *Exception
		if !errors.As(err, &e) || e.Type != "Interrupted" || !strings.Contains(e.Message, "the interpreter is closed") {
			t.Errorf("%s after Close: %v, want Interrupted", src, err)
		}
	}
	if s := out.String(); s != "" {
		t.Errorf("closed executors wrote %q", s)
	}
	closeWithin(t, in) // again
	checkMonitorsFreed(t)
}

// TestLibraryGoroutines calls function values from goroutines of a library
// function, as streams do: the evaluator must be safe for that (run it
// with -race), and an executor a callback spawns outlives the callback.
func TestLibraryGoroutines(t *testing.T) {
	in, _ := concInterp(t)
	in.Define("lib-parallel", func(ctx context.Context, args *value.List) (any, error) {
		fn := args.At(0).(value.Callable)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			wg.Go(func() {
				for i := range 50 {
					if _, err := fn.Call(ctx, value.NewList(int64(g), int64(i))); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		return nil, <-errs
	})
	in.Define("lib-brief", func(ctx context.Context, args *value.List) (any, error) {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		return args.At(0).(value.Callable).Call(cctx, nil)
	})
	got := evalConc(t, in, `
(set l (list))
(set n 0)
(lib-parallel (function (g i) (local x) (set x (* g i)) (sync l (set n (+ n 1)) (push l x))))
(sync l (list n (size l)))`)
	if got != "(400 400)" {
		t.Errorf("callbacks counted %s, want (400 400)", got)
	}
	if got := evalConc(t, in, `(lib-brief (function () (spawn (wait (list))))) (sleep 1) (executors)`); got != `("0" => (wait (list)))` {
		t.Errorf("executor spawned by a callback: %s", got)
	}
}

// TestManyExecutors spawns executors at once and lets them all end.
func TestManyExecutors(t *testing.T) {
	in, _ := concInterp(t)
	src := `(set c (list 0))
(set i 0)
(while (< i 100) (spawn (sync c (set c/0 (+ c/0 1)) (notify c))) (set i (+ i 1)))
(sync c (while (< c/0 100) (wait c 1000)) c/0)`
	if got := evalConc(t, in, src); got != "100" {
		t.Errorf("got %s", got)
	}
	eventually(t, "the executors to end", func() bool { return evalConc(t, in, `(executors)`) == "()" })
	// ids go on from where they were, skipping those in use
	if got := evalConc(t, in, `(spawn 1)`); got != "100" {
		t.Errorf("next id %s, want 100", got)
	}
}

// TestTooManyTasks: ids are reused, skipping those in use, and when all
// are in use spawn and timer-schedule fail.
func TestTooManyTasks(t *testing.T) {
	saved := concIDs
	concIDs = 3
	defer func() { concIDs = saved }()
	in, _ := concInterp(t)
	// 0 ends, 1 and 2 stay; the next is 0 again, then none is free.
	got := evalConc(t, in, `
(spawn 1)
(while (> (size (executors)) 0) (sleep 1))
(list (spawn (wait (list))) (spawn (wait (list))) (spawn (wait (list))))`)
	if got != "(1 2 0)" {
		t.Errorf("ids %s, want (1 2 0)", got)
	}
	if _, err := concRun(t, in, `(spawn 1)`); err == nil || !strings.Contains(err.Error(), "TooManyTasks: spawn: 3 executors are running, the most there can be") {
		t.Errorf("a fourth executor: %v", err)
	}
	if got := evalConc(t, in, `(kill 2) (while (> (size (executors)) 2) (sleep 1)) (spawn (wait (list)))`); got != "2" {
		t.Errorf("the id freed: %s, want 2", got)
	}
	got = evalConc(t, in, `(list (timer-schedule (function () 1) 1000000) (timer-schedule (function () 1) 1000000) (timer-schedule (function () 1) 1000000))`)
	if got != "(0 1 2)" {
		t.Errorf("timer ids %s", got)
	}
	if _, err := concRun(t, in, `(try (timer-schedule (function () 1) 1000000) (ex "TooManyTasks" => (throw "Caught")))`); err == nil || !strings.Contains(err.Error(), "Caught") {
		t.Errorf("a fourth timer task: %v", err)
	}
	// A timer task whose executor cannot start says so.
	var errOut syncBuffer
	in.SetErrorOutput(&errOut)
	evalConc(t, in, `(timer-cancel 0) (timer-schedule (function () 1) 0)`)
	eventually(t, "the error to be written", func() bool { return errOut.String() != "" })
	if got := errOut.String(); !strings.HasPrefix(got, "timer task 0: TooManyTasks: ") {
		t.Errorf("error output %q", got)
	}
}

// TestSpawnFlood: a run spawning executors as fast as it can still ends
// with its context, and so do they.
func TestSpawnFlood(t *testing.T) {
	saved := concIDs
	concIDs = 1000
	defer func() { concIDs = saved }()
	in, _ := concInterp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := in.Run(ctx, "test.bpl", `(while true (try (spawn (while true (spawn 1))) (ex "TooManyTasks" => 1)))`, nil)
	var e *Exception
	if !errors.As(err, &e) || e.Type != "Interrupted" {
		t.Errorf("flood: %v, want Interrupted", err)
	}
	eventually(t, "the executors to end", func() bool { return evalConc(t, in, `(executors)`) == "()" })
}

// A string is a monitor by its text, as brain4it's strings are.
func TestStringMonitor(t *testing.T) {
	checkValues(t, []valueTest{
		{`(set monitor "mon01") (notify monitor)`, `null`},
		{`(sync "m" (+ 1 2))`, `3`},
		{`(wait "m" 1)`, `null`},
	})
	in := New(nil)
	got, _, err := run(t, in, `
(set done false)
(spawn (do (sleep 50) (sync (concat "mo" "n") (set done true) (notify "mon"))))
(sync "mon" (while (not done) (wait "mon" 5000)))
done`)
	if err != nil || got != "true" {
		t.Fatalf("wait on a string woken by notify of an equal string: %s, %v", got, err)
	}
	in.Close()
}
