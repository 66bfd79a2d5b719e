// Package embedded starts an in-process Kafka-compatible cluster (franz-go's
// kfake) on 127.0.0.1, for the kafkabpl command and for tests: no broker to
// install, no Docker.
//
// By default the cluster behaves like a freshly installed stock Kafka broker:
// one broker on 127.0.0.1:9092, topics created on first use
// (auto.create.topics.enable=true) with one partition (num.partitions=1).
// Options change that; in tests use Port(0) so that parallel tests and a
// Kafka already running on the machine never collide:
//
//	c, err := embedded.Start(embedded.Port(0), embedded.Brokers(3))
//	if err != nil { ... }
//	defer c.Close()
//	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
//
// What kfake is and is not: it speaks the Kafka protocol well enough for
// kgo, librdkafka, the Java client, kafka-python and Kafka's own
// command-line tools (produce, fetch, groups, transactions, admin), but it has no replication (acks are not meaningful),
// no initial rebalance delay, and a topic's replicas are bookkeeping only.
//
// Persistence: with DataDir the cluster writes topics, records and committed
// group offsets under a directory and reloads them on the next Start. Close
// writes a complete snapshot. Records, group commits and topics (created
// explicitly or on first use) are also written as they happen, so they
// survive the process being killed (kill -9). A transaction that a kill
// left open is aborted by the next Start, which writes the ABORT marker
// kfake's own recovery leaves out; without it, read_committed readers would
// skip the producer's later, committed transactions too. Without
// SyncWrites, written data sits in the operating system's cache: it survives
// the process dying but not the machine losing power. The directory's format
// is kfake's.
//
// Killed group members: the cluster watches its client connections so that
// a classic group's member that dies, even while its JoinGroup is held,
// leaves the group within its session timeout, and a member waiting in a
// rebalance is kept alive, as Kafka does (kfake alone kept such members
// until the rebalance timeout; see groupconn.go). A group whose leader dies
// in a rebalance settles within the leader's session timeout.
//
// The kfake this module builds with is a fork kept in the repository
// (third_party/kfake, pinned by a replace directive in go.mod), with fixes
// its README lists for upstream: a classic group's leader, Kafka's CLI
// tools' DescribeTopicPartitions, share groups' lock duration, topic
// config validation. A program that imports this package from another
// module gets upstream's kfake unless its go.mod has the same replace.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Sentinel errors: every error Start returns wraps one of them, or the
// error of kfake or of the operating system (test those with errors.Is too).
var (
	// ErrPortInUse: a broker's port is taken by another process (or
	// another cluster). Use Port(0) (the command's --port 0) for free
	// ports.
	ErrPortInUse = errors.New("port in use")
	// ErrDataDirInUse: another running cluster (in this process or
	// another) has the data directory; two clusters writing one
	// directory would corrupt it.
	ErrDataDirInUse = errors.New("data dir in use")
	// ErrInvalidOption: an option's value is out of range, such as
	// Brokers(0) or a topic name Kafka does not accept.
	ErrInvalidOption = errors.New("invalid option")
)

// DefaultPort is the first broker's port when Port is not given: Kafka's
// well-known port, so that scripts naming localhost:9092 work unchanged.
const DefaultPort = 9092

// Option configures Start.
type Option interface {
	apply(*config)
}

type option func(*config)

func (o option) apply(c *config) { o(c) }

type config struct {
	brokers    int
	port       int
	partitions int
	noAuto     bool
	dataDir    string
	syncWrites bool
	topics     []string
	kfakeOpts  []kfake.Opt
	listen     func(network, addr string) (net.Listener, error) // nil: listen

	registry     bool
	registryPort int
}

// Brokers sets the number of brokers, default 1. Broker i listens on the
// first port + i (see Port). n must be at least 1.
func Brokers(n int) Option {
	return option(func(c *config) { c.brokers = n })
}

