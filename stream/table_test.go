package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
)

// tableTopic creates a compacted topic and writes rows to it (a nil
// value deletes its key).
func tableTopic(t *testing.T, lib *kafkabpl.Library, servers, topic string, partitions int32, rows ...kafkabpl.Message) {
	t.Helper()
	ctx := testCtx(t)
	created := must[map[string]bool](t)(lib.CreateTopics(ctx, servers, []string{topic}, kafkabpl.TopicOptions{
		Partitions: partitions, Configs: map[string]string{"cleanup.policy": "compact"}}))
	if !created[topic] {
		t.Fatalf("topic %q not created", topic)
	}
	p := must[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	defer lib.Destroy(ctx, p)
	send(t, lib, p, []string{topic}, rows...)
}

// pairs is messages of keys and values: k1, v1, k2, v2, ...
func pairs(kv ...any) []kafkabpl.Message {
	var msgs []kafkabpl.Message
	for i := 0; i < len(kv); i += 2 {
		msgs = append(msgs, kafkabpl.Message{Key: kv[i], Value: kv[i+1]})
	}
	return msgs
}

// TestStreamTableJoin checks an inner and a left join of readings with a
// global table of devices spread over three partitions: the table is read
// whole before the first input, an input whose key the table lacks is
// dropped by the inner join and joined with nil by the left one, and the
// table's later updates and deletions are seen by later inputs. Lookup
// reads the same table from the transform.
func TestStreamTableJoin(t *testing.T) {
	t.Parallel()
	for _, kind := range []JoinKind{InnerJoin, LeftJoin} {
		t.Run(kind.String(), func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t, embedded.Topics("readings")).Servers()
			lib := streamLib(t)
			ctx := testCtx(t)
			tableTopic(t, lib, servers, "devices", 3, pairs("d1", "site-a", "d2", "site-b", "d9", "site-z")...)
			id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "enrich-" + kind.String()}, Spec{
				From: []string{"readings"}, To: "enriched",
				Tables: []Table{{Topic: "devices"}, {Name: "sites", Topic: "devices"}},
				Join:   &Join{Table: "devices", Kind: kind},
				Transform: func(ctx context.Context, in *kafkabpl.Record) ([]Output, error) {
					site, ok := in.Joined()
					if raw := in.JoinedBytes(); ok != (raw != nil) || ok && string(raw) != site {
						return nil, fmt.Errorf("joined bytes %q, value %v", raw, site)
					}
					same, found, err := Lookup(ctx, "sites", in.Key())
					if err != nil {
						return nil, err
					}
					if ok != found || site != same {
						return nil, fmt.Errorf("joined %v %v, looked up %v %v", site, ok, same, found)
					}
					return []Output{{Message: kafkabpl.Message{Key: in.Key(), Value: fmt.Sprintf("%v@%v", in.Value(), site)}}}, nil
				},
			}))
			st := waitStream(t, lib, id, func(st *Status) bool { return len(st.Tables) == 2 && st.Tables[0].Ready && st.Tables[1].Ready })
			if tb := st.Tables[0]; tb.Name != "devices" || tb.Keys != 3 || tb.Read != 3 || tb.Total != 3 {
				t.Errorf("table status %+v, want devices, 3 keys, 3 of 3 read", tb)
			}
			p := must[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
			send(t, lib, p, []string{"readings"}, pairs("d1", "20", "d3", "21", "d2", "22")...)
			want := "20@site-a 22@site-b"
			if kind == LeftJoin {
				want = "20@site-a 21@<nil> 22@site-b"
			}
			if got := values(readAll(t, lib, servers, strings.Count(want, " ")+1, "enriched")); got != want {
				t.Errorf("outputs %q, want %q", got, want)
			}
			// d1 moves, d2 is deleted: later inputs see it.
			send(t, lib, p, []string{"devices"}, kafkabpl.Message{Key: "d1", Value: "site-c"}, kafkabpl.Message{Key: "d2"})
			waitStream(t, lib, id, func(st *Status) bool { return st.Tables[0].Updates == 5 && st.Tables[1].Updates == 5 }) // both tables: each follows on its own
			send(t, lib, p, []string{"readings"}, pairs("d1", "23", "d2", "24")...)
			want += " 23@site-c"
			if kind == LeftJoin {
				want += " 24@<nil>"
			}
			if got := values(readAll(t, lib, servers, strings.Count(want, " ")+1, "enriched")); got != want {
				t.Errorf("outputs %q, want %q", got, want)
			}
			st = waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 5 })
			if wantDropped := map[JoinKind]int64{InnerJoin: 2, LeftJoin: 0}[kind]; st.Dropped != wantDropped || st.State != Running {
				t.Errorf("status %+v, want %d dropped, running", st, wantDropped)
			}
			if tb := st.Tables[0]; tb.Keys != 2 {
				t.Errorf("table keys %d, want 2 (d2 deleted)", tb.Keys)
			}
		})
	}
}

