// Package metrics exposes a kafkabpl Library's clients and streams to
// Prometheus: what every client sends and receives, its requests and
// their errors, what it buffers, each consumer's and stream's commits,
// rebalances and lag per partition, each stream's counts and store; and
// a brain4it server's requests, evaluations and monitors per module.
//
// Register the collectors in a registry, then serve it as Prometheus's
// text format (promhttp.HandlerFor), as `kafkabpl run --metrics ADDR` and
// `kafkabpl serve --metrics ADDR` do:
//
//	reg := prometheus.NewRegistry()
//	if err := metrics.Register(reg, lib); err != nil { ... }
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Every name starts with "kafkabpl_" and follows Prometheus's
// conventions: counters end in _total, units are base units (_seconds,
// _bytes). Labels are bounded: the kind of client ("producer",
// "consumer", "share-consumer", "admin", "stream"), the topic a record
// went to or came from, a consumer's or stream's group (as its config
// names it; "" for a consumer given none, whose group is a random name),
// a partition, and a stream's id; none per key or per record.
//
// Client metrics (counters unless said):
//
//	kafkabpl_produced_records_total{kind,topic}    records written, acknowledged by the brokers
//	kafkabpl_produced_bytes_total{kind,topic}      their uncompressed bytes
//	kafkabpl_produce_errors_total{kind}            records that failed for good
//	kafkabpl_fetched_records_total{kind,topic}     records polled (transaction markers not counted)
//	kafkabpl_fetched_bytes_total{kind,topic}       their keys' and values' bytes
//	kafkabpl_requests_total{kind}                  requests answered or failed
//	kafkabpl_request_errors_total{kind}            requests that failed (a retry is a request of its own)
//	kafkabpl_request_duration_seconds{kind}        histogram: from a request's write to its answer
//	kafkabpl_connects_total{kind}, kafkabpl_connect_errors_total{kind}
//	kafkabpl_buffered_produce_records{kind}        gauge: records sent but not yet acknowledged
//	kafkabpl_buffered_fetch_records{kind}          gauge: records fetched but not yet polled
//
// Group metrics of consumers and streams (kind "consumer" or "stream";
// share consumers are not counted), told by kafkabpl.GroupHook:
//
//	kafkabpl_commits_total{kind,group}             offset commits sent (kafka-commit, auto-commits, commits
//	                                               on revocation and destroy, a stream's batches), failed ones included
//	kafkabpl_commit_errors_total{kind,group}       commits that failed (an exactly-once stream's: its transaction
//	                                               aborted, such as by a rebalance during the batch)
//	kafkabpl_rebalances_total{kind,group,event}    event "assigned" (once per rebalance a member takes part in),
//	                                               "revoked" or "lost" (each time some partitions were)
//	kafkabpl_rebalanced_partitions_total{kind,group,event}  the partitions of those events (assigned: the new ones)
//	kafkabpl_partition_lag{kind,group,topic,partition}      gauge: records behind on each assigned partition
//
// kafkabpl_partition_lag is read at each scrape from
// [kafkabpl.Library.ClientLags], which sends no request: the high
// watermark the latest fetch saw less the position, as the client
// computed them at its latest poll of the partition and at its latest
// fetch request (every fetch-max-wait, 500 ms, while it keeps up).
// Hazard: a consumer that stops polling stops fetching, and its lag
// stays where it was; kafkabpl_buffered_fetch_records then shows what it
// fetched and did not poll. Records a consumer took from its client and
// holds, not yet returned to the script (those of topics a poll did not
// ask for, those held back while the schema registry does not answer),
// count as consumed, as does a stream's batch in hand before it commits;
// the brokers' view, by committed offsets, is kafka-describe-group's.
// Handles of one group in one process report
// their own partitions; during a rebalance, the larger of two figures for
// one partition stands.
//
// Stream metrics, read from [stream.Runtime.Status] at each
// scrape (which asks the brokers for the lag), labelled by stream id:
//
//	kafkabpl_stream_running{stream}                gauge: 1 while running
//	kafkabpl_stream_processed_total{stream}, _produced_total, _dropped_total,
//	_skipped_total, _dead_lettered_total, _transactions_total, _aborted_total,
//	_reinits_total, _late_total (windowed), _restored_total (changelog records)
//	kafkabpl_stream_lag{stream}                    gauge: the group's lag on the inputs
//	kafkabpl_stream_store_keys{stream}, _store_windows, _store_bytes, _store_restoring (partitions)
//	kafkabpl_stream_store_disk_bytes{stream}       gauge: what a store on disk (config "state-dir") takes there
//	kafkabpl_stream_store_partition_disk_bytes{stream,partition}  gauge: an estimate of what the partition's state takes on disk (pebble's: nothing of its memtable until a flush)
//	kafkabpl_stream_restore_records{stream,partition}  gauge: changelog records the partition's last restore applied
//	kafkabpl_stream_restore_seconds{stream,partition}  gauge: how long it took
//
// A brain4it server's modules (package server, `kafkabpl serve`), which
// Metrics is told of as server.Config's Observer, labelled by module
// name (the operator's choice; "" for a request that names no module
// that exists) and kind:
//
//	kafkabpl_serve_requests_total{module,kind}     HTTP requests; kind: list, get, put, delete, evaluate,
//	                                               exterior, monitor (a stream started or ended), options, other
//	kafkabpl_serve_request_errors_total{module,kind}  those answered with an error
//	kafkabpl_serve_evaluation_duration_seconds{module,kind}  histogram: evaluations; kind: evaluate (a POST's
//	                                               body), exterior, monitor (a monitor's call), start, stop
//	kafkabpl_serve_evaluation_errors_total{module,kind}  evaluations that failed
//	kafkabpl_serve_monitors{module}                gauge: monitor streams being served
//
// Only clients made after Register are counted: register before creating
// handles.
package metrics

