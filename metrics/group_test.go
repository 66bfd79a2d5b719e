package metrics_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// lags returns the kafkabpl_partition_lag series of labels, by
// partition.
func lags(families map[string]*dto.MetricFamily, labels ...string) map[string]float64 {
	out := map[string]float64{}
	f := families["kafkabpl_partition_lag"]
	if f == nil {
		return out
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for _, l := range labels {
			name, v, _ := cutLabel(l)
			if have[name] != v {
				continue next
			}
		}
		out[have["partition"]] = m.Gauge.GetValue()
	}
	return out
}

// TestGroupMetrics follows a consumer group through a scrape while it
// reads: its partitions' lag grows with what is sent and falls to 0 once
// all is read, its commits are counted as made, and a second member
// joining counts a rebalance.
func TestGroupMetrics(t *testing.T) {
	servers := testkit.NewCluster(t, embedded.Partitions(3), embedded.Topics("readings")).Servers()
	lib, reg, url := registered(t)
	ctx := testkit.Ctx(t)

	const n = 90
	p := testkit.Must[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	msgs := make([]kafkabpl.Message, n)
	for i := range msgs {
		msgs[i] = kafkabpl.Message{Key: fmt.Sprint(i), Value: "v"}
	}
	testkit.Must[int](t)(lib.Send(ctx, p, []string{"readings"}, msgs))

	// Sent before the consumer came: its first fetch brings them all, and
	// its first poll returns 5, so the lag of that poll's partition is
	// what is left of it.
	cfg := map[string]any{"servers": servers, "group": "meter", "topics": "readings", "auto-offset-reset": "earliest",
		"enable-auto-commit": false, "max-poll-records": 5}
	a := testkit.Must[string](t)(lib.Create(ctx, kafkabpl.Consumer, cfg))
	group := []string{"kind=consumer", "group=meter"}
	read, commits := 0, 0
	poll := func(id string) int {
		polled := testkit.Must[*kafkabpl.Polled](t)(lib.Poll(ctx, id, 100*time.Millisecond))
		if polled.Len() > 0 {
			if err := lib.Commit(ctx, id); err != nil {
				t.Fatal(err)
			}
			commits++
		}
		return polled.Len()
	}
	testkit.WaitFor(t, "a first poll with records", func() bool { read += poll(a); return read > 0 })
	behind := 0.0
	for _, l := range lags(scrape(t, url), group...) {
		behind += l
	}
	t.Logf("lag after the first poll: %v", behind)
	if behind <= 0 {
		t.Errorf("after the first poll of %d records, the lags add up to %v", n, behind)
	}
	testkit.WaitFor(t, "the consumer reads every record", func() bool { read += poll(a); return read >= n })
	var got map[string]*dto.MetricFamily
	testkit.WaitFor(t, "every partition's lag at 0", func() bool {
		got = scrape(t, url)
		l := lags(got, append(group, "topic=readings")...)
		return fmt.Sprint(l) == "map[0:0 1:0 2:0]"
	})
	for _, tt := range []struct {
		family string
		labels []string
		want   float64
	}{
		{"kafkabpl_commits_total", group, float64(commits)},
		{"kafkabpl_commit_errors_total", group, 0},
		{"kafkabpl_rebalances_total", append(group, "event=assigned"), 1},
		{"kafkabpl_rebalanced_partitions_total", append(group, "event=assigned"), 3},
	} {
		if v, ok := value(got, tt.family, tt.labels...); !ok || v != tt.want {
			t.Errorf("%s%v = %v (found %v), want %v", tt.family, tt.labels, v, ok, tt.want)
		}
	}

	// A second member: the group rebalances, a's partitions are revoked
	// and both are assigned theirs.
	b := testkit.Must[string](t)(lib.Create(ctx, kafkabpl.Consumer, cfg))
	testkit.WaitFor(t, "the rebalance counted", func() bool {
		poll(a)
		poll(b)
		got = scrape(t, url)
		assigned, _ := value(got, "kafkabpl_rebalances_total", append(group, "event=assigned")...)
		revoked, _ := value(got, "kafkabpl_rebalances_total", append(group, "event=revoked")...)
		return assigned >= 3 && revoked >= 1
	})
	if v, _ := value(got, "kafkabpl_rebalanced_partitions_total", append(group, "event=assigned")...); v < 4 {
		t.Errorf("partitions assigned: %v, want at least 4 (3, then b's at least)", v)
	}
	if v, ok := value(got, "kafkabpl_rebalances_total", append(group, "event=lost")...); ok {
		t.Errorf("partitions lost: %v", v)
	}
	// The two members report their own partitions, each once.
	testkit.WaitFor(t, "every partition's lag reported once", func() bool {
		poll(a)
		poll(b)
		return fmt.Sprint(lags(scrape(t, url), append(group, "topic=readings")...)) == "map[0:0 1:0 2:0]"
	})
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
