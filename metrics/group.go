package metrics

import (
	"strconv"

	"github.com/brain4it/kafkabpl"
	"github.com/prometheus/client_golang/prometheus"
)

// groupMetrics are the counters of what consumers' and streams' groups
// do, which their clients' hooks add to as kafkabpl.GroupHook.
type groupMetrics struct {
	commits, commitErrors            *prometheus.CounterVec
	rebalances, rebalancedPartitions *prometheus.CounterVec
}

// newGroupMetrics makes the group counters with counter, which makes a
// CounterVec of the namespace.
func newGroupMetrics(counter func(name, help string, labels ...string) *prometheus.CounterVec) *groupMetrics {
	return &groupMetrics{
		commits:      counter("commits_total", "Offset commits sent by consumers and streams, failed ones included.", "kind", "group"),
		commitErrors: counter("commit_errors_total", "Offset commits that failed: the brokers refused an offset, or did not answer.", "kind", "group"),
		rebalances: counter("rebalances_total",
			"Rebalance events of consumers and streams: assigned (one per rebalance a member took part in), revoked, lost.", "kind", "group", "event"),
		rebalancedPartitions: counter("rebalanced_partitions_total", "Partitions newly assigned to, revoked from or lost by consumers and streams.",
			"kind", "group", "event"),
	}
}

var _ kafkabpl.GroupHook = (*clientHooks)(nil)

// OnGroupCommit implements kafkabpl.GroupHook.
func (h *clientHooks) OnGroupCommit(group string, err error) {
	g := h.m.group
	g.commits.WithLabelValues(h.kind, group).Inc()
	if err != nil {
		g.commitErrors.WithLabelValues(h.kind, group).Inc()
		return
	}
	g.commitErrors.WithLabelValues(h.kind, group) // the series exists, at 0, once a commit was made
}

// OnGroupRebalance implements kafkabpl.GroupHook.
func (h *clientHooks) OnGroupRebalance(group string, event kafkabpl.GroupEvent, partitions int) {
	g := h.m.group
	g.rebalances.WithLabelValues(h.kind, group, string(event)).Inc()
	g.rebalancedPartitions.WithLabelValues(h.kind, group, string(event)).Add(float64(partitions))
}

// descPartitionLag describes kafkabpl_partition_lag.
var descPartitionLag = prometheus.NewDesc(prometheus.BuildFQName(ns, "", "partition_lag"),
	"Records a consumer or stream is behind on a partition its group assigned it: the high watermark the latest fetch saw less the position, as the client last computed them.",
	[]string{"kind", "group", "topic", "partition"}, nil)

// lagCollector reports the watched Libraries' consumers' and streams'
// lags at each scrape, from what their clients last computed
// (kafkabpl.Library.ClientLags): it sends no request.
type lagCollector struct{ libs *watched }

func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descPartitionLag }

func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	// Handles of one group in one process, in one Library or in several
	// (serve's modules), may both report a partition during a rebalance:
	// the larger lag stands, as a series must be reported once.
	type key struct {
		kind, group, topic string
		partition          int32
	}
	lags := map[key]int64{}
	for _, lib := range c.libs.live() {
		for _, l := range lib.ClientLags() {
			k := key{string(l.Kind), l.Group, l.Topic, l.Partition}
			if v, ok := lags[k]; !ok || l.Lag > v {
				lags[k] = l.Lag
			}
		}
	}
	for k, v := range lags {
		ch <- prometheus.MustNewConstMetric(descPartitionLag, prometheus.GaugeValue, float64(v),
			k.kind, k.group, k.topic, strconv.Itoa(int(k.partition)))
	}
}
