// Package functions is the BPL function table of package kafkabpl: the
// functions a BPL runtime registers so that scripts use Kafka. Each is a
// thin adapter over a [kafkabpl.Library]'s typed methods, as franz-go's
// kadm is a layer over kgo: it checks and converts its arguments, calls
// the method and converts the result. [Table] returns them, to register
// under their names:
//
//	lib := kafkabpl.New()
//	in := bpl.New(os.Stdout) // or any BPL runtime
//	for name, f := range functions.Table(lib) {
//		in.Define(name, f)
//	}
//
// The command kafkabpl (cmd/kafkabpl) runs BPL scripts with this table,
// and package server defines it in every module of a brain4it server. The
// names are those of the library's first proposal (kafka-create,
// kafka-send, kafka-poll, kafka-destroy, ...) and those of brain4it's own
// Java Kafka library (kafka-producer, kafka-consumer, kafka-delete-app),
// so that its scripts run unchanged: kafka-producer and kafka-consumer
// read their config keys as named arguments, with brain4it's defaults
// (see [kafkabpl.Config]'s Brain4it and the config keys' column "under
// kafka-consumer" in package kafkabpl's documentation), and warn of a key
// they do not know rather than fail.
//
// # Functions
//
// Handles are strings: "p", "c" (a consumer or a share consumer), "a" or "s" (a stream) and 32 hex digits. An admin target is
// an admin handle or a config (see package kafkabpl's documentation for
// configs and their keys). Every error message starts with the
// function's name, and scripts see errors as exceptions typed by
// [kafkabpl.ErrorType].
//
//	(kafka-create kind config)             kind "producer" "consumer" "share-consumer" "admin"; returns a handle
//	(kafka-producer servers "key" => v ...) brain4it's name: config keys as named arguments
//	(kafka-consumer servers "key" => v ...) likewise
//	(kafka-send id topics messages)        returns how many records were delivered
//	    named: "key" => k "partition" => n "headers" => ("h" => "v") "timestamp" => ms "records" => true
//	(kafka-poll id timeout-ms)             messages by topic, every subscribed topic (none: NotSubscribed)
//	(kafka-poll id topics timeout-ms)      subscribes first if needed; only those topics
//	(kafka-copy x)                         x with its text in memory of its own: to keep a message of a poll alone
//	(kafka-subscribe id topics)            the subscription after the call, sorted; () unsubscribes
//	(kafka-unsubscribe id [topics])        the remaining subscription, sorted
//	(kafka-commit id)                      true once everything polled is committed (a share consumer: acknowledged)
//	(kafka-ack id type)                    a share consumer's: every record of its latest poll not acknowledged yet;
//	                                       type "accept" "release" "reject" or "renew"; true
//	(kafka-ack id records type)            records of the latest poll: one in the records form, or a list of them
//	(kafka-seek id topic position)         position "beginning" "end" offset or ("timestamp" => ms);
//	    named: "partition" => p (default: every partition)
//	(kafka-destroy id)                     true; false if id was unknown
//	(kafka-delete-app id)                  brain4it's name for kafka-destroy
//
// The admin functions take a target: an admin handle, or a config for a
// client of the call's own. Each call ends within request-timeout.
//
//	(kafka-create-topics target topics)    ("t1" => true "t2" => false): created / already existed
//	    named: "partitions" => n "replication-factor" => r "configs" => ("retention.ms" => 60000)
//	(kafka-delete-topics target topics)    ("t1" => true ...): deleted / did not exist
//	(kafka-list-topics target)             ("t1" "t2"), sorted, internal topics left out
//	(kafka-describe-topics target [topics]) per topic, its partitions:
//	    ("t" => ("partitions" => (("partition" => 0 "leader" => 1 "replicas" => (1 2 0) "isr" => (1 2 0)) ...)) ...)
//	(kafka-describe-cluster target)
//	    ("cluster-id" => "..." "controller" => 1 "brokers" => (("id" => 0 "host" => "127.0.0.1" "port" => 9092) ...))
//	(kafka-create-partitions target topic count)  true; false when it already has count
//	(kafka-list-groups target)             ("g1" => "Stable" "g2" => "Empty")
//	(kafka-describe-group target group)
//	    ("group" => "g" "state" => "Stable"
//	     "members" => (("member-id" => m "client-id" => c "host" => h "assignment" => ("t" => (0 1))) ...)
//	     "lag" => ("t" => (("partition" => 0 "committed" => 5 "end" => 9 "lag" => 4) ...))
//	     "total-lag" => 4)
//	    a share group adds "type" => "share" after "state"; "committed" is its start offset
//	(kafka-list-offsets target topic [at])  (("partition" => 0 "offset" => 5) ...), "timestamp" => ms too for a time
//	    at: "latest" (the default, the end), "earliest" or ("timestamp" => ms)
//	(kafka-delete-records target topic ("0" => 100 "1" => -1))  each partition's new start offset (-1: up to the end)
//	(kafka-reset-offsets target group topic to)  the offsets committed, per partition (a share group's start offsets)
//	    to: "earliest", "latest", an offset, ("timestamp" => ms) or ("group" => other); the group must have no members
//	(kafka-delete-group target group)      true; a consumer group or a share group, which must have no members
//	(kafka-describe-configs target type name)  ("retention.ms" => "604800000" ...), sorted, a secret's value null
//	    type: "topic" and a topic's name, "group" and a group's, or "broker" and an id (1, "1", or "" for the brokers' shared default)
//	(kafka-alter-configs target type name ("retention.ms" => 60000 "cleanup.policy" => null))  true
//	    incremental: the configs not named stay; null puts one back to its default
//	(kafka-create-acls target acls)        (true ...): one element per ACL, true or why it was not created
//	    an ACL: ("principal" => "User:alice" "resource" => "topic" "name" => "t" "operation" => "read"
//	             ["host" => "*" "pattern" => "literal"|"prefixed" "permission" => "allow"|"deny"])
//	(kafka-describe-acls target [filter])  the ACLs that match, each as above with every element
//	(kafka-delete-acls target filter)      the ACLs deleted; a filter's missing elements match any, () is refused
//
// A partition that failed shows "offset" => null and an "error" element
// after it saying why. Each function is described in full with its
// method: [kafkabpl.Library.CreateTopics], [kafkabpl.Library.DeleteTopics],
// [kafkabpl.Library.ListTopics], [kafkabpl.Library.DescribeTopics],
// [kafkabpl.Library.DescribeCluster], [kafkabpl.Library.CreatePartitions],
// [kafkabpl.Library.ListGroups], [kafkabpl.Library.DescribeGroup],
// [kafkabpl.Library.ListOffsets], [kafkabpl.Library.DeleteRecords],
// [kafkabpl.Library.ResetGroupOffsets], [kafkabpl.Library.DeleteGroup],
// [kafkabpl.Library.DescribeConfigs], [kafkabpl.Library.AlterConfigs],
// [kafkabpl.Library.CreateACLs], [kafkabpl.Library.DescribeACLs] and
// [kafkabpl.Library.DeleteACLs].
//
// kafka-send sends every message to every topic, in order. messages is one
// value or a list of values, and a message's name in the list is its key:
//
//	(kafka-send p "sensors" ("s1" => "21.5" "s1" => "21.7" "no key"))
//
// sends three messages, two with key "s1". To send one list as one message
// (with the JSON or BPL serializer), wrap it: (kafka-send p "t" (("a" => 1))).
// With "records" => true each message is a record list with "key" "value"
// "partition" "headers" "timestamp". The call returns when every record is
// acknowledged, within send-timeout; one call is sent in batches.
//
// kafka-poll returns ("t1" => (messages) "t2" => ()) with every subscribed
// topic, sorted, each message its value, named by its key when the key is
// not null:
//
//	("sensors" => ("s1" => "21.5" "s1" => "21.7" "no key"))
//
// The keys and values of a poll's messages are copied out of the fetched
// records into one allocation for the whole poll, which each message
// refers into: the list never holds the fetched batch, and a poll costs
// a few allocations however many messages it has. Hazard: a message a
// script keeps (its value or its name, in a variable or another list)
// keeps its whole poll's text alive, at most max-poll-records messages':
// 64 KB per kept message with 500 records of 100 bytes (measured:
// BenchmarkPollKeep in package kafkabpl), until nothing of that poll is
// kept. A script that keeps a few messages of many polls (the latest
// value of each key, say) keeps copies: (kafka-copy x) gives x with its
// text in memory of its own (a string or bytes copied; a list at every
// depth, names too), so
//
//	(for-each msgs (k v) (put latest (kafka-copy k) (kafka-copy v)))
//
// keeps about 160 bytes a message, not its poll. (clone x) does not do
// this: it copies lists, never their text.
//
// With the consumer config "poll-format" => "records", each message is
//
//	("topic" => "sensors" "partition" => 0 "offset" => 7 "timestamp" => 1700000000123
//	 "key" => "s1" "value" => "21.5" "headers" => ("unit" => "C"))
//
// and a message that cannot be deserialized always comes in this form, with
// its raw key and value and an "error" element saying why: it is never
// dropped and never stalls the consumer. A share consumer's record adds
// "delivery-count" => n (1 the first time) and "acquisition-deadline" =>
// ms (when its lock ends).
//
// # Share consumers: queues
//
// A share consumer is a member of a share group (Kafka 4.0's KIP-932):
// the members split the records of a topic, record by record, even those
// of one partition, as an IoT command queue or a pool of job workers
// wants. It needs "group", polls, subscribes, commits and is destroyed as
// a consumer is, and cannot seek:
//
//	(set w (kafka-create "share-consumer" (list "servers" => kafka-servers "group" => "workers"
//	  "topics" => "jobs" "auto-offset-reset" => "earliest" "poll-format" => "records")))
//	(### "release: delivered again, to any member, \"delivery-count\" one higher")
//	(for-each (get (kafka-poll w 1000) "jobs") r
//	  (if (run-job (get r "value"))
//	    (kafka-ack w r "accept")
//	    (kafka-ack w r "release")))
//	(### "kafka-commit sends the acknowledgements; refused ones are a KafkaError")
//	(kafka-commit w)
//
// "reject" archives a record, never to be delivered again; "renew"
// extends its lock. What a poll returned and was not acknowledged is
// accepted by the next kafka-poll or kafka-commit (Java's default,
// implicit acknowledgement); kafka-destroy gives it back to the group
// instead, as does a worker that dies, at the latest when the record's
// lock ends. A share group starts a partition where its group config
// share.auto.offset.reset says, "latest" unless set: a share consumer's
// "auto-offset-reset" sets it, for the whole group, when the consumer is
// created; (kafka-alter-configs target "group" g
// ("share.auto.offset.reset" => "earliest")) sets it as an operator
// would. kafka-describe-group shows a share group with "type" =>
// "share" after its "state". [kafkabpl.ShareConsumer] and
// [kafkabpl.Library.Ack] say the rest.
//
// # Streams
//
// A stream reads topics, runs a BPL function on each message and writes
// what it returns, on goroutines of its own while the script goes on:
//
//	(kafka-stream config "from" => topics "to" => topic "transform" => fn)   returns a handle "s..."
//	    named: "guarantee" => "exactly-once" (default) | "at-least-once"
//	           "on-error" => "stop" (default) | "skip" | "dead-letter"
//	           "dead-letter-topic" => t (default: "<input topic>.dlq")
//	           "on-commit" => (function () ...)  called after each batch that did something commits
//	                                              (to tell dashboards: (module-notify "@chart"))
//	           and any config key, as kafka-create takes it; "group" is required
//	(kafka-stream-status id)
//	    ("state" => "running" "processed" => n "produced" => n "dropped" => n "skipped" => n
//	     "dead-lettered" => n "lag" => n "transactions" => n "aborted" => n "reinits" => n
//	     "last-error" => null)
//	(kafka-destroy id)                     commits the batch in hand, leaves the group
//
// config is read like a consumer's and a producer's together. "group" is
// the stream's application id: processes started with the same group
// share the input partitions. The transform gets the input as a record
// list ("topic" "partition" "offset" "timestamp" "key" "value"
// "headers") and returns:
//
//	null                                   nothing is written (a filter)
//	any other value, lists included        one message to "to", with the input's key
//	(kafka-output v "topic" => t "key" => k "partition" => p "headers" => (...) "timestamp" => ms)
//	                                       one message with its own topic, key (none given: the input's; null: none), ...
//	(kafka-outputs a b ...)                several messages, each a value or a kafka-output
//
// An output's timestamp, when it gives none, is its input's.
//
// kafka-output and kafka-outputs return values of their own kind, never
// lists, so a list a transform returns (a JSON array, say) is always one
// message's value. "on-error" decides what becomes of an input that cannot
// be deserialized, a transform that throws and an output that cannot be
// serialized: "stop" (the stream fails), "skip", or "dead-letter".
// kafka-stream is [stream.Runtime.Start]: what a stream guarantees
// under each "guarantee" and each "on-error" is said there, with
// [stream.Spec], and in package kafkabpl's documentation
// (Streams). kafkabpl run keeps running while a script's streams run, and
// exits 1 when one failed.
//
// # Stateful streams
//
// A stream can keep state per key, or per key and window, in a store named
// by "store" (see [stream.Spec] for the guarantees,
// [stream.Window] for the windows):
//
//	(kafka-stream config "from" => topic "to" => topic "store" => name
//	  "transform" => (function (in state) ...))
//	    the transform gets the input and its key's state (null at first) and returns
//	    (kafka-state new-state output ...)     the key's new state (null deletes it), and
//	                                           outputs as kafka-outputs takes them
//	    null                                   the state as the function left it; no output
//	(kafka-stream config "from" => topic "to" => topic "store" => name
//	  "window" => ("type" => "tumbling" "size" => ms)
//	  "aggregate" => (function (in acc) ...)) the window's new aggregate; acc is null for a new one
//	    window: "type" => "tumbling" (with "size") | "hopping" ("size", "advance") | "session" ("gap")
//	            "grace" => ms (default 0)       how long after its end a window still takes inputs
//	            "emit" => "close" (default)     one result per window, when it closes
//	                      | "update"            a result after every input it takes
//	            "late" => "drop" (default) | "dead-letter"   inputs for closed windows
//	            "idle" => ms (default 0: off)   a partition without input that long moves its time on
//	                                            with the wall clock, so that its windows close
//	    "rekey" => (function (in) key)         state (or windows) by this key rather than the input's, through
//	                                           the repartition topic "<group>-<store>-repartition"
//	    "merge" => (function (a b) ...)        session windows: the aggregate of two sessions an input bridges
//	    "result" => (function (w) ...)         a closed window's outputs, as a transform returns them;
//	                                           w is ("key" "start" "end" "value" "final")
//	                                           (default: ("start" => ms "end" => ms "value" => acc),
//	                                           keyed by the window's key)
//	    "standbys" => n (default 0)           each store partition's warm copies on n other members of the
//	                                           group, which follow its changelog: a takeover reads only its tail
//
// kafka-stream-status adds "store" => ("name" "changelog" "partitions"
// "keys" "windows" "bytes" "restoring" "restore-read" "restore-total"
// "restored" "late" "timers" "fired"), and with "standbys" ("standbys-wanted"
// "member" "takeovers" "standbys" => (("partition" "position" "end" "lag"
// "keys" "error") ...) "placement" => (("partition" "owner" "standbys") ...)):
// the copies this process keeps and how far behind each is, and each
// partition's owner and standbys (see [stream.Spec] Standbys). How the store keeps state, and when
// windows close, is said in package kafkabpl's documentation (Stateful
// streams).
//
// # Queries
//
// A stateful stream's store can be read while it runs:
//
//	(kafka-store-get id key)                 the key's committed state, or null
//	(kafka-store-range id [from to])         (key => state ...), keys from from to to (bytewise; none: all)
//	(kafka-store-windows id key [since until]) a windowed store's open windows of key starting from
//	                                         since to until (ms): (("start" => ms "end" => ms "value" => v) ...)
//
// They read what the stream's last committed transaction left. A key
// whose partition is being restored here raises NotReady; a key whose
// partition another process of the group holds is asked of it, at the
// query endpoint it advertises (config "query-endpoint"; kafkabpl serve
// sets it, and forwards), and raises NotReady while the group settles or
// when the owner does not answer within the stream's config
// "query-forward-timeout" (5000 ms by default), NotHeld when it cannot be
// asked. kafka-store-range reads this process's
// partitions only. See [stream.Runtime.StoreGet].
// A stream with "standbys" reads its standby copies of the partitions
// other members hold too:
//
//	(kafka-store-standby-get id key)         ("state" => s "partition" => n "lag" => n "stale" => bool), or null
//	(kafka-store-standby-range id [from to]) (key => ("state" "partition" "lag" "stale") ...)
//
// "lag" is the changelog offsets the copy has not applied yet, as its
// last fetch saw them; "stale" is true when that is not 0: the owner's
// state may be ahead. See [stream.Runtime.StoreStandbyGet].
//
// # Timers
//
// A stream with per-key state can be called for a key at a time rather
// than for an input:
//
//	(kafka-stream config "from" => topic "to" => topic "store" => name "transform" => fn
//	  "on-timer" => (function (timer state) ...)   timer: ("key" "kind" "at" "partition");
//	                                               returns (kafka-state new-state output ...), keyed by the timer's key
//	  "silence" => ms)                             a key without input that long (by the clock) gets a call,
//	                                               kind "silence", once until its next input
//	(kafka-set-timer "wall-clock"|"stream-time" ms) from the transform or on-timer: the key's timer (one per key);
//	                                               "stream-time" fires when its partition's inputs' timestamps reach ms
//	(kafka-cancel-timer)                           the key's timer goes
//
// Timers and silences are kept with the key's state, in the store and its
// changelog: exactly once as the state is, and one due while no process
// runs the stream fires once one does. [stream.SetTimer] and
// [stream.OnTimer] say the rest.
//
// # Interval joins
//
// A stream of two co-partitioned topics can join their records of the
// same key that come within a time window of each other:
//
//	(kafka-stream config "from" => (left-topic right-topic) "to" => topic "store" => name
//	  "interval-join" => ("before" => ms "after" => ms)   a left record at t matches right ones from t - before to t + after
//	  "transform" => (function (left right) ...))       the two records; returns outputs as a transform does,
//	                                                    keyed by the records' key unless they say otherwise
//	    interval-join: "window" => ms                   as far before as after (instead of "before" and "after")
//	                   "grace" => ms (default 0)        how far out of order records may come
//	                   "kind" => "inner" (default)      pairs only
//	                           | "left"                 ... and each left record that matched none, with null
//	                                                    for right, when it expires
//	                           | "outer"                ... and each right record that matched none, with null for left
//	                   "late" => "drop" (default) | "dead-letter"   records the stream time left behind
//
// Each pair is joined once, when its later record is processed. Both
// sides' records wait in the store (a key's records are its state, in
// the changelog) until the stream time passes them by before + after +
// grace; then they expire. See [stream.IntervalJoin].
//
// # Tables and joins
//
// A stream, stateless or stateful, can read compacted topics as tables,
// the latest value per key, and join its inputs with one:
//
//	(kafka-stream config "from" => topic "to" => topic "transform" => fn
//	  "tables" => ("devices" => "device-registry" ...)   name => topic; or a topic, or a list of topics
//	    name => ("topic" => topic                      or a table's settings:
//	             "partitioned" => true                 co-partitioned with the inputs (default false: global)
//	             "hold" => ms)                         a partitioned table's update later than its inputs waits that long (2000)
//	  "join" => "devices"                              each input's "joined" element: the table's value for its key
//	  "join-kind" => "inner" (default)                 inputs whose key the table lacks are dropped
//	               | "left")                           ... or joined with null
//	(kafka-lookup table key)                           from a stream's function: the table's value for key, or null
//
// Every process of the stream reads each global table whole, to its end,
// before the stream's first input, then follows its updates; an input is
// joined with what the table holds when it is processed. A partitioned
// table has the inputs' partition count (the stream fails otherwise), and
// each process holds only the partitions it is assigned of its inputs,
// restored before their input is fetched; an input of partition N with
// timestamp T sees the updates of the table's partition N fetched so far
// up to T, and none later (timestamp order, as in Kafka Streams);
// kafka-lookup of a partitioned table is for a key of a partition the
// process holds (an error otherwise). The table's topic must exist (the
// stream fails otherwise) and should be compacted (a warning otherwise).
// kafka-stream-status adds "tables" => (name => ("name" "topic" "ready"
// "keys" "bytes" "read" "total" "updates" and, partitioned, "partitioned"
// "partitions" "restoring" "pending") ...). See [stream.Table] and
// [stream.Join].
//
// Values, configs and their keys, serializers, the schema registry,
// errors and timeouts are those of package kafkabpl, described there.
package functions
