package kafkabpl

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestInvalidTopicConfigs checks that the embedded cluster refuses, with
// INVALID_CONFIG and Kafka's words naming the config, a topic config that
// Kafka does not know or a value it does not take, when a topic is
// created and when its configs are altered; the embedded cluster stored
// them (issue 47). Valid configs are taken as before.
func TestInvalidTopicConfigs(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	valid := map[string]string{"retention.ms": "60000", "cleanup.policy": "compact, delete", "min.cleanable.dirty.ratio": "0.2", "preallocate": "TRUE"}
	must[map[string]bool](t)(lib.CreateTopics(ctx, servers, []string{"kept"}, TopicOptions{Configs: valid}))
	for _, tt := range []struct {
		topic, name, value, says string
	}{
		{"unknown-name", "retention.msec", "5", "Unknown topic config name: retention.msec"},
		{"not-a-number", "retention.ms", "soon", "Invalid value soon for configuration retention.ms: Not a number of type LONG"},
		{"out-of-range", "segment.bytes", "1024", "Value must be at least 1048576"},
		{"not-a-choice", "cleanup.policy", "compact,shred", "String must be one of: compact, delete"},
		{"not-a-boolean", "preallocate", "yes", "true or false"},
	} {
		_, err := lib.CreateTopics(ctx, servers, []string{tt.topic}, TopicOptions{Configs: map[string]string{tt.name: tt.value}})
		if !errors.Is(err, kerr.InvalidConfig) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("create %s with %s = %q: %v, want INVALID_CONFIG saying %q", tt.topic, tt.name, tt.value, err, tt.says)
		}
		// With a valid change beside it: nothing of it is stored.
		err = lib.AlterConfigs(ctx, servers, TopicConfigs("kept"), map[string]string{tt.name: tt.value, "retention.ms": "120000"}, nil)
		if !errors.Is(err, kerr.InvalidConfig) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("set %s = %q: %v, want INVALID_CONFIG saying %q", tt.name, tt.value, err, tt.says)
		}
	}
	if topics := must[[]string](t)(lib.ListTopics(ctx, servers)); !slices.Equal(topics, []string{"kept"}) {
		t.Errorf("topics: %v; those with invalid configs were created", topics)
	}
	entries := must[[]ConfigEntry](t)(lib.DescribeConfigs(ctx, servers, TopicConfigs("kept")))
	i := slices.IndexFunc(entries, func(e ConfigEntry) bool { return e.Name == "retention.ms" })
	if i < 0 || entries[i].Value != "60000" {
		t.Errorf("retention.ms after refused changes: %+v, want 60000 as created", entries)
	}
	if slices.ContainsFunc(entries, func(e ConfigEntry) bool { return e.Name == "retention.msec" }) {
		t.Error("the refused retention.msec was stored")
	}
}
