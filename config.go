package kafkabpl

import (
	"crypto/tls"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl/internal/testdial"
	"github.com/brain4it/kafkabpl/internal/words"
	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
)

// config is a parsed, validated client config. It is read once, by
// parseConfig, and turned into kgo options by kgoOpts; nothing else reads
// the user's config list.
type config struct {
	servers  []string
	clientID string
	group    string // "" until parseConfig picks a fresh one
	topics   []string

	// consumer
	autoOffsetReset    offsetReset
	autoCommit         bool
	autoCommitInterval time.Duration
	maxPollRecords     int
	sessionTimeout     time.Duration
	heartbeatInterval  time.Duration
	maxPollInterval    time.Duration
	readCommitted      bool
	balancers          []kgo.GroupBalancer
	serverAssigns      bool // group-protocol "consumer": KIP-848, the broker assigns partitions
	remoteAssignor     string
	pollRecords        bool // poll-format "records" rather than "values"
	keyDeser, valDeser *serde.Serde

	// producer
	keySer, valSer  *serde.Serde
	acks            kgo.Acks
	idempotence     bool
	idempotenceSet  bool
	linger          time.Duration
	compression     kgo.CompressionCodec
	partitioner     partitioner
	maxMessageBytes int
	allowAutoCreate bool
	sendTimeout     time.Duration

	// stream
	transactionTimeout time.Duration
	queryEndpoint      string        // a stateful stream's, advertised in its group membership (package stream)
	queryForward       time.Duration // how long a store query forwarded to another process waits for its answer
	maxTaskIdle        time.Duration // how long a store partition's inputs wait for a co-partitioned input that has none fetched
	stateDir           string        // a stateful stream's state on disk, under it; "": in memory
	stateCleanup       time.Duration // how long a partition's state on disk outlives its last use by this process

	// every kind
	given           map[string]bool // the keys the user gave, by canonical name
	requestTimeout  time.Duration
	retryBackoff    time.Duration // the first wait before a retry
	retryBackoffMax time.Duration // the longest, as the wait doubles
	logLevel        kgo.LogLevel  // what of franz-go's own log to write; none by default
	clientLog       func(string)  // where, one line each (the Library's log output)
	hooks           ClientHooks   // the Library's, when set
	dial            Dialer        // the Library's, when set (see SetDialer)
	tls             *tls.Config
	sasl            sasl.Mechanism

	// schema registry (the schema serdes)
	registry serde.RegistryConfig
	reg      *serde.Registry // made by check when a serde needs it
}

// offsetReset is auto-offset-reset: where a partition with no committed
// offset starts.
type offsetReset int8

const (
	resetLatest   offsetReset = iota // the end: only messages sent from now on
	resetEarliest                    // the oldest message still stored
	resetNone                        // nowhere: polls fail until a seek
)

// dialect is whose defaults a config is read with, and how strictly.
type dialect int8

const (
	// kafkaDialect is kafka-create's and the Go API's: Kafka's own
	// client defaults; an unknown key is an error.
	kafkaDialect dialect = iota
	// brain4itDialect is brain4it's names, kafka-producer and
	// kafka-consumer: the consumer defaults of brain4it's Java library
	// (no auto-commit, 10 records a poll, a 10 s session); an unknown key
	// is a warning, as brain4it ignores keys it does not read.
	brain4itDialect
)

func defaultConfig() *config { return defaultConfigOf(kafkaDialect) }

