//go:build synctests

package streamtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/streamtest"
)

// TestWindowedHour counts readings per minute over an hour of virtual
// time: one reading a minute, each timed by the virtual clock, in
// tumbling one-minute windows that close by the clock when no reading
// comes (Idle). Every window's count comes once, exactly once.
func TestWindowedHour(t *testing.T) {
	streamtest.Run(t, func(d *streamtest.Driver) {
		id := d.Stream(map[string]any{"group": "per-minute"}, stream.Spec{
			From: []string{"readings"}, To: "counts", Store: "minutes",
			Window: &stream.Window{Kind: stream.Tumbling, Size: time.Minute, Idle: time.Minute,
				Aggregate: func(_ context.Context, _ *kafkabpl.Record, acc any) (any, error) {
					n, _ := acc.(int64)
					return n + 1, nil
				},
				Result: func(_ context.Context, w *stream.WindowResult) ([]stream.Output, error) {
					return []stream.Output{{Message: kafkabpl.Message{Key: w.Key, Value: fmt.Sprintf("%d:%v", (w.End-w.Start)/60000, w.Value)}}}, nil
				}},
		})
		start := time.Now()
		for range 60 {
			d.Send("readings", kafkabpl.Message{Key: "d1", Value: "r", Timestamp: time.Now()})
			d.Advance(time.Minute)
		}
		d.Advance(3 * time.Minute)
		got := streamtest.Values(d.Read("counts"))
		want := slices.Repeat([]string{"1:1"}, 60)
		if !slices.Equal(got, want) {
			t.Errorf("%d results %v, want 60 of one reading each", len(got), got)
		}
		if took := time.Since(start); took < time.Hour {
			t.Errorf("the virtual clock moved %v, want an hour and more", took)
		}
		if st := d.Status(id); st.State != stream.Running || st.Processed != 60 {
			t.Errorf("status %+v", st)
		}
	})
}

// TestSilenceTenMinutes checks a ten-minute silence: no call at nine
// minutes, one at ten, and one only.
func TestSilenceTenMinutes(t *testing.T) {
	streamtest.Run(t, func(d *streamtest.Driver) {
		d.Stream(map[string]any{"group": "watchdog"}, stream.Spec{
			From: []string{"readings"}, To: "alarms", Store: "last", Silence: 10 * time.Minute,
			Update: func(_ context.Context, in *kafkabpl.Record, _ any) ([]stream.Output, any, error) {
				return nil, in.Value(), nil
			},
			OnTimer: func(_ context.Context, ev *stream.TimerEvent, last any) ([]stream.Output, any, error) {
				return []stream.Output{{Message: kafkabpl.Message{Key: ev.Key, Value: fmt.Sprintf("%v %s after %v", ev.Key, ev.Kind, last)}}}, last, nil
			},
		})
		d.Send("readings", kafkabpl.Message{Key: "d1", Value: "20"})
		d.Advance(9 * time.Minute)
		if got := streamtest.Values(d.Read("alarms")); len(got) != 0 {
			t.Errorf("alarms at 9 minutes: %v", got)
		}
		d.Advance(time.Minute)
		if got := streamtest.Values(d.Read("alarms")); !slices.Equal(got, []string{"d1 silence after 20"}) {
			t.Errorf("alarms at 10 minutes: %v", got)
		}
		d.Advance(time.Hour)
		if got := streamtest.Values(d.Read("alarms")); len(got) != 1 {
			t.Errorf("alarms an hour later: %v, want the one", got)
		}
	})
}

// TestScripts runs the BPL test scripts of examples/test in virtual time,
// and those $KAFKABPL_TEST_SCRIPTS names (absolute paths, separated by
// spaces): a script author's own, run with
//
//	KAFKABPL_TEST_SCRIPTS=$PWD/my-test.bpl go test -tags synctests -run TestScripts github.com/brain4it/kafkabpl/streamtest
func TestScripts(t *testing.T) {
	scripts := []string{"../examples/test/windowed.bpl", "../examples/test/pipeline.bpl"}
	scripts = append(scripts, strings.Fields(os.Getenv("KAFKABPL_TEST_SCRIPTS"))...)
	for _, path := range scripts {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".bpl"), func(t *testing.T) {
			streamtest.Script(t, path)
		})
	}
}

// TestScriptEqual runs testdata/equal.bpl: assert-equal compares as BPL's
// = does (3.0 equals 3), and admin calls given a config reach the test's
// cluster through its virtual network.
func TestScriptEqual(t *testing.T) {
	var out strings.Builder
	res := streamtest.RunScript(t, "testdata/equal.bpl", &out)
	if !res.OK() || res.Passed != 4 {
		t.Errorf("%+v, want 4 assertions passed and nothing failed; output:\n%s", res, out.String())
	}
	if !strings.Contains(out.String(), "ok   3.0 equals 3\n") {
		t.Errorf("output lacks the line of the first assertion:\n%s", out.String())
	}
}

// TestScriptFailures runs testdata/fails.bpl, which fails: RunScript
// counts the assertion that passed and the one that failed, prints both
// values of the failure, and reports the exception that ended the script.
func TestScriptFailures(t *testing.T) {
	var out strings.Builder
	res := streamtest.RunScript(t, "testdata/fails.bpl", &out)
	if res.OK() || res.Passed != 1 || res.Failed != 1 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "boom") {
		t.Errorf("%+v, want 1 passed, 1 failed and the exception boom", res)
	}
	want := "ok   one and two\nFAIL one and two make four\n      got 3\n     want 4\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output:\n%s\nwant it to hold:\n%s", out.String(), want)
	}
}
