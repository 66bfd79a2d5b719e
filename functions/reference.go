package functions

import (
	"math"
	"slices"
)

// Doc is one BPL function's reference entry. The functions check their
// calls against it (the argument counts, the named arguments taken, the
// usage an error shows), so the reference says what they do;
// docs/functions.md is generated from [Reference].
type Doc struct {
	Name     string
	Family   string // "clients", "admin", "streams", "queries", "in a stream's function"
	Usage    string // the call's form, as an error about its arguments shows it
	Min, Max int    // positional arguments
	Args     []Arg  // the positional arguments, in order
	Named    []Arg  // the named arguments it takes
	AnyNamed bool   // it takes named arguments Named does not list (config keys), checking them itself
	Returns  string
	Errors   []string // the exception types it raises, besides InvalidArgument for a call that does not fit Usage
	About    string   // more, when there is more to say
}

// Arg is an argument of a [Doc].
type Arg struct {
	Name    string
	Default string // "" when it has none (required, or no value stands for it)
	About   string
}

// Reference returns every BPL function's entry, in the order of their
// families, and by name within each. A new slice on every call.
func Reference() []Doc {
	out := slices.Clone(reference)
	for i := range out {
		out[i].Args, out[i].Named, out[i].Errors = slices.Clone(out[i].Args), slices.Clone(out[i].Named), slices.Clone(out[i].Errors)
	}
	return out
}

// docOf returns fn's entry; a function without one is a bug of this
// package, which TestReferenceCoversTable rules out.
func docOf(fn string) *Doc {
	d, ok := docIndex[fn]
	if !ok {
		panic("functions: no reference entry for " + fn)
	}
	return d
}

// namedArgs are d's named arguments' names; nil when it takes any. Made
// once per function (namedIndex), not per call: the function table's
// calls (a kafka-poll a poll) allocate nothing for them.
func (d *Doc) namedArgs() []string { return namedIndex[d.Name] }

// namedIndex is each function's named arguments' names, as namedArgs
// gives them.
var namedIndex = func() map[string][]string {
	m := make(map[string][]string, len(reference))
	for _, d := range reference {
		if d.AnyNamed {
			continue
		}
		names := make([]string, len(d.Named))
		for i, a := range d.Named {
			names[i] = a.Name
		}
		m[d.Name] = names
	}
	return m
}()

var docIndex = func() map[string]*Doc {
	m := make(map[string]*Doc, len(reference))
	for i := range reference {
		m[reference[i].Name] = &reference[i]
	}
	return m
}()

// The exception types functions share.
var (
	errsHandle = []string{"UnknownHandle", "WrongKind", "Closed"}
	errsKafka  = []string{"Timeout", "KafkaError"}
	errsAdmin  = []string{"UnknownHandle", "WrongKind", "InvalidConfig", "Timeout", "KafkaError", "Closed"}
	errsQuery  = []string{"UnknownHandle", "WrongKind", "NotReady", "NotHeld", "Closed"}
)

func errs(sets ...[]string) []string { return slices.Concat(sets...) }

var (
	argID     = Arg{Name: "id", About: "a handle, as kafka-create returned it"}
	argTarget = Arg{Name: "target", About: "an admin handle, or a config (as kafka-create takes it) for a client of the call's own"}
	argTopics = Arg{Name: "topics", About: "a topic name, or a list of them"}
	argGroup  = Arg{Name: "group", About: "a group's name"}
	argStream = Arg{Name: "id", About: "a stateful stream's handle"}
)

