package kafkabpl

import (
	"errors"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kerr"
)

// configValue is name's entry in entries.
func configValue(entries []ConfigEntry, name string) (ConfigEntry, bool) {
	for _, e := range entries {
		if e.Name == name {
			return e, true
		}
	}
	return ConfigEntry{}, false
}

func TestConfigsAdmin(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("t"), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	before := must[[]ConfigEntry](t)(lib.DescribeConfigs(ctx, servers, TopicConfigs("t")))
	if e, ok := configValue(before, "retention.ms"); !ok || e.Source != "default" {
		t.Fatalf("retention.ms before: %+v, %v", e, ok)
	}
	if err := lib.AlterConfigs(ctx, servers, TopicConfigs("t"), map[string]string{"retention.ms": "60000", "cleanup.policy": "compact"}, nil); err != nil {
		t.Fatal(err)
	}
	after := must[[]ConfigEntry](t)(lib.DescribeConfigs(ctx, servers, TopicConfigs("t")))
	if e, _ := configValue(after, "retention.ms"); e.Value != "60000" || e.Source != "topic" {
		t.Errorf("retention.ms after: %+v", e)
	}
	if e, _ := configValue(after, "cleanup.policy"); e.Value != "compact" {
		t.Errorf("cleanup.policy after: %+v", e)
	}
	// Incremental: removing one leaves the other.
	if err := lib.AlterConfigs(ctx, servers, TopicConfigs("t"), nil, []string{"cleanup.policy"}); err != nil {
		t.Fatal(err)
	}
	after = must[[]ConfigEntry](t)(lib.DescribeConfigs(ctx, servers, TopicConfigs("t")))
	if e, _ := configValue(after, "cleanup.policy"); e.Source != "default" {
		t.Errorf("cleanup.policy after its removal: %+v", e)
	}
	if e, _ := configValue(after, "retention.ms"); e.Value != "60000" {
		t.Errorf("retention.ms after another's removal: %+v", e)
	}

	if _, err := lib.DescribeConfigs(ctx, servers, TopicConfigs("nope")); !errors.Is(err, kerr.UnknownTopicOrPartition) || !strings.HasPrefix(err.Error(), `kafka-describe-configs: topic "nope"`) {
		t.Errorf("an unknown topic: %v", err)
	}
	// kfake takes any name; a real broker's refusal of an unknown one is
	// checked by cmd/kafkabpl's TestRealKafka ("admin").
	for _, tt := range []struct {
		set    map[string]string
		remove []string
	}{{nil, nil}, {map[string]string{"a": "1"}, []string{"a"}}, {nil, []string{""}}} {
		if err := lib.AlterConfigs(ctx, servers, TopicConfigs("t"), tt.set, tt.remove); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%v %v: %v", tt.set, tt.remove, err)
		}
	}

	brokers := must[[]ConfigEntry](t)(lib.DescribeConfigs(ctx, servers, BrokerConfigs(0)))
	if len(brokers) == 0 {
		t.Errorf("broker 0 has no configs")
	}
	if err := lib.AlterConfigs(ctx, servers, BrokerConfigs(ClusterBrokers), map[string]string{"log.retention.ms": "120000"}, nil); err != nil {
		t.Fatal(err)
	}
	shared := must[[]ConfigEntry](t)(lib.DescribeConfigs(ctx, servers, BrokerConfigs(ClusterBrokers)))
	// kfake calls the source "broker"; a real broker "cluster", as
	// TestRealKafka checks.
	if e, _ := configValue(shared, "log.retention.ms"); e.Value != "120000" {
		t.Errorf("the brokers' default after the change: %+v", e)
	}
}
