package functions

import (
	"context"
	"strconv"
	"strings"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/value"
)

// The config functions: kafka-describe-configs and kafka-alter-configs.

func (lib table) addConfigFunctions(m map[string]value.Func) {
	m["kafka-describe-configs"] = lib.bplDescribeConfigs
	m["kafka-alter-configs"] = lib.bplAlterConfigs
}

// configResource reads a config function's resource type and name:
// "topic" and a topic's name, "group" and a group's, or "broker" and an
// id ("1", 1, or "" for the brokers' shared default).
func (a *args) configResource() (kafkabpl.ConfigResource, error) {
	typ, err := a.str(1, "type")
	if err != nil {
		return kafkabpl.ConfigResource{}, err
	}
	switch strings.ToLower(typ) {
	case "topic":
		topic, err := a.str(2, "topic")
		if err == nil && topic == "" {
			err = a.errorf(`topic: want a topic name, got ""`)
		}
		return kafkabpl.TopicConfigs(topic), err
	case "group":
		group, err := a.str(2, "group")
		if err == nil && group == "" {
			err = a.errorf(`group: want a group name, got ""`)
		}
		return kafkabpl.GroupConfigs(group), err
	case "broker":
		if n, ok := a.pos[2].(int64); ok && n >= 0 && n <= 1<<31-1 {
			return kafkabpl.BrokerConfigs(int32(n)), nil
		}
		if s, ok := a.pos[2].(string); ok {
			if s == "" {
				return kafkabpl.BrokerConfigs(kafkabpl.ClusterBrokers), nil
			}
			if n, err := strconv.ParseInt(s, 10, 32); err == nil && n >= 0 {
				return kafkabpl.BrokerConfigs(int32(n)), nil
			}
		}
		return kafkabpl.ConfigResource{}, a.errorf(`broker: want a broker id, or "" for the brokers' default, got %s`, value.Describe(a.pos[2]))
	}
	return kafkabpl.ConfigResource{}, a.errorf(`type: want "topic", "group" or "broker", got %s`, value.Describe(a.pos[1]))
}

func (lib table) bplDescribeConfigs(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-describe-configs", l)
	if err != nil {
		return nil, err
	}
	r, err := a.configResource()
	if err != nil {
		return nil, err
	}
	entries, err := lib.DescribeConfigs(ctx, a.pos[0], r)
	if err != nil {
		return nil, err
	}
	out := &value.List{}
	for _, e := range entries {
		if e.Sensitive {
			out.AppendNamed(e.Name, nil)
			continue
		}
		out.AppendNamed(e.Name, e.Value)
	}
	return out, nil
}

const alterConfigsUsage = `(kafka-alter-configs target "topic"|"group"|"broker" name ("key" => value ... "key" => null))`

func (lib table) bplAlterConfigs(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-alter-configs", l)
	if err != nil {
		return nil, err
	}
	r, err := a.configResource()
	if err != nil {
		return nil, err
	}
	changes, ok := a.pos[3].(*value.List)
	if !ok || changes.Len() == 0 || !changes.Named() {
		return nil, a.errorf(`configs: want ("key" => value ...), null to remove, got %s`, value.Describe(a.pos[3]))
	}
	set := map[string]string{}
	var remove []string
	for name, v := range changes.All() {
		switch v := v.(type) {
		case nil:
			remove = append(remove, name)
		case string:
			set[name] = v
		case int64, float64, bool:
			set[name] = value.Format(v)
		default:
			return nil, a.errorf("configs %q: want a string, number, boolean or null, got %s", name, value.Describe(v))
		}
		if name == "" {
			return nil, a.errorf(`configs: want ("key" => value ...), got an element with no name in %s`, value.Describe(changes))
		}
	}
	if err := lib.AlterConfigs(ctx, a.pos[0], r, set, remove); err != nil {
		return nil, err
	}
	return true, nil
}