var reference = []Doc{
	// Clients.
	{Name: "kafka-create", Family: "clients", Min: 2, Max: 2,
		Usage: `(kafka-create "producer"|"consumer"|"share-consumer"|"admin" config)`,
		Args: []Arg{{Name: "kind", About: `"producer", "consumer", "share-consumer" or "admin"`},
			{Name: "config", About: `a server string ("localhost:9092"), a list of them, or a named list of config keys (package kafkabpl's documentation lists them, with their defaults)`}},
		Returns: `a handle: "p", "c" (a consumer's or a share consumer's) or "a", and 32 hex digits`,
		Errors:  []string{"InvalidConfig", "Timeout", "KafkaError", "Closed"},
		About:   `A consumer whose config names "topics" subscribes at once; a share consumer's "auto-offset-reset" sets its group's share.auto.offset.reset.`},
	{Name: "kafka-producer", Family: "clients", Min: 1, Max: 1, AnyNamed: true,
		Usage:   `(kafka-producer servers "config-key" => value ...)`,
		Args:    []Arg{{Name: "servers", About: "a server string, or a list of them"}},
		Returns: `a producer handle "p..."`,
		Errors:  []string{"InvalidConfig", "Closed"},
		About:   "brain4it's name: config keys as named arguments, with brain4it's defaults; a key it does not know is a warning on the log, not an error."},
	{Name: "kafka-consumer", Family: "clients", Min: 1, Max: 1, AnyNamed: true,
		Usage:   `(kafka-consumer servers "config-key" => value ...)`,
		Args:    []Arg{{Name: "servers", About: "a server string, or a list of them"}},
		Returns: `a consumer handle "c..."`,
		Errors:  []string{"InvalidConfig", "Timeout", "KafkaError", "Closed"},
		About:   "brain4it's name: config keys as named arguments, with brain4it's defaults (no auto-commit, 10 records a poll, a 10 s session); a key it does not know is a warning, not an error."},
	{Name: "kafka-destroy", Family: "clients", Min: 1, Max: 1, Usage: "(kafka-destroy id)",
		Args:    []Arg{argID},
		Returns: "true; false when id is unknown or already destroyed",
		Errors:  errsKafka,
		About:   "Delivers what a producer buffered, commits what a consumer polled (a share consumer gives back what it did not acknowledge), stops a stream after committing its batch in hand."},
	{Name: "kafka-delete-app", Family: "clients", Min: 1, Max: 1, Usage: "(kafka-delete-app id)",
		Args:    []Arg{argID},
		Returns: "true, for an unknown id too (brain4it's)",
		Errors:  errsKafka,
		About:   "brain4it's name for kafka-destroy."},
	{Name: "kafka-send", Family: "clients", Min: 3, Max: 3,
		Usage: `(kafka-send id topics messages "key" => k "partition" => n "headers" => (...) "timestamp" => ms "records" => true)`,
		Args: []Arg{{Name: "id", About: "a producer handle"}, argTopics,
			{Name: "messages", About: `one value, or a list of them, each named by its key: ("c7" => "full" "no key")`}},
		Named: []Arg{
			{Name: "key", About: "every message's key, for messages that do not name one"},
			{Name: "partition", Default: "the partitioner's (murmur2 of the key, as Java's)", About: "every message's partition"},
			{Name: "headers", About: `every message's headers: ("h" => "v" ...)`},
			{Name: "timestamp", Default: "the time of sending", About: "every message's timestamp, ms since 1970"},
			{Name: "records", Default: "false", About: `true: each message is a record list ("key" "value" "partition" "headers" "timestamp")`}},
		Returns: "how many records were delivered: each message to each topic, in order",
		Errors:  errs(errsHandle, errsKafka, []string{"SchemaRegistryError"}),
		About:   "Returns when every record is acknowledged, within send-timeout; one call is sent in batches. A message that does not serialize fails alone: the others are sent, and the exception lists the failed ones."},
	{Name: "kafka-poll", Family: "clients", Min: 2, Max: 3, Usage: pollUsage,
		Args: []Arg{{Name: "id", About: "a consumer or share consumer handle"},
			{Name: "topics", Default: "every subscribed topic", About: "subscribes first if needed; only those topics"},
			{Name: "timeout-ms", About: "how long to wait for a first message"}},
		Returns: `messages by topic: ("t1" => (messages) "t2" => ()), every topic named, sorted; each message its value, named by its key ("poll-format" => "records": record lists)`,
		Errors:  errs(errsHandle, []string{"NotSubscribed", "Timeout", "KafkaError", "SchemaRegistryError"}),
		About:   "A record that does not deserialize comes back as a record list with an \"error\" element, never dropped."},
	{Name: "kafka-copy", Family: "clients", Min: 1, Max: 1, Usage: "(kafka-copy x)",
		Args:    []Arg{{Name: "x", About: "any value: a message of a poll, its key or value, a list of them"}},
		Returns: "x with its text in memory of its own: strings and bytes copied, lists at every depth, names too",
		About:   "A message of a poll shares one allocation with its poll's other messages, so a kept message keeps its poll's text (64 KiB with 500 records of 100 bytes); its copy keeps about 160 bytes. BPL's clone copies lists, never their text."},
	{Name: "kafka-subscribe", Family: "clients", Min: 2, Max: 2, Usage: "(kafka-subscribe id topics)",
		Args:    []Arg{{Name: "id", About: "a consumer or share consumer handle"}, {Name: "topics", About: "a topic name or a list of them; () unsubscribes"}},
		Returns: "the subscription after the call, sorted",
		Errors:  errs(errsHandle, errsKafka),
		About:   "A message sent after kafka-subscribe returns is delivered, even with the default \"latest\" reset."},
	{Name: "kafka-unsubscribe", Family: "clients", Min: 1, Max: 2, Usage: "(kafka-unsubscribe id [topics])",
		Args:    []Arg{{Name: "id", About: "a consumer or share consumer handle"}, {Name: "topics", Default: "all of them", About: "the topics to leave"}},
		Returns: "the remaining subscription, sorted",
		Errors:  errs(errsHandle, errsKafka)},
	{Name: "kafka-commit", Family: "clients", Min: 1, Max: 1, Usage: "(kafka-commit id)",
		Args:    []Arg{{Name: "id", About: "a consumer or share consumer handle"}},
		Returns: "true once everything polled is committed (a share consumer's: acknowledged)",
		Errors:  errs(errsHandle, errsKafka),
		About:   "A KafkaError names the partitions a rebalance took before their polled records were committed, or the records whose acknowledgements the brokers refused."},
	{Name: "kafka-ack", Family: "clients", Min: 2, Max: 3, Usage: ackUsage,
		Args: []Arg{{Name: "id", About: "a share consumer handle"},
			{Name: "records", Default: "every record of its latest poll not acknowledged yet", About: `a record list of its latest poll ("poll-format" => "records"), or a list of them`},
			{Name: "type", About: `"accept", "release" (delivered again, "delivery-count" one higher), "reject" (archived for good) or "renew" (its lock extended)`}},
		Returns: "true",
		Errors:  errsHandle,
		About:   "The acknowledgements go with the next poll or kafka-commit."},
	{Name: "kafka-seek", Family: "clients", Min: 3, Max: 3, Usage: seekUsage,
		Args: []Arg{{Name: "id", About: "a consumer handle"}, {Name: "topic", About: "a topic the consumer is assigned"},
			{Name: "position", About: `"beginning", "end", an offset, or ("timestamp" => ms)`}},
		Named:   []Arg{{Name: "partition", Default: "every partition of topic", About: "one partition only"}},
		Returns: "true",
		Errors:  errs(errsHandle, errsKafka)},

	// Admin.
	{Name: "kafka-create-topics", Family: "admin", Min: 2, Max: 2, Usage: createTopicsUsage,
		Args: []Arg{argTarget, argTopics},
		Named: []Arg{
			{Name: "partitions", Default: "the brokers' num.partitions", About: "each topic's partition count"},
			{Name: "replication-factor", Default: "the brokers' default.replication.factor", About: "each partition's replicas"},
			{Name: "configs", About: `topic configs: ("retention.ms" => "60000" ...)`}},
		Returns: `("t" => true ...): created, or false: it existed`,
		Errors:  errsAdmin,
		About:   "Returns once the brokers show the topics, so the next call sees them."},
	{Name: "kafka-delete-topics", Family: "admin", Min: 2, Max: 2, Usage: "(kafka-delete-topics target topics)",
		Args: []Arg{argTarget, argTopics}, Returns: `("t" => true ...): deleted, or false: it did not exist`, Errors: errsAdmin},
	{Name: "kafka-list-topics", Family: "admin", Min: 1, Max: 1, Usage: "(kafka-list-topics target)",
		Args: []Arg{argTarget}, Returns: "topic names, sorted, internal topics left out", Errors: errsAdmin},
	{Name: "kafka-describe-topics", Family: "admin", Min: 1, Max: 2, Usage: "(kafka-describe-topics target [topics])",
		Args:    []Arg{argTarget, {Name: "topics", Default: "every topic", About: "a topic name or a list of them"}},
		Returns: `per topic its partitions: ("t" => ("partitions" => (("partition" => 0 "leader" => 1 "replicas" => (1 2 0) "isr" => (1 2 0)) ...)) ...)`,
		Errors:  errsAdmin},
	{Name: "kafka-describe-cluster", Family: "admin", Min: 1, Max: 1, Usage: "(kafka-describe-cluster target)",
		Args:    []Arg{argTarget},
		Returns: `("cluster-id" => "..." "controller" => 1 "brokers" => (("id" => 0 "host" => "127.0.0.1" "port" => 9092) ...))`,
		Errors:  errsAdmin},
	{Name: "kafka-create-partitions", Family: "admin", Min: 3, Max: 3, Usage: "(kafka-create-partitions target topic count)",
		Args:    []Arg{argTarget, {Name: "topic"}, {Name: "count", About: "the partition count wanted"}},
		Returns: "true; false when the topic had count already", Errors: errsAdmin},
	{Name: "kafka-list-groups", Family: "admin", Min: 1, Max: 1, Usage: "(kafka-list-groups target)",
		Args: []Arg{argTarget}, Returns: `("g1" => "Stable" "g2" => "Empty" ...)`, Errors: errsAdmin},
	{Name: "kafka-describe-group", Family: "admin", Min: 2, Max: 2, Usage: "(kafka-describe-group target group)",
		Args:    []Arg{argTarget, argGroup},
		Returns: `("group" "state" "members" "lag" "total-lag"): members with their assignments, the lag per partition; a share group adds "type" => "share"`,
		Errors:  errsAdmin},
	{Name: "kafka-list-offsets", Family: "admin", Min: 2, Max: 3, Usage: listOffsetsUsage,
		Args: []Arg{argTarget, {Name: "topic"},
			{Name: "at", Default: `"latest"`, About: `"latest" (the end), "earliest" or ("timestamp" => ms)`}},
		Returns: `(("partition" => 0 "offset" => 5) ...), with "timestamp" => ms for a time; a partition that failed has "offset" => null and an "error"`,
		Errors:  errsAdmin},
	{Name: "kafka-delete-records", Family: "admin", Min: 3, Max: 3, Usage: deleteRecordsUsage,
		Args:    []Arg{argTarget, {Name: "topic"}, {Name: "offsets", About: `("0" => 100 "1" => -1): per partition, the offset to delete up to; -1 up to the end`}},
		Returns: "each partition's new start offset", Errors: errsAdmin},
	{Name: "kafka-reset-offsets", Family: "admin", Min: 4, Max: 4, Usage: resetOffsetsUsage,
		Args: []Arg{argTarget, argGroup, {Name: "topic"},
			{Name: "to", About: `"earliest", "latest", an offset, ("timestamp" => ms) or ("group" => other)`}},
		Returns: "the offsets committed, per partition (a share group's start offsets)",
		Errors:  errsAdmin,
		About:   "Refused while the group has members."},
	{Name: "kafka-delete-group", Family: "admin", Min: 2, Max: 2, Usage: "(kafka-delete-group target group)",
		Args: []Arg{argTarget, argGroup}, Returns: "true", Errors: errsAdmin,
		About: "A consumer group or a share group; refused while the group has members."},
	{Name: "kafka-describe-configs", Family: "admin", Min: 3, Max: 3,
		Usage: `(kafka-describe-configs target "topic"|"group"|"broker" name)`,
		Args: []Arg{argTarget, {Name: "type", About: `"topic", "group" or "broker"`},
			{Name: "name", About: `the topic's or group's name, or a broker's id (1, "1"; "" for the brokers' shared default)`}},
		Returns: `("retention.ms" => "604800000" ...): every config as Kafka's text, sorted, a secret's value null`,
		Errors:  errsAdmin},
	{Name: "kafka-alter-configs", Family: "admin", Min: 4, Max: 4, Usage: alterConfigsUsage,
		Args: []Arg{argTarget, {Name: "type", About: `"topic", "group" or "broker"`}, {Name: "name"},
			{Name: "configs", About: `("retention.ms" => 60000 "cleanup.policy" => null): null puts one back to its default`}},
		Returns: "true", Errors: errsAdmin,
		About: "Incremental: the configs not named stay."},
	{Name: "kafka-create-acls", Family: "admin", Min: 2, Max: 2, Usage: `(kafka-create-acls target acl-or-acls)`,
		Args:    []Arg{argTarget, {Name: "acls", About: `an ACL or a list of them: ("principal" => "User:alice" "resource" => "topic" "name" => "t" "operation" => "read"), with "host", "pattern" ("literal", "prefixed") and "permission" ("allow", "deny")`}},
		Returns: "(true ...): per ACL, true or why it was not created", Errors: errsAdmin},
	{Name: "kafka-describe-acls", Family: "admin", Min: 1, Max: 2, Usage: `(kafka-describe-acls target [filter])`,
		Args:    []Arg{argTarget, {Name: "filter", Default: "every ACL", About: "an ACL's elements; a missing one matches any"}},
		Returns: "the ACLs that match, each with every element", Errors: errsAdmin},
	{Name: "kafka-delete-acls", Family: "admin", Min: 2, Max: 2, Usage: `(kafka-delete-acls target filter)`,
		Args:    []Arg{argTarget, {Name: "filter", About: "an ACL's elements; a missing one matches any; () is refused"}},
		Returns: "the ACLs deleted", Errors: errsAdmin},

	// Streams.
	{Name: "kafka-stream", Family: "streams", Min: 1, Max: 1, Usage: streamUsage, AnyNamed: true,
		Args: []Arg{{Name: "config", About: `a consumer's and a producer's config keys together; "group" (required) is the stream's application id`}},
		Named: []Arg{
			{Name: "from", About: "the input topic, or a list of them"},
			{Name: "to", About: "the output topic"},
			{Name: "transform", About: "(function (in) ...), or (function (in state) ...) with a store; returns outputs, or (kafka-state new-state output ...)"},
			{Name: "guarantee", Default: `"exactly-once"`, About: `"exactly-once" (Kafka transactions) or "at-least-once"`},
			{Name: "on-error", Default: `"stop"`, About: `what becomes of an input that fails: "stop" (the stream fails), "skip" or "dead-letter"`},
			{Name: "dead-letter-topic", Default: `"<input topic>.dlq"`, About: "where dead letters go"},
			{Name: "on-commit", About: "(function () ...) called after each batch that did something commits"},
			{Name: "store", About: "the name of the stream's state store: state per key, or per key and window"},
			{Name: "window", About: `("type" => "tumbling"|"hopping"|"session" "size" "advance" "gap" "grace" "emit" "late" "idle"): a windowed aggregation`},
			{Name: "aggregate", About: "(function (in acc) ...): a window's new aggregate; acc is null for a new window"},
			{Name: "merge", About: "(function (a b) ...): session windows, the aggregate of two sessions an input bridges"},
			{Name: "result", Default: `("start" "end" "value"), keyed by the window's key`, About: `(function (w) ...): a closed window's outputs; w is ("key" "start" "end" "value" "final")`},
			{Name: "rekey", About: "(function (in) key): state by this key, through the repartition topic <group>-<store>-repartition"},
			{Name: "on-timer", About: `(function (timer state) ...): timer is ("key" "kind" "at" "partition")`},
			{Name: "silence", About: "ms: a key without input that long gets an on-timer call of kind \"silence\""},
			{Name: "interval-join", About: `("before" "after" | "window", "grace", "kind" "inner"|"left"|"outer", "late"): join two topics' records of one key within a time window`},
			{Name: "standbys", Default: "0", About: "warm copies of each store partition on other members of the group"},
			{Name: "tables", About: `(name => topic|("topic" => topic "partitioned" => true "hold" => ms) ...): compacted topics read as tables`},
			{Name: "join", About: "a table's name: each input's \"joined\" element is its value for the input's key"},
			{Name: "join-kind", Default: `"inner"`, About: `"inner" drops inputs whose key the table lacks, "left" joins them with null`}},
		Returns: `a stream handle "s..."`,
		Errors:  []string{"InvalidConfig", "Timeout", "KafkaError", "Closed"},
		About:   "The stream runs on goroutines of its own while the script goes on; its named arguments are also config keys (\"max-poll-records\", \"max-task-idle\", \"state-dir\", \"query-forward-timeout\", ...)."},
	{Name: "kafka-stream-status", Family: "streams", Min: 1, Max: 1, Usage: "(kafka-stream-status id)",
		Args:    []Arg{{Name: "id", About: "a stream handle"}},
		Returns: `("state" "processed" "produced" "dropped" "skipped" "dead-lettered" "lag" "transactions" "aborted" "reinits" "last-error"): its state, counts, lag (the group's on its inputs, as the brokers say it; with several inputs or a repartition topic, "input-lag" per topic: a topic written in transactions, such as a re-keyed stream's repartition topic, rests at 1 per partition read to its end, its last commit marker) and last error; a stateful stream's "store" (keys, windows, bytes, restore progress, late inputs, timers, standbys: each partition's owner and standbys, each copy's lag, takeovers) and its "tables"`,
		Errors:  errsHandle},

	// Queries.
	{Name: "kafka-store-get", Family: "queries", Min: 2, Max: 2, Usage: "(kafka-store-get id key)",
		Args: []Arg{argStream, {Name: "key"}}, Returns: "the key's committed state, or null",
		Errors: errsQuery,
		About:  "A key another process of the group holds is asked of it (under kafkabpl serve)."},
	{Name: "kafka-store-range", Family: "queries", Min: 1, Max: 3, Usage: "(kafka-store-range id [from to])",
		Args: []Arg{argStream, {Name: "from", Default: "the first key", About: "the first key, bytewise"},
			{Name: "to", Default: "the last key", About: "the last key, bytewise: inclusive"}},
		Returns: "(key => state ...), keys from from to to, both included",
		Errors:  errsQuery,
		About:   "Reads this process's partitions only."},
	{Name: "kafka-store-windows", Family: "queries", Min: 2, Max: 4, Usage: "(kafka-store-windows id key [since until])",
		Args: []Arg{argStream, {Name: "key"}, {Name: "since", Default: "no bound", About: "the earliest window start, ms"},
			{Name: "until", Default: "no bound", About: "the latest window start, ms: inclusive"}},
		Returns: `the key's open windows starting from since to until, both included: (("start" => ms "end" => ms "value" => v) ...)`,
		Errors:  errsQuery},
	{Name: "kafka-store-standby-get", Family: "queries", Min: 2, Max: 2, Usage: "(kafka-store-standby-get id key)",
		Args:    []Arg{{Name: "id", About: `a stream with "standbys"`}, {Name: "key"}},
		Returns: `this member's standby copy of the key: ("state" => s "partition" => n "lag" => n "stale" => bool), or null`,
		Errors:  errsQuery},
	{Name: "kafka-store-standby-range", Family: "queries", Min: 1, Max: 3, Usage: "(kafka-store-standby-range id [from to])",
		Args: []Arg{{Name: "id", About: `a stream with "standbys"`}, {Name: "from", Default: "the first key"},
			{Name: "to", Default: "the last key", About: "inclusive"}},
		Returns: `(key => ("state" "partition" "lag" "stale") ...)`,
		Errors:  errsQuery},

	// In a stream's function.
	{Name: "kafka-output", Family: "in a stream's function", Min: 1, Max: 1, Usage: outputUsage,
		Args: []Arg{{Name: "value"}},
		Named: []Arg{
			{Name: "topic", Default: `the stream's "to"`},
			{Name: "key", Default: "the input's key", About: "null: none"},
			{Name: "partition", Default: "the partitioner's"},
			{Name: "headers"},
			{Name: "timestamp", Default: "the input's timestamp"}},
		Returns: "an output, as a transform returns it to choose its topic or key"},
	{Name: "kafka-outputs", Family: "in a stream's function", Min: 0, Max: 1 << 20, Usage: "(kafka-outputs value-or-output ...)",
		Args:    []Arg{{Name: "value-or-output", About: "each a value (to \"to\", with the input's key) or a kafka-output"}},
		Returns: "several outputs, as a transform returns them to fan out"},
	{Name: "kafka-state", Family: "in a stream's function", Min: 1, Max: math.MaxInt, Usage: "(kafka-state new-state output ...)",
		Args:    []Arg{{Name: "new-state", About: "the key's new state; null deletes it"}, {Name: "output", About: "outputs, as kafka-outputs takes them"}},
		Returns: "what a stateful transform or on-timer returns: the key's new state and its outputs"},
	{Name: "kafka-lookup", Family: "in a stream's function", Min: 2, Max: 2, Usage: "(kafka-lookup table key)",
		Args:    []Arg{{Name: "table", About: `a table's name in the stream's "tables"`}, {Name: "key"}},
		Returns: "the table's value for key, or null",
		About:   "A partitioned table's key must be of a partition the process holds: InvalidArgument otherwise."},
	{Name: "kafka-set-timer", Family: "in a stream's function", Min: 2, Max: 2,
		Usage: `(kafka-set-timer "wall-clock"|"stream-time" ms)`,
		Args: []Arg{{Name: "kind", About: `"wall-clock" (by the clock) or "stream-time" (when the partition's input timestamps reach it)`},
			{Name: "ms", About: "when, ms since 1970"}},
		Returns: "true; the key's timer (one per key) is set",
		About:   "From a stateful stream's transform or on-timer only."},
	{Name: "kafka-cancel-timer", Family: "in a stream's function", Min: 0, Max: 0, Usage: "(kafka-cancel-timer)",
		Returns: "true; the key's timer goes",
		About:   "From a stateful stream's transform or on-timer only."},
}