func defaultConfigOf(d dialect) *config {
	c := &config{
		clientID:           "kafkabpl",
		autoOffsetReset:    resetLatest,
		autoCommit:         true,
		autoCommitInterval: 5 * time.Second,
		maxPollRecords:     500,
		sessionTimeout:     45 * time.Second,
		heartbeatInterval:  3 * time.Second,
		maxPollInterval:    5 * time.Minute,
		balancers:          []kgo.GroupBalancer{kgo.RangeBalancer(), kgo.RoundRobinBalancer()},
		keyDeser:           serde.String,
		valDeser:           serde.String,
		keySer:             serde.String,
		valSer:             serde.String,
		acks:               kgo.AllISRAcks(),
		idempotence:        true,
		compression:        kgo.NoCompression(),
		partitioner:        murmur2Partitioner(),
		maxMessageBytes:    1 << 20,
		allowAutoCreate:    true,
		sendTimeout:        30 * time.Second,
		requestTimeout:     30 * time.Second,
		retryBackoff:       100 * time.Millisecond,
		retryBackoffMax:    500 * time.Millisecond,
		transactionTimeout: 30 * time.Second,
		queryForward:       5 * time.Second,
		stateCleanup:       10 * time.Minute,
		registry:           serde.RegistryConfig{AutoRegister: true},
	}
	if d == brain4itDialect {
		c.autoCommit = false
		c.maxPollRecords = 10
		c.sessionTimeout = 10 * time.Second
	}
	return c
}

// configKey is one accepted key: its canonical name, the other spellings
// (Java's dotted ones among them) and how to store its value.
type configKey struct {
	name    string
	aliases []string
	set     func(c *config, r valueReader) error
}

