package bpl

import (
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// The concurrency family: executors (spawn, kill, executors), monitors
// (sync, wait, notify), watch, and timer tasks (timer-schedule,
// timer-cancel, timer-tasks).
//
// An executor is code spawned to run on a goroutine of its own, with the
// globals and no locals. It runs until its code ends, until it is killed,
// until the Interp is closed ([Interp.Close]), or until the context of the
// Run, Eval or Call whose code spawned it (directly or through other
// executors) ends: an executor outlives the executor that spawned it, as
// in brain4it, but not the run. A killed executor stops with an
// Interrupted exception, which try cannot catch; library work it started
// with its context (such as a stream) ends when it ends, however it ends.
// An executor's uncaught exception is written, as a line, to the Interp's
// error output ([Interp.SetErrorOutput]; the print output by default).
// Only spawned executors, and those timer tasks start, are executors here:
// executors does not list a Run or Eval, and kill cannot stop one (its
// context does), where brain4it lists and kills the executor running a
// script too.
//
// Monitors follow Java's, as brain4it's do: (sync l ...) holds the monitor
// of the list l (or of a function value) while it runs, and the executor
// holding it may sync on it again; (wait l) lets it go until (notify l);
// (notify l) wakes every executor waiting on l. A function value a library
// function calls runs as an executor of its own for this purpose: it does
// not hold the monitors its caller holds.
//
// Executor and timer task ids are 0 to 32767, reused once free; spawn
// and timer-schedule raise a TooManyTasks exception when all are in use
// (brain4it would look for a free one forever).
//
// Lists are not protected: two executors that change a list at once, or
// one reads it while another changes it, must both do so inside (sync
// list ...).

func init() {
	register(map[string]builtin{
		"spawn":          biSpawn,
		"kill":           biKill,
		"executors":      biExecutors,
		"sync":           biSync,
		"wait":           biWait,
		"notify":         biNotify,
		"watch":          biWatch,
		"timer-schedule": biTimerSchedule,
		"timer-cancel":   biTimerCancel,
		"timer-tasks":    biTimerTasks,
	})
}

// concIDs bounds executor and timer task ids, which are 0 to concIDs-1, as
// brain4it's are (it reuses them, skipping those in use). A variable for
// tests.
var concIDs = 1 << 15

// watchPoll is how often watch evaluates its expression, and watchPolls
// how many times at most, as brain4it's watch does.
var (
	watchPoll  = 100 * time.Millisecond
	watchPolls = 300
)

// concState is an Interp's executors and timer tasks.
type concState struct {
	mu        sync.Mutex
	ctx       context.Context // ends when the Interp is closed
	cancel    context.CancelFunc
	closed    bool
	wg        sync.WaitGroup // the goroutines of executors and timers
	execs     map[int]*executor
	lastExec  int
	timers    map[int]*timerTask
	lastTimer int
	errOut    io.Writer // nil: the Interp's output
}

// init makes c ready; c.mu is held.
func (c *concState) init() {
	if c.ctx == nil {
		c.ctx, c.cancel = context.WithCancel(context.Background())
		c.execs = map[int]*executor{}
		c.timers = map[int]*timerTask{}
		c.lastExec, c.lastTimer = -1, -1
	}
}

// executor is a spawned executor.
type executor struct {
	id     int
	code   any // what it evaluates
	cancel context.CancelFunc
}

// timerTask is a scheduled function.
type timerTask struct {
	id      int
	fn      value.Callable
	overlap bool
	running int // its executors running
	cancel  context.CancelFunc
}

// nextID returns the id after *last that m does not use, and makes it
// *last; false when every id is in use.
func nextID[V any](m map[int]V, last *int) (int, bool) {
	if len(m) >= concIDs {
		return 0, false
	}
	for {
		*last = (*last + 1) % concIDs
		if _, used := m[*last]; !used {
			return *last, true
		}
	}
}

// SetErrorOutput sets where an uncaught exception of a spawned executor
// (or of a timer task's function) is written, as the line "executor ID:
// uncaught TYPE: message (FILE:LINE)"; nil sets it back to the default,
// the output print writes to. Executors that end because they were
// killed, or because the Interp or their run ended, write nothing.
func (in *Interp) SetErrorOutput(w io.Writer) {
	in.conc.mu.Lock()
	defer in.conc.mu.Unlock()
	in.conc.errOut = w
}

// Close kills every executor running on in and cancels every timer task,
// then waits for their goroutines to end; it does not stop Run, Eval or
// Call in progress. Close must not be called from code running on in (it
// would wait for itself), and returns only once the library functions
// those executors are running honour their cancelled contexts. After
// Close, spawn and timer-schedule raise an Interrupted exception; Run and
// Eval still work. Close may be called more than once.
func (in *Interp) Close() {
	c := &in.conc
	c.mu.Lock()
	c.init()
	c.closed = true
	c.cancel()
	c.mu.Unlock()
	c.wg.Wait()
}

// Wait blocks until no spawned executor is running and no timer task is
// scheduled, or until ctx ends (then it returns ctx's error). A command
// that runs a script calls it after the script's last expression, so that
// what the script spawned or scheduled goes on, as it would on a brain4it
// server, until it ends or the user stops the command.
func (in *Interp) Wait(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if in.Busy() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Busy returns how many spawned executors are running and timer tasks
// are scheduled.
func (in *Interp) Busy() int {
	c := &in.conc
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.execs) + len(c.timers)
}

// closedError is the exception of spawn and timer-schedule after Close.
func (t *task) closedError(f *frame, fn string) error {
	e := t.exception(f, "Interrupted", fn+": the interpreter is closed", context.Canceled)
	e.interrupt = true
	return e
}

// spawn starts an executor evaluating code, read from src, under base;
// done, if not nil, is called when it has ended. It returns the
// executor's id.
func (t *task) spawn(f *frame, fn string, base context.Context, src *source, code any, done func()) (int, error) {
	in := t.in
	c := &in.conc
	c.mu.Lock()
	c.init()
	if c.closed {
		c.mu.Unlock()
		return 0, t.closedError(f, fn)
	}
	id, ok := nextID(c.execs, &c.lastExec)
	if !ok {
		c.mu.Unlock()
		return 0, t.errorf(f, "TooManyTasks", "%s: %d executors are running, the most there can be", fn, concIDs)
	}
	ctx, cancel := context.WithCancel(base)
	stop := context.AfterFunc(c.ctx, cancel)
	e := &executor{id: id, code: code, cancel: cancel}
	c.execs[id] = e
	c.wg.Add(1)
	c.mu.Unlock()

	et := &task{in: in, ctx: ctx, base: base, exec: e}
	if t.more != nil && t.more.data > 0 {
		et.extra().data = 1 // its code is data too
	}
	go func() {
		defer c.wg.Done()
		var err error
		func() {
			defer func() { // a panic ends the executor, not the program
				if r := recover(); r != nil {
					err = panicException(r)
				}
			}()
			_, err = et.eval(&frame{src: src}, code)
		}()
		stop()
		cancel()
		c.mu.Lock()
		delete(c.execs, id)
		c.mu.Unlock()
		if done != nil {
			done()
		}
		var ex *Exception
		if err != nil && !(errors.As(err, &ex) && ex.interrupt) {
			c.writeError(in, "executor "+strconv.Itoa(id)+": uncaught "+err.Error())
		}
	}()
	return id, nil
}

// (spawn code) evaluates code, unevaluated, on an executor of its own
// (with the globals, and locals of its own) and gives the executor's id at
// once, an integer from 0 to 32767. See the family's comment for how long
// it runs.
func biSpawn(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	id, err := t.spawn(f, "spawn", t.base, f.src, call.At(1), nil)
	if err != nil {
		return nil, err
	}
	return int64(id), nil
}

// concID reads the id of an executor or timer task: a number (truncated,
// as brain4it does) or a string holding one. It gives -1 for a number no
// id can have.
func (t *task) concID(f *frame, fn string, v any) (int, error) {
	if s, ok := v.(string); ok {
		vs, err := value.Parse(s)
		if err == nil && len(vs) == 1 {
			v = vs[0]
		}
		switch v.(type) {
		case int64, float64:
		default:
			return 0, t.errorf(f, "InvalidArgument", "%s: %s is not a number", fn, value.Describe(s))
		}
	}
	switch x := v.(type) {
	case int64:
		if x >= 0 && x < int64(concIDs) {
			return int(x), nil
		}
		return -1, nil
	case float64:
		if x = math.Trunc(x); x >= 0 && x < float64(concIDs) {
			return int(x), nil
		}
		return -1, nil // also NaN
	}
	return 0, t.errorf(f, "InvalidArgument", "%s: want an id, got %s", fn, value.Describe(v))
}

// (kill id) kills the executor id (spawned on this interpreter) and gives
// true; false when there is no such executor or it is the one calling
// kill. (kill) kills every executor but the one calling it, and gives true
// when there was one. A killed executor stops at once, whatever it is
// doing, unless a library function it runs ignores its context; it is
// listed by executors until it has stopped.
func biKill(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 0, 1); err != nil {
		return nil, err
	}
	id, err := t.optionalID(f, call, "kill")
	if err != nil {
		return nil, err
	}
	c := &t.in.conc
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	killed := false
	for eid, e := range c.execs {
		if (id == -2 || eid == id) && e != t.exec {
			e.cancel()
			killed = true
		}
	}
	return killed, nil
}