// Port sets the first broker's port, default 9092 ([DefaultPort]); broker i
// listens on port+i. Port(0) gives every broker a free port chosen by the
// system: use it in tests and whenever 9092 may be taken, then ask Addrs or
// Servers where the cluster listens.
func Port(p int) Option {
	return option(func(c *config) { c.port = p })
}

// Partitions sets the number of partitions of auto-created topics and of
// the topics named with Topics, default 1 (like a stock broker's
// num.partitions). It is also what a CreateTopics request that asks for the
// broker's default (-1) gets.
func Partitions(n int) Option {
	return option(func(c *config) { c.partitions = n })
}

// NoAutoCreate turns automatic topic creation off: producing to, or
// fetching metadata for, a topic that does not exist fails with
// UNKNOWN_TOPIC_OR_PARTITION until the topic is created explicitly. By
// default topics are created on first use when the client allows it (kgo
// needs kgo.AllowAutoTopicCreation; Java clients allow it by default), like
// a stock broker's auto.create.topics.enable=true.
func NoAutoCreate() Option {
	return option(func(c *config) { c.noAuto = true })
}

// DataDir makes the cluster persistent: state is written under dir (created
// if needed) and reloaded by the next Start with the same dir. Default: none,
// everything is in memory and lost on Close. Only one running cluster may
// use a directory at a time (ErrDataDirInUse otherwise; checked where flock
// exists: Linux, macOS, the BSDs). The cluster id and
// topics come from the directory; Brokers, Port and Partitions come from
// the options of each Start. See the package doc for what survives a crash.
func DataDir(dir string) Option {
	return option(func(c *config) { c.dataDir = dir })
}

// SyncWrites makes the cluster fsync every record batch and group commit it
// persists, so that they survive the machine crashing, not just the
// process; it is much slower. Default off, like Kafka's own
// log.flush.interval.messages. Only meaningful with DataDir.
func SyncWrites() Option {
	return option(func(c *config) { c.syncWrites = true })
}

// Topics creates the named topics at Start, each with the default number of
// partitions (see Partitions), unless they already exist (as with a DataDir
// that holds them). Names must be valid Kafka topic names: 1 to 249 of
// [a-zA-Z0-9._-], not "." or "..". The option may be given several times.
func Topics(names ...string) Option {
	return option(func(c *config) { c.topics = append(c.topics, names...) })
}

// KfakeOptions passes options straight to kfake.NewCluster, after the ones
// this package derives, so they win: SASL users, TLS, ACLs, a logger
// (kfake.WithLogger), broker configs, a maximum protocol version. Hazard:
// kfake.Ports, kfake.NumBrokers, kfake.ListenFn, kfake.DataDir and
// kfake.SeedTopics bypass this package's checks (the port sentinel error and
// the data dir lock); use this package's options for those.
func KfakeOptions(opts ...kfake.Opt) Option {
	return option(func(c *config) { c.kfakeOpts = append(c.kfakeOpts, opts...) })
}

// Cluster is a running in-process cluster. Its methods are safe for
// concurrent use.
type Cluster struct {
	kc        *kfake.Cluster
	watch     *groupWatch // the listeners' connections
	watching  bool        // watch.run runs
	addrs     []string
	lock      *dirLock
	registry  *registryServer // nil without SchemaRegistry
	closeOnce sync.Once
}