// configKeys lists every key, in the order the package docs show them.
var configKeys = []configKey{
	{"servers", []string{"bootstrap.servers", "bootstrap-servers"}, func(c *config, r valueReader) (err error) {
		c.servers, err = r.servers()
		return err
	}},
	{"client-id", []string{"client.id"}, func(c *config, r valueReader) (err error) {
		c.clientID, err = r.nonEmptyString()
		return err
	}},
	{"group", []string{"group-id", "group.id"}, func(c *config, r valueReader) (err error) {
		c.group, err = r.nonEmptyString()
		return err
	}},
	{"topics", []string{"topic"}, func(c *config, r valueReader) (err error) {
		c.topics, err = r.topics()
		return err
	}},
	{"auto-offset-reset", []string{"auto.offset.reset"}, func(c *config, r valueReader) (err error) {
		c.autoOffsetReset, err = oneOf(r,
			choice[offsetReset]{[]string{"earliest", "smallest"}, resetEarliest},
			choice[offsetReset]{[]string{"latest", "largest"}, resetLatest},
			choice[offsetReset]{[]string{"none"}, resetNone})
		return err
	}},
	{"enable-auto-commit", []string{"auto-commit", "enable.auto.commit"}, func(c *config, r valueReader) (err error) {
		c.autoCommit, err = r.bool()
		return err
	}},
	{"auto-commit-interval", []string{"auto.commit.interval.ms"}, func(c *config, r valueReader) (err error) {
		c.autoCommitInterval, err = r.millis(100) // kgo refuses less
		return err
	}},
	{"max-poll-records", []string{"max.poll.records"}, func(c *config, r valueReader) (err error) {
		n, err := r.int(1, math.MaxInt32)
		c.maxPollRecords = int(n)
		return err
	}},
	{"session-timeout", []string{"session.timeout.ms"}, func(c *config, r valueReader) (err error) {
		c.sessionTimeout, err = r.millis(1)
		return err
	}},
	{"heartbeat-interval", []string{"heartbeat.interval.ms"}, func(c *config, r valueReader) (err error) {
		c.heartbeatInterval, err = r.millis(1)
		return err
	}},
	{"max-poll-interval", []string{"max.poll.interval.ms"}, func(c *config, r valueReader) (err error) {
		c.maxPollInterval, err = r.millis(1)
		return err
	}},
	{"isolation-level", []string{"isolation.level"}, func(c *config, r valueReader) (err error) {
		c.readCommitted, err = oneOf(r,
			choice[bool]{[]string{"read_uncommitted", "read-uncommitted"}, false},
			choice[bool]{[]string{"read_committed", "read-committed"}, true})
		return err
	}},
	{"assignment-strategy", []string{"partition.assignment.strategy", "partition-assignment-strategy"}, func(c *config, r valueReader) (err error) {
		c.balancers, err = r.balancers()
		return err
	}},
	{"group-protocol", []string{"group.protocol"}, func(c *config, r valueReader) (err error) {
		c.serverAssigns, err = oneOf(r, choice[bool]{[]string{"classic"}, false}, choice[bool]{[]string{"consumer"}, true})
		return err
	}},
	{"group-remote-assignor", []string{"group.remote.assignor"}, func(c *config, r valueReader) (err error) {
		c.remoteAssignor, err = oneOf(r, choice[string]{[]string{"uniform"}, "uniform"}, choice[string]{[]string{"range"}, "range"})
		return err
	}},
	{"poll-format", []string{"poll.format"}, func(c *config, r valueReader) (err error) {
		c.pollRecords, err = oneOf(r, choice[bool]{[]string{"values"}, false}, choice[bool]{[]string{"records"}, true})
		return err
	}},
	{"key-serializer", []string{"key.serializer"}, func(c *config, r valueReader) (err error) {
		c.keySer, err = r.serde()
		return err
	}},
	{"value-serializer", []string{"value.serializer"}, func(c *config, r valueReader) (err error) {
		c.valSer, err = r.serde()
		return err
	}},
	{"key-deserializer", []string{"key.deserializer"}, func(c *config, r valueReader) (err error) {
		c.keyDeser, err = r.serde()
		return err
	}},
	{"value-deserializer", []string{"value.deserializer"}, func(c *config, r valueReader) (err error) {
		c.valDeser, err = r.serde()
		return err
	}},
	{"acks", nil, func(c *config, r valueReader) (err error) {
		c.acks, err = oneOf(r,
			choice[kgo.Acks]{[]string{"all", "-1"}, kgo.AllISRAcks()},
			choice[kgo.Acks]{[]string{"1"}, kgo.LeaderAck()},
			choice[kgo.Acks]{[]string{"0"}, kgo.NoAck()})
		return err
	}},
	{"idempotence", []string{"enable.idempotence", "enable-idempotence"}, func(c *config, r valueReader) (err error) {
		c.idempotence, err = r.bool()
		c.idempotenceSet = true
		return err
	}},
	{"linger", []string{"linger.ms"}, func(c *config, r valueReader) (err error) {
		c.linger, err = r.millis(0)
		return err
	}},
	{"compression", []string{"compression.type", "compression-type"}, func(c *config, r valueReader) (err error) {
		c.compression, err = oneOf(r,
			choice[kgo.CompressionCodec]{[]string{"none"}, kgo.NoCompression()},
			choice[kgo.CompressionCodec]{[]string{"gzip"}, kgo.GzipCompression()},
			choice[kgo.CompressionCodec]{[]string{"snappy"}, kgo.SnappyCompression()},
			choice[kgo.CompressionCodec]{[]string{"lz4"}, kgo.Lz4Compression()},
			choice[kgo.CompressionCodec]{[]string{"zstd"}, kgo.ZstdCompression()})
		return err
	}},
	{"partitioner", []string{"partitioner.class"}, func(c *config, r valueReader) (err error) {
		c.partitioner, err = oneOf(r,
			choice[partitioner]{[]string{"murmur2", "default"}, murmur2Partitioner()},
			choice[partitioner]{[]string{"round-robin", "roundrobin"}, partitioner{kgo.RoundRobinPartitioner()}},
			choice[partitioner]{[]string{"manual"}, partitioner{}})
		return err
	}},
	{"max-message-bytes", []string{"max.message.bytes", "max.request.size"}, func(c *config, r valueReader) error {
		n, err := r.int(1, math.MaxInt32)
		c.maxMessageBytes = int(n)
		return err
	}},
	{"allow-auto-create-topics", []string{"allow.auto.create.topics"}, func(c *config, r valueReader) (err error) {
		c.allowAutoCreate, err = r.bool()
		return err
	}},
	{"send-timeout", []string{"delivery.timeout.ms"}, func(c *config, r valueReader) (err error) {
		c.sendTimeout, err = r.millis(1)
		return err
	}},
	{"transaction-timeout", []string{"transaction.timeout.ms"}, func(c *config, r valueReader) (err error) {
		c.transactionTimeout, err = r.millis(1000)
		return err
	}},
	{"query-endpoint", nil, func(c *config, r valueReader) (err error) {
		c.queryEndpoint, err = r.string()
		if err == nil {
			err = CheckQueryEndpoint(c.queryEndpoint)
		}
		return err
	}},
	{"state-dir", []string{"state.dir"}, func(c *config, r valueReader) (err error) {
		c.stateDir, err = r.nonEmptyString()
		return err
	}},
	{"state-cleanup-delay", []string{"state.cleanup.delay.ms"}, func(c *config, r valueReader) (err error) {
		c.stateCleanup, err = r.millis(0)
		return err
	}},
	{"max-task-idle", []string{"max.task.idle.ms"}, func(c *config, r valueReader) (err error) {
		c.maxTaskIdle, err = r.millis(0)
		return err
	}},
	{"query-forward-timeout", nil, func(c *config, r valueReader) (err error) {
		c.queryForward, err = r.millis(1)
		return err
	}},
	{"request-timeout", []string{"request.timeout.ms"}, func(c *config, r valueReader) (err error) {
		c.requestTimeout, err = r.millis(1)
		return err
	}},
	{"retry-backoff", []string{"retry.backoff.ms"}, func(c *config, r valueReader) (err error) {
		c.retryBackoff, err = r.millis(1)
		return err
	}},
	{"retry-backoff-max", []string{"retry.backoff.max.ms"}, func(c *config, r valueReader) (err error) {
		c.retryBackoffMax, err = r.millis(1)
		return err
	}},
	{"log-level", nil, func(c *config, r valueReader) (err error) {
		c.logLevel, err = oneOf(r,
			choice[kgo.LogLevel]{[]string{"none"}, kgo.LogLevelNone},
			choice[kgo.LogLevel]{[]string{"error"}, kgo.LogLevelError},
			choice[kgo.LogLevel]{[]string{"warn"}, kgo.LogLevelWarn},
			choice[kgo.LogLevel]{[]string{"info"}, kgo.LogLevelInfo},
			choice[kgo.LogLevel]{[]string{"debug"}, kgo.LogLevelDebug})
		return err
	}},
	{"tls", nil, func(c *config, r valueReader) (err error) {
		c.tls, err = r.tls()
		return err
	}},
	{"sasl", nil, func(c *config, r valueReader) (err error) {
		c.sasl, err = r.sasl()
		return err
	}},
	{"schema-registry-url", []string{"schema.registry.url", "schema-registry"}, func(c *config, r valueReader) (err error) {
		c.registry.URL, err = r.nonEmptyString()
		return err
	}},
	{"basic-auth-user-info", []string{"basic.auth.user.info", "schema.registry.basic.auth.user.info"}, func(c *config, r valueReader) (err error) {
		r.secret = true
		c.registry.UserInfo, err = r.string()
		if err == nil && c.registry.UserInfo != "" && !strings.Contains(c.registry.UserInfo, ":") {
			err = Errorf(ErrInvalidConfig, "config %q: want \"user:password\"", r.key)
		}
		return err
	}},
	{"schema-registry-tls", nil, func(c *config, r valueReader) (err error) {
		c.registry.TLS, err = r.tls()
		return err
	}},
	{"auto-register-schemas", []string{"auto.register.schemas"}, func(c *config, r valueReader) (err error) {
		c.registry.AutoRegister, err = r.bool()
		return err
	}},
	{"use-latest-version", []string{"use.latest.version"}, func(c *config, r valueReader) (err error) {
		c.registry.UseLatest, err = r.bool()
		return err
	}},
	{"use-schema-id", []string{"use.schema.id"}, func(c *config, r valueReader) error {
		n, err := r.int(-1, math.MaxInt32)
		if n == 0 {
			err = r.errorf("a schema id (1 or more), or -1 for none")
		}
		c.registry.UseID = int(max(n, 0))
		return err
	}},
	{"subject-name-strategy", []string{"subject.name.strategy", "value.subject.name.strategy", "value-subject-name-strategy"}, func(c *config, r valueReader) (err error) {
		c.registry.Strategy, err = r.subjectStrategy()
		return err
	}},
	{"key-subject-name-strategy", []string{"key.subject.name.strategy"}, func(c *config, r valueReader) (err error) {
		c.registry.KeyStrategy, err = r.subjectStrategy()
		return err
	}},
	{"key-schema", []string{"key.schema"}, func(c *config, r valueReader) (err error) {
		c.registry.KeySchema, err = r.schemaText()
		return err
	}},
	{"value-schema", []string{"value.schema"}, func(c *config, r valueReader) (err error) {
		c.registry.ValueSchema, err = r.schemaText()
		return err
	}},
	{"key-schema-full-name", []string{"key.schema.full.name"}, schemaFullName},
	{"value-schema-full-name", []string{"value.schema.full.name"}, schemaFullName},
}

