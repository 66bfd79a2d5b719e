package kafkabpl

import (
	"context"
	"math"
	"slices"

	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The admin functions: topics, partitions, the cluster, groups and lag, on
// kadm. (The package docs describe targets; the methods below say the rest.)
//
// Targets: a string with the form of a handle id is always read as one, so
// a dead id is an UnknownHandle error rather than a server named "a3f...";
// anything else is a config, for a one-shot client that is closed after
// the call. Every call runs under the target's request-timeout.
//
// Metadata is asked for with raw requests that never ask the brokers to
// create a topic, and fresh (not from kgo's cache), so describe-topics
// shows a leader change at once and describing a missing topic does not
// create it on a cluster that auto-creates topics.
//
// This file holds the targets, the cluster and the calls every admin
// function runs on; admin_topics.go and admin_groups.go hold the rest.

// ClusterInfo describes a cluster: its id, its controller and its brokers.
type ClusterInfo struct {
	ClusterID string
	// Controller is the id of the broker that manages the cluster's
	// metadata (topics and partitions); -1 when the brokers do not say.
	Controller int32
	// Brokers are all the brokers, by id. Each one answers metadata
	// requests for the whole cluster.
	Brokers []BrokerInfo
}

// BrokerInfo is one broker: its id and the address it advertises.
type BrokerInfo struct {
	ID   int32
	Host string
	Port int32
}

// DescribeCluster returns the cluster's id, its controller and its brokers.
// In BPL, (kafka-describe-cluster target) returns its [ClusterInfo.List].
func (lib *Library) DescribeCluster(ctx context.Context, target any) (*ClusterInfo, error) {
	return withAdmin(ctx, lib, "kafka-describe-cluster", target, func(ctx context.Context, h *handle, _ *kadm.Client) (*ClusterInfo, error) {
		resp, err := metadata(ctx, h, []string{})
		if err != nil {
			return nil, err
		}
		info := &ClusterInfo{Controller: resp.ControllerID, Brokers: make([]BrokerInfo, 0, len(resp.Brokers))}
		if resp.ClusterID != nil {
			info.ClusterID = *resp.ClusterID
		}
		for _, b := range resp.Brokers {
			info.Brokers = append(info.Brokers, BrokerInfo{ID: b.NodeID, Host: b.Host, Port: b.Port})
		}
		slices.SortFunc(info.Brokers, func(a, b BrokerInfo) int { return int(a.ID) - int(b.ID) })
		return info, nil
	})
}

// withAdmin runs call on target's admin client under the request-timeout,
// and words its error for fn. target is an admin handle's id, or a config
// for a client of the call's own, closed when it returns.
func withAdmin[T any](ctx context.Context, lib *Library, fn string, target any, call func(context.Context, *handle, *kadm.Client) (T, error)) (T, error) {
	h, release, err := lib.adminTarget(target)
	if err != nil {
		var zero T
		return zero, NewError(fn, err)
	}
	defer release()
	cctx, cancel := context.WithTimeout(ctx, h.cfg.requestTimeout)
	defer cancel()
	stop := context.AfterFunc(h.ctx, cancel) // destroying the handle ends the call
	defer stop()
	// A kadm client per call: its request timeout (how long the brokers
	// may take to create or delete) follows the handle's request-timeout.
	adm := kadm.NewClient(h.cl)
	adm.SetTimeoutMillis(int32(min(h.cfg.requestTimeout.Milliseconds(), math.MaxInt32)))
	v, err := call(cctx, h, adm)
	if err != nil {
		switch {
		case ctx.Err() != nil: // the caller's own context ended: the caller's error
			err = ctx.Err()
		case h.ctx.Err() != nil:
			err = Errorf(ErrClosed, "admin handle destroyed during the call")
		}
		return v, NewError(fn, err)
	}
	return v, nil
}

// adminTarget returns the handle an admin call runs on and the function to
// call when done with it.
func (lib *Library) adminTarget(target any) (*handle, func(), error) {
	if id, ok := target.(string); ok && kindOfID(id) != "" {
		h, err := lib.acquire(id, Admin)
		if err != nil {
			return nil, nil, err
		}
		return h, h.calls.Done, nil
	}
	lib.mu.RLock()
	closed := lib.closed
	lib.mu.RUnlock()
	if closed {
		return nil, nil, Errorf(ErrClosed, "library closed")
	}
	cfg, err := parseConfig(target)
	if err != nil {
		return nil, nil, err
	}
	// As Create's: a handle made for one call still logs, counts and dials
	// as the Library's others do (a streamtest's virtual network, a proxy).
	cfg.clientLog, cfg.hooks, cfg.dial = lib.clientLog, lib.clientHooks(), lib.dialer()
	h, err := newHandle(Admin, cfg)
	if err != nil {
		return nil, nil, err
	}
	return h, func() { h.cancel(); h.cl.Close() }, nil
}

// unanswered is the error for a topic or group (what) that a response
// left out.
func unanswered(what, name string) error {
	return Errorf(ErrKafka, "%s %q: the brokers did not answer for it", what, name)
}

// metadata asks the brokers for fresh metadata of topics (nil: all topics;
// empty: none), never asking them to create a topic.
func metadata(ctx context.Context, h *handle, topics []string) (*kmsg.MetadataResponse, error) {
	return metadataRequest(ctx, h, topics, false)
}

// metadataRequest is metadata, asking the brokers to create the topics
// that do not exist when create is true (they still decide, by their
// auto.create.topics.enable).
func metadataRequest(ctx context.Context, h *handle, topics []string, create bool) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = create
	if topics != nil {
		req.Topics = make([]kmsg.MetadataRequestTopic, 0, len(topics))
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	resp, err := req.RequestWith(ctx, h.cl)
	if err != nil {
		return nil, h.requestError(ctx, err)
	}
	return resp, nil
}

// List returns the cluster as describe-cluster shows it: ("cluster-id" =>
// "kfake" "controller" => 2 "brokers" => (("id" => 0 "host" =>
// "127.0.0.1" "port" => 9092) ...)).
func (c *ClusterInfo) List() *value.List {
	brokers := &value.List{}
	for _, b := range c.Brokers {
		bl := &value.List{}
		bl.AppendNamed("id", int64(b.ID))
		bl.AppendNamed("host", b.Host)
		bl.AppendNamed("port", int64(b.Port))
		brokers.Append(bl)
	}
	l := &value.List{}
	l.AppendNamed("cluster-id", c.ClusterID)
	l.AppendNamed("controller", int64(c.Controller))
	l.AppendNamed("brokers", brokers)
	return l
}
