// Package functions is the BPL function table of package kafkabpl: the
// functions a BPL runtime registers (kafka-create, kafka-send, kafka-poll,
// kafka-stream, the admin functions, ...), each a thin adapter over a
// [kafkabpl.Library]'s methods. [Table] returns them.
package functions