import (
	"context"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"
	"weak"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

const ns = "kafkabpl"

// clientMetrics are the counters every client's hooks add to.
type clientMetrics struct {
	producedRecords, producedBytes *prometheus.CounterVec
	fetchedRecords, fetchedBytes   *prometheus.CounterVec
	produceErrors                  *prometheus.CounterVec
	requests, requestErrors        *prometheus.CounterVec
	requestDuration                *prometheus.HistogramVec
	connects, connectErrors        *prometheus.CounterVec
	bufferedProduce, bufferedFetch *prometheus.GaugeVec
	group                          *groupMetrics
}

func newClientMetrics() *clientMetrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help}, []string{"kind"})
	}
	return &clientMetrics{
		producedRecords: counter("produced_records_total", "Records written and acknowledged by the brokers.", "kind", "topic"),
		producedBytes:   counter("produced_bytes_total", "Uncompressed bytes of the records written.", "kind", "topic"),
		produceErrors:   counter("produce_errors_total", "Records whose produce failed for good.", "kind"),
		fetchedRecords:  counter("fetched_records_total", "Records polled.", "kind", "topic"),
		fetchedBytes:    counter("fetched_bytes_total", "Bytes of the keys and values of the records polled.", "kind", "topic"),
		requests:        counter("requests_total", "Requests to the brokers, answered or failed.", "kind"),
		requestErrors:   counter("request_errors_total", "Requests to the brokers that failed; each retry is a request.", "kind"),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "request_duration_seconds",
			Help:    "Time from a request's write to its answer.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9)}, []string{"kind"}),
		connects:        counter("connects_total", "Connections opened to the brokers.", "kind"),
		connectErrors:   counter("connect_errors_total", "Connections to the brokers that failed.", "kind"),
		bufferedProduce: gauge("buffered_produce_records", "Records sent and not yet acknowledged."),
		bufferedFetch:   gauge("buffered_fetch_records", "Records fetched and not yet polled."),
		group:           newGroupMetrics(counter),
	}
}

func (m *clientMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.producedRecords, m.producedBytes, m.produceErrors, m.fetchedRecords, m.fetchedBytes,
		m.requests, m.requestErrors, m.requestDuration, m.connects, m.connectErrors, m.bufferedProduce, m.bufferedFetch,
		m.group.commits, m.group.commitErrors, m.group.rebalances, m.group.rebalancedPartitions}
}

// Metrics is the collectors of the Libraries it watches, and of a
// brain4it server's modules, registered in one registry. Its methods are
// safe for concurrent use.
type Metrics struct {
	client  *clientMetrics
	libs    *watched
	streams *streamCollector
	lags    *lagCollector
	serve   *serveMetrics
}