// schemaFullName reads key-schema-full-name or value-schema-full-name,
// by the spelling's first word.
func schemaFullName(c *config, r valueReader) error {
	name, err := r.nonEmptyString()
	if strings.HasPrefix(r.key, "key") {
		c.registry.KeyFullName = name
	} else {
		c.registry.ValueFullName = name
	}
	return err
}

// configKeyByName maps every accepted spelling to its key.
var configKeyByName = func() map[string]*configKey {
	m := make(map[string]*configKey)
	for i := range configKeys {
		k := &configKeys[i]
		m[k.name] = k
		for _, a := range k.aliases {
			m[a] = k
		}
	}
	return m
}()

// configSpellings is every accepted spelling, ordered by the key's
// canonical name: of two spellings as close to an unknown key, the
// suggestion is the key first in that order.
var configSpellings = func() []string {
	var out []string
	for _, k := range slices.SortedFunc(slices.Values(configKeys), func(a, b configKey) int { return strings.Compare(a.name, b.name) }) {
		out = append(out, k.name)
		out = append(out, k.aliases...)
	}
	return out
}()

// Config is a config in two parts, as the BPL forms that take config keys
// as named arguments give it ((kafka-consumer servers "group-id" => g),
// (kafka-stream config "from" => t ... "linger" => 5)). Every method that
// takes a config takes a Config too.
type Config struct {
	// Base is a config as [Library.Create] takes it: a server string, a
	// list of server strings, or a named list of keys.
	Base any
	// Keys are more config keys, a named list; each replaces what Base
	// says of the same key.
	Keys *value.List
	// Brain4it reads the config as brain4it's Java Kafka library reads
	// its kafka-producer's and kafka-consumer's: with its consumer
	// defaults (no auto-commit, 10 records a poll, a 10 s session), and
	// a key it does not know is a warning in the library's log, not an
	// error, as brain4it ignores it. [Library.Create]'s errors and
	// warnings then name kafka-producer or kafka-consumer.
	Brain4it bool
}

