package stream

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/murmur2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestStreamRekey counts readings per site, re-keyed from their device:
// the repartition topic is created with the input's partition count, the
// counts are exact, and a stream started again goes on from the
// changelog.
func TestStreamRekey(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Topics("readings"), embedded.Partitions(3))
	servers := cluster.Servers()
	lib := streamLib(t)
	site := map[string]string{"d1": "north", "d2": "north", "d3": "south", "d4": "north", "d5": "south"}
	cfg := map[string]any{"servers": servers, "group": "sites", "max-poll-records": 4}
	spec := Spec{From: []string{"readings"}, To: "counts", Store: "per-site", Update: countUpdate,
		Rekey: func(_ context.Context, in *kafkabpl.Record) (any, error) {
			if s, ok := site[in.Key().(string)]; ok {
				return s, nil
			}
			return nil, errors.New("unknown device")
		}}
	sendValues(t, lib, servers, "readings", keyed("d1", "d2", "d3", "d4", "d5", "d1")...)
	id := must[string](t)(Of(lib).Start(testCtx(t), cfg, spec))
	if got := lastPerKey(readAll(t, lib, servers, 6, "counts")); got != "north=4 south=2" {
		t.Errorf("counts %s", got)
	}
	st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 12 && st.InputLag["readings"] == 0 })
	if _, ok := st.InputLag["sites-per-site-repartition"]; !ok || len(st.InputLag) != 2 {
		t.Errorf("input lag %v, want the input's and the repartition topic's", st.InputLag)
	}
	if st.Store.Repartition != "sites-per-site-repartition" || st.Store.Repartitioned != 6 || st.Produced != 6 || st.Store.Keys != 2 {
		t.Errorf("status %+v, store %+v", st, st.Store)
	}
	// Read to its end, the repartition topic lags by 1 per partition that
	// holds records: its last transaction's commit marker, an offset no
	// record holds (the docs say so).
	held := map[int32]bool{murmur2.Partition([]byte("north"), 3): true, murmur2.Partition([]byte("south"), 3): true}
	st = waitStream(t, lib, id, func(st *Status) bool { return st.InputLag["sites-per-site-repartition"] == int64(len(held)) })
	if st.Lag != int64(len(held)) {
		t.Errorf("lag %d, want %d: the input's 0 and 1 per repartition partition written", st.Lag, len(held))
	}
	// A re-keyed stream balances with cooperative-sticky, as Spec says:
	// its state comes from one topic, the repartition topic.
	raw := must[*kgo.Client](t)(kgo.NewClient(kgo.SeedBrokers(cluster.Addrs()...)))
	defer raw.Close()
	groups := must[kadm.DescribedGroups](t)(kadm.NewClient(raw).DescribeGroups(testCtx(t), "sites"))
	if g := groups["sites"]; g.Protocol != "cooperative-sticky" {
		t.Errorf("group sites balances with %q, want cooperative-sticky", g.Protocol)
	}
	infos := must[[]kafkabpl.TopicInfo](t)(lib.DescribeTopics(testCtx(t), servers, "sites-per-site-repartition"))
	if len(infos) != 1 || len(infos[0].Partitions) != 3 {
		t.Errorf("repartition topic %+v, want 3 partitions", infos)
	}
	lib.Destroy(testCtx(t), id)

	sendValues(t, lib, servers, "readings", keyed("d3", "d9")...) // d9: unknown, skipped
	spec.OnError = SkipOnError
	id = must[string](t)(Of(lib).Start(testCtx(t), cfg, spec))
	if got := lastPerKey(readAll(t, lib, servers, 7, "counts")); got != "north=4 south=3" {
		t.Errorf("after a restart: %s", got)
	}
	st = waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 3 })
	if st.Skipped != 1 || !strings.Contains(st.LastError.Error(), "unknown device") {
		t.Errorf("status after a restart %+v", st)
	}
	lib.Destroy(testCtx(t), id)
	if _, err := Of(lib).Start(testCtx(t), cfg, Spec{From: []string{"readings"}, To: "x", Transform: poisonTransform, Rekey: spec.Rekey}); !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), `"rekey": a new key is a stateful stream's`) {
		t.Errorf("rekey in a stateless stream: %v", err)
	}
}
