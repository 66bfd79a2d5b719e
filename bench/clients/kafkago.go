package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// kafkagoClient is segmentio kafka-go: a Writer (WriteMessages per call,
// synchronous, its batch size set to the call's size so that it never
// waits for its batch timeout) and a Reader in a consumer group,
// committing every 5 s like kgo's autocommit.
type kafkagoClient struct{}

func (*kafkagoClient) name() string { return "kafkago" }

// writer has a transport of its own: the default one is shared and caches
// metadata for 6 s, so it does not know a topic created since.
func writer(p *params, topic string, batch int) *kafka.Writer {
	return &kafka.Writer{
		Transport:    &kafka.Transport{},
		Addr:         kafka.TCP(strings.Split(p.servers, ",")...),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchSize:    batch,
		BatchTimeout: time.Millisecond,
	}
}

func (*kafkagoClient) produce(ctx context.Context, p *params, topic string) error {
	w := writer(p, topic, p.batch)
	defer w.Close()
	for i := 0; i < p.records; i += p.batch {
		msgs := make([]kafka.Message, p.batch)
		for j := range msgs {
			msgs[j] = kafka.Message{Key: p.keyBytes[i+j], Value: p.valueB}
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			return err
		}
	}
	return w.Close()
}

func (*kafkagoClient) sendOne(ctx context.Context, p *params, topic string) error {
	w := writer(p, topic, 1)
	defer w.Close()
	for i := range p.sends {
		if err := w.WriteMessages(ctx, kafka.Message{Key: p.keyBytes[i], Value: p.valueB}); err != nil {
			return err
		}
	}
	return w.Close()
}

func (*kafkagoClient) consume(ctx context.Context, p *params, topic, group string, chk *checker) error {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:        strings.Split(p.servers, ","),
		GroupID:        group,
		Topic:          topic,
		StartOffset:    kafka.FirstOffset,
		MinBytes:       1,
		MaxBytes:       10 << 20,
		MaxWait:        500 * time.Millisecond,
		CommitInterval: 5 * time.Second,
	})
	defer r.Close()
	for chk.got < p.records {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		m, err := r.ReadMessage(rctx)
		cancel()
		if err != nil {
			return fmt.Errorf("after %d records: %w", chk.got, err)
		}
		if err := chk.record(m.Topic, int32(m.Partition), m.Key, m.Value); err != nil {
			return err
		}
	}
	return r.Close()
}
