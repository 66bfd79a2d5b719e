package kafkabpl

import (
	"github.com/brain4it/kafkabpl/internal/box"
	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
)

// A poll's BPL lists are built whole when asked for (Polled.List): the
// keys and values read as text (the String deserializer's, the default)
// are copied out of the fetched records into one arena per poll, one
// allocation with their boxed headers (see box.TextArena.Box), and each
// message refers into it. So the lists never hold kgo's fetched batches,
// and a poll of n messages costs a few allocations, not one or more per
// message; a message a script keeps holds its whole poll's text, which
// max-poll-records bounds.

// textRoom is what an arena needs for the text of recs' messages: the
// values to box, and the bytes of their keys and values. It counts
// records that turn out to be in the records form (a value that does not
// deserialize) too: a little room unused, rather than a second check.
func textRoom(recs []Record) (boxes, size int) {
	for i := range recs {
		r := &recs[i]
		if r.cfg.pollRecords {
			continue // in the records form: Record.List copies its own
		}
		if r.cfg.valDeser == serde.String && len(r.r.Value) > 0 {
			boxes++
			size += len(r.r.Value)
		}
		if r.cfg.keyDeser == serde.String {
			size += len(r.r.Key)
		}
	}
	return boxes, size
}

// fillMessages makes msgs, an empty list, one topic's records as
// kafka-poll gives them: each message its value, named by its key, or
// the records form for a record read in that form or that could not be
// deserialized. String keys and values are copied into arena, sized by
// textRoom; other deserializers' values are decoded each on its own.
func fillMessages(msgs *value.List, recs []Record, arena *box.TextArena) {
	vals := make([]any, len(recs))
	var names []string // nil until a record has a key
	for i := range recs {
		r := &recs[i]
		cfg := r.cfg
		strs := cfg.keyDeser == serde.String && cfg.valDeser == serde.String // no check: never an error
		if cfg.pollRecords || !strs && r.Err() != nil {
			vals[i] = r.List()
			continue
		}
		key, val := r.r.Key, r.r.Value
		switch {
		case val == nil:
		case cfg.valDeser == serde.String:
			vals[i] = arena.Box(val)
		default:
			vals[i] = ownBytes(r.Value())
		}
		if key == nil {
			continue
		}
		if names == nil {
			names = make([]string, len(recs))
		}
		if cfg.keyDeser == serde.String {
			names[i] = arena.Text(key)
		} else {
			names[i] = keyName(r.Key())
		}
	}
	msgs.Reset(vals, names)
}