// TestStreamTableErrors checks the errors of tables and joins: a spec's
// at the start, naming the argument and the value; a table topic that
// does not exist, which fails the stream and names the table; Lookup
// outside a stream.
func TestStreamTableErrors(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in")).Servers()
	lib := streamLib(t)
	ctx := testCtx(t)
	pass := func(ctx context.Context, in *kafkabpl.Record) ([]Output, error) { return nil, nil }
	cfg := map[string]any{"servers": servers, "group": "bad-tables"}
	for _, tt := range []struct {
		spec Spec
		want string
	}{
		{Spec{From: []string{"in"}, To: "out", Transform: pass, Join: &Join{Table: "devices"}}, `"join" "devices": not a table of the stream`},
		{Spec{From: []string{"in"}, To: "out", Transform: pass, Tables: []Table{{Topic: "in"}}}, `"tables": "in" is an input topic too`},
		{Spec{From: []string{"in"}, To: "out", Transform: pass, Tables: []Table{{Topic: "a"}, {Name: "a", Topic: "b"}}}, `"tables": "a" names two tables`},
		{Spec{From: []string{"in"}, To: "out", Transform: pass, Tables: []Table{{Topic: "bad topic"}}}, `"tables": table 1:`},
	} {
		_, err := Of(lib).Start(ctx, cfg, tt.spec)
		if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "kafka-stream") {
			t.Errorf("%+v: %v, want kafkabpl.ErrInvalidArgument with %q", tt.spec, err, tt.want)
		}
	}
	id := must[string](t)(Of(lib).Start(ctx, cfg, Spec{From: []string{"in"}, To: "out", Transform: pass, Tables: []Table{{Name: "devices", Topic: "no-such-topic"}}}))
	st := waitStream(t, lib, id, func(st *Status) bool { return st.State == Failed })
	if !errors.Is(st.LastError, kafkabpl.ErrInvalidConfig) || !strings.Contains(st.LastError.Error(), `table "devices" (topic "no-such-topic"): the topic does not exist`) {
		t.Errorf("failed with %v", st.LastError)
	}
	if _, _, err := Lookup(ctx, "devices", "d1"); !errors.Is(err, kafkabpl.ErrInvalidArgument) {
		t.Errorf("Lookup outside a stream: %v, want kafkabpl.ErrInvalidArgument", err)
	}
}

// TestStreamTableNotCompacted checks the warning for a table topic that
// is not compacted: the stream runs, and says so in its log.
func TestStreamTableNotCompacted(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in", "plain")).Servers()
	lib := newLib(t)
	var log syncBuffer
	lib.SetLogOutput(&log)
	ctx := testCtx(t)
	id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "plain-table"}, Spec{
		From: []string{"in"}, To: "out", Tables: []Table{{Topic: "plain"}},
		Transform: func(ctx context.Context, in *kafkabpl.Record) ([]Output, error) { return nil, nil },
	}))
	waitStream(t, lib, id, func(st *Status) bool { return st.Tables[0].Ready })
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(log.String(), `warning: table "plain": its topic "plain" is not compacted`) {
		if time.Now().After(deadline) {
			t.Fatalf("no warning in the log:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStreamJoinDropsCounted checks that the inputs an inner join drops
// are counted as dropped in a windowed stream and in a re-keyed one, as
// in a stateless one: their other empty outputs (a window's result comes
// later, a re-keyed input goes on through the repartition topic) are no
// drop, the join's misses are.
func TestStreamJoinDropsCounted(t *testing.T) {
	t.Parallel()
	count := func(_ context.Context, _ *kafkabpl.Record, acc any) (any, error) {
		n, _ := acc.(int64)
		return n + 1, nil
	}
	for _, c := range []struct {
		name string
		spec Spec
		done int64 // Processed once every input is: a re-keyed one is processed twice
	}{
		{"windowed", Spec{Window: &Window{Kind: Tumbling, Size: time.Minute, Aggregate: count}}, 5},
		{"re-keyed", Spec{Update: countUpdate, Rekey: func(_ context.Context, in *kafkabpl.Record) (any, error) {
			return "site-" + in.Key().(string), nil
		}}, 5 + 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t, embedded.Topics("readings"), embedded.Partitions(2)).Servers()
			lib := streamLib(t)
			tableTopic(t, lib, servers, "devices", 2, pairs("d1", "site-a", "d2", "site-b")...)
			spec := c.spec
			spec.From, spec.To, spec.Store = []string{"readings"}, "out", "s"
			spec.Tables, spec.Join = []Table{{Topic: "devices"}}, &Join{Table: "devices"}
			id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": groupName("drops")}, spec))
			sendValues(t, lib, servers, "readings", keyed("d1", "d3", "d2", "d9", "d1")...)
			st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == c.done })
			if st.Dropped != 2 || st.Skipped != 0 || st.State != Running {
				t.Errorf("status %+v: want 2 dropped (d3, d9: not in the table), running", st)
			}
		})
	}
}
