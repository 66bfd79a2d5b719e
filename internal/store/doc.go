// Package store holds a stateful stream's state: per input partition, a
// value per key (a per-key store) or a key's open windows (a windowed
// store), changed in place by the batch in hand, which logs what each
// key and window was before it; a commit makes the batch's changes the
// committed state, an abort puts back what the log says, so an aborted
// batch leaves no trace. (An overlay of copies, which an abort would
// simply drop, cost a slot, a window list and a window per input.) The
// changes of a batch are written out as changelog records of (partition,
// key, value), and a changelog read back is applied to a partition's
// state record by record, which is how a partition is restored.
//
// The package knows no Kafka client: its caller reads and writes the
// changelog topic, runs the transactions, and calls the user's functions,
// handing the store closures of them where the store needs one (a
// window's aggregate, a session's merge).
//
// # The interface
//
// A [Store] is made with [New]. A partition's state is a [Part]:
//
//   - made with [Store.NewPart], filled with [Store.Apply] (a restore,
//     which [Store.Grow] may size first), then held with [Store.Adopt]
//     (its input may be processed, and reads see it) until [Store.Drop];
//   - changed by the batch in hand: [Store.State] and [Store.SetState] (a
//     per-key store), [Store.Fold] (a windowed one), [Store.Idle] and
//     [Store.CloseDue] (windows that close);
//   - the batch ends with [Store.Changelog] (its records), then
//     [Store.Commit] or [Store.Abort];
//   - [Store.Counts] and [Part.Counts] count what is held, for a status;
//   - [Store.Partitions], [Store.Get], [Store.Range] and [Store.Windows]
//     read the committed state, from any goroutine; [Part.Get],
//     [Part.Range] and [Part.Windows] read one part's, held or not (a
//     standby's, which Apply fills as it follows the changelog).
//
// # Concurrency
//
// One goroutine, the run goroutine, owns the held parts' contents: it
// alone runs batches (State to Abort, Idle, Closing), Adopt and Drop. A
// part not yet held is owned by the goroutine that fills it with Apply (a
// restore), which may run beside the run goroutine. The store's lock
// guards the map of held parts: Adopt and Drop change it under it, and
// the run goroutine reads it without. Each part's lock guards what other
// goroutines see of it: its keys, the encodings of their states and
// windows, the batch's log, and its counts. Its owner changes those under
// the lock, once per state set, input folded, part committed or aborted,
// or chunk of records applied, and reads them without; reads, Counts and
// Part.Counts take it. No lock is held while a closure of the caller
// runs, so that a closure may read the store (its committed state: not
// what the batch in hand changed).
//
// Reads show committed state only: a key or window the batch in hand
// changed reads as the batch's log says it was before, never as a batch
// that may still abort left it. They return copies of the encodings,
// which [Decode] reads (a per-key or windowed store's); a store fed only
// by Apply holds whatever its records held. A read holds the part's lock
// while it copies what it returns (a Range or Windows over many keys
// holds up the run goroutine as long); it calls its function after.
package store
