package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
)

// alarmSpec counts inputs per key, and on a timer or a silence writes
// "key kind count"; an input whose value is "wall" or "stream" sets a
// timer 300 ms (by the clock, or by the input's timestamp) later.
func alarmSpec(silence time.Duration) Spec {
	return Spec{
		From: []string{"in"}, To: "out", Store: "alarms", Silence: silence,
		Update: func(ctx context.Context, in *kafkabpl.Record, state any) ([]Output, any, error) {
			n, _ := state.(int64)
			switch in.Value() {
			case "wall":
				if err := SetTimer(ctx, WallClock, time.Now().Add(300*time.Millisecond)); err != nil {
					return nil, nil, err
				}
			case "stream":
				if err := SetTimer(ctx, StreamTime, in.Timestamp().Add(300*time.Millisecond)); err != nil {
					return nil, nil, err
				}
			case "cancel":
				if err := CancelTimer(ctx); err != nil {
					return nil, nil, err
				}
			}
			return nil, n + 1, nil
		},
		OnTimer: func(ctx context.Context, ev *TimerEvent, state any) ([]Output, any, error) {
			return []Output{{Message: kafkabpl.Message{Key: ev.Key, Value: fmt.Sprintf("%v %s %v", ev.Key, ev.Kind, state)}}}, state, nil
		},
	}
}

// TestStreamSilence checks the silence call: a key that stops getting
// inputs gets one call, a second (by the clock) after its last input, and
// none while its inputs keep coming; then a key's silence that comes due
// while no stream runs is called by the stream started after, from the
// restored state.
func TestStreamSilence(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in")).Servers()
	lib := streamLib(t)
	cfg := map[string]any{"servers": servers, "group": "watch"}
	id := must[string](t)(Of(lib).Start(testCtx(t), cfg, alarmSpec(time.Second)))
	p := must[string](t)(lib.Create(testCtx(t), kafkabpl.Producer, servers))
	send(t, lib, p, []string{"in"}, pairs("quiet", "v", "busy", "v")...)
	// busy reports every 100 ms for two seconds, a tenth of its silence:
	// never silent meanwhile.
	for range 20 {
		send(t, lib, p, []string{"in"}, pairs("busy", "v")...)
		time.Sleep(100 * time.Millisecond)
	}
	if got := values(readAll(t, lib, servers, 2, "out")); got != "quiet silence 1 busy silence 21" {
		t.Errorf("outputs %q, want quiet's silence, then busy's once it stopped", got)
	}
	st := waitStream(t, lib, id, func(st *Status) bool { return st.Store.Fired == 2 })
	if st.Store.Keys != 2 {
		t.Errorf("store %+v: want 2 keys, 2 calls", st.Store)
	}
	// Across a restart: late's silence (5 s here, time enough to stop
	// the stream on a loaded machine) comes due while no stream runs, and
	// the stream started after makes the call.
	lib.Destroy(testCtx(t), id)
	id = must[string](t)(Of(lib).Start(testCtx(t), cfg, alarmSpec(5*time.Second)))
	send(t, lib, p, []string{"in"}, pairs("late", "v")...)
	waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 1 })
	lib.Destroy(testCtx(t), id)
	time.Sleep(5500 * time.Millisecond)
	id = must[string](t)(Of(lib).Start(testCtx(t), cfg, alarmSpec(5*time.Second)))
	if got := values(readAll(t, lib, servers, 3, "out")); !strings.HasSuffix(got, " late silence 1") {
		t.Errorf("outputs %q: want late's silence after the restart", got)
	}
	waitStream(t, lib, id, func(st *Status) bool { return st.Store.Fired == 1 && st.Store.Restored > 0 })
	lib.Destroy(testCtx(t), id)
}

// TestStreamTimers checks timers set by the function: a wall-clock timer
// fires once by the clock; a stream-time timer fires when an input's
// timestamp reaches it, not before; a canceled one never fires.
func TestStreamTimers(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in")).Servers()
	lib := streamLib(t)
	id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "timers"}, alarmSpec(0)))
	base := time.Now().Add(-time.Hour)
	at := func(key, v string, ms int) kafkabpl.Message {
		return kafkabpl.Message{Key: key, Value: v, Timestamp: base.Add(time.Duration(ms) * time.Millisecond)}
	}
	sendValues(t, lib, servers, "in", at("w", "wall", 0), at("s", "stream", 0), at("c", "wall", 0), at("c", "cancel", 1), at("x", "v", 299))
	if got := values(readAll(t, lib, servers, 1, "out")); got != "w wall-clock 1" {
		t.Errorf("outputs %q, want w's wall-clock timer only", got)
	}
	sendValues(t, lib, servers, "in", at("x", "v", 300)) // stream time reaches s's timer
	if got := values(readAll(t, lib, servers, 2, "out")); got != "w wall-clock 1 s stream-time 1" {
		t.Errorf("outputs %q, want s's stream-time timer too", got)
	}
	st := waitStream(t, lib, id, func(st *Status) bool { return st.Store.Fired == 2 })
	if st.State != Running {
		t.Errorf("status %+v", st)
	}
}

// TestStreamTimerErrors checks the timers' bad forms: a timer in a
// stateless stream, a silence without OnTimer, SetTimer outside a stream.
func TestStreamTimerErrors(t *testing.T) {
	t.Parallel()
	lib := newLib(t)
	ctx := testCtx(t)
	fire := func(context.Context, *TimerEvent, any) ([]Output, any, error) { return nil, nil, nil }
	for _, tt := range []struct {
		spec Spec
		want string
	}{
		{Spec{From: []string{"in"}, To: "out", Transform: poisonTransform, OnTimer: fire}, `"on-timer": timers are a per-key stateful stream's`},
		{Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s", Silence: time.Second}, `"silence" 1s: a silence calls the stream's "on-timer" function, and it has none`},
		{Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s", OnTimer: fire, Silence: -time.Second}, `"silence" -1s: want a positive duration`},
	} {
		_, err := Of(lib).Start(ctx, map[string]any{"servers": "127.0.0.1:1", "group": "g"}, tt.spec)
		if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v, want kafkabpl.ErrInvalidArgument with %q", err, tt.want)
		}
	}
	if err := SetTimer(ctx, WallClock, time.Now()); !errors.Is(err, kafkabpl.ErrInvalidArgument) {
		t.Errorf("SetTimer outside a stream: %v", err)
	}
}
