package metrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/metrics"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestDialGuard(t *testing.T) { testkit.CheckGuard(t) }

// registered returns a library whose collectors are registered in a new
// registry, that registry, and the URL of an HTTP server that scrapes it;
// the library and the server end with the test.
func registered(t *testing.T) (*kafkabpl.Library, *prometheus.Registry, string) {
	t.Helper()
	reg := prometheus.NewRegistry()
	lib := kafkabpl.New()
	lib.SetLogOutput(nil)
	testkit.CloseAtEnd(t, lib)
	if err := metrics.Register(reg, lib); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return lib, reg, srv.URL
}

// scrape gets url's metrics in Prometheus's text format and parses them.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type %q", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// value is the value of family's metric whose labels include labels
// ("name=value" each), and whether there is one.
func value(families map[string]*dto.MetricFamily, family string, labels ...string) (float64, bool) {
	f := families[family]
	if f == nil {
		return 0, false
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
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// cutLabel splits "name=value".
func cutLabel(l string) (name, value string, ok bool) { return strings.Cut(l, "=") }

// TestScrape sends records through a producer, a consumer and a stream,
// scrapes the registry over HTTP while they flow and after, and checks
// the counters against what was sent.
func TestScrape(t *testing.T) {
	servers := testkit.NewCluster(t, embedded.Topics("in", "out")).Servers()
	lib, reg, url := registered(t)
	if err := metrics.Register(reg, lib); err == nil {
		t.Error("a second Register of one registry: no error")
	}
	ctx := testkit.Ctx(t)

	p := testkit.Must[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	id := testkit.Must[string](t)(stream.Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "copier"}, stream.Spec{
		From: []string{"in"}, To: "out",
		Transform: func(_ context.Context, r *kafkabpl.Record) ([]stream.Output, error) {
			return []stream.Output{{Message: kafkabpl.Message{Key: r.Key(), Value: r.Value()}}}, nil
		},
	}))
	c := testkit.Must[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "topics": "out", "auto-offset-reset": "earliest"}))
	const n = 200
	for i := range n / 10 { // while they flow: the scrapes must not disturb them
		msgs := make([]kafkabpl.Message, 10)
		for j := range msgs {
			msgs[j] = kafkabpl.Message{Key: fmt.Sprint(i*10 + j), Value: "v"}
		}
		testkit.Must[int](t)(lib.Send(ctx, p, []string{"in"}, msgs))
		scrape(t, url)
	}
	read := 0
	testkit.WaitFor(t, "the consumer reads every output", func() bool {
		read += testkit.Must[*kafkabpl.Polled](t)(lib.Poll(ctx, c, 100*time.Millisecond)).Len()
		return read >= n
	})
	var got map[string]*dto.MetricFamily
	testkit.WaitFor(t, "the stream's counts, and the lags at 0", func() bool {
		got = scrape(t, url)
		v, _ := value(got, "kafkabpl_stream_processed_total", "stream="+id)
		// The consumer reads what the stream wrote in transactions:
		// its lag steps past their markers.
		in := lags(got, "kind=stream", "group=copier", "topic=in")
		out := lags(got, "kind=consumer", "group=", "topic=out")
		return v == n && fmt.Sprint(in, out) == "map[0:0] map[0:0]"
	})
	// Under exactly-once a commit is a transaction's end.
	commits, _ := value(got, "kafkabpl_commits_total", "kind=stream", "group=copier")
	failed, _ := value(got, "kafkabpl_commit_errors_total", "kind=stream", "group=copier")
	if txns, _ := value(got, "kafkabpl_stream_transactions_total", "stream="+id); commits-failed != txns || txns == 0 {
		t.Errorf("the stream's commits %v, %v failed; its transactions %v", commits, failed, txns)
	}
	for _, tt := range []struct {
		family string
		labels []string
		want   float64
	}{
		{"kafkabpl_produced_records_total", []string{"kind=producer", "topic=in"}, n},
		{"kafkabpl_produced_records_total", []string{"kind=stream", "topic=out"}, n},
		{"kafkabpl_fetched_records_total", []string{"kind=stream", "topic=in"}, n},
		{"kafkabpl_fetched_records_total", []string{"kind=consumer", "topic=out"}, n},
		{"kafkabpl_buffered_produce_records", []string{"kind=producer"}, 0},
		{"kafkabpl_produce_errors_total", []string{"kind=producer"}, 0},
		{"kafkabpl_stream_produced_total", []string{"stream=" + id}, n},
		{"kafkabpl_stream_running", []string{"stream=" + id}, 1},
		{"kafkabpl_stream_lag", []string{"stream=" + id}, 0},
		{"kafkabpl_rebalances_total", []string{"kind=stream", "group=copier", "event=assigned"}, 1},
		{"kafkabpl_rebalances_total", []string{"kind=consumer", "group=", "event=assigned"}, 1},
	} {
		if v, ok := value(got, tt.family, tt.labels...); !ok || v != tt.want {
			t.Errorf("%s%v = %v (found %v), want %v", tt.family, tt.labels, v, ok, tt.want)
		}
	}
	for _, family := range []string{"kafkabpl_requests_total", "kafkabpl_request_duration_seconds", "kafkabpl_connects_total"} {
		if v, ok := value(got, family, "kind=producer"); !ok || v == 0 {
			t.Errorf("%s{kind=producer} = %v, %v", family, v, ok)
		}
	}
	// Prometheus's own naming rules.
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestStreamTimersAndTables checks the figures of a stream's timers and
// tables: the due times held and the calls made, a table's keys and
// updates, each labelled by the table's name.
func TestStreamTimersAndTables(t *testing.T) {
	servers := testkit.NewCluster(t, embedded.Topics("in", "devices")).Servers()
	lib, _, url := registered(t)
	ctx := testkit.Ctx(t)
	p := testkit.Must[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	testkit.Must[int](t)(lib.Send(ctx, p, []string{"devices"}, []kafkabpl.Message{{Key: "d1", Value: "north"}, {Key: "d2", Value: "south"}}))
	id := testkit.Must[string](t)(stream.Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "watch"}, stream.Spec{
		From: []string{"in"}, To: "out", Store: "seen", Silence: 300 * time.Millisecond,
		Tables: []stream.Table{{Name: "registry", Topic: "devices"}},
		Update: func(_ context.Context, r *kafkabpl.Record, _ any) ([]stream.Output, any, error) {
			return nil, r.Value(), nil
		},
		OnTimer: func(_ context.Context, ev *stream.TimerEvent, state any) ([]stream.Output, any, error) {
			return []stream.Output{{Message: kafkabpl.Message{Key: ev.Key, Value: "silent"}}}, state, nil
		},
	}))
	testkit.Must[int](t)(lib.Send(ctx, p, []string{"in"}, []kafkabpl.Message{{Key: "d1", Value: "20"}, {Key: "d2", Value: "21"}}))
	stream := "stream=" + id
	testkit.WaitFor(t, "two silences called", func() bool {
		fired, _ := value(scrape(t, url), "kafkabpl_stream_timers_fired_total", stream)
		return fired == 2
	})
	got := scrape(t, url)
	if keys, ok := value(got, "kafkabpl_stream_table_keys", stream, "table=registry"); !ok || keys != 2 {
		t.Errorf("table keys %v (%v), want 2", keys, ok)
	}
	if updates, ok := value(got, "kafkabpl_stream_table_updates_total", stream, "table=registry"); !ok || updates != 2 {
		t.Errorf("table updates %v (%v), want 2", updates, ok)
	}
	if timers, ok := value(got, "kafkabpl_stream_store_timers", stream); !ok || timers != 0 {
		t.Errorf("timers held %v (%v), want 0 once both silences were called", timers, ok)
	}
}