// (executors) gives the running executors of this interpreter as a list
// of their code named by their ids, in the order of the ids: ("3" =>
// (while true (sleep 10))). The code of a timer task's executor is
// (call function). The list is a copy: changing it changes no executor.
func biExecutors(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 0, 0); err != nil {
		return nil, err
	}
	c := &t.in.conc
	c.mu.Lock()
	c.init()
	ids := make([]int, 0, len(c.execs))
	for id := range c.execs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	codes := make([]any, len(ids))
	for i, id := range ids {
		codes[i] = c.execs[id].code
	}
	c.mu.Unlock()
	l := &value.List{}
	for i, id := range ids {
		code := codes[i]
		if cl, ok := code.(*value.List); ok {
			code = copyData(cl)
		}
		l.AppendNamed(strconv.Itoa(id), code)
	}
	return l, nil
}

// Monitors, keyed by the list or function value they belong to: one
// table for every Interp, as a list may be shared between them.
var monitors = struct {
	sync.Mutex
	m map[any]*monitor
}{m: map[any]*monitor{}}

// monitor is Java's monitor of an object: a reentrant lock owned by a task
// and a set of tasks waiting to be notified. monitors' mutex guards it.
type monitor struct {
	owner    *task
	count    int           // how many times owner holds it
	refs     int           // tasks holding it, waiting for it or waiting on it
	released chan struct{} // closed when it is let go; nil when no task waits
	notified chan struct{} // closed by notify; nil when no task waits on it
}