// dialect is whose defaults the config is read with.
func (c Config) dialect() dialect {
	if c.Brain4it {
		return brain4itDialect
	}
	return kafkaDialect
}

// parseConfig reads a BPL-style config: a server string ("host:port", or
// several joined by commas), a list of server strings, a named list of
// keys, or a [Config].
func parseConfig(v any) (*config, error) {
	return parseConfigAs(kafkaDialect, v, nil, nil)
}

// parseConfigAs is parseConfig in dialect d, with extra holding keys given
// beside the config that override its own; under brain4it's dialect, an
// unknown key is passed to warn (with the closest known key) and ignored.
// A Config's own fields replace d and extra.
func parseConfigAs(d dialect, v any, extra *value.List, warn func(msg string)) (*config, error) {
	if c, ok := v.(Config); ok {
		return parseConfigAs(c.dialect(), c.Base, c.Keys, warn)
	}
	v, err := value.FromGo(v)
	if err != nil {
		return nil, Errorf(ErrInvalidConfig, "config: %v", err)
	}
	c := defaultConfigOf(d)
	c.given = map[string]bool{}
	seen := map[*configKey]string{} // key -> the spelling used, for errors
	apply := func(name string, val any) error {
		k := configKeyByName[strings.ToLower(name)]
		if k == nil && d == brain4itDialect {
			if warn != nil {
				warn(fmt.Sprintf("unknown config key %q ignored%s", name, suggestKey(name)))
			}
			return nil
		}
		if k == nil {
			return Errorf(ErrInvalidConfig, "unknown config key %q%s", name, suggestKey(name))
		}
		if prev, dup := seen[k]; dup && prev != name {
			return Errorf(ErrInvalidConfig, "config keys %q and %q are the same key; give one", prev, name)
		}
		seen[k] = name
		c.given[k.name] = true
		if bv, err := value.FromGo(val); err == nil { // a Go list may hold ints
			val = bv
		}
		return k.set(c, valueReader{key: name, v: val, secret: k.name == "sasl"})
	}
	switch v := v.(type) {
	case string:
		if err := apply("servers", v); err != nil {
			return nil, err
		}
	case *value.List:
		if !v.Named() {
			if err := apply("servers", v); err != nil {
				return nil, err
			}
			break
		}
		for name, val := range v.All() {
			if name == "" {
				return nil, Errorf(ErrInvalidConfig, "config: element %s has no name; write \"key\" => value", value.Format(val))
			}
			if err := apply(name, val); err != nil {
				return nil, err
			}
		}
	default:
		return nil, Errorf(ErrInvalidConfig, "config: want a server string, a list of servers or a named list, got %s", value.Describe(v))
	}
	for name, val := range extra.All() {
		if k := configKeyByName[strings.ToLower(name)]; k != nil {
			delete(seen, k) // a named argument overrides the config's key
		}
		if err := apply(name, val); err != nil {
			return nil, err
		}
	}
	return c, c.check()
}

