package kafkabpl

import (
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// balancerNames is the config's assignment strategies, joined by commas.
func balancerNames(c *config) string {
	names := make([]string, len(c.balancers))
	for i, b := range c.balancers {
		names[i] = b.ProtocolName()
	}
	return strings.Join(names, ",")
}

func sameType(a, b any) bool { return reflect.TypeOf(a) == reflect.TypeOf(b) }

func TestConfigDefaults(t *testing.T) {
	c, err := parseConfig("localhost:9092")
	if err != nil {
		t.Fatal(err)
	}
	d := defaultConfig()
	checks := []struct {
		name      string
		got, want any
	}{
		{"servers", strings.Join(c.servers, ","), "localhost:9092"},
		{"client-id", c.clientID, "kafkabpl"},
		{"auto-offset-reset", c.autoOffsetReset, resetLatest},
		{"enable-auto-commit", c.autoCommit, true},
		{"auto-commit-interval", c.autoCommitInterval, 5 * time.Second},
		{"max-poll-records", c.maxPollRecords, 500},
		{"session-timeout", c.sessionTimeout, 45 * time.Second},
		{"heartbeat-interval", c.heartbeatInterval, 3 * time.Second},
		{"max-poll-interval", c.maxPollInterval, 5 * time.Minute},
		{"isolation-level", c.readCommitted, false},
		{"assignment-strategy", balancerNames(c), "range,roundrobin"},
		{"poll-format", c.pollRecords, false},
		{"key-serializer", c.keySer.Name(), "String"},
		{"value-deserializer", c.valDeser.Name(), "String"},
		{"acks", c.acks, kgo.AllISRAcks()},
		{"idempotence", c.idempotence, true},
		{"linger", c.linger, time.Duration(0)},
		{"compression", c.compression, kgo.NoCompression()},
		{"partitioner", sameType(c.partitioner.inner, murmur2Partitioner().inner), true},
		{"max-message-bytes", c.maxMessageBytes, 1048576},
		{"allow-auto-create-topics", c.allowAutoCreate, true},
		{"send-timeout", c.sendTimeout, 30 * time.Second},
		{"request-timeout", c.requestTimeout, 30 * time.Second},
		{"query-forward-timeout", c.queryForward, 5 * time.Second},
		{"max-task-idle", c.maxTaskIdle, time.Duration(0)},
		{"retry-backoff", c.retryBackoff, 100 * time.Millisecond},
		{"retry-backoff-max", c.retryBackoffMax, 500 * time.Millisecond},
		{"log-level", c.logLevel, kgo.LogLevelNone},
		{"tls", c.tls == nil, true},
		{"sasl", c.sasl == nil, true},
		{"group is fresh", strings.HasPrefix(c.group, "kafkabpl-") && c.group != d.group, true},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s default = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	c2, _ := parseConfig("localhost:9092")
	if c2.group == c.group {
		t.Error("two consumers got the same fresh group")
	}
}

// TestConfigSpellings reads every key in its own and Java's spelling.
func TestConfigSpellings(t *testing.T) {
	tests := []struct {
		key   string
		value any
		check func(*config) bool
	}{
		{"bootstrap.servers", []any{"a:1", "b:2"}, func(c *config) bool { return strings.Join(c.servers, " ") == "a:1 b:2" }},
		{"servers", "a:1, b:2,", func(c *config) bool { return strings.Join(c.servers, " ") == "a:1 b:2" }},
		{"servers", "kafka", func(c *config) bool { return c.servers[0] == "kafka:9092" }},
		{"client.id", "me", func(c *config) bool { return c.clientID == "me" }},
		{"group.id", "g", func(c *config) bool { return c.group == "g" }},
		{"group-id", "g", func(c *config) bool { return c.group == "g" }},
		{"topics", "a,b", func(c *config) bool { return strings.Join(c.topics, " ") == "a b" }},
		{"auto.offset.reset", "earliest", func(c *config) bool { return c.autoOffsetReset == resetEarliest }},
		{"auto-offset-reset", "NONE", func(c *config) bool { return c.autoOffsetReset == resetNone }},
		{"enable.auto.commit", "false", func(c *config) bool { return !c.autoCommit }},
		{"auto-commit", false, func(c *config) bool { return !c.autoCommit }},
		{"auto.commit.interval.ms", "1000", func(c *config) bool { return c.autoCommitInterval == time.Second }},
		{"max.poll.records", 10, func(c *config) bool { return c.maxPollRecords == 10 }},
		{"session.timeout.ms", 10000.0, func(c *config) bool { return c.sessionTimeout == 10*time.Second }},
		{"heartbeat.interval.ms", 1000, func(c *config) bool { return c.heartbeatInterval == time.Second }},
		{"max.poll.interval.ms", 60000, func(c *config) bool { return c.maxPollInterval == time.Minute }},
		{"isolation.level", "read_committed", func(c *config) bool { return c.readCommitted }},
		{"partition.assignment.strategy", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor", func(c *config) bool { return balancerNames(c) == "cooperative-sticky" }},
		{"assignment-strategy", []any{"roundrobin", "range"}, func(c *config) bool { return balancerNames(c) == "roundrobin,range" }},
		{"poll-format", "records", func(c *config) bool { return c.pollRecords }},
		{"key.serializer", "org.apache.kafka.common.serialization.LongSerializer", func(c *config) bool { return c.keySer == serde.Long }},
		{"value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer", func(c *config) bool { return c.valDeser == serde.ByteArray }},
		{"value-serializer", "json", func(c *config) bool { return c.valSer == serde.JSON }},
		{"key-deserializer", "Bytes", func(c *config) bool { return c.keyDeser == serde.ByteArray }},
		{"value-deserializer", "BPL", func(c *config) bool { return c.valDeser == serde.BPL }},
		{"acks", 1, func(c *config) bool { return c.acks == kgo.LeaderAck() && !c.idempotence }},
		{"acks", "-1", func(c *config) bool { return c.acks == kgo.AllISRAcks() && c.idempotence }},
		{"enable.idempotence", false, func(c *config) bool { return !c.idempotence }},
		{"linger.ms", 5, func(c *config) bool { return c.linger == 5*time.Millisecond }},
		{"compression.type", "zstd", func(c *config) bool { return c.compression == kgo.ZstdCompression() }},
		{"partitioner", "round-robin", func(c *config) bool { return sameType(c.partitioner.inner, kgo.RoundRobinPartitioner()) }},
		{"max.request.size", 2000000, func(c *config) bool { return c.maxMessageBytes == 2000000 }},
		{"allow.auto.create.topics", false, func(c *config) bool { return !c.allowAutoCreate }},
		{"delivery.timeout.ms", 1000, func(c *config) bool { return c.sendTimeout == time.Second }},
		{"request.timeout.ms", 1000, func(c *config) bool { return c.requestTimeout == time.Second }},
		{"log-level", "DEBUG", func(c *config) bool { return c.logLevel == kgo.LogLevelDebug }},
		{"log-level", "warn", func(c *config) bool { return c.logLevel == kgo.LogLevelWarn }},
		{"tls", true, func(c *config) bool { return c.tls != nil && c.tls.ServerName == "" }},
		{"tls", map[string]any{"server-name": "kafka.local", "insecure-skip-verify": true}, func(c *config) bool { return c.tls.ServerName == "kafka.local" && c.tls.InsecureSkipVerify }},
		{"sasl", map[string]any{"mechanism": "scram-sha-512", "username": "u", "password": "p"}, func(c *config) bool { return c.sasl.Name() == "SCRAM-SHA-512" }},
	}
	for _, tt := range tests {
		cfg := map[string]any{"servers": "localhost:9092", tt.key: tt.value}
		if tt.key == "bootstrap.servers" || tt.key == "servers" {
			cfg = map[string]any{tt.key: tt.value}
		}
		c, err := parseConfig(cfg)
		if err != nil {
			t.Errorf("%s => %v: %v", tt.key, tt.value, err)
			continue
		}
		if !tt.check(c) {
			t.Errorf("%s => %v was not applied", tt.key, tt.value)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  any
		want string
	}{
		{map[string]any{"servers": "h:1", "grup": "g"}, `unknown config key "grup" (did you mean "group"?)`},
		{map[string]any{"servers": "h:1", "max.poll.record": 5}, `(did you mean "max-poll-records"?)`},
		{map[string]any{"servers": "h:1", "security.protocol": "SSL"}, `configured with the "tls" key`},
		{map[string]any{"servers": "h:1", "zzzzzzzz": 1}, `unknown config key "zzzzzzzz"`},
		{map[string]any{"servers": 9092}, `config "servers": want "host:port"`},
		{map[string]any{"servers": "h:0"}, `server "h:0" is not host:port`},
		{map[string]any{"servers": ""}, `config "servers"`},
		{map[string]any{"group": "g"}, `"servers" is required`},
		{map[string]any{"servers": "h:1", "acks": 2}, `config "acks": want one of "0", "1", "all", got 2`},
		{map[string]any{"servers": "h:1", "acks": "1", "idempotence": true}, `"idempotence" true needs "acks" "all"`},
		{map[string]any{"servers": "h:1", "max-poll-records": -1}, `want an integer from 1 to 2147483647, got -1`},
		{map[string]any{"servers": "h:1", "linger": 1.5}, `config "linger": want an integer`},
		{map[string]any{"servers": "h:1", "max.task.idle.ms": -1}, `config "max.task.idle.ms": want an integer from 0 to 86400000, got -1`},
		{map[string]any{"servers": "h:1", "query-forward-timeout": 0}, `config "query-forward-timeout": want an integer from 1 to 86400000, got 0`},
		{map[string]any{"servers": "h:1", "enable-auto-commit": "yes"}, `want true or false, got the string "yes"`},
		{map[string]any{"servers": "h:1", "heartbeat-interval": 50000}, `"heartbeat-interval" (50000 ms) must be less than "session-timeout" (45000 ms)`},
		{map[string]any{"servers": "h:1", "retry.backoff.ms": 2000}, `"retry-backoff" (2000 ms) must not exceed "retry-backoff-max" (500 ms)`},
		{map[string]any{"servers": "h:1", "retry-backoff-max": 0}, `config "retry-backoff-max"`},
		{map[string]any{"servers": "h:1", "value-serializer": "Thrift"}, `config "value-serializer": want one of String`},
		{map[string]any{"servers": "h:1", "compression": "brotli"}, `config "compression"`},
		{map[string]any{"servers": "h:1", "log-level": "trace"}, `config "log-level": want one of "debug", "error", "info", "none", "warn", got the string "trace"`},
		{map[string]any{"servers": "h:1", "assignment-strategy": "range,cooperative-sticky"}, "cannot be mixed"},
		{map[string]any{"servers": "h:1", "topics": "bad topic"}, `invalid topic name "bad topic"`},
		{map[string]any{"servers": "h:1", "tls": map[string]any{"ca-file": "/nonexistent/ca.pem"}}, `config "tls ca-file"`},
		{map[string]any{"servers": "h:1", "tls": map[string]any{"cert-file": "c.pem"}}, `"cert-file" and "key-file" go together`},
		{map[string]any{"servers": "h:1", "sasl": map[string]any{"mechanism": "GSSAPI", "username": "u"}}, `config "sasl mechanism"`},
		{map[string]any{"servers": "h:1", "group": "a", "group.id": "b"}, `config keys "group" and "group.id" are the same key`},
		{value.NewList("h:1").AppendNamed("group", "g"), "has no name"},
		{3.5, "want a server string, a list of servers or a named list, got 3.5"},
		{[]any{"h:1", 5}, `config "servers"`},
	}
	for _, tt := range tests {
		_, err := parseConfig(tt.cfg)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want InvalidConfig containing %q", value.Format(tt.cfg), err, tt.want)
		}
	}
}

// TestRetryBackoff checks the retry waits: retry-backoff first, doubling
// to retry-backoff-max, each spread by ±20%; during an outage (a broker
// that was reached refuses connections), a tenth of retry-backoff for the
// first retry and retry-backoff for every later one.
func TestRetryBackoff(t *testing.T) {
	outage := false
	b := backoff(100*time.Millisecond, time.Second, func() bool { return outage })
	for _, tt := range []struct {
		outage bool
		tries  int
		want   time.Duration
	}{{false, 0, 100 * time.Millisecond}, {false, 1, 100 * time.Millisecond}, {false, 2, 200 * time.Millisecond},
		{false, 4, 800 * time.Millisecond}, {false, 5, time.Second}, {false, 64, time.Second}, {false, 1 << 30, time.Second},
		{true, 0, 10 * time.Millisecond}, {true, 1, 10 * time.Millisecond}, {true, 2, 100 * time.Millisecond}, {true, 3, 100 * time.Millisecond}, {true, 1 << 30, 100 * time.Millisecond},
		{false, 3, 400 * time.Millisecond}} {
		outage = tt.outage
		lo, hi := tt.want*8/10, tt.want*12/10
		spread := map[time.Duration]bool{}
		for range 50 {
			d := b(tt.tries)
			if d < lo || d > hi {
				t.Fatalf("backoff(%d), outage %v = %v, want %v ±20%%", tt.tries, tt.outage, d, tt.want)
			}
			spread[d] = true
		}
		if len(spread) < 2 {
			t.Errorf("backoff(%d) gave one wait 50 times: no jitter", tt.tries)
		}
	}
	c, err := parseConfig(map[string]any{"servers": "h:1", "retry.backoff.ms": 50, "retry.backoff.max.ms": 400})
	if err != nil {
		t.Fatal(err)
	}
	if c.retryBackoff != 50*time.Millisecond || c.retryBackoffMax != 400*time.Millisecond {
		t.Errorf("retry backoffs %v, %v; want 50ms, 400ms", c.retryBackoff, c.retryBackoffMax)
	}
}

// TestConfigNeverPrintsPassword checks every way a sasl config can be wrong.
func TestConfigNeverPrintsPassword(t *testing.T) {
	const secret = "hunter2-secret"
	for _, sasl := range []any{
		map[string]any{"mechanism": "PLAIN", "username": "u", "password": secret, "pasword": secret},
		map[string]any{"mechanism": "PLAIN", "password": secret},
		map[string]any{"mechanism": "NOPE", "username": "u", "password": secret},
		[]any{"PLAIN", "u", secret},
		secret,
	} {
		_, err := parseConfig(map[string]any{"servers": "h:1", "sasl": sasl})
		if err == nil {
			t.Fatalf("%v: no error", sasl)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the password: %v", err)
		}
	}
	_, err := parseConfig(map[string]any{"servers": "h:1", "sasl": map[string]any{"mechanism": "PLAIN", "username": "u", "password": 12345678}})
	if err == nil || strings.Contains(err.Error(), "12345678") {
		t.Errorf("a non-string password: %v", err)
	}
}

// TestConfigExtra checks kafka-consumer's named arguments overriding the
// config's own keys.
func TestConfigExtra(t *testing.T) {
	c, err := parseConfig(Config{Base: map[string]any{"servers": "h:1", "group": "a"}, Keys: value.NewList().AppendNamed("group.id", "b").AppendNamed("linger.ms", 7)})
	if err != nil {
		t.Fatal(err)
	}
	if c.group != "b" || c.linger != 7*time.Millisecond {
		t.Errorf("group %q linger %v", c.group, c.linger)
	}
}

// FuzzParseConfig feeds config lists built from fuzzed keys and values: no
// input may panic, and every error must be an InvalidConfig error.
func FuzzParseConfig(f *testing.F) {
	f.Add("servers", "localhost:9092", int64(1), true, "group")
	f.Add("bootstrap.servers", "a:1,b:2", int64(-1), false, "acks")
	f.Add("tls", "", int64(0), true, "sasl")
	f.Add("max.poll.records", "x", int64(1<<40), false, "linger.ms")
	f.Add("heartbeat-interval", "1:1", int64(45000), true, "assignment-strategy")
	f.Fuzz(func(t *testing.T, key, s string, n int64, b bool, key2 string) {
		for _, v := range []any{s, n, b, float64(n) / 3, value.NewList(s, n), value.NewList().AppendNamed(s, n), nil} {
			cfg := value.NewList().AppendNamed("servers", "127.0.0.1:9092").AppendNamed(key, v).AppendNamed(key2, s)
			if _, err := parseConfig(cfg); err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("%s: error %v is not InvalidConfig", value.Format(cfg), err)
			}
			if _, err := parseConfig(v); err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("%s: error %v is not InvalidConfig", value.Format(v), err)
			}
		}
	})
}

// TestDocKeyTable ties the key table in doc.go to the parser: every key
// the table names is parsed, and every key the parser knows is in the
// table, so that neither can drift.
func TestDocKeyTable(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	in := false
	for line := range strings.Lines(string(src)) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "//\tkey "):
			in = true
		case in && strings.HasPrefix(line, "//\t"):
			rows = append(rows, strings.TrimPrefix(line, "//\t"))
		case in:
			in = false
		}
	}
	if len(rows) == 0 {
		t.Fatal("doc.go has no key table (a line starting //\\tkey)")
	}
	documented := map[string]bool{}
	for _, row := range rows {
		first := regexp.MustCompile(`\s{2,}`).Split(row, 2)[0]
		for _, name := range strings.Split(first, ", ") {
			k := configKeyByName[name]
			if k == nil {
				t.Errorf("doc.go documents %q, which the parser does not know", name)
				continue
			}
			documented[k.name] = true
		}
	}
	for _, k := range configKeys {
		if !documented[k.name] {
			t.Errorf("config key %q is parsed but not in doc.go's key table", k.name)
		}
	}
}