// New registers the collectors in reg; [Metrics.Watch] then counts a
// Library, and [Metrics.ServeRequest] and its siblings a server's
// modules. It fails if reg already has collectors of these names (a
// second New with the same registry).
func New(reg prometheus.Registerer) (*Metrics, error) {
	libs := &watched{}
	m := &Metrics{client: newClientMetrics(), libs: libs, streams: &streamCollector{libs}, lags: &lagCollector{libs}, serve: newServeMetrics()}
	cs := append(m.client.collectors(), m.streams, m.lags)
	for _, c := range append(cs, m.serve.collectors()...) {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Watch counts lib's clients made from then on, setting its client hooks
// ([kafkabpl.Library.SetClientHooks], replacing any it had), and reports
// its streams and its consumers' and streams' lags. Metrics holds lib
// weakly: a Library no longer used elsewhere is forgotten.
func (m *Metrics) Watch(lib *kafkabpl.Library) {
	lib.SetClientHooks(func(kind kafkabpl.Kind, _ string) []kgo.Hook {
		return []kgo.Hook{m.client.hooksFor(kind)}
	})
	m.libs.mu.Lock()
	defer m.libs.mu.Unlock()
	m.libs.libs = append(m.libs.libs, weak.Make(lib))
}

// Register is New and Watch of lib.
func Register(reg prometheus.Registerer, lib *kafkabpl.Library) error {
	m, err := New(reg)
	if err != nil {
		return err
	}
	m.Watch(lib)
	return nil
}

// hooksFor returns the hooks of one client of kind, its metrics' label
// values resolved once.
func (m *clientMetrics) hooksFor(kind kafkabpl.Kind) *clientHooks {
	k := string(kind)
	return &clientHooks{m: m, kind: k,
		produceErrors: m.produceErrors.WithLabelValues(k), requests: m.requests.WithLabelValues(k),
		requestErrors: m.requestErrors.WithLabelValues(k), requestDuration: m.requestDuration.WithLabelValues(k),
		connects: m.connects.WithLabelValues(k), connectErrors: m.connectErrors.WithLabelValues(k),
		bufferedProduce: m.bufferedProduce.WithLabelValues(k), bufferedFetch: m.bufferedFetch.WithLabelValues(k)}
}

// clientHooks are one client's kgo hooks.
type clientHooks struct {
	m                              *clientMetrics
	kind                           string
	produceErrors, requests        prometheus.Counter
	requestErrors, connects        prometheus.Counter
	connectErrors                  prometheus.Counter
	requestDuration                prometheus.Observer
	bufferedProduce, bufferedFetch prometheus.Gauge
	topics                         sync.Map // topic → *topicCounters
}

var (
	_ kgo.HookProduceBatchWritten     = (*clientHooks)(nil)
	_ kgo.HookBrokerE2E               = (*clientHooks)(nil)
	_ kgo.HookBrokerConnect           = (*clientHooks)(nil)
	_ kgo.HookProduceRecordBuffered   = (*clientHooks)(nil)
	_ kgo.HookProduceRecordUnbuffered = (*clientHooks)(nil)
	_ kgo.HookFetchRecordBuffered     = (*clientHooks)(nil)
	_ kgo.HookFetchRecordUnbuffered   = (*clientHooks)(nil)
)

func (h *clientHooks) OnProduceBatchWritten(_ kgo.BrokerMetadata, topic string, _ int32, b kgo.ProduceBatchMetrics) {
	h.m.producedRecords.WithLabelValues(h.kind, topic).Add(float64(b.NumRecords))
	h.m.producedBytes.WithLabelValues(h.kind, topic).Add(float64(b.UncompressedBytes))
}

// fetched returns topic's fetch counters, resolved once per topic: they
// are counted per record.
func (h *clientHooks) fetched(topic string) *topicCounters {
	if c, ok := h.topics.Load(topic); ok {
		return c.(*topicCounters)
	}
	c, _ := h.topics.LoadOrStore(topic, &topicCounters{
		records: h.m.fetchedRecords.WithLabelValues(h.kind, topic),
		bytes:   h.m.fetchedBytes.WithLabelValues(h.kind, topic),
	})
	return c.(*topicCounters)
}

// topicCounters are one topic's fetch counters.
type topicCounters struct{ records, bytes prometheus.Counter }

func (h *clientHooks) OnBrokerE2E(_ kgo.BrokerMetadata, _ int16, e kgo.BrokerE2E) {
	h.requests.Inc()
	if e.Err() != nil {
		h.requestErrors.Inc()
		return
	}
	h.requestDuration.Observe(e.DurationE2E().Seconds())
}

func (h *clientHooks) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	h.connects.Inc()
	if err != nil {
		h.connectErrors.Inc()
	}
}

func (h *clientHooks) OnProduceRecordBuffered(*kgo.Record) { h.bufferedProduce.Inc() }

func (h *clientHooks) OnProduceRecordUnbuffered(_ *kgo.Record, err error) {
	h.bufferedProduce.Dec()
	if err != nil {
		h.produceErrors.Inc()
	}
}

func (h *clientHooks) OnFetchRecordBuffered(*kgo.Record) { h.bufferedFetch.Inc() }

func (h *clientHooks) OnFetchRecordUnbuffered(r *kgo.Record, polled bool) {
	h.bufferedFetch.Dec()
	if polled {
		c := h.fetched(r.Topic)
		c.records.Inc()
		c.bytes.Add(float64(len(r.Key) + len(r.Value)))
	}
}

// watched is the Libraries Metrics watches, held weakly.
type watched struct {
	mu   sync.Mutex
	libs []weak.Pointer[kafkabpl.Library]
}

// live returns the Libraries still in use, and forgets the others.
func (w *watched) live() []*kafkabpl.Library {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*kafkabpl.Library
	w.libs = slices.DeleteFunc(w.libs, func(p weak.Pointer[kafkabpl.Library]) bool {
		lib := p.Value()
		if lib != nil {
			out = append(out, lib)
		}
		return lib == nil
	})
	return out
}

// streamCollector reads the watched Libraries' streams' statuses at each
// scrape.
type streamCollector struct{ libs *watched }

// streamDesc describes a stream metric.
func streamDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(ns, "stream", name), help, []string{"stream"}, nil)
}