// check validates what no single key can: required keys and combinations.
func (c *config) check() error {
	if len(c.servers) == 0 {
		return Errorf(ErrInvalidConfig, `config: "servers" is required (for example "localhost:9092")`)
	}
	if c.heartbeatInterval >= c.sessionTimeout {
		return Errorf(ErrInvalidConfig, `config "heartbeat-interval" (%d ms) must be less than "session-timeout" (%d ms)`,
			c.heartbeatInterval.Milliseconds(), c.sessionTimeout.Milliseconds())
	}
	if err := c.checkGroupProtocol(); err != nil {
		return err
	}
	if c.retryBackoff > c.retryBackoffMax {
		return Errorf(ErrInvalidConfig, `config "retry-backoff" (%d ms) must not exceed "retry-backoff-max" (%d ms)`,
			c.retryBackoff.Milliseconds(), c.retryBackoffMax.Milliseconds())
	}
	if c.acks != kgo.AllISRAcks() {
		if c.idempotenceSet && c.idempotence {
			return Errorf(ErrInvalidConfig, `config "idempotence" true needs "acks" "all" (acks 1 and 0 turn idempotence off)`)
		}
		c.idempotence = false // acks 1 and 0 turn idempotence off
	}
	if c.group == "" {
		c.group = "kafkabpl-" + newID(Consumer)[1:]
	}
	return c.bindSchemaSerdes()
}

// checkGroupProtocol checks the keys of the group protocol, and makes the
// broker's assignor the balancer under the consumer protocol. There the
// broker assigns partitions and keeps the session: like Java's client, a
// config that also sets what only the classic protocol reads is refused
// rather than silently not applied.
func (c *config) checkGroupProtocol() error {
	if !c.serverAssigns {
		if c.given["group-remote-assignor"] {
			return Errorf(ErrInvalidConfig, `config "group-remote-assignor" needs "group-protocol" "consumer"`)
		}
		return nil
	}
	for _, key := range []string{"assignment-strategy", "session-timeout", "heartbeat-interval"} {
		if c.given[key] {
			return Errorf(ErrInvalidConfig, `config %q is not read under "group-protocol" "consumer", where the broker assigns partitions and keeps the session; give "group-remote-assignor" ("uniform" or "range"), or the broker's group.consumer.* settings`, key)
		}
	}
	// kgo names the broker's assignor by its first balancer's kind.
	c.balancers = []kgo.GroupBalancer{kgo.CooperativeStickyBalancer()} // "uniform", the broker's default
	if c.remoteAssignor == "range" {
		c.balancers = []kgo.GroupBalancer{kgo.RangeBalancer()}
	}
	return nil
}

