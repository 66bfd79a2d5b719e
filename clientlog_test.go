package kafkabpl

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/twmb/franz-go/pkg/kgo"
)

// syncBuffer: see [testkit.SyncBuffer].
type syncBuffer = testkit.SyncBuffer

// TestLogLevel checks that "log-level" writes franz-go's own log of the
// client to the Library's log output, each line naming the handle, and
// that without it nothing of the kind is written.
func TestLogLevel(t *testing.T) {
	c := newCluster(t)
	ctx := testCtx(t)
	var out syncBuffer
	lib := newLib(t)
	lib.SetLogOutput(&out)

	quiet, err := lib.Create(ctx, Producer, map[string]any{"servers": c.Servers()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Send(ctx, quiet, []string{"log"}, []Message{{Value: "a"}}); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); s != "" {
		t.Fatalf("without log-level the library wrote %q", s)
	}

	p, err := lib.Create(ctx, Producer, map[string]any{"servers": c.Servers(), "log-level": "debug"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Send(ctx, p, []string{"log"}, []Message{{Value: "b"}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var debug int
	for _, l := range lines {
		if !strings.HasPrefix(l, "kafka-client: "+p+" ") {
			t.Errorf("line %q does not start with kafka-client: and the handle %s", l, p)
		}
		if strings.Contains(l, " DEBUG ") {
			debug++
		}
	}
	if debug == 0 {
		t.Errorf("log-level debug wrote no DEBUG line:\n%s", out.String())
	}
	if !strings.Contains(out.String(), c.Servers()) {
		t.Errorf("the log never names the broker %s:\n%s", c.Servers(), out.String())
	}
}

// TestClientTimeouts checks what the kgo client of a handle is given for
// failover: a produce may wait request-timeout for the ISR, as Java's
// does (kgo's own default is 10 s), and retries are bounded by time, not
// by kgo's 20 tries.
func TestClientTimeouts(t *testing.T) {
	lib := newLib(t)
	ctx := testCtx(t)
	for _, tt := range []struct {
		config map[string]any
		want   time.Duration
	}{
		{map[string]any{"servers": "127.0.0.1:1"}, 30 * time.Second},
		{map[string]any{"servers": "127.0.0.1:1", "request-timeout": 12000}, 12 * time.Second},
		{map[string]any{"servers": "127.0.0.1:1", "request-timeout": 20}, time.Second},
	} {
		id := must[string](t)(lib.Create(ctx, Producer, tt.config))
		h := must[*handle](t)(lib.acquire(id, Producer))
		got := h.cl.OptValue(kgo.ProduceRequestTimeout).(time.Duration)
		retries := h.cl.OptValue(kgo.RequestRetries).(int64)
		h.calls.Done()
		if got != tt.want {
			t.Errorf("%v: produce request timeout %v, want %v", tt.config, got, tt.want)
		}
		if retries != math.MaxInt32 {
			t.Errorf("%v: request retries %d, want no count (%d)", tt.config, retries, math.MaxInt32)
		}
	}
}
