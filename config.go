package kafkabpl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
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
	pollRecords        bool // poll-format "records" rather than "values"
	keyDeser, valDeser *serde

	// producer
	keySer, valSer  *serde
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

	// every kind
	given          map[string]bool // the keys the user gave, by canonical name
	requestTimeout time.Duration
	tls            *tls.Config
	sasl           sasl.Mechanism
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
		keyDeser:           serdeString,
		valDeser:           serdeString,
		keySer:             serdeString,
		valSer:             serdeString,
		acks:               kgo.AllISRAcks(),
		idempotence:        true,
		compression:        kgo.NoCompression(),
		partitioner:        murmur2Partitioner(),
		maxMessageBytes:    1 << 20,
		allowAutoCreate:    true,
		sendTimeout:        30 * time.Second,
		requestTimeout:     30 * time.Second,
		transactionTimeout: 30 * time.Second,
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
	{"request-timeout", []string{"request.timeout.ms"}, func(c *config, r valueReader) (err error) {
		c.requestTimeout, err = r.millis(1)
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

// parseConfig reads a BPL-style config: a server string ("host:port", or
// several joined by commas), a list of server strings, or a named list of
// keys. extra holds named arguments given beside the config (as
// kafka-consumer takes them); they override the config's own keys.
func parseConfig(v any, extra *List) (*config, error) {
	return parseConfigAs(kafkaDialect, v, extra, nil)
}

// parseConfigAs is parseConfig in dialect d; under brain4it's, an unknown
// key is passed to warn (with the closest known key) and ignored.
func parseConfigAs(d dialect, v any, extra *List, warn func(msg string)) (*config, error) {
	v, err := toValue(v)
	if err != nil {
		return nil, errorf(ErrInvalidConfig, "config: %v", err)
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
			return errorf(ErrInvalidConfig, "unknown config key %q%s", name, suggestKey(name))
		}
		if prev, dup := seen[k]; dup && prev != name {
			return errorf(ErrInvalidConfig, "config keys %q and %q are the same key; give one", prev, name)
		}
		seen[k] = name
		c.given[k.name] = true
		if bv, err := toValue(val); err == nil { // a Go list may hold ints
			val = bv
		}
		return k.set(c, valueReader{key: name, v: val, secret: k.name == "sasl"})
	}
	switch v := v.(type) {
	case string:
		if err := apply("servers", v); err != nil {
			return nil, err
		}
	case *List:
		if !v.Named() {
			if err := apply("servers", v); err != nil {
				return nil, err
			}
			break
		}
		for name, val := range v.All() {
			if name == "" {
				return nil, errorf(ErrInvalidConfig, "config: element %s has no name; write \"key\" => value", Format(val))
			}
			if err := apply(name, val); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errorf(ErrInvalidConfig, "config: want a server string, a list of servers or a named list, got %s", describe(v))
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
		return errorf(ErrInvalidConfig, `config: "servers" is required (for example "localhost:9092")`)
	}
	if c.heartbeatInterval >= c.sessionTimeout {
		return errorf(ErrInvalidConfig, `config "heartbeat-interval" (%d ms) must be less than "session-timeout" (%d ms)`,
			c.heartbeatInterval.Milliseconds(), c.sessionTimeout.Milliseconds())
	}
	if c.acks != kgo.AllISRAcks() {
		if c.idempotenceSet && c.idempotence {
			return errorf(ErrInvalidConfig, `config "idempotence" true needs "acks" "all" (acks 1 and 0 turn idempotence off)`)
		}
		c.idempotence = false // acks 1 and 0 turn idempotence off
	}
	if c.group == "" {
		c.group = "kafkabpl-" + newID(Consumer)[1:]
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
	case strings.HasPrefix(lower, "sasl."):
		return ` (SASL is configured with the "sasl" key)`
	}
	if spelling, ok := closest(lower, configSpellings); ok {
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

// valueReader reads one config value, and words its errors with the key
// as the user spelled it and the value (never a secret one).
type valueReader struct {
	key    string
	v      any
	secret bool
}

func (r valueReader) errorf(want string) error {
	got := describe(r.v)
	if r.secret {
		got = "a " + typeName(r.v)
	}
	return errorf(ErrInvalidConfig, "config %q: want %s, got %s", r.key, want, got)
}

func (r valueReader) string() (string, error) {
	s, ok := r.v.(string)
	if !ok {
		return "", r.errorf("a string")
	}
	return s, nil
}

func (r valueReader) nonEmptyString() (string, error) {
	s, ok := r.v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", r.errorf("a non-empty string")
	}
	return s, nil
}

// choice is one accepted value of an enumerated key: its spellings (the
// first is the one error messages show) and what it parses to.
type choice[T any] struct {
	names []string
	v     T
}

// oneOf reads a string (or a number, as Java properties may hold "1") that
// must be one of the choices' spellings, case-insensitively, and returns
// what it parses to.
func oneOf[T any](r valueReader, choices ...choice[T]) (T, error) {
	s, ok := r.v.(string)
	if n, isInt := r.v.(int64); isInt {
		s, ok = strconv.FormatInt(n, 10), true
	}
	names := make([]string, 0, len(choices))
	for _, c := range choices {
		if ok && slices.Contains(c.names, strings.ToLower(s)) {
			return c.v, nil
		}
		names = append(names, strconv.Quote(c.names[0]))
	}
	slices.Sort(names)
	var zero T
	return zero, r.errorf("one of " + strings.Join(names, ", "))
}

// bool reads true or false, or their strings as Java properties hold them.
func (r valueReader) bool() (bool, error) {
	switch v := r.v.(type) {
	case bool:
		return v, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, r.errorf("true or false")
}

// int reads an integer in [lo, hi]: a number, or a decimal string as Java
// properties hold one.
func (r valueReader) int(lo, hi int64) (int64, error) {
	var n int64
	switch v := r.v.(type) {
	case int64:
		n = v
	case float64:
		var ok bool
		if n, ok = integral(v); !ok {
			return 0, r.errorf(fmt.Sprintf("an integer from %d to %d", lo, hi))
		}
	case string:
		var err error
		if n, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
			return 0, r.errorf(fmt.Sprintf("an integer from %d to %d", lo, hi))
		}
	default:
		return 0, r.errorf(fmt.Sprintf("an integer from %d to %d", lo, hi))
	}
	if n < lo || n > hi {
		return 0, r.errorf(fmt.Sprintf("an integer from %d to %d", lo, hi))
	}
	return n, nil
}

// millis reads a number of milliseconds, at least lo, at most a day.
func (r valueReader) millis(lo int64) (time.Duration, error) {
	n, err := r.int(lo, 24*60*60*1000)
	return time.Duration(n) * time.Millisecond, err
}

// strings reads a string, a comma-joined string, or a list of strings.
func (r valueReader) strings(what string) ([]string, error) {
	var parts []string
	switch v := r.v.(type) {
	case string:
		parts = strings.Split(v, ",")
	case *List:
		for _, e := range v.Values() {
			s, ok := e.(string)
			if !ok {
				return nil, r.errorf(what)
			}
			parts = append(parts, strings.Split(s, ",")...)
		}
	default:
		return nil, r.errorf(what)
	}
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, r.errorf(what)
	}
	return out, nil
}

// servers reads "host:port" strings; a server without a port gets 9092.
// Nothing is dialed here.
func (r valueReader) servers() ([]string, error) {
	const want = `"host:port", several joined by commas, or a list of them`
	ss, err := r.strings(want)
	if err != nil {
		return nil, err
	}
	for i, s := range ss {
		host, port, err := net.SplitHostPort(s)
		if err != nil && strings.Contains(err.Error(), "missing port") {
			host, port, err = s, "9092", nil
			ss[i] = net.JoinHostPort(s, port)
		}
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return nil, errorf(ErrInvalidConfig, "config %q: server %q is not host:port with a port from 1 to 65535", r.key, s)
		}
	}
	return ss, nil
}

func (r valueReader) topics() ([]string, error) {
	ts, err := r.strings("a topic name, several joined by commas, or a list of them")
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if err := topicname.Check(t); err != nil {
			return nil, errorf(ErrInvalidConfig, "config %q: %v", r.key, err)
		}
	}
	return ts, nil
}