// bindSchemaSerdes binds the schema serdes the config names (Avro...) to
// its schema registry, which it needs.
func (c *config) bindSchemaSerdes() error {
	slots := []struct {
		s    **serde.Serde
		key  string
		role serde.Role
	}{
		{&c.keySer, "key-serializer", serde.KeySerializer},
		{&c.valSer, "value-serializer", serde.ValueSerializer},
		{&c.keyDeser, "key-deserializer", serde.KeyDeserializer},
		{&c.valDeser, "value-deserializer", serde.ValueDeserializer},
	}
	for _, sl := range slots {
		if !(*sl.s).NeedsRegistry() {
			continue
		}
		if c.registry.URL == "" {
			return Errorf(ErrInvalidConfig, "config %q %q needs \"schema-registry-url\"", sl.key, (*sl.s).Name())
		}
		if c.reg == nil {
			c.registry.Timeout = min(c.requestTimeout, 10*time.Second)
			c.registry.Dial = testdial.Dial // nil but in tests
			reg, err := serde.NewRegistry(c.registry)
			if err != nil {
				return err
			}
			c.reg = reg
		}
		bound, err := (*sl.s).Bind(c.reg, sl.role)
		if err != nil {
			return err
		}
		*sl.s = bound
	}
	return nil
}

// suggestKey returns ` (did you mean "x"?)` for the known key closest to
// name, or a pointer to the right key for Java's TLS and SASL properties,
// or "" when none is close.
func suggestKey(name string) string {
	lower := strings.ToLower(name)
	switch {
	case strings.HasPrefix(lower, "ssl.") || lower == "security.protocol":
		return ` (TLS is configured with the "tls" key)`
	case strings.HasPrefix(lower, "schema.registry.ssl."):
		return ` (the registry's TLS is configured with the "schema-registry-tls" key)`
	case strings.HasPrefix(lower, "sasl."):
		return ` (SASL is configured with the "sasl" key)`
	}
	if spelling, ok := words.Closest(lower, configSpellings); ok {
		return fmt.Sprintf(" (did you mean %q?)", configKeyByName[spelling].name)
	}
	// A shortened key, such as "offset-reset" for "auto-offset-reset".
	if len(lower) >= 4 {
		for _, spelling := range configSpellings {
			if strings.Contains(spelling, lower) {
				return fmt.Sprintf(" (did you mean %q?)", configKeyByName[spelling].name)
			}
		}
	}
	return ""
}

// kgoOpts turns the config into the options of a kgo client for kind
// whose handle is id; group (nil for a handle in no group) keeps the
// GroupHooks among the Library's hooks.
func (c *config) kgoOpts(kind Kind, id string, hooks *reachability, group *groupStats) []kgo.Opt {
	hooks.dialer = newBrokerDialer(c)
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.servers...),
		kgo.ClientID(c.clientID),
		kgo.WithHooks(hooks),
		kgo.Dialer(hooks.dialer.DialContext), // TLS, and the dial timeout: see brokerDialer
		kgo.RetryTimeout(c.requestTimeout),
		// Java's clients' backoff rather than kgo's (250 ms doubling to
		// 5 s): a request to a killed broker fails until its partitions
		// move, and a long doubled wait delays the retry that succeeds.
		// retry-backoff is 500 ms by default; during an outage, see
		// backoff and brokerDialer.
		kgo.RetryBackoffFn(backoff(c.retryBackoff, c.retryBackoffMax, hooks.dialer.refusing)),
		// Retries are bounded by their time (RetryTimeout above), as
		// Java's are, not by a count: a count can run out before a
		// coordinator's failover ends, and a group session with it.
		kgo.RequestRetries(math.MaxInt32),
		// Metadata is asked again 100 ms after an answer that leaves a
		// leader unknown, as Java's clients do (kgo waits 5 s): a moved
		// partition, or a topic being created on first use, is seen
		// within 100 ms. The cost, only while a leader is unknown: ten
		// metadata requests a second per client.
		kgo.MetadataMinAge(metadataRefreshEvery),
		// As long as Java's producer lets a broker hold an acks=all
		// produce (request.timeout.ms), not kgo's 10 s: a leader whose
		// follower was killed holds the produce until the ISR shrinks.
		// At least a second: kgo refuses less than 100 ms, and a broker
		// given less to gather acks times out under any load.
		kgo.ProduceRequestTimeout(max(c.requestTimeout, time.Second)),
	}
	if c.logLevel != kgo.LogLevelNone && c.clientLog != nil {
		opts = append(opts, kgo.WithLogger(&clientLogger{level: c.logLevel, id: id, write: c.clientLog}))
	}
	if c.sasl != nil {
		opts = append(opts, kgo.SASL(c.sasl))
	}
	if c.hooks != nil {
		if hs := group.kgoHooks(c.hooks(kind, id)); len(hs) > 0 {
			opts = append(opts, kgo.WithHooks(hs...))
		}
	}
	// An admin client never asks for topics to be created: its metadata
	// requests (kadm's too) must not create a topic they describe.
	if c.allowAutoCreate && kind != Admin {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	switch kind {
	case Producer:
		opts = append(opts, c.producerOpts()...)
		opts = append(opts, producerOnlyOpts()...)
	case Consumer:
		opts = append(opts, c.consumerOpts()...)
	case Stream:
		opts = append(opts, c.producerOpts()...)
		opts = append(opts, c.consumerOpts()...)
	}
	return opts
}

