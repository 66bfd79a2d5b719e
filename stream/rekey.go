package stream

import (
	"context"
	"errors"
	"fmt"

	"github.com/brain4it/kafkabpl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Re-keying: a stateful stream that keeps state by another key than its
// inputs' (per site rather than per device) writes each input, with its
// new key, to a repartition topic, and reads that topic for its state, as
// Kafka Streams' groupBy does. Both steps are the stream's own
// transactions: exactly once end to end.

// Rekey is a stateful stream's new key for an input: its state is kept,
// and its windows are timed, by that key. An error goes to the stream's
// OnError policy.
type Rekey func(ctx context.Context, in *kafkabpl.Record) (key any, err error)

// repartitionTopic is the repartition topic of a spec with Rekey.
func (spec *Spec) repartitionTopic(cfg *kafkabpl.ClientConfig) string {
	return cfg.Group() + "-" + spec.Store + "-repartition"
}

// subscribeRepartition subscribes a re-keying stream's client to its
// inputs and its repartition topic together, once the stream has created
// that (or found it): subscribed from the start, the client's metadata
// requests would have the brokers create it with their default partition
// count. Until then the client reads nothing and is in no group. Adding
// the repartition topic later, to a group already processing the inputs,
// rebalanced it while a transaction held offsets for the group, and the
// new partition's offset fetch then met UNSTABLE_OFFSET_COMMIT, which kgo
// retries after a second: the re-keyed records waited that second.
func (s *stream) subscribeRepartition() {
	if s.spec.Rekey != nil {
		s.cl.AddConsumeTopics(append([]string{s.store.inputs[0]}, s.spec.From...)...)
	}
}

// consumed returns the topics the stream reads: its inputs, and its
// repartition topic when it re-keys (see subscribeRepartition).
func (spec *Spec) consumed(cfg *kafkabpl.ClientConfig) []string {
	if spec.Rekey == nil {
		return spec.From
	}
	return append(append([]string(nil), spec.From...), spec.repartitionTopic(cfg))
}

// stateInputs returns the topics whose records a stateful stream keeps
// state of: its inputs, or its repartition topic when it re-keys.
func (spec *Spec) stateInputs(cfg *kafkabpl.ClientConfig) []string {
	if spec.Rekey == nil {
		return spec.From
	}
	return []string{spec.repartitionTopic(cfg)}
}

// rekeyed returns the repartition record of an input: its value, headers
// and timestamp, with the new key.
func (s *stream) rekeyed(in *kafkabpl.Record) (*kgo.Record, error) {
	key, err := s.spec.Rekey(s.workCtx, in)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "rekey: the new key is null; state is kept by key")
	}
	topic := s.store.inputs[0]
	k, err := s.cfg.KeySerializer().Encode(s.workCtx, topic, key, 1, "key")
	if err != nil {
		return nil, fmt.Errorf("rekey: %w", err)
	}
	r := s.newRecord()
	*r = kgo.Record{Topic: topic, Key: k, Value: in.ValueBytes(), Headers: in.Kgo().Headers, Timestamp: in.Timestamp(), Partition: -1}
	return r, nil
}

// checkRepartition creates the repartition topic, with as many partitions
// as the input with the most (as Kafka Streams does), or leaves the one
// there as it is; it reports whether the topic is there. Inputs missing
// are waited for.
func (s *stream) checkRepartition(ctx context.Context, adm *kadm.Client) (bool, error) {
	topic := s.store.inputs[0]
	topics, err := topicPartitions(ctx, s.cl, append([]string{topic}, s.spec.From...)...)
	if err != nil {
		return false, nil
	}
	if t, ok := topics[topic]; ok {
		if t.err == nil {
			s.subscribeRepartition()
		}
		return t.err == nil, nil
	}
	n := 0
	for _, in := range s.spec.From {
		t, ok := topics[in]
		if !ok || t.err != nil {
			return false, nil
		}
		n = max(n, t.n)
	}
	_, err = adm.CreateTopic(ctx, int32(n), -1, nil, topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return false, kafkabpl.Wrapf(kafkabpl.ErrKafka, err, "store %q: create its repartition topic %q", s.store.name, topic)
	}
	if err == nil {
		s.log(fmt.Sprintf("stream %s: store %q: created its repartition topic %q, %d partitions", s.h.ID(), s.store.name, topic, n))
	}
	return false, nil // checked again before the next poll, as the changelog is
}