// balancers reads assignment strategies by kgo's names or Java's class
// names (org.apache.kafka.clients.consumer.RangeAssignor and the like).
func (r valueReader) balancers() ([]kgo.GroupBalancer, error) {
	const want = `"range", "roundrobin", "sticky" or "cooperative-sticky", or a list of them`
	names, err := r.strings(want)
	if err != nil {
		return nil, err
	}
	out := make([]kgo.GroupBalancer, 0, len(names))
	cooperative := 0
	for _, n := range names {
		n = strings.ToLower(n[strings.LastIndex(n, ".")+1:])
		switch strings.TrimSuffix(n, "assignor") {
		case "range":
			out = append(out, kgo.RangeBalancer())
		case "roundrobin", "round-robin":
			out = append(out, kgo.RoundRobinBalancer())
		case "sticky":
			out = append(out, kgo.StickyBalancer())
		case "cooperative-sticky", "cooperativesticky":
			out = append(out, kgo.CooperativeStickyBalancer())
			cooperative++
		default:
			return nil, r.errorf(want)
		}
	}
	if cooperative > 0 && cooperative < len(out) {
		return nil, errorf(ErrInvalidConfig, "config %q: cooperative-sticky cannot be mixed with eager strategies in one consumer", r.key)
	}
	return out, nil
}