// unref drops a task's reference to the monitor of key, and the monitor
// once no task refers to it; monitors' mutex is held.
func (m *monitor) unref(key any) {
	if m.refs--; m.refs == 0 {
		delete(monitors.m, key)
	}
}

// letGo makes the monitor free and wakes the tasks waiting for it;
// monitors' mutex is held.
func (m *monitor) letGo() {
	m.owner, m.count = nil, 0
	if m.released != nil {
		close(m.released)
		m.released = nil
	}
}

// monitorKey checks that v can be synchronised on: a list or function
// value is its own monitor; a string's monitor is that of its text, as
// brain4it's (Java's) are for the strings a script writes, so that (sync
// "mon01" ...) and (notify "mon01") meet.
func (t *task) monitorKey(f *frame, fn string, v any) (any, error) {
	switch v := v.(type) {
	case *value.List:
		return v, nil
	case string:
		return stringMonitor(v), nil
	case *Function:
		if v != nil {
			return v, nil
		}
	}
	return nil, t.errorf(f, "InvalidArgument", "%s: want a list, a function or a string to synchronise on, got %s", fn, value.Describe(v))
}

// stringMonitor is the monitor key of a string, a type of its own so that
// it is no other key.
type stringMonitor string

// lock takes the monitor of key for t (once more, if t holds it), waiting
// until no other task holds it or t's context ends. Unless it fails, t
// must call unlock.
func (t *task) lock(f *frame, key any) error {
	monitors.Lock()
	m := monitors.m[key]
	if m == nil {
		m = &monitor{}
		monitors.m[key] = m
	}
	m.refs++
	if err := t.take(f, key, m); err != nil {
		monitors.Unlock()
		return err
	}
	m.owner = t
	m.count++
	monitors.Unlock()
	return nil
}

// take waits until m is free or held by t; monitors' mutex is held, and
// is held again when it returns. When t's context ends first, it drops t's
// reference and returns Interrupted.
func (t *task) take(f *frame, key any, m *monitor) error {
	for m.owner != nil && m.owner != t {
		if m.released == nil {
			m.released = make(chan struct{})
		}
		ch := m.released
		monitors.Unlock()
		select {
		case <-ch:
			monitors.Lock()
		case <-t.ctx.Done():
			monitors.Lock()
			m.unref(key)
			return t.interrupted(f)
		}
	}
	return nil
}

