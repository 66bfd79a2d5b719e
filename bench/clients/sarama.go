package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// saramaClient is IBM sarama: a SyncProducer (SendMessages per call) and a
// ConsumerGroup, with acks all and its defaults otherwise (not
// idempotent, unlike kgo and the library).
type saramaClient struct{}

func (*saramaClient) name() string { return "sarama" }

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "bench"
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	return cfg
}

func (*saramaClient) produce(ctx context.Context, p *params, topic string) error {
	pr, err := sarama.NewSyncProducer(strings.Split(p.servers, ","), saramaConfig())
	if err != nil {
		return err
	}
	for i := 0; i < p.records; i += p.batch {
		msgs := make([]*sarama.ProducerMessage, p.batch)
		for j := range msgs {
			msgs[j] = &sarama.ProducerMessage{Topic: topic, Key: sarama.ByteEncoder(p.keyBytes[i+j]), Value: sarama.ByteEncoder(p.valueB)}
		}
		if err := pr.SendMessages(msgs); err != nil {
			pr.Close() // closing twice panics
			return err
		}
	}
	return pr.Close()
}

func (*saramaClient) sendOne(ctx context.Context, p *params, topic string) error {
	pr, err := sarama.NewSyncProducer(strings.Split(p.servers, ","), saramaConfig())
	if err != nil {
		return err
	}
	for i := range p.sends {
		if _, _, err := pr.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.ByteEncoder(p.keyBytes[i]), Value: sarama.ByteEncoder(p.valueB)}); err != nil {
			pr.Close()
			return err
		}
	}
	return pr.Close()
}

type saramaHandler struct {
	chk    *checker
	want   int
	cancel context.CancelFunc
	err    error
}

func (*saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (*saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		if err := h.chk.record(m.Topic, m.Partition, m.Key, m.Value); err != nil {
			h.err = err
			h.cancel()
			return err
		}
		sess.MarkMessage(m, "")
		if h.chk.got == h.want {
			h.cancel()
			return nil
		}
	}
	return nil
}

func (*saramaClient) consume(ctx context.Context, p *params, topic, group string, chk *checker) error {
	g, err := sarama.NewConsumerGroup(strings.Split(p.servers, ","), group, saramaConfig())
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			g.Close()
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	h := &saramaHandler{chk: chk, want: p.records, cancel: cancel}
	for cctx.Err() == nil {
		if err := g.Consume(cctx, []string{topic}, h); err != nil {
			return err
		}
	}
	if h.err != nil {
		return h.err
	}
	if chk.got != p.records {
		return fmt.Errorf("after %d records: %w", chk.got, cctx.Err())
	}
	closed = true
	return g.Close()
}