// TestStreamOnDiskMetrics checks a store on disk's metrics: the bytes its
// directory takes, and each partition's last restore.
func TestStreamOnDiskMetrics(t *testing.T) {
	servers := testkit.NewCluster(t, embedded.Topics("in"), embedded.Partitions(2)).Servers()
	lib, _, url := registered(t)
	ctx := testkit.Ctx(t)
	id := testkit.Must[string](t)(stream.Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "ondisk", "state-dir": t.TempDir()}, stream.Spec{
		From: []string{"in"}, To: "out", Store: "last",
		Update: func(_ context.Context, r *kafkabpl.Record, _ any) ([]stream.Output, any, error) {
			return nil, r.Value(), nil
		},
	}))
	p := testkit.Must[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	testkit.Must[int](t)(lib.Send(ctx, p, []string{"in"}, []kafkabpl.Message{{Key: "d1", Value: "20"}, {Key: "d2", Value: "21"}}))
	stream := "stream=" + id
	testkit.WaitFor(t, "both inputs processed", func() bool {
		n, _ := value(scrape(t, url), "kafkabpl_stream_processed_total", stream)
		return n == 2
	})
	got := scrape(t, url)
	if b, ok := value(got, "kafkabpl_stream_store_disk_bytes", stream); !ok || b <= 0 {
		t.Errorf("disk bytes %v (%v), want some", b, ok)
	}
	for _, part := range []string{"partition=0", "partition=1"} {
		if n, ok := value(got, "kafkabpl_stream_restore_records", stream, part); !ok || n != 0 {
			t.Errorf("%s: last restore applied %v records (%v), want 0 of an empty changelog", part, n, ok)
		}
		if _, ok := value(got, "kafkabpl_stream_restore_seconds", stream, part); !ok {
			t.Errorf("%s: no restore time", part)
		}
		if n, ok := value(got, "kafkabpl_stream_store_partition_disk_bytes", stream, part); !ok || n < 0 {
			t.Errorf("%s: disk bytes %v (%v), want the partition's estimate", part, n, ok)
		}
	}
}