// backoff is the wait before retry number tries (1 is the first): first,
// doubled each time up to most, then spread by ±20% so that clients that
// failed together do not retry together, as Java's clients do.
//
// While outage reports true (a broker that was reached refuses
// connections: see brokerDialer), a request's first retry waits a tenth of
// first and every later one first, without doubling: kgo sends a retried
// metadata request to the next broker in turn, the dead one included, and
// the doubled waits after each refusal would hold back the metadata that
// shows the dead broker's partitions moved. The cost: one more refused
// dial per request.
func backoff(first, most time.Duration, outage func() bool) func(tries int) time.Duration {
	return func(tries int) time.Duration {
		d := first
		if outage() {
			if tries <= 1 {
				d /= 10
			}
			tries = 1
		}
		for i := 1; i < tries && d < most; i++ {
			d *= 2
		}
		d = min(d, most)
		return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	}
}

func (c *config) producerOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.ProducerLinger(c.linger), // a producer handle's is 0: see producerOnlyOpts
		kgo.ProducerBatchMaxBytes(int32(c.maxMessageBytes)),
		kgo.RecordPartitioner(c.partitioner),
		kgo.RequiredAcks(c.acks),
		kgo.ProducerBatchCompression(c.compression),
	}
	if !c.idempotence {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	return opts
}

func (c *config) consumerOpts() []kgo.Opt {
	var start, reset kgo.Offset
	switch c.autoOffsetReset {
	case resetEarliest:
		start, reset = kgo.NewOffset().AtStart(), kgo.NewOffset().AtStart()
	case resetLatest:
		start, reset = kgo.NewOffset().AtEnd(), kgo.NewOffset().AtEnd()
	case resetNone: // committed offsets only; no reset
		start, reset = kgo.NewOffset().AtCommitted(), kgo.NoResetOffset()
	}
	opts := []kgo.Opt{
		kgo.ConsumerGroup(c.group),
		kgo.ConsumeStartOffset(start),
		kgo.ConsumeResetOffset(reset),
		kgo.Balancers(c.balancers...),
		kgo.SessionTimeout(c.sessionTimeout),
		kgo.HeartbeatInterval(c.heartbeatInterval),
		kgo.RebalanceTimeout(c.maxPollInterval),
		kgo.FetchMaxPartitionBytes(int32(max(c.maxMessageBytes, 1<<20))),
		// A partition that gets a new position (a seek, a reset, an
		// assignment) joins the next fetch to its broker, so it waits for
		// the one in flight; kgo lets a fetch wait 5 s for data, Java's
		// consumer 500 ms (fetch.max.wait.ms). With 5 s, a message sent
		// after a seek came seconds late.
		kgo.FetchMaxWait(500 * time.Millisecond),
	}
	if c.readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	if c.serverAssigns {
		// KIP-848 where the broker has it (Kafka 4.0 and later, kfake);
		// against an older broker, kgo falls back to the classic protocol.
		opts = append(opts, kgo.ServerSideBalancer())
	}
	return opts
}