var (
	descRunning      = streamDesc("running", "1 while the stream runs, 0 once it stopped or failed.")
	descProcessed    = streamDesc("processed_total", "Inputs processed, filtered, skipped and dead-lettered ones included.")
	descProduced     = streamDesc("produced_total", "Outputs written, dead letters not included.")
	descDropped      = streamDesc("dropped_total", "Inputs the transform filtered out.")
	descSkipped      = streamDesc("skipped_total", "Inputs skipped on an error.")
	descDeadLettered = streamDesc("dead_lettered_total", "Inputs written to the dead-letter topic.")
	descTransactions = streamDesc("transactions_total", "Transactions committed (offset commits under at-least-once).")
	descAborted      = streamDesc("aborted_total", "Transactions aborted.")
	descReinits      = streamDesc("reinits_total", "Producers re-initialized after the brokers aborted a transaction.")
	descLag          = streamDesc("lag", "The stream's group's lag on its inputs, as the brokers last said.")
	descLate         = streamDesc("late_total", "Inputs later than the grace period of a windowed stream.")
	descRestored     = streamDesc("restored_total", "Changelog records applied by restores.")
	descKeys         = streamDesc("store_keys", "Keys the stream's store holds.")
	descWindows      = streamDesc("store_windows", "Open windows the stream's store holds.")
	descBytes        = streamDesc("store_bytes", "Keys and encoded states the stream's store holds, in bytes.")
	descRestoring    = streamDesc("store_restoring", "Partitions of the stream's store being restored.")
	descTimers       = streamDesc("store_timers", "Due times the stream's store holds for timers and silences.")
	descFired        = streamDesc("timers_fired_total", "Timer and silence calls committed.")
	descStandbys     = streamDesc("store_standbys", "Standby copies the stream keeps of store partitions other members hold.")
	descStandbyLag   = streamDesc("store_standby_lag", "Changelog offsets the stream's standby copies have not applied yet, summed.")
	descTakeovers    = streamDesc("takeovers_total", "Restores that went on from a standby copy's position.")
	descDiskBytes    = streamDesc("store_disk_bytes", "What the stream's store on disk takes there, in bytes.")
	descPartDisk     = prometheus.NewDesc(prometheus.BuildFQName(ns, "stream", "store_partition_disk_bytes"), "An estimate of what the partition's state takes on disk, in bytes.", []string{"stream", "partition"}, nil)
	descRestoreRecs  = prometheus.NewDesc(prometheus.BuildFQName(ns, "stream", "restore_records"), "Changelog records the partition's last restore applied.", []string{"stream", "partition"}, nil)
	descRestoreSecs  = prometheus.NewDesc(prometheus.BuildFQName(ns, "stream", "restore_seconds"), "How long the partition's last restore took.", []string{"stream", "partition"}, nil)
	descTableKeys    = prometheus.NewDesc(prometheus.BuildFQName(ns, "stream", "table_keys"), "Keys a table of the stream holds.", []string{"stream", "table"}, nil)
	descTableUpdates = prometheus.NewDesc(prometheus.BuildFQName(ns, "stream", "table_updates_total"), "Records a table of the stream applied.", []string{"stream", "table"}, nil)
)

