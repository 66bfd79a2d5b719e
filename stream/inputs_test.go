package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
)

// TestStreamSeveralInputs counts per key across two co-partitioned input
// topics, in two processes sharing the group: each holds partition N of
// both inputs (the range assignor keeps them together), so every key's
// count is exact; the input's topic is seen by the function.
func TestStreamSeveralInputs(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("temps", "hums"), embedded.Partitions(3)).Servers()
	libs := []*kafkabpl.Library{streamLib(t), streamLib(t)}
	cfg := map[string]any{"servers": servers, "group": "both", "max-poll-records": 3}
	var topicsSeen [2]map[string]bool
	var ids []string
	for i, lib := range libs {
		topicsSeen[i] = map[string]bool{}
		seen := topicsSeen[i]
		update := func(ctx context.Context, in *kafkabpl.Record, state any) ([]Output, any, error) {
			seen[in.Topic()] = true // the run goroutine's alone
			return countUpdate(ctx, in, state)
		}
		ids = append(ids, must[string](t)(Of(lib).Start(testCtx(t), cfg, Spec{From: []string{"temps", "hums"}, To: "out", Update: update, Store: "counts"})))
	}
	// Both members hold partitions before any input comes.
	for i, lib := range libs {
		waitStream(t, lib, ids[i], func(st *Status) bool {
			other := must[*Status](t)(Of(libs[1-i]).Status(testCtx(t), ids[1-i]))
			return st.Store.Partitions > 0 && other.Store.Partitions > 0 && st.Store.Partitions+other.Store.Partitions == 3
		})
	}
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	sendValues(t, libs[0], servers, "temps", keyed(keys...)...)
	sendValues(t, libs[0], servers, "hums", keyed(keys...)...)
	sendValues(t, libs[0], servers, "hums", keyed("a", "b")...)
	var want []string
	for _, k := range keys {
		n := 2
		if k == "a" || k == "b" {
			n = 3
		}
		want = append(want, fmt.Sprintf("%s=%d", k, n))
	}
	if got := lastPerKey(readAll(t, libs[0], servers, 18, "out")); got != strings.Join(want, " ") {
		t.Errorf("counts %s, want %s", got, strings.Join(want, " "))
	}
	var keysHeld int64
	for i, lib := range libs {
		st := waitStream(t, lib, ids[i], func(st *Status) bool { return st.Transactions > 0 && st.Lag == 0 })
		if l := st.List(); !strings.Contains(l.String(), `"input-lag" => ("hums" => 0 "temps" => 0)`) {
			t.Errorf("status %s: want each input's lag", l)
		}
		keysHeld += st.Store.Keys
		lib.Destroy(testCtx(t), ids[i])
	}
	if keysHeld != int64(len(keys)) {
		t.Errorf("the processes hold %d keys in all, want %d (each key in one)", keysHeld, len(keys))
	}
	if !topicsSeen[0]["temps"] && !topicsSeen[1]["temps"] || !topicsSeen[0]["hums"] && !topicsSeen[1]["hums"] {
		t.Errorf("topics seen by the function: %v", topicsSeen)
	}
}

// TestStreamSeveralInputsErrors checks what a stateful stream of several
// inputs refuses: inputs with different partition counts (the stream
// fails, naming both), and an assignor that would not keep partition N of
// each input together.
func TestStreamSeveralInputsErrors(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("x"), embedded.Partitions(3)).Servers()
	lib := streamLib(t)
	ctx := testCtx(t)
	must[map[string]bool](t)(lib.CreateTopics(ctx, servers, []string{"y"}, kafkabpl.TopicOptions{Partitions: 2}))
	spec := Spec{From: []string{"x", "y"}, To: "out", Update: countUpdate, Store: "s"}
	id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "uneven"}, spec))
	st := waitStream(t, lib, id, func(st *Status) bool { return st.State == Failed })
	if !errors.Is(st.LastError, kafkabpl.ErrInvalidConfig) || !strings.Contains(st.LastError.Error(), `its inputs are not co-partitioned: "x" has 3 partitions and "y" has 2`) {
		t.Errorf("failed with %v", st.LastError)
	}
	for _, tt := range []struct {
		key, value, want string
	}{
		{"assignment-strategy", "roundrobin", `"assignment-strategy": a stateful stream of several inputs ([x y]) balances with "range"`},
		{"group-protocol", "consumer", `a stateful stream of several inputs ([x y]) needs the classic "group-protocol"`},
	} {
		_, err := Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "g", tt.key: tt.value}, spec)
		if !errors.Is(err, kafkabpl.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s: %v, want kafkabpl.ErrInvalidConfig with %q", tt.key, tt.value, err, tt.want)
		}
	}
}
