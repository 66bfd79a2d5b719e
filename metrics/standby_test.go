package metrics_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/stream"
)

// TestStreamStandbys checks the figures of a stream's standby copies: two
// members of one group, each with "standbys" 1, keep a copy each of the
// other's partition, caught up (lag 0), and report no takeover; a stream
// without standbys reports none of these families.
func TestStreamStandbys(t *testing.T) {
	servers := testkit.NewCluster(t, embedded.Topics("in"), embedded.Partitions(2)).Servers()
	lib, _, url := registered(t)
	ctx := testkit.Ctx(t)
	p := testkit.Must[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	var msgs []kafkabpl.Message
	for i := range 10 {
		msgs = append(msgs, kafkabpl.Message{Key: fmt.Sprintf("k%d", i), Value: "v"})
	}
	testkit.Must[int](t)(lib.Send(ctx, p, []string{"in"}, msgs))
	keep := func(_ context.Context, r *kafkabpl.Record, _ any) ([]stream.Output, any, error) {
		return nil, r.Value(), nil
	}
	var ids []string
	for _, standbys := range []int{1, 1} {
		ids = append(ids, testkit.Must[string](t)(stream.Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "standbys"},
			stream.Spec{From: []string{"in"}, To: "out", Store: "s", Update: keep, Standbys: standbys})))
	}
	plain := testkit.Must[string](t)(stream.Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "plain"},
		stream.Spec{From: []string{"in"}, To: "out", Store: "s", Update: keep}))
	testkit.WaitFor(t, "each member's copy caught up", func() bool {
		for _, id := range ids {
			st, err := stream.Of(lib).Status(ctx, id)
			if err != nil || len(st.Store.Standbys) != 1 || st.Store.Standbys[0].Lag != 0 || st.Store.Standbys[0].Keys == 0 {
				return false
			}
		}
		return true
	})
	got := scrape(t, url)
	for _, id := range ids {
		for _, tt := range []struct {
			family string
			want   float64
		}{{"kafkabpl_stream_store_standbys", 1}, {"kafkabpl_stream_store_standby_lag", 0}, {"kafkabpl_stream_takeovers_total", 0}} {
			if v, ok := value(got, tt.family, "stream="+id); !ok || v != tt.want {
				t.Errorf("%s{stream=%s} = %v (found %v), want %v", tt.family, id, v, ok, tt.want)
			}
		}
	}
	if _, ok := value(got, "kafkabpl_stream_store_standbys", "stream="+plain); ok {
		t.Errorf("a stream without standbys reports kafkabpl_stream_store_standbys")
	}
}