// Start starts a cluster and returns once every broker accepts connections.
// With no options: one broker on 127.0.0.1:9092, topics auto-created with
// one partition, nothing persisted. Errors wrap ErrPortInUse,
// ErrDataDirInUse or ErrInvalidOption, or the failure to read a DataDir;
// Start never leaves a listener or goroutine behind when it fails. Close the
// cluster when done.
func Start(opts ...Option) (*Cluster, error) {
	cfg := config{brokers: 1, port: DefaultPort, partitions: 1}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}

	c := &Cluster{watch: newGroupWatch()}
	cfg.listen = c.watch.listen
	if cfg.dataDir != "" {
		if err := os.MkdirAll(cfg.dataDir, 0o755); err != nil {
			return nil, fmt.Errorf("embedded: data dir: %w", err)
		}
		lock, err := lockDir(cfg.dataDir)
		if err != nil {
			return nil, err
		}
		c.lock = lock
		if err := endCrashAborts(context.Background(), &cfg); err != nil {
			c.lock.release()
			return nil, err
		}
	}

	kc, err := kfake.NewCluster(cfg.kfakeOptions()...)
	if err != nil {
		c.lock.release()
		return nil, fmt.Errorf("embedded: %w", err)
	}
	c.kc = kc
	if !cfg.noAuto {
		kc.ControlKey(int16(kmsg.Metadata), askOldMetadataToCreate)
		if cfg.dataDir != "" {
			kc.ControlKey(int16(kmsg.Metadata), createPersisted(kc, int32(cfg.partitions)))
		}
	}

	// kfake seeds topics only into an empty data dir; creating them here
	// also covers a reloaded dir, and persists them at once.
	for _, t := range cfg.topics {
		err := kc.CreateTopic(t, int32(cfg.partitions), nil)
		switch {
		case err == nil || errors.Is(err, kerr.TopicAlreadyExists):
		case errors.Is(err, kerr.InvalidTopicException):
			// Such as "a.b" next to "a_b", which Kafka's metrics confuse.
			c.Close()
			return nil, fmt.Errorf("embedded: %w: topic %q: %w", ErrInvalidOption, t, err)
		default:
			c.Close()
			return nil, fmt.Errorf("embedded: create topic %q: %w", t, err)
		}
	}
	// Cached: kfake's ListenAddrs blocks forever once the cluster is closed.
	c.addrs = kc.ListenAddrs()
	watcher, err := kgo.NewClient(kgo.SeedBrokers(c.addrs...)) // dials only when a held member needs it
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("embedded: %w", err)
	}
	go c.watch.run(kc, watcher)
	c.watching = true
	if cfg.registry {
		r, err := startRegistry(cfg.registryPort, cfg.dataDir)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.registry = r
	}
	return c, nil
}

// askOldMetadataToCreate makes a Metadata request older than version 4 ask
// for topics to be created, as Kafka reads it: the field is new in v4 and
// defaults to true, while kfake reads the missing field as false. Without
// this, clients that speak v1, such as kafka-python 2.0, never see a topic
// created on first use. It leaves the request to kfake, which still
// creates nothing under NoAutoCreate.
func askOldMetadataToCreate(req kmsg.Request) (kmsg.Response, error, bool) {
	if m, ok := req.(*kmsg.MetadataRequest); ok && m.Version < 4 {
		m.AllowAutoTopicCreation = true
	}
	return nil, nil, false
}

// createPersisted returns a control function that creates the topics a
// Metadata request asks to be created on first use, the way an explicit
// CreateTopics does, before kfake answers the request. kfake writes its
// topic list only on explicit creation and on Close, so a topic it
// auto-created itself was lost, records and all, when the process was
// killed; created so, it is written at once. Existing topics are left as
// they are (their creation fails with TopicAlreadyExists), and so are
// names Kafka refuses, which kfake then answers for as usual.
func createPersisted(kc *kfake.Cluster, partitions int32) func(kmsg.Request) (kmsg.Response, error, bool) {
	return func(req kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		m := req.(*kmsg.MetadataRequest)
		if !m.AllowAutoTopicCreation || len(m.Topics) == 0 {
			return nil, nil, false
		}
		var topics []string
		for _, t := range m.Topics {
			if t.Topic != nil && topicname.Check(*t.Topic) == nil {
				topics = append(topics, *t.Topic)
			}
		}
		if len(topics) == 0 {
			return nil, nil, false
		}
		// Creating goes through kfake's own loop, which is running this
		// function: let it run meanwhile.
		kc.SleepControl(func() {
			for _, t := range topics {
				kc.CreateTopic(t, partitions, nil) // TopicAlreadyExists for most
			}
		})
		return nil, nil, false
	}
}