func (c *streamCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRunning, descProcessed, descProduced, descDropped, descSkipped, descDeadLettered,
		descTransactions, descAborted, descReinits, descLag, descLate, descRestored, descKeys, descWindows, descBytes, descRestoring,
		descTimers, descFired, descStandbys, descStandbyLag, descTakeovers, descDiskBytes, descPartDisk, descRestoreRecs, descRestoreSecs,
		descTableKeys, descTableUpdates} {
		ch <- d
	}
}

// scrapeTimeout bounds the brokers' answer about a stream's lag.
const scrapeTimeout = 5 * time.Second

func (c *streamCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	for _, lib := range c.libs.live() {
		c.collect(ctx, ch, lib)
	}
}

// collect reports lib's streams.
func (c *streamCollector) collect(ctx context.Context, ch chan<- prometheus.Metric, lib *kafkabpl.Library) {
	for _, id := range stream.Of(lib).IDs() {
		st, err := stream.Of(lib).Status(ctx, id)
		if err != nil {
			continue // destroyed since it was listed
		}
		emit := func(d *prometheus.Desc, t prometheus.ValueType, v int64) {
			ch <- prometheus.MustNewConstMetric(d, t, float64(v), id)
		}
		running := int64(0)
		if st.State == stream.Running {
			running = 1
		}
		emit(descRunning, prometheus.GaugeValue, running)
		emit(descProcessed, prometheus.CounterValue, st.Processed)
		emit(descProduced, prometheus.CounterValue, st.Produced)
		emit(descDropped, prometheus.CounterValue, st.Dropped)
		emit(descSkipped, prometheus.CounterValue, st.Skipped)
		emit(descDeadLettered, prometheus.CounterValue, st.DeadLettered)
		emit(descTransactions, prometheus.CounterValue, st.Transactions)
		emit(descAborted, prometheus.CounterValue, st.Aborted)
		emit(descReinits, prometheus.CounterValue, st.Reinits)
		if st.Lag >= 0 {
			emit(descLag, prometheus.GaugeValue, st.Lag)
		}
		if s := st.Store; s != nil {
			emit(descLate, prometheus.CounterValue, s.Late)
			emit(descRestored, prometheus.CounterValue, s.Restored)
			emit(descKeys, prometheus.GaugeValue, s.Keys)
			emit(descWindows, prometheus.GaugeValue, s.Windows)
			emit(descBytes, prometheus.GaugeValue, s.Bytes)
			emit(descRestoring, prometheus.GaugeValue, int64(s.Restoring))
			emit(descTimers, prometheus.GaugeValue, s.Timers)
			emit(descFired, prometheus.CounterValue, s.Fired)
			if s.Disk != "" {
				emit(descDiskBytes, prometheus.GaugeValue, s.DiskBytes)
			}
			for _, dp := range s.DiskPartitions {
				ch <- prometheus.MustNewConstMetric(descPartDisk, prometheus.GaugeValue, float64(dp.Bytes), id, strconv.Itoa(int(dp.Partition)))
			}
			for _, r := range s.Restores { // a store's partitions: a bounded label
				p := strconv.Itoa(int(r.Partition))
				ch <- prometheus.MustNewConstMetric(descRestoreRecs, prometheus.GaugeValue, float64(r.Records), id, p)
				ch <- prometheus.MustNewConstMetric(descRestoreSecs, prometheus.GaugeValue, r.Took.Seconds(), id, p)
			}
			if s.StandbysWanted > 0 {
				lag := int64(0)
				for _, sb := range s.Standbys {
					lag += sb.Lag
				}
				emit(descStandbys, prometheus.GaugeValue, int64(len(s.Standbys)))
				emit(descStandbyLag, prometheus.GaugeValue, lag)
				emit(descTakeovers, prometheus.CounterValue, s.Takeovers)
			}
		}
		for _, tb := range st.Tables { // the spec's tables: a bounded label
			ch <- prometheus.MustNewConstMetric(descTableKeys, prometheus.GaugeValue, float64(tb.Keys), id, tb.Name)
			ch <- prometheus.MustNewConstMetric(descTableUpdates, prometheus.CounterValue, float64(tb.Updates), id, tb.Name)
		}
	}
}
