package functions

import (
	"context"
	"math"
	"strconv"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/words"
	"github.com/brain4it/kafkabpl/value"
)

// topicsList is describe-topics' result: ("t" => ("partitions" => ...) ...).
func topicsList(infos []kafkabpl.TopicInfo) *value.List {
	l := &value.List{}
	for i := range infos {
		l.AppendNamed(infos[i].Topic, infos[i].List())
	}
	return l
}

// groupsList is list-groups' result: ("g1" => "Stable" "g2" => "Empty").
func groupsList(gs []kafkabpl.GroupListing) *value.List {
	l := &value.List{}
	for _, g := range gs {
		l.AppendNamed(g.Group, g.State)
	}
	return l
}

// addAdminFunctions adds the admin functions to the BPL table.
func (lib table) addAdminFunctions(m map[string]value.Func) {
	m["kafka-create-topics"] = lib.bplCreateTopics
	m["kafka-delete-topics"] = lib.bplDeleteTopics
	m["kafka-list-topics"] = lib.bplListTopics
	m["kafka-describe-topics"] = lib.bplDescribeTopics
	m["kafka-describe-cluster"] = lib.bplDescribeCluster
	m["kafka-create-partitions"] = lib.bplCreatePartitions
	m["kafka-list-groups"] = lib.bplListGroups
	m["kafka-describe-group"] = lib.bplDescribeGroup
	lib.addOffsetFunctions(m)
	lib.addConfigFunctions(m)
	lib.addACLFunctions(m)
}

const createTopicsUsage = `(kafka-create-topics target topics "partitions" => n "replication-factor" => r "configs" => ("key" => "value" ...))`

func (lib table) bplCreateTopics(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-create-topics", l)
	if err != nil {
		return nil, err
	}
	topics, err := a.topics(a.pos[1], "topics")
	if err != nil {
		return nil, err
	}
	var opts kafkabpl.TopicOptions
	if v, ok := a.named.Get("partitions"); ok {
		n, err := a.int(v, `"partitions"`, 1, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		opts.Partitions = int32(n)
	}
	if v, ok := a.named.Get("replication-factor"); ok {
		n, err := a.int(v, `"replication-factor"`, 1, math.MaxInt16)
		if err != nil {
			return nil, err
		}
		opts.ReplicationFactor = int16(n)
	}
	if v, ok := a.named.Get("configs"); ok {
		if opts.Configs, err = topicConfigs(&a, v); err != nil {
			return nil, err
		}
	}
	done, err := lib.CreateTopics(ctx, a.pos[0], topics, opts)
	if err != nil {
		return nil, err
	}
	return doneList(topics, done), nil
}

// topicConfigs reads "configs": a named list whose values are strings, or
// numbers and booleans, which are sent as their text.
func topicConfigs(a *args, v any) (map[string]string, error) {
	const want = `want a named list ("retention.ms" => "60000" ...)`
	l, ok := v.(*value.List)
	if !ok || l.Len() > 0 && !l.Named() {
		return nil, a.errorf(`"configs": %s, got %s`, want, value.Describe(v))
	}
	out := make(map[string]string, l.Len())
	for name, val := range l.All() {
		if name == "" {
			return nil, a.errorf(`"configs": element %s has no name; %s`, value.Describe(val), want)
		}
		switch val := val.(type) {
		case string:
			out[name] = val
		case int64:
			out[name] = strconv.FormatInt(val, 10)
		case float64:
			if n, ok := words.Integral(val); ok {
				out[name] = strconv.FormatInt(n, 10)
			} else {
				out[name] = strconv.FormatFloat(val, 'g', -1, 64)
			}
		case bool:
			out[name] = strconv.FormatBool(val)
		default:
			return nil, a.errorf(`"configs" %q: want a string or a number, got %s`, name, value.Describe(val))
		}
	}
	return out, nil
}

// doneList is create-topics' and delete-topics' result: each topic, in the
// order given and once, named, with true or false.
func doneList(topics []string, done map[string]bool) *value.List {
	l := &value.List{}
	seen := make(map[string]bool, len(topics))
	for _, t := range topics {
		if v, ok := done[t]; ok && !seen[t] {
			seen[t] = true
			l.AppendNamed(t, v)
		}
	}
	return l
}

func (lib table) bplDeleteTopics(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-delete-topics", l)
	if err != nil {
		return nil, err
	}
	topics, err := a.topics(a.pos[1], "topics")
	if err != nil {
		return nil, err
	}
	done, err := lib.DeleteTopics(ctx, a.pos[0], topics)
	if err != nil {
		return nil, err
	}
	return doneList(topics, done), nil
}

func (lib table) bplListTopics(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-list-topics", l)
	if err != nil {
		return nil, err
	}
	names, err := lib.ListTopics(ctx, a.pos[0])
	if err != nil {
		return nil, err
	}
	return stringList(names), nil
}

func (lib table) bplDescribeTopics(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-describe-topics", l)
	if err != nil {
		return nil, err
	}
	topics, err := a.optionalTopics(1)
	if err != nil {
		return nil, err
	}
	if topics != nil && len(topics) == 0 {
		return &value.List{}, nil // () names no topics, unlike leaving them out
	}
	infos, err := lib.DescribeTopics(ctx, a.pos[0], topics...)
	if err != nil {
		return nil, err
	}
	return topicsList(infos), nil
}

func (lib table) bplDescribeCluster(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-describe-cluster", l)
	if err != nil {
		return nil, err
	}
	info, err := lib.DescribeCluster(ctx, a.pos[0])
	if err != nil {
		return nil, err
	}
	return info.List(), nil
}

func (lib table) bplCreatePartitions(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-create-partitions", l)
	if err != nil {
		return nil, err
	}
	topic, err := a.str(1, "topic")
	if err != nil {
		return nil, err
	}
	count, err := a.int(a.pos[2], "count", 1, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	return lib.CreatePartitions(ctx, a.pos[0], topic, int(count))
}

func (lib table) bplListGroups(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-list-groups", l)
	if err != nil {
		return nil, err
	}
	gs, err := lib.ListGroups(ctx, a.pos[0])
	if err != nil {
		return nil, err
	}
	return groupsList(gs), nil
}

func (lib table) bplDescribeGroup(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-describe-group", l)
	if err != nil {
		return nil, err
	}
	group, err := a.str(1, "group")
	if err != nil {
		return nil, err
	}
	info, err := lib.DescribeGroup(ctx, a.pos[0], group)
	if err != nil {
		return nil, err
	}
	return info.List(), nil
}