func (cfg *config) validate() error {
	if cfg.brokers < 1 {
		return fmt.Errorf("embedded: %w: %d brokers, need at least 1", ErrInvalidOption, cfg.brokers)
	}
	if cfg.port < 0 || cfg.port > 65535 {
		return fmt.Errorf("embedded: %w: port %d out of range 0-65535", ErrInvalidOption, cfg.port)
	}
	if cfg.port != 0 && cfg.port+cfg.brokers-1 > 65535 {
		return fmt.Errorf("embedded: %w: %d brokers from port %d go past 65535", ErrInvalidOption, cfg.brokers, cfg.port)
	}
	if cfg.partitions < 1 {
		return fmt.Errorf("embedded: %w: %d partitions, need at least 1", ErrInvalidOption, cfg.partitions)
	}
	for _, t := range cfg.topics {
		if err := topicname.Check(t); err != nil {
			return fmt.Errorf("embedded: %w: %w", ErrInvalidOption, err)
		}
	}
	return nil
}

func (cfg *config) kfakeOptions() []kfake.Opt {
	opts := []kfake.Opt{
		kfake.NumBrokers(cfg.brokers),
		kfake.DefaultNumPartitions(cfg.partitions),
	}
	if cfg.listen != nil {
		opts = append(opts, kfake.ListenFn(cfg.listen))
	} else {
		opts = append(opts, kfake.ListenFn(listen))
	}
	if cfg.port != 0 {
		ports := make([]int, cfg.brokers)
		for i := range ports {
			ports[i] = cfg.port + i
		}
		opts = append(opts, kfake.Ports(ports...))
	}
	if !cfg.noAuto {
		opts = append(opts, kfake.AllowAutoTopicCreation())
	}
	if cfg.dataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.dataDir))
		if cfg.syncWrites {
			opts = append(opts, kfake.SyncWrites())
		}
	}
	return append(opts, cfg.kfakeOpts...)
}

// listen is kfake's net.Listen, with a busy port turned into ErrPortInUse.
func listen(network, addr string) (net.Listener, error) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		// 10048 is Windows' WSAEADDRINUSE; no Unix errno has that value.
		if errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.Errno(10048)) {
			return nil, fmt.Errorf("%w: %w; use port 0 (--port 0) for free ports", ErrPortInUse, err)
		}
		return nil, err
	}
	return ln, nil
}

// Addrs returns where the brokers listen, "127.0.0.1:port" per broker in
// node id order, as they were at Start (brokers added or removed later
// through Kfake are not reflected). The slice is a copy.
func (c *Cluster) Addrs() []string {
	return append([]string(nil), c.addrs...)
}

// Servers returns Addrs joined by commas, the form of a kafkabpl config's
// "servers" and of Kafka's bootstrap.servers.
func (c *Cluster) Servers() string {
	return strings.Join(c.addrs, ",")
}

// Kfake returns the underlying kfake cluster, for tests that move partition
// leaders, inject faults (ControlKey, Fault) or add and remove brokers.
// Hazard: most kfake methods block forever once the cluster is closed; do
// not call them after Close, and do not call Close on it directly (use
// Cluster.Close, which also releases the data dir).
func (c *Cluster) Kfake() *kfake.Cluster {
	return c.kc
}

// Close stops the cluster: it stops listening, drops client connections,
// and with DataDir writes its state and releases the directory. It waits
// for all of that; calling it again does nothing.
func (c *Cluster) Close() {
	c.closeOnce.Do(func() {
		c.registry.close()
		c.watch.close(c.watching)
		c.kc.Close()
		c.lock.release()
	})
}
