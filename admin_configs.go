package kafkabpl

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The config admin functions: a topic's, a broker's or a group's configs,
// described and altered, as kafka-configs --describe and --alter do.

// ConfigResource names what a config belongs to: a topic, a group, or a
// broker by its id (the cluster-wide default for every broker with
// [ClusterBrokers]).
type ConfigResource struct {
	Topic string // a topic's configs; or
	// Group is a group's configs, when Topic is "": a share group's
	// share.auto.offset.reset and share.record.lock.duration.ms, say
	// (Kafka 4.0 and later); or
	Group  string
	Broker int32 // a broker's, when Topic and Group are ""
}

// ClusterBrokers is the Broker of a [ConfigResource] that names the
// configs every broker shares (the cluster-wide dynamic default).
const ClusterBrokers int32 = -1

// TopicConfigs names topic's configs.
func TopicConfigs(topic string) ConfigResource { return ConfigResource{Topic: topic} }

// BrokerConfigs names broker id's configs; [ClusterBrokers] names the
// cluster-wide default.
func BrokerConfigs(id int32) ConfigResource { return ConfigResource{Broker: id} }

// GroupConfigs names group's configs.
func GroupConfigs(group string) ConfigResource { return ConfigResource{Group: group} }

func (r ConfigResource) String() string {
	switch {
	case r.Topic != "":
		return fmt.Sprintf("topic %q", r.Topic)
	case r.Group != "":
		return fmt.Sprintf("group %q", r.Group)
	case r.Broker == ClusterBrokers:
		return "the brokers' default"
	}
	return fmt.Sprintf("broker %d", r.Broker)
}

// ConfigEntry is one config of a topic or broker.
type ConfigEntry struct {
	Name  string
	Value string // "" when Sensitive, or when the config has no value
	// Source says where the value comes from: "topic" (set on the
	// topic), "group" (set on the group), "broker" (set on this broker),
	// "cluster" (the brokers' default), "static" (the broker's properties
	// file) or "default" (Kafka's own default).
	Source    string
	Sensitive bool // a password or key, whose value the brokers never show
}

// configSource names kmsg's config sources as ConfigEntry.Source does.
func configSource(s kmsg.ConfigSource) string {
	switch s {
	case kmsg.ConfigSourceDynamicTopicConfig:
		return "topic"
	case kmsg.ConfigSourceGroupConfig:
		return "group"
	case kmsg.ConfigSourceDynamicBrokerConfig, kmsg.ConfigSourceDynamicBrokerLoggerConfig:
		return "broker"
	case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
		return "cluster"
	case kmsg.ConfigSourceStaticBrokerConfig:
		return "static"
	}
	return "default"
}

// DescribeConfigs returns the configs of a topic, a group or a broker,
// sorted by name: every config, those left at Kafka's default included. A
// topic that does not exist is an error wrapping
// kerr.UnknownTopicOrPartition; a group need not exist (its configs are
// then the defaults). In BPL, (kafka-describe-configs target "topic" "t")
// returns ("cleanup.policy" => "delete" ...), each value a string as
// Kafka keeps it; "group" and a name name a group, "broker" and an id
// ("1", or "" for the brokers' default) a broker.
func (lib *Library) DescribeConfigs(ctx context.Context, target any, r ConfigResource) ([]ConfigEntry, error) {
	const fn = "kafka-describe-configs"
	return withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) ([]ConfigEntry, error) {
		var described kadm.ResourceConfigs
		var err error
		switch {
		case r.Topic != "":
			described, err = adm.DescribeTopicConfigs(ctx, r.Topic)
		case r.Group != "":
			described, err = describeGroupConfigs(ctx, h.cl, r.Group)
		default:
			described, err = adm.DescribeBrokerConfigs(ctx, brokerIDs(r)...)
		}
		if err == nil && len(described) == 1 && described[0].Err != nil {
			err = described[0].Err
		}
		if err != nil {
			if isKafkaErr(err) {
				return nil, Wrapf(ErrKafka, err, "%s", r)
			}
			return nil, h.requestError(ctx, err)
		}
		if len(described) != 1 {
			return nil, unanswered("configs of", r.String())
		}
		out := make([]ConfigEntry, 0, len(described[0].Configs))
		for _, c := range described[0].Configs {
			e := ConfigEntry{Name: c.Key, Source: configSource(c.Source), Sensitive: c.Sensitive}
			if c.Value != nil {
				e.Value = *c.Value
			}
			out = append(out, e)
		}
		slices.SortFunc(out, func(a, b ConfigEntry) int { return strings.Compare(a.Name, b.Name) })
		return out, nil
	})
}

// brokerIDs is the brokers DescribeBrokerConfigs and AlterBrokerConfigs
// take for r: none for the cluster-wide default.
func brokerIDs(r ConfigResource) []int32 {
	if r.Broker == ClusterBrokers {
		return nil
	}
	return []int32{r.Broker}
}