// TestSeedConfigNotDialed creates a consumer from the config of the seed's
// examples, with the user's own network (TestSeedExamples in package
// functions runs the rest): it is parsed, and never dialed.
func TestSeedConfigNotDialed(t *testing.T) {
	t.Parallel()
	lib := newLib(t)
	ctx := testCtx(t)
	cfg := (&value.List{}).
		AppendNamed("servers", value.NewList("10.1.20.87:9092", "10.1.20.88:9092")).
		AppendNamed("key-deserializer", "StringDeserializer").
		AppendNamed("value-deserializer", "StringDeserializer").
		AppendNamed("group", "test-group")
	id := must[string](t)(lib.Create(ctx, Consumer, cfg))
	h, err := lib.acquire(id, Consumer)
	if err != nil {
		t.Fatal(err)
	}
	if h.cfg.group != "test-group" || !slices.Equal(h.cfg.servers, []string{"10.1.20.87:9092", "10.1.20.88:9092"}) {
		t.Errorf("config read as group %q servers %q", h.cfg.group, h.cfg.servers)
	}
	h.calls.Done()
	if ok, err := lib.Destroy(ctx, id); !ok || err != nil {
		t.Errorf("destroy: %v, %v", ok, err)
	}
	if h.net.dials != 0 {
		t.Errorf("creating and destroying a consumer dialed %d times", h.net.dials)
	}
}
