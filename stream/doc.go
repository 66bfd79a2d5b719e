// Package stream is kafkabpl's stream processor: transforms between
// Kafka topics, stateless or with state per key or per window, tables and
// joins, re-keying, timers, interval joins, store queries across
// processes and standby copies, exactly once through Kafka transactions or
// at least once. It is built over package kafkabpl's exported API, as
// kadm is over kgo: a stream reads its config as a client's, and is a
// handle of a [kafkabpl.Library] ([kafkabpl.Stream], an id starting with
// "s"), which [kafkabpl.Library.Destroy] and [kafkabpl.Library.Close]
// stop. [Of] gives a Library's [Runtime], which starts streams and
// answers their status and their stores' queries:
//
//	streams := stream.Of(lib)
//	id, err := streams.Start(ctx, config, stream.Spec{From: []string{"readings"}, To: "alerts", Transform: alert})
//	st, err := streams.Status(ctx, id)
//	err = lib.Destroy(ctx, id)
//
// BPL scripts reach the same through package functions (kafka-stream,
// kafka-store-get, ...); package streamtest runs streams in virtual time.
//
// # Streams
//
// A stream ([Runtime.Start]) reads topics, runs a [Transform] on each
// record and writes what it returns, on goroutines of its own. Its config
// is read like a consumer's and a producer's together; "group" is the
// stream's application id: processes started with the same group share
// the input partitions. Under exactly-once (see [ExactlyOnce]) a batch's
// outputs, its dead letters and its input offsets are committed in one
// transaction; under at-least-once the outputs are acknowledged before the
// inputs are committed. An input that cannot be deserialized, a transform
// that fails and an output that cannot be serialized are handled as the
// stream's [OnError] says: stop (the stream fails, nothing from that input
// on is committed), skip, or dead-letter (the input's key, value and
// headers, with headers dlq-error, dlq-error-type, dlq-source-topic,
// dlq-source-partition and dlq-source-offset). The outputs of one input
// partition are written in input order. [Runtime.Status] reports a
// stream's state and counts.
//
// # Stateful streams
//
// A stream can keep state per key ([Spec]'s Update), or per key and
// window ([Window]), in a store named by [Spec]'s Store (see
// [Spec] for the guarantees).
//
// A stateful stream reads one topic, or several co-partitioned ones (see
// [Spec]), whose inputs need keys (state is kept
// by the key's bytes; an input with a null key is an error, handled by the
// stream's OnError). Windows are timed by the inputs' timestamps: a
// partition's stream time is the latest timestamp it has read, and a window
// [start, end) closes when the stream time reaches its end plus the grace.
// A session holds a key's inputs at most the gap apart, and closes when the
// stream time passes its last input by more than the gap plus the grace (an
// input exactly the gap after it still joins it). An input whose windows
// have all closed is late. The store is held in memory per input partition
// (or on disk: see below) and in the compacted topic "<group>-<store>-changelog" (created with the
// input's partition count, or checked against it), written in the
// transaction of the outputs and the input offsets; when a process is
// assigned a partition, it restores the partition's state from the
// changelog before processing any of its input, while its other partitions
// go on (a restore first waits for a transaction a crashed owner left open
// on the changelog to end). State values are kept exactly (3.0 stays a
// float); [Status] reports the store ([StoreStatus]). Under
// at-least-once an input processed again after a crash is counted again in
// the state.
//
// A stateful stream with a [Rekey] keeps its state by a key of the
// function's choosing: it writes each input with its new key to its
// repartition topic, "<group>-<store>-repartition", and keeps state from
// that topic, each step exactly once (Kafka Streams' groupBy).
//
// A stateful stream with Standbys ([Spec]) has other members of its
// group keep warm copies of each store partition by following its
// changelog: the member that takes a partition over goes on from its
// copy's position, reading only the changelog's tail, to the same state a
// full restore gives. The copies are read with [Runtime.StoreStandbyGet]
// and [Runtime.StoreStandbyRange], marked stale with their lag, and
// [StoreStatus] shows each partition's owner and standbys and each copy's
// lag.
//
// [Runtime.StoreGet], [Runtime.StoreRange] and [Runtime.StoreWindows] read
// a store's committed state while its stream runs. Several processes of a
// stream's group answer every key together: each advertises the config's
// "query-endpoint" (or [Runtime.SetQueryEndpoint]'s) in its group
// membership, and a query for a key of a partition held elsewhere is sent
// to the owner through [Runtime.SetStoreForwarder]'s forwarder, where
// [Runtime.AnswerStoreQuery] answers it (package server does both over
// HTTP). A key of a partition being restored, or of a group that is
// rebalancing, or of an owner that does not answer within the config's
// "query-forward-timeout" (5 s by default), gives [kafkabpl.ErrNotReady];
// one held where it cannot be asked, [kafkabpl.ErrNotHeld].
//
// # State on disk
//
// A store whose config gives "state-dir" (or whose [Runtime] has
// one: [Runtime.SetStateDir]) keeps its state on local disk, under
// "<state-dir>/<group>/<store>", in a pebble database: per partition, the
// committed state (a windowed store's windows, indexed by close time, and
// its stream time) and the changelog position it reflects, written in one
// atomic batch once the batch's Kafka transaction committed. An aborted
// batch never reaches the disk, so the disk holds committed state after
// any crash, and a partition's restore reads only the changelog after
// that position (none of it after a clean stop). Memory holds the batch
// in hand's keys, pebble's caches (some 100 MiB a store at most) and a
// filter of the keys on disk (10 bits a key, so that a new key's read
// asks no disk), not the state.
// A directory that is missing, cannot be read, holds
// another store's state, or is ahead of its changelog is rebuilt from the
// changelog, and the library's log says why. One process at a time holds
// a directory ([Runtime.Start] fails naming the holder). Standby copies
// are kept there too: a copy is the partition's state on disk, followed
// from the position it is at, so a partition that moves away and comes
// back, as a copy or held, reads only the changelog it missed. A
// partition this process neither holds nor follows stays on disk for the
// config's "state-cleanup-delay" (10 minutes by default, as Kafka
// Streams' state.cleanup.delay.ms), then is deleted. A partitioned
// table's rows are kept on disk too ([Table].Partitioned); a global
// table's in memory. [StoreStatus] shows the directory, its size and each
// partition's last restore.
//
// # Timers
//
// A per-key stateful stream can have a key called at a time rather than
// for an input ([Spec]'s OnTimer): its functions set the key's timer
// by stream time or by the clock ([SetTimer]), and a key that gets no
// input for the spec's Silence is called once, by the clock, even when no
// other input arrives. A silence is counted from when the stream processed
// the key's last input (the wall clock then, not the input's timestamp):
// after an outage longer than the silence, every key's silence is due at
// the restart, and a key whose input waits behind the first batch gets
// its call even though it kept sending. A key's timer and last input time are kept with its
// state, in the changelog: a timer fires once under exactly-once, and one
// due while the stream was down fires after the restore. Timers cost one
// heap entry per pending timer and per key under a silence watch. A store
// with timers keeps each state in a wrapper of its own, with the key's
// timer: give a stream that gains timers a new store (the stream fails on
// a state written without them).
//
// # Interval joins
//
// A stream of two co-partitioned topics can join their records of the
// same key whose timestamps are close ([Spec]'s Interval,
// [IntervalJoin]: Kafka Streams' stream-stream join): a left record at
// time t matches the right records from t - Before to t + After. Each
// record is joined when it is processed with the other side's records
// buffered in the window, then buffered itself, so each pair is joined
// once, when its later record comes. The buffers are the store's state
// (a key's records, both sides, are its state), in its changelog:
// exactly once, restored on assignment, and expired by the partition's
// stream time (the latest timestamp buffered) once it passes a record by
// Before + After + Grace, which keeps the store bounded; left and outer
// joins then write the records that matched nothing. A record the stream
// time left behind by more than its window and the grace is late.
//
// # Timestamp order
//
// A stateful stream of several inputs (an interval join's two topics, or
// several co-partitioned From topics) takes each store partition's next
// input by timestamp across its inputs, as a Kafka Streams task takes its
// next record across its partitions, not in the order they were fetched:
// what a poll fetched of them is merged, the earliest first (the first
// input's on a tie; each input's records stay in offset order). An input
// of which nothing is fetched is waited for up to the config's
// "max-task-idle" (ms; Kafka Streams' max.task.idle.ms): meanwhile the
// partition's records of the other inputs are held, polled and not
// processed (the offsets a batch commits stop before them, so a crash or
// a rebalance reads them again), and once it passes they are taken
// without it until it has records again. The default, 0, waits for
// nothing beyond what is fetched: a batch of one topic fetched before the
// other's is processed first, and may push the partition's stream time
// past the other's records, which windows and interval joins then count
// late. Hazard: a positive value delays every input whose co-partitioned
// input is silent by as much, and the records held stay in memory
// meanwhile (polling goes on, so no group or transaction timeout runs).
//
// # Tables and joins
//
// A stream can read compacted topics as tables, the latest value per key
// ([Spec]'s Tables, [Table]): its functions look keys up with
// [Lookup], and [Join] joins each input with its key's value, inner
// (inputs whose key the table lacks are dropped) or left. A table is
// global by default: every process of the stream holds every partition of
// it, read to its end before the stream's first input and followed after;
// an input sees what its table holds when it is processed, not what it
// held at the input's timestamp. A partitioned table
// ([StreamTable.Partitioned]) is co-partitioned with the inputs: each
// process holds the partitions it is assigned, restored before their
// input is fetched, and its updates are applied in timestamp order with
// the inputs (an update up to an input's timestamp, fetched, is seen by
// it; a later one is not), as in Kafka Streams' table joins.
package stream