// unlock lets go of the monitor of key once. The monitor may no longer be
// t's when a wait in it was interrupted: then it only drops the reference.
func (t *task) unlock(key any) {
	monitors.Lock()
	defer monitors.Unlock()
	m := monitors.m[key]
	if m.owner == t {
		if m.count--; m.count == 0 {
			m.letGo()
		}
	}
	m.unref(key)
}

// (sync monitor body...) evaluates body while holding the monitor of
// monitor, a list or a function value, and gives its last value (null
// without body). It waits while another executor holds the monitor; the
// executor holding it may sync on it again.
func biSync(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	v, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	key, err := t.monitorKey(f, "sync", v)
	if err != nil {
		return nil, err
	}
	if err := t.lock(f, key); err != nil {
		return nil, err
	}
	defer t.unlock(key)
	return t.evalBody(f, call, 2)
}

// (wait monitor ms) lets go of the monitor of monitor (a list or a
// function value) and waits until another executor notifies it, or ms
// milliseconds have passed (ms absent, null or 0: no limit); then it takes
// the monitor again (as often as it held it) and gives null. It need not
// be inside (sync monitor ...): it takes the monitor first.
func biWait(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	key, err := t.monitorKey(f, "wait", args.At(0))
	if err != nil {
		return nil, err
	}
	var limit <-chan time.Time
	if args.Len() > 1 && args.At(1) != nil {
		ms, ok := toFloat(args.At(1))
		if !ok || ms < 0 || ms != ms {
			return nil, t.errorf(f, "InvalidArgument", "wait: want milliseconds, 0 or more, got %s", value.Describe(args.At(1)))
		}
		if ms > 0 && ms < float64(math.MaxInt64/time.Millisecond) {
			timer := time.NewTimer(time.Duration(ms * float64(time.Millisecond)))
			defer timer.Stop()
			limit = timer.C
		}
	}
	if err := t.lock(f, key); err != nil {
		return nil, err
	}
	monitors.Lock()
	m := monitors.m[key]
	held := m.count
	m.letGo()
	if m.notified == nil {
		m.notified = make(chan struct{})
	}
	ch := m.notified
	monitors.Unlock()
	select {
	case <-ch:
	case <-limit:
	case <-t.ctx.Done():
		monitors.Lock()
		m.unref(key)
		monitors.Unlock()
		return nil, t.interrupted(f)
	}
	monitors.Lock()
	if err := t.take(f, key, m); err != nil {
		monitors.Unlock()
		return nil, err
	}
	m.owner, m.count = t, held
	monitors.Unlock()
	t.unlock(key)
	return nil, nil
}

// (notify monitor) wakes every executor waiting on the monitor of monitor
// (a list or a function value), as Java's notifyAll, and gives null. It
// takes the monitor to do so, so it waits while another executor holds
// it; it need not be inside (sync monitor ...).
func biNotify(t *task, f *frame, call *value.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	key, err := t.monitorKey(f, "notify", v)
	if err != nil {
		return nil, err
	}
	if err := t.lock(f, key); err != nil {
		return nil, err
	}
	monitors.Lock()
	if m := monitors.m[key]; m.notified != nil {
		close(m.notified)
		m.notified = nil
	}
	monitors.Unlock()
	t.unlock(key)
	return nil, nil
}

// (watch expr value) evaluates expr every 100 ms until its value differs
// from value (compared as = does) and gives that value; after 300
// evaluations (30 s) it gives the last one anyway. Without value, it
// waits for expr's value to change from what it is at first (a list is
// compared with a copy of it, so that a change in place is seen).
func biWatch(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	var ref any
	var err error
	if call.Len() > 2 {
		ref, err = t.eval(f, call.At(2))
	} else {
		ref, err = t.eval(f, call.At(1))
		if l, ok := ref.(*value.List); ok {
			ref = copyData(l)
		}
	}
	if err != nil {
		return nil, err
	}
	var v any
	for i := 0; i < watchPolls; i++ {
		if i > 0 {
			timer := time.NewTimer(watchPoll)
			select {
			case <-t.ctx.Done():
				timer.Stop()
				return nil, t.interrupted(f)
			case <-timer.C:
			}
		}
		if v, err = t.eval(f, call.At(1)); err != nil {
			return nil, err
		}
		if !equal(ref, v, false, nil) {
			break
		}
	}
	return v, nil
}

// timerMillis reads a delay or period of timer-schedule: a number of
