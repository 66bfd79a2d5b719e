// Package store holds a stateful stream's state. For now it holds the
// state's encoding, [Encode] and [Decode]: how a state value is written
// to a changelog and read back, losslessly.
//
// The package knows no Kafka client.
package store
