// Package kafkabpl is the Kafka library of BPL, the Lisp-like scripting
// language of the brain4it IoT platform, built on franz-go.
//
// This package is its Go API. A [Library] holds producers, consumers,
// share consumers (queues: [ShareConsumer]) and admin clients behind
// string handles, with typed methods: [Library.Create], [Library.Send],
// [Library.Poll], [Library.Subscribe], [Library.Commit], [Library.Ack],
// [Library.Seek], [Library.Destroy] and the admin calls. Streams between
// topics, with state, windows, tables and joins, are package stream's,
// built over this package's exported API (the few names of the seam it
// uses are said as such, on [Handle] and [ClientConfig]); their handles
// live in a Library like the clients'. For BPL runtimes, package
// functions is the table of BPL functions (kafka-create, kafka-send,
// kafka-poll, ...), thin adapters over these methods, to register under
// their names: its documentation is the functions' reference. The command
// kafkabpl (cmd/kafkabpl) runs BPL scripts with that table, and can start
// an embedded Kafka-compatible cluster (package embedded) so no broker
// needs to be installed.
//
// # Values
//
// A BPL value in Go is nil, bool, int64, float64, string, []byte, *[value.List]
// or a [value.Callable]. Inputs also accept int, int32, float32 (and the other
// sized numbers), []any, []string and map[string]any (read in sorted key
// order). A [value.List] is ordered and its elements may carry names; a name may
// repeat, and a repeated name never replaces an element (brain4it's Java
// list does, which loses messages with the same key). [value.Format] prints a
// value in canonical BPL text and [value.Parse] reads BPL text.
//
// # Handles, sends and polls
//
// Handles are strings: "p", "c" (a consumer or a share consumer), "a" or
// "s" (a stream) and 32 hex digits.
// An admin call's target is an admin handle, or a config for a client of
// the call's own; each admin call ends within request-timeout. Every error
// is an [Error] that names the BPL function the method serves (its message
// starts with it, as in `kafka-poll: unknown consumer id "c12..."`), and a
// BPL runtime sees it as an exception typed by [ErrorType].
//
// [Library.Send] sends every message to every topic, in order, and returns
// when every record is acknowledged, within send-timeout; one call is sent
// in batches. [Library.Poll] returns each subscribed topic's new records
// ([Polled]), in partition and offset order; [Polled.List] is their BPL
// form, as kafka-poll returns it, shaped by the consumer's "poll-format". A
// record that its deserializer cannot read carries its error
// ([Record.Err]): it is never dropped and never stalls the consumer.
//
// # Subscribing is deterministic
//
// Once [Library.Subscribe] (or [Library.PollTopics], which subscribes too)
// returns, every message sent afterwards to a subscribed topic is returned
// by the following polls, even with "auto-offset-reset" => "latest": a partition
// with no committed offset starts where the topic ended when the
// subscription was made, not where it ends when the group is finally
// joined. A topic created after the subscription is read from its start.
//
// # Share consumers: queues
//
// A share consumer ([ShareConsumer], kafka-create "share-consumer") is a
// member of a share group (KIP-932, Kafka 4.0 and later, on by default
// from 4.2): the group's members share every partition's records, record
// by record, so several of them read one partition together, which the
// members of a consumer group cannot do. It is the shape of an IoT
// command queue, or of a pool of job workers. Its config needs "group";
// it reads a consumer's keys ("topics", "max-poll-records", the
// deserializers, "poll-format", ...) and ignores those of a consumer
// group's protocol (commits, sessions, assignments: the share group's
// brokers keep them). max-poll-records also bounds what a fetch acquires,
// so that a member does not hold records it will not return soon (a
// broker may still hand over a whole batch that holds more). One
// kafka-send (one Send) is one batch, which one member takes whole,
// however many members poll: franz-go's ShareMaxRecordsStrict would
// spread a batch, and this package offers no setting for it; send records
// meant for several workers in several calls.
//
// Each record a poll returns is acquired by the consumer under a lock,
// the group's share.record.lock.duration.ms (30 s by default), and is
// acknowledged with [Library.Ack] (kafka-ack): accept (done), release
// (delivered again, to any member, with its delivery count one higher;
// archived once it reaches the group's share.delivery.count.limit, 5 by
// default) or reject (archived: never delivered again); renew extends the
// lock. The default for what is not acknowledged: the records a poll
// returned and that are not acknowledged when the consumer comes back,
// with its next Poll or a Commit, are accepted then, as with Java's
// default share.acknowledgement.mode "implicit" (and franz-go's). Ack
// does not wait; [Library.Commit] sends the acknowledgements at once and
// reports, as [ErrNotCommitted], those the brokers refused (a lock had
// ended). [Record.DeliveryCount] and [Record.AcquisitionDeadline]
// ("delivery-count" and "acquisition-deadline" in the records form) say
// how often the record was delivered and when its lock ends.
//
// Destroying a share consumer sends its acknowledgements and gives back
// to the group what it did not acknowledge: the records of its latest
// poll, and those it fetched that no poll returned, as Java's close does
// (to accept them, commit first). A share consumer that dies gives its
// records back too: at once when Kafka sees its connection close (a
// process killed, on Kafka 4.4), otherwise when their lock ends (a
// process frozen, a machine lost). Delivery is at least once: a record
// whose lock ends before its acceptance reaches the brokers is delivered
// again.
//
// A share group starts reading a partition where its group config
// share.auto.offset.reset says, not where a member's config does:
// "latest" by default, so that what a topic held before the group first
// read it is never delivered. A share consumer's "auto-offset-reset"
// ("earliest" or "latest"; "none" is refused), when given, sets that
// group config as the consumer is created, within request-timeout (it
// needs the ALTER_CONFIGS permission on the group). Hazard: the setting
// is the group's, not the member's: the last member created with the key
// decides for all, and it only applies to the partitions the group has
// not read yet. Without the key nothing is set; [Library.AlterConfigs]
// with [GroupConfigs] (kafka-alter-configs target "group" g
// ("share.auto.offset.reset" => "earliest")) sets it as an operator
// would, and share.record.lock.duration.ms the same way.
// [Library.DescribeGroup] describes a share group (its type "share", its
// members, where it stands per partition) and [Library.ListGroups] lists
// it. With its members stopped, [Library.ResetGroupOffsets] moves its
// start offsets (it then delivers the records from there again, as new)
// and [Library.DeleteGroup] deletes it.
//
// A share consumer cannot seek (an [ErrWrongKind] error), polls its whole
// subscription (a poll naming topics that leaves others out is an
// [ErrInvalidArgument] error) and polls one poll at a time.
//
// # Config
//
// A config is a server string ("host:port", or several joined by commas), a
// list of server strings, or a named list. Keys may also be written in
// Java's dotted spelling (bootstrap.servers, group.id, auto.offset.reset,
// enable.auto.commit, max.poll.records, linger.ms, compression.type,
// delivery.timeout.ms, ...); numbers and booleans may be strings, as in Java
// properties. All keys are accepted by every kind of handle; those that do
// not apply are ignored. An unknown key is an [ErrInvalidConfig] error that
// suggests the closest known key. From Go, a [Config] gives a config and
// more keys apart, as kafka-consumer's named arguments do, and with
// Brain4it set reads them as kafka-producer and kafka-consumer do (the
// column "under kafka-consumer" below).
//
//	key                          default              under kafka-consumer  notes
//	servers                      (required)                                 "host:port", comma-joined, or a list; port 9092 if none
//	client-id                    "kafkabpl"
//	group, group-id              a fresh group                              per consumer, as brain4it's library does; a share consumer needs one
//	topics                       none                                       subscribe at creation
//	auto-offset-reset            "latest"                                   "earliest", "latest", "none" (no committed offset: polls fail until kafka-seek); a share consumer's sets its group's (see Share consumers); a stream's default is "earliest" (package stream)
//	enable-auto-commit, auto-commit  true             false                 commits only records already polled and come back from
//	auto-commit-interval         5000                                       ms; 100 at least
//	max-poll-records             500                  10
//	session-timeout              45000                10000                 ms
//	heartbeat-interval           3000                                       ms; less than session-timeout
//	max-poll-interval            300000                                     ms (the group's rebalance timeout)
//	isolation-level              "read_uncommitted"                         or "read_committed"
//	assignment-strategy          ("range" "roundrobin")                     or "sticky", "cooperative-sticky"; Java class names work
//	group-protocol               "classic"                                  or "consumer": KIP-848's, where the broker assigns partitions and keeps the session (session-timeout, heartbeat-interval and assignment-strategy are then refused)
//	group-remote-assignor        "uniform"                                  or "range": the broker's assignor under group-protocol "consumer"
//	poll-format                  "values"                                   or "records"
//	key-serializer, value-serializer      "String"
//	key-deserializer, value-deserializer  "String"
//	acks                         "all"                                      "all", 1, 0 (1 and 0 turn idempotence off)
//	idempotence                  true
//	linger                       0                                          ms; accepted as Java's linger.ms, no effect: each kafka-send sends its messages at once
//	compression                  "none"                                     "gzip", "snappy", "lz4", "zstd"
//	partitioner                  "murmur2"                                  "round-robin", "manual"
//	max-message-bytes            1048576
//	allow-auto-create-topics     true                                       the broker decides, as with Java's clients
//	send-timeout                 30000                                      ms until kafka-send gives up
//	request-timeout              30000                                      ms for admin calls, commits and subscribing, and that a broker may hold a produce waiting for acks, as Java's request.timeout.ms (at least 1 s)
//	retry-backoff                100                                        ms before the first retry of a failed request, fetch or produce
//	retry-backoff-max            500                                        ms; the wait doubles up to it (±20% jitter); Java's default is 1000
//	transaction-timeout          30000                                      ms; exactly-once streams: a batch must finish within it, and it must outlast a broker failover
//	query-endpoint               none                                       stateful streams: the URL ("http://host:port/module") other processes of the group forward store queries to; kafkabpl serve sets its own (see stream.Runtime.SetQueryEndpoint)
//	state-dir, state.dir          none                                       stateful streams: keep the store's state on disk under DIR/<group>/<store> (see package stream); none: in memory
//	state-cleanup-delay, state.cleanup.delay.ms  600000                  ms the state on disk of a partition this process no longer holds (nor keeps a standby copy of) stays there, so that one that comes back reads only the changelog's tail; then it is deleted
//	max-task-idle, max.task.idle.ms  0                                      ms a stateful stream of several inputs (an interval join's two) holds a store partition's records while one of its inputs has none fetched, so as to take them all in timestamp order; 0: holds none, merging only what each poll fetched (see package stream)
//	query-forward-timeout        5000                                       ms a store query forwarded to the process that holds its key waits for the answer: then it raises NotReady naming that process (one paused or cut off answers nothing; the group moves its partitions at its session's end)
//	log-level                    "none"                                     "error", "warn", "info", "debug": franz-go's own log of the client, to the Library's log output
//	tls                          off                                        true, or ("ca-file" "cert-file" "key-file" "server-name" "insecure-skip-verify")
//	sasl                         off                                        ("mechanism" => "PLAIN"|"SCRAM-SHA-256"|"SCRAM-SHA-512" "username" "password")
//	schema-registry-url, schema.registry.url  none                          the schema serdes' registry, "http://host:port"; see below
//	basic-auth-user-info, basic.auth.user.info  none                        the registry's basic auth, "user:password" (never printed)
//	schema-registry-tls          off                                        the registry's TLS, as "tls" takes it (https URLs verify against the system's roots without it)
//	auto-register-schemas, auto.register.schemas  true                      register the inline schema under its subject; false: it must be there already
//	use-latest-version, use.latest.version  false                           write with, and read into, the subject's latest schema
//	use-schema-id, use.schema.id  none                                      write values with the schema of this id
//	subject-name-strategy, subject.name.strategy  "topic"                   "record", "topic-record", or Confluent's class names; value.subject.name.strategy too
//	key-subject-name-strategy, key.subject.name.strategy  "topic"           the same for keys
//	key-schema, value-schema     none                                       the schema, inline (text, or a list written as JSON); none: the subject's latest
//	key-schema-full-name, value-schema-full-name  none                      Protobuf: the message written, and read into, by full name ("iot.Reading"); none: the file's first
//
// The defaults are Kafka's own clients' (kafka-create and the Go API).
// brain4it's names take brain4it's: kafka-consumer, as brain4it's Java
// library, does not auto-commit (nothing is committed unless the script
// calls kafka-commit, so a consumer deleted without committing leaves its
// messages for the next one of its group), reads at most 10 records a poll
// and keeps a 10 s session; the column above shows where it differs.
// kafka-producer keeps the defaults above: brain4it's library sets nothing
// but the serializers there, leaving the Java client's defaults of its day
// (acks 1, no retries), which lose messages when a broker fails; acks
// "all" with idempotence is what Java's client defaults to now. Under
// brain4it's names a key that is not in this table is ignored with a
// warning (see [Library.SetLogOutput]), as brain4it ignores keys it
// does not read; kafka-create fails on it.
//
// The default assignment strategies, range then roundrobin, let a kafkabpl
// consumer share a group with Java, librdkafka and kafka-python consumers.
// The default partitioner hashes keys with murmur2 exactly as Java's client
// does, so a key lands on the same partition whichever client sent it;
// messages without a key are spread. A message's "partition" overrides the
// partitioner; with "manual" every message needs one. A send to a topic
// that does not exist, where the broker does not create it, fails after
// about a second (the producer asks the brokers once a second whether they
// list it) with a KafkaError wrapping kerr.UnknownTopicOrPartition that
// names the topic.
//
// When a broker fails, the clients retry as Java's do: a failed request,
// fetch or produce is retried after retry-backoff, doubling up to
// retry-backoff-max, for as long as request-timeout (a send, for
// send-timeout) and not for a set number of tries. While a broker that was
// reachable refuses connections, a request's first retry waits a tenth of
// retry-backoff and every later one retry-backoff, without doubling:
// franz-go sends a retried metadata request to the next broker in turn,
// the dead one too, and longer waits there held back the news of a move. While a leader is unknown, or a broker that was reachable
// refuses connections, the clients ask the brokers for fresh metadata
// every 100 ms, so that a partition whose leader moved is read and written
// again within about 100 ms of the move. A consumer whose partition moved
// to a leader not yet ready to confirm its position (KIP-320's check,
// which franz-go repeats only a second later) checks it again itself
// after 25 ms, the wait doubling to 100 ms (Java's), and reads on once the
// leader confirms it. Kafka moves a dead broker's partitions once its
// controller fences it (9 s by default). A consumer
// keeps its partitions while its group's coordinator fails over: its
// heartbeats are retried, as Java's are, until the new coordinator
// answers. A connection refused by a broker that was reachable before (a
// broker killed or restarting) is retried like any other failure, and
// asks for fresh metadata at once. A refusal by an address never reached
// (a mistyped server, say) is left as franz-go treats it, and so is any
// refusal while a handle is destroyed: a consumer whose brokers are gone
// is destroyed without waiting out request-timeout to leave its group
// (the group drops it when its session ends). The cost while a broker is
// down: ten retries of each failing request a second (each a refused
// dial, or a request to a live broker) and ten metadata requests a second
// per client, to the live brokers; once the dead broker's partitions have
// moved and a second has passed with no refusal, retries double up to
// retry-backoff-max again (Java's caps the wait at 1 s).
// "log-level" "debug" shows it happen: franz-go's log of the client's
// dials, retries, metadata refreshes and leader moves, a line each, goes
// to the Library's log output.
//
// Serializers are named by short name or Java class name (String,
// StringSerializer and org.apache.kafka.common.serialization.StringSerializer
// are the same): String, ByteArray (or Bytes), Short, Integer, Long, Float
// and Double (Java's big-endian encodings, byte for byte), JSON (lists with
// names are objects, in order, and lists without are arrays) and BPL
// (canonical BPL text). A null value is Kafka's null whatever the
// serializer. The String serializer also takes numbers and booleans, as
// their BPL text; the numeric ones also take numeric text, since message
// names (keys) are text, read as Java reads it: "010" is the Integer 10,
// and "0x10" is not an integer.
//
// Avro, Protobuf and JSON-Schema (Confluent's class names, such as
// io.confluent.kafka.serializers.KafkaAvroSerializer, are the same) write
// and read Confluent's schema registry wire format: a 0 byte, the schema's
// id in 4 bytes, (for Protobuf, the message indexes,) then the value in
// the schema's format. They need "schema-registry-url". The serializer writes
// with "value-schema" (or "key-schema"), registered under the subject
// "<topic>-value" (or as "subject-name-strategy" says) unless
// "auto-register-schemas" is false; with no inline schema it writes with
// the subject's latest schema, and "use-schema-id" names one by id. The
// deserializer reads the schema each record names by id; given an inline
// schema or "use-latest-version", it reads into that schema (Avro's schema
// resolution: a field the writer lacked gets its default; Protobuf's
// fields by number, into the message of the writer's message's full
// name, else the first). The registry is
// asked once per topic and schema id, and each request ends within
// request-timeout (10 s at most); one that fails is an
// [ErrSchemaRegistry] error naming the registry's URL (BPL type
// SchemaRegistryError; one that gets no answer in time is a Timeout). A
// value that does not fit the schema fails its record alone, naming the
// message and the field (field "address.zip"); a record that does not
// decode (a schema id the registry does not know, bytes not in its wire
// format) is delivered with its error, as above. But a record the consumer
// cannot read because the registry is unavailable (unreachable, silent,
// or failing with HTTP 5xx: [ErrRegistryUnavailable]) is no bad record:
// the poll asks again until its timeout (a second at least, for a schema
// not met yet), then fails with a SchemaRegistryError and holds the
// records back, uncommitted, for the next poll, or for the group's next
// member; a stream waits for the registry, whatever "on-error" says.
// How BPL values map to each format's is in docs/registry.md: records, messages, objects and maps are lists with names,
// arrays and repeated fields lists without, an Avro date is milliseconds
// since 1970 as (date) gives it, a decimal its exact text, an enum its
// symbol. Protobuf's serializer writes the schema's first message; its
// imports are its references. JSON Schema checks values as they are
// written, not as they are read.
//
// # Errors, timeouts and concurrency
//
// Errors wrap the sentinels [ErrUnknownHandle], [ErrWrongKind],
// [ErrInvalidConfig], [ErrInvalidArgument], [ErrTimeout] and [ErrClosed];
// errors from the brokers keep franz-go's kerr codes reachable with
// errors.Is. A call whose context ends keeps the context's error: a passed
// deadline is an ErrTimeout as well (BPL type Timeout), a cancellation
// wraps context.Canceled (BPL type Interrupted). A received record that
// its deserializer cannot read carries an error wrapping
// [ErrDeserialization] (see [Record.Err]). A commit that cannot cover what was polled, because a
// rebalance took the partitions first, wraps [ErrNotCommitted] (BPL type
// KafkaError). A store query refused for now wraps [ErrNotReady] (BPL type
// NotReady), one that cannot be answered here [ErrNotHeld] (NotHeld). No call blocks past its timeout when the brokers are down: it
// fails with an ErrTimeout error naming the servers. A password never
// appears in an error. Every handle is safe for concurrent use.
//
// Destroying a producer delivers what it buffered first; destroying a
// consumer commits what it polled (with auto-commit on) and leaves its
// group; destroying a share consumer sends its acknowledgements and gives
// back what it did not acknowledge. [Library.Close] destroys every
// handle.
package kafkabpl
