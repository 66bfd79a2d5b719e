// Package murmur2 is the hash Kafka's default partitioner places keyed
// records with: a stream's store finds a key's partition so, and the
// tests check that producers place keys as Java's client does.
package murmur2

import "encoding/binary"

// Partition is the partition of n that Kafka's default partitioner
// (Java's, and kafkabpl's "murmur2") gives a record of key k: Sum of
// the key's bytes, made positive, modulo n.
func Partition(k []byte, n int) int32 {
	return int32((Sum(k) & 0x7fffffff) % uint32(n))
}

// Sum is Kafka's Utils.murmur2, written from the algorithm (seed
// 0x9747b28c, m 0x5bd1e995, r 24, little-endian 4-byte blocks). kgo's
// partitioner computes the same, but makes a random source per topic.
func Sum(data []byte) uint32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	n := len(data)
	h := uint32(seed) ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := binary.LittleEndian.Uint32(data[i:])
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := data[n&^3:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
