package stream

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCloseWaitsForBackground checks that Library.Close returns only once
// (package kafkabpl's, through the Extension seam for the stream)
// every goroutine the library started has ended, those a destroy leaves
// running included: here a consumer and a stream whose group rebalances,
// waiting for a member that died, when they are destroyed. Each leaves the
// group at once, but kgo would hold its client until its JoinGroup in
// flight is answered (kfake never answers the join of a member that left:
// it times out after "max-poll-interval", 5 minutes, and 10 s more), so
// the client's requests are ended and its close finishes in the
// background, at once: a Close given a minute returns in time. A Close
// whose context ends first says what still runs.
//
// It counts the process's goroutines, so it does not run in parallel with
// other tests; the in-process cluster's own goroutines are left out of the
// count.
func TestCloseWaitsForBackground(t *testing.T) {
	cluster := newCluster(t, embedded.Partitions(2), embedded.Topics("t", "out"))
	servers := cluster.Servers()
	ctx := testCtx(t)
	before := goroutines(t)

	raw := must[*kgo.Client](t)(kgo.NewClient(kgo.SeedBrokers(cluster.Addrs()...)))
	adm := kadm.NewClient(raw)
	lib := kafkabpl.New()
	lib.SetLogOutput(nil)
	config := func(more map[string]any) map[string]any {
		maps.Copy(more, map[string]any{"servers": servers, "group": "g", "heartbeat-interval": 500})
		return more
	}
	c := must[string](t)(lib.Create(ctx, kafkabpl.Consumer, config(map[string]any{"topics": "t", "auto-offset-reset": "earliest"})))
	s := must[string](t)(Of(lib).Start(ctx, config(map[string]any{}),
		Spec{From: []string{"t"}, To: "out", Transform: func(_ context.Context, r *kafkabpl.Record) ([]Output, error) {
			return []Output{{Message: kafkabpl.Message{Value: r.Value()}}}, nil
		}}))
	// Both are in the group once each has a partition.
	waitFor(t, "the consumer and the stream to share the group's partitions", func() bool {
		if _, err := lib.Poll(ctx, c, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		g, err := adm.DescribeGroups(ctx, "g")
		if err != nil || g["g"].State != "Stable" || len(g["g"].Members) != 2 {
			return false
		}
		for _, m := range g["g"].Members {
			if a, ok := m.Assigned.AsConsumer(); !ok || len(a.Topics) != 1 || len(a.Topics[0].Partitions) != 1 {
				return false
			}
		}
		return true
	})

	// A member joins and dies, then another joins: the group rebalances
	// and waits for the dead one until its session ends.
	const session = 12 * time.Second
	ghost := &testkit.RawMember{Client: raw, Group: "g"}
	if err := ghost.Join(ctx, []string{"t"}, session); err != nil {
		t.Fatalf("ghost join: %v", err)
	}
	var joins sync.WaitGroup
	joins.Go(func() { (&testkit.RawMember{Client: raw, Group: "g"}).Join(ctx, []string{"t"}, session) })
	time.Sleep(time.Second) // the join has begun; nothing to wait on that says so

	if ok, err := lib.Destroy(ctx, c); !ok || err != nil {
		t.Errorf("destroy: %v %v", ok, err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	shortErr := lib.Close(short) // destroys the stream, which also leaves in the background
	cancel()
	minute, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := lib.Close(minute); err != nil {
		t.Errorf("Close: %v", err)
	}
	closed := time.Now()
	raw.Close()
	joins.Wait()

	// What the closes started ends with them; only the cluster's
	// connections may take a moment more to wind down. Goroutines of
	// earlier tests may end meanwhile: only new ones count.
	var left []string
	for deadline := time.Now().Add(time.Second); ; {
		runtime.Gosched()
		left = left[:0]
		for id, stack := range goroutines(t) {
			if _, ok := before[id]; !ok {
				left = append(left, stack)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(left) > 0 {
		slices.Sort(left)
		t.Errorf("%d goroutines started since New are left %v after Close:\n%s",
			len(left), time.Since(closed).Round(time.Millisecond), strings.Join(left, "\n\n"))
	}

	if !errors.Is(shortErr, context.DeadlineExceeded) || !errors.Is(shortErr, kafkabpl.ErrTimeout) || !strings.Contains(shortErr.Error(), s) {
		t.Errorf("Close whose context ended first: %v, want a Timeout wrapping context.DeadlineExceeded naming stream %s", shortErr, s)
	}
}

// goroutines returns the stacks of the process's goroutines, by id, as the
// goroutine profile shows them, leaving out the in-process cluster's (any
// with a kfake function on its stack).
func goroutines(t *testing.T) map[string]string {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	gs := map[string]string{}
	for _, g := range strings.Split(strings.TrimSpace(b.String()), "\n\n") {
		if strings.Contains(g, "github.com/twmb/franz-go/pkg/kfake.") {
			continue
		}
		id, _, _ := strings.Cut(strings.TrimPrefix(g, "goroutine "), " ")
		gs[id] = g
	}
	return gs
}
