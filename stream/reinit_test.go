package stream

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
)

// TestStreamReinitDuringDeleteTopics re-initializes a stream's producer
// while an admin call deletes a topic, which makes every client of the
// library forget it: the stream's client, which reinit replaces, must be
// read under the stream's lock. Run with -race.
//
// The test plays the stream's run goroutine itself, calling reinit as run
// does when the brokers abort a transaction (which a test cannot time
// against an admin call), so run is never started. The stream's servers
// refuse connections: its clients then do no network I/O, which the race
// detector would otherwise take as ordering the two goroutines.
func TestStreamReinitDuringDeleteTopics(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("gone")).Servers()
	lib := newLib(t)
	lib.SetLogOutput(nil)
	ctx := testCtx(t)
	cfg := testConfig(t, map[string]any{"servers": "127.0.0.1:1", "group": "reinit-race"})
	id := func(context.Context, *kafkabpl.Record) ([]Output, error) { return nil, nil }
	s := startTest(t, lib, cfg, Spec{From: []string{"in"}, To: "out", Transform: id})
	close(s.done) // as if run had returned: destroy stops the stream at once

	var wg sync.WaitGroup
	wg.Go(func() {
		if err := s.reinit(errors.New("transaction aborted by the test")); err != nil {
			t.Errorf("reinit: %v", err)
		}
	})
	wg.Go(func() {
		if done, err := lib.DeleteTopics(ctx, servers, []string{"gone"}); err != nil || !done["gone"] {
			t.Errorf("delete: %v %v", done, err)
		}
	})
	wg.Wait()
	if n := s.totals.reinits.Load(); n != 1 {
		t.Errorf("%d re-initializations, want 1", n)
	}
}