func (r valueReader) serde() (*serde, error) {
	s, ok := r.v.(string)
	if ok {
		if sd := lookupSerde(s); sd != nil {
			return sd, nil
		}
	}
	return nil, r.errorf("one of String, ByteArray, Short, Integer, Long, Float, Double, JSON, BPL (or a Java class name such as org.apache.kafka.common.serialization.StringSerializer)")
}

// tls reads true/false, or a named list of "ca-file" "cert-file"
// "key-file" "server-name" "insecure-skip-verify". The files are read now,
// so a missing one fails kafka-create rather than the first send.
func (r valueReader) tls() (*tls.Config, error) {
	const want = `true, false, or ("ca-file" => f "cert-file" => f "key-file" => f "server-name" => s "insecure-skip-verify" => b)`
	switch v := r.v.(type) {
	case bool:
		if !v {
			return nil, nil
		}
		return &tls.Config{MinVersion: tls.VersionTLS12}, nil
	case *List:
		if v.Len() > 0 && !v.Named() {
			return nil, r.errorf(want)
		}
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		var certFile, keyFile string
		for name, val := range v.All() {
			sub := valueReader{key: r.key + " " + name, v: val}
			var err error
			switch name {
			case "ca-file":
				var f string
				if f, err = sub.nonEmptyString(); err == nil {
					tc.RootCAs, err = loadCA(sub.key, f)
				}
			case "cert-file":
				certFile, err = sub.nonEmptyString()
			case "key-file":
				keyFile, err = sub.nonEmptyString()
			case "server-name":
				tc.ServerName, err = sub.nonEmptyString()
			case "insecure-skip-verify":
				tc.InsecureSkipVerify, err = sub.bool()
			default:
				err = errorf(ErrInvalidConfig, "config %q: unknown key %q; want %s", r.key, name, want)
			}
			if err != nil {
				return nil, err
			}
		}
		if (certFile == "") != (keyFile == "") {
			return nil, errorf(ErrInvalidConfig, `config %q: "cert-file" and "key-file" go together`, r.key)
		}
		if certFile != "" {
			cert, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				return nil, wrapf(ErrInvalidConfig, err, "config %q: cannot load the client certificate", r.key)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		return tc, nil
	}
	return nil, r.errorf(want)
}

func loadCA(key, file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, wrapf(ErrInvalidConfig, err, "config %q", key)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errorf(ErrInvalidConfig, "config %q: %s holds no PEM certificate", key, file)
	}
	return pool, nil
}

// sasl reads ("mechanism" => m "username" => u "password" => p). The
// password never appears in an error.
func (r valueReader) sasl() (sasl.Mechanism, error) {
	const want = `("mechanism" => "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512" "username" => u "password" => p)`
	l, ok := r.v.(*List)
	if !ok || !l.Named() {
		return nil, r.errorf(want)
	}
	var mech, user, pass string
	for name, val := range l.All() {
		sub := valueReader{key: r.key + " " + name, v: val, secret: name == "password"}
		var err error
		switch name {
		case "mechanism":
			mech, err = oneOf(sub,
				choice[string]{[]string{"plain"}, "PLAIN"},
				choice[string]{[]string{"scram-sha-256"}, "SCRAM-SHA-256"},
				choice[string]{[]string{"scram-sha-512"}, "SCRAM-SHA-512"})
		case "username":
			user, err = sub.nonEmptyString()
		case "password":
			pass, err = sub.string()
		default:
			err = errorf(ErrInvalidConfig, "config %q: unknown key %q; want %s", r.key, name, want)
		}
		if err != nil {
			return nil, err
		}
	}
	if mech == "" || user == "" {
		return nil, errorf(ErrInvalidConfig, `config %q: "mechanism" and "username" are required`, r.key)
	}
	switch mech {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	default:
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
}

// testDialer, when set (by this package's tests only), dials every
// client's connections: the tests refuse any address outside 127.0.0.0/8
// there, so that no config a test or a fuzzer makes up reaches another
// host.
var testDialer func(ctx context.Context, network, addr string) (net.Conn, error)

// kgoOpts turns the config into the options of a kgo client for kind.
func (c *config) kgoOpts(kind Kind, hooks *reachability) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.servers...),
		kgo.ClientID(c.clientID),
		kgo.WithHooks(hooks),
		kgo.DialTimeout(min(10*time.Second, c.requestTimeout)),
		kgo.RetryTimeout(c.requestTimeout),
		// kgo waits 5 s between metadata requests by default, so a
		// first send to a topic the broker is still creating (on first
		// use) paused 5 s. Java's clients ask again after 100 ms to 1 s.
		kgo.MetadataMinAge(500 * time.Millisecond),
	}
	if c.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(c.tls.Clone()))
	} else if testDialer != nil {
		opts = append(opts, kgo.Dialer(testDialer))
	}
	if c.sasl != nil {
		opts = append(opts, kgo.SASL(c.sasl))
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
	return opts
}
