package functions

import (
	"context"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
)

// TestBPLStreamStandbys starts a stateful stream with "standbys" => 1 and
// reads the standbys' part of its status: alone in its group, it holds
// both partitions and keeps no copy, and the placement names it owner of
// each, with no standby (no other member).
func TestBPLStreamStandbys(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t).Servers()
	lib := newLib(t)
	lib.SetLogOutput(t.Output())
	keep := goFunc(func(_ context.Context, args *value.List) (any, error) {
		return mustCall(t, lib, "kafka-state", int64(1)), nil
	})
	s := mustCall(t, lib, "kafka-stream", servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"store", "s"}, nv{"transform", keep}, nv{"standbys", int64(1)}).(string)
	var member string
	testkit.WaitFor(t, "the placement", func() bool {
		st := testkit.Must[*kafkabpl.StreamStatus](t)(lib.StreamStatus(testkit.Ctx(t), s))
		member = st.Store.Member
		return len(st.Store.Placement) > 0
	})
	store, _ := mustCall(t, lib, "kafka-stream-status", s).(*value.List).Get("store")
	got := value.Format(store)
	for _, want := range []string{`"standbys-wanted" => 1`, `"takeovers" => 0`, `"standbys" => ()`, `"placement" => (("partition" => 0 "owner" => "` + member + `" "standbys" => ()))`} {
		if !strings.Contains(got, want) {
			t.Errorf("store status %s: no %s", got, want)
		}
	}
	mustCall(t, lib, "kafka-destroy", s)
}
