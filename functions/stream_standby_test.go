package functions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/stream"
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
		st := testkit.Must[*stream.Status](t)(stream.Of(lib).Status(testkit.Ctx(t), s))
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

// TestBPLStoreStandby runs two members of one stream group in one
// library, each with "standbys" => 1, and reads each one's standby copy
// with kafka-store-standby-get and -range: the keys of the partition the
// other holds, with their partition, lag and staleness, and none of its
// own partition's.
func TestBPLStoreStandby(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.Topics("in"), embedded.Partitions(2)).Servers()
	lib := newLib(t)
	lib.SetLogOutput(t.Output())
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	var msgs []any
	for i := range 10 {
		msgs = append(msgs, nv{fmt.Sprintf("k%d", i), "v"})
	}
	mustCall(t, lib, "kafka-send", p, "in", bplList(t, msgs...))
	count := goFunc(func(_ context.Context, args *value.List) (any, error) {
		n, _ := args.At(1).(int64)
		return mustCall(t, lib, "kafka-state", n+1), nil
	})
	var ids []string
	for range 2 {
		ids = append(ids, mustCall(t, lib, "kafka-stream", servers, nv{"group", "g"}, nv{"from", "in"}, nv{"to", "out"}, nv{"store", "s"}, nv{"transform", count}, nv{"standbys", int64(1)}).(string))
	}
	status := func(id string) *stream.Status {
		return testkit.Must[*stream.Status](t)(stream.Of(lib).Status(testkit.Ctx(t), id))
	}
	testkit.WaitFor(t, "both members' copies caught up", func() bool {
		keys := int64(0)
		for _, id := range ids {
			ss := status(id).Store
			if ss.Partitions != 1 || ss.Restoring != 0 || len(ss.Standbys) != 1 || ss.Standbys[0].Lag != 0 || ss.Standbys[0].Position == 0 {
				return false
			}
			keys += ss.Standbys[0].Keys
		}
		return keys == 10
	})
	seen := 0
	for _, id := range ids {
		copied := status(id).Store.Standbys[0].Partition
		r := mustCall(t, lib, "kafka-store-standby-range", id).(*value.List)
		seen += r.Len()
		for i := range r.Len() {
			got := value.Format(r.At(i))
			if want := fmt.Sprintf(`("state" => 1 "partition" => %d "lag" => 0 "stale" => false)`, copied); got != want {
				t.Errorf("%s: standby entry %s, want %s", id, got, want)
			}
			key := r.Name(i)
			if g := value.Format(mustCall(t, lib, "kafka-store-standby-get", id, key)); g != got {
				t.Errorf("kafka-store-standby-get %s: %s, want %s", key, g, got)
			}
			if v, err := call(t, lib, "kafka-store-get", id, key); !errors.Is(err, kafkabpl.ErrNotHeld) {
				t.Errorf("kafka-store-get %s on the member without its partition (no query endpoint): %v, %v; want NotHeld", key, v, err)
			}
		}
	}
	if seen != 10 {
		t.Errorf("the copies hold %d keys, want 10", seen)
	}
	if v := mustCall(t, lib, "kafka-store-standby-get", ids[0], "nope"); v != nil {
		t.Errorf("a missing key: %v", v)
	}
	none := goFunc(func(context.Context, *value.List) (any, error) { return nil, nil })
	stateless := mustCall(t, lib, "kafka-stream", servers, nv{"group", "g2"}, nv{"from", "in"}, nv{"to", "out"}, nv{"transform", none}).(string)
	if _, err := call(t, lib, "kafka-store-standby-range", stateless); !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(fmt.Sprint(err), "kafka-store-standby-range: stream "+stateless+" is stateless") {
		t.Errorf("a stateless stream's standbys: %v", err)
	}
	for _, id := range append(ids, stateless) {
		mustCall(t, lib, "kafka-destroy", id)
	}
}
