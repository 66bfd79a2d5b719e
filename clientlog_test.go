package kafkabpl

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer that the library's goroutines may write to
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

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