// AlterConfigs changes configs of a topic, a group or a broker,
// incrementally, as kafka-configs --alter does: each name in set gets its
// value, and each name in remove goes back to its default; the others
// stay as they are. The brokers check every change first and apply all
// or none: an unknown config or a bad value is an error wrapping
// kerr.InvalidConfig or kerr.InvalidRequest, and the message says which.
// In BPL, (kafka-alter-configs target "topic" "t" ("retention.ms" =>
// 60000 "cleanup.policy" => null)) returns true; null removes.
//
// A share group's configs are its group's: (kafka-alter-configs target
// "group" "workers" ("share.auto.offset.reset" => "earliest")) makes the
// group read the partitions it has not read yet from their start (see
// [ShareConsumer]). Kafka keeps a group config within bounds the brokers
// set: share.record.lock.duration.ms, for one, between
// group.share.min.record.lock.duration.ms (15000 by default) and
// group.share.max.record.lock.duration.ms (60000).
func (lib *Library) AlterConfigs(ctx context.Context, target any, r ConfigResource, set map[string]string, remove []string) error {
	const fn = "kafka-alter-configs"
	if len(set)+len(remove) == 0 {
		return NewError(fn, Errorf(ErrInvalidArgument, "configs: want at least one config to set or remove"))
	}
	var alter []kadm.AlterConfig
	for _, name := range slices.Sorted(maps.Keys(set)) {
		v := set[name]
		alter = append(alter, kadm.AlterConfig{Op: kadm.SetConfig, Name: name, Value: &v})
	}
	for _, name := range remove {
		if _, both := set[name]; both || name == "" {
			return NewError(fn, Errorf(ErrInvalidArgument, "configs: %q is both set and removed, or empty", name))
		}
		alter = append(alter, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: name})
	}
	_, err := withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) (bool, error) {
		return true, alterConfigs(ctx, h, r, alter)
	})
	return err
}

// alterConfigs makes the changes alter to r's configs.
func alterConfigs(ctx context.Context, h *handle, r ConfigResource, alter []kadm.AlterConfig) error {
	var resp kadm.AlterConfigsResponses
	var err error
	switch {
	case r.Topic != "":
		resp, err = h.adm.AlterTopicConfigs(ctx, alter, r.Topic)
	case r.Group != "":
		resp, err = alterGroupConfigs(ctx, h.cl, r.Group, alter)
	default:
		resp, err = h.adm.AlterBrokerConfigs(ctx, alter, brokerIDs(r)...)
	}
	if err == nil && len(resp) == 1 && resp[0].Err != nil {
		if resp[0].ErrMessage != "" {
			return Wrapf(ErrKafka, resp[0].Err, "%s: %s", r, resp[0].ErrMessage)
		}
		err = resp[0].Err
	}
	if err != nil {
		if isKafkaErr(err) {
			return Wrapf(ErrKafka, err, "%s", r)
		}
		return h.requestError(ctx, err)
	}
	return nil
}

// alterGroupConfigs alters a group's configs, as kadm alters a topic's
// (kadm has no call for a group's).
func alterGroupConfigs(ctx context.Context, cl *kgo.Client, group string, alter []kadm.AlterConfig) (kadm.AlterConfigsResponses, error) {
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	rr.ResourceName = group
	for _, a := range alter {
		rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		rc.Name, rc.Value, rc.Op = a.Name, a.Value, kmsg.IncrementalAlterConfigOpSet
		if a.Op == kadm.DeleteConfig {
			rc.Op = kmsg.IncrementalAlterConfigOpDelete
		}
		rr.Configs = append(rr.Configs, rc)
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	var out kadm.AlterConfigsResponses
	for _, r := range resp.Resources {
		out = append(out, kadm.AlterConfigsResponse{Name: r.ResourceName, Err: kerr.ErrorForCode(r.ErrorCode), ErrMessage: derefString(r.ErrorMessage)})
	}
	return out, nil
}

// describeGroupConfigs describes a group's configs, as kadm describes a
// topic's.
func describeGroupConfigs(ctx context.Context, cl *kgo.Client, group string) (kadm.ResourceConfigs, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: group}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	var out kadm.ResourceConfigs
	for _, r := range resp.Resources {
		rc := kadm.ResourceConfig{Name: r.ResourceName, Err: kerr.ErrorForCode(r.ErrorCode), ErrMessage: derefString(r.ErrorMessage)}
		for _, c := range r.Configs {
			rc.Configs = append(rc.Configs, kadm.Config{Key: c.Name, Value: c.Value, Sensitive: c.IsSensitive, Source: c.Source})
		}
		out = append(out, rc)
	}
	return out, nil
}

// derefString is *s, or "" for nil.
func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
