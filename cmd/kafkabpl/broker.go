package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kfake"
)

var brokerUsage = usage{
	synopsis: "broker [--port 9092] [--brokers 3] [--partitions 1] [--no-auto-create] [--data-dir DIR] [--topic NAME]... [--registry-port 8081]",
	about: `Runs an in-process Kafka-compatible cluster (franz-go's kfake) on 127.0.0.1
until SIGINT or SIGTERM, for any Kafka client (kcat, librdkafka, the Java
client, kafka-python, kafkabpl) and Kafka's own tools (kafka-topics,
kafka-consumer-groups, ...). It prints "listening on HOST:PORT,..." on
stdout once it accepts connections. Like a stock Kafka broker it creates
topics on first use, with 1 partition. With --data-dir, topics, records and
committed group offsets survive a restart, and kill -9 too (topics created
on first use included); a transaction a kill left open is aborted at the
next start, with the abort marker it lacked, so that read_committed readers
see every committed record. (A directory an earlier kafkabpl restarted
after such a kill may hide records committed after that restart: start it
afresh.) Beside it a schema registry speaks Confluent's REST
API on 127.0.0.1 (port 8081, or a free one if that is taken or --port is 0),
for the Avro, Protobuf and JSON Schema serdes and any registry client
(Confluent's clients, Apicurio's tools); the second line says where,
"schema registry on http://HOST:PORT". With --data-dir its schemas keep
their ids across restarts. Stop it with SIGINT or SIGTERM.`,
}

// brokerFlags are broker's flags, parsed.
type brokerFlags struct {
	port, brokers, partitions int
	noAutoCreate, syncWrites  bool
	dataDir                   string
	topics                    stringList
	logLevel                  kfake.LogLevel
	registry                  registryFlag
}

var logLevels = map[string]kfake.LogLevel{
	"none":  kfake.LogLevelNone,
	"error": kfake.LogLevelError,
	"warn":  kfake.LogLevelWarn,
	"info":  kfake.LogLevelInfo,
	"debug": kfake.LogLevelDebug,
}

func runBroker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("broker")
	bf := brokerFlags{logLevel: kfake.LogLevelWarn}
	fs.IntVar(&bf.port, "port", embedded.DefaultPort, "the first broker's `PORT`; broker i listens on PORT+i; 0 picks free ports")
	fs.IntVar(&bf.brokers, "brokers", 3, "number of brokers `N`")
	fs.IntVar(&bf.partitions, "partitions", 1, "partitions `N` of topics created on first use or by --topic")
	fs.BoolVar(&bf.noAutoCreate, "no-auto-create", false, "do not create topics on first use")
	fs.StringVar(&bf.dataDir, "data-dir", "", "keep topics, records and group offsets in `DIR` across restarts")
	fs.Var(&bf.topics, "topic", "create topic `NAME` at start if missing (repeatable, or comma-separated)")
	fs.BoolVar(&bf.syncWrites, "sync-writes", false, "with --data-dir: fsync every write (slower; survives a machine crash)")
	fs.Func("log-level", "cluster log `LEVEL` on stderr: none, error, warn, info, debug (default warn)", func(s string) error {
		l, ok := logLevels[strings.ToLower(s)]
		if !ok {
			return errors.New("want none, error, warn, info or debug")
		}
		bf.logLevel = l
		return nil
	})
	bf.registry.register(fs)
	positional, code, done := parse(fs, brokerUsage, args, stdout, stderr)
	if done {
		return code
	}
	if len(positional) > 0 {
		return usageError(stderr, fs, brokerUsage, fmt.Errorf("unexpected argument %q", positional[0]))
	}

	// kfake logs from its own goroutines while we write here too.
	stderr = &lockedWriter{w: stderr}
	opts := []embedded.Option{
		embedded.Port(bf.port),
		embedded.Brokers(bf.brokers),
		embedded.Partitions(bf.partitions),
		embedded.Topics(bf.topics...),
		embedded.KfakeOptions(kfake.WithLogger(kfake.BasicLogger(stderr, bf.logLevel))),
	}
	if bf.noAutoCreate {
		opts = append(opts, embedded.NoAutoCreate())
	}
	if bf.dataDir != "" {
		opts = append(opts, embedded.DataDir(bf.dataDir))
		if bf.syncWrites {
			opts = append(opts, embedded.SyncWrites())
		}
	}
	bf.registry.seen(fs)
	c, err := bf.registry.start(bf.port, stderr, opts)
	if errors.Is(err, embedded.ErrInvalidOption) {
		return usageError(stderr, fs, brokerUsage, err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "kafkabpl broker: %v\n", err)
		return exitFail
	}
	// One line that scripts wait for; stdout is unbuffered, so it is out
	// as soon as this returns.
	fmt.Fprintf(stdout, "listening on %s\n", c.Servers())
	fmt.Fprintf(stdout, "schema registry on %s\n", c.RegistryURL())

	<-ctx.Done()
	if bf.dataDir != "" {
		fmt.Fprintf(stderr, "kafkabpl broker: stopping, saving state in %s\n", bf.dataDir)
	} else {
		fmt.Fprintln(stderr, "kafkabpl broker: stopping")
	}
	c.Close()
	return exitOK
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
