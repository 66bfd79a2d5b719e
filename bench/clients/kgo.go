package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoClient is raw franz-go, the base every ratio is taken against: records
// built per call in one slice, as a program would from its data. Its
// producer is set as the library's and the other clients' are by default,
// so that all do the same work: no compression (kgo's default is snappy)
// and no linger (kgo's is 10 ms). Its consumer keeps kgo's defaults.
type kgoClient struct{}

func (*kgoClient) name() string { return "kgo" }

func seeds(p *params) kgo.Opt { return kgo.SeedBrokers(strings.Split(p.servers, ",")...) }

func producerOpts(p *params) []kgo.Opt {
	return []kgo.Opt{seeds(p), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0)}
}

func (*kgoClient) produce(ctx context.Context, p *params, topic string) error {
	cl, err := kgo.NewClient(producerOpts(p)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for i := 0; i < p.records; i += p.batch {
		recs := make([]kgo.Record, p.batch)
		ptrs := make([]*kgo.Record, p.batch)
		for j := range recs {
			recs[j] = kgo.Record{Topic: topic, Key: p.keyBytes[i+j], Value: p.valueB}
			ptrs[j] = &recs[j]
		}
		if err := cl.ProduceSync(ctx, ptrs...).FirstErr(); err != nil {
			return err
		}
	}
	return nil
}

func (*kgoClient) sendOne(ctx context.Context, p *params, topic string) error {
	cl, err := kgo.NewClient(producerOpts(p)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for i := range p.sends {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: p.keyBytes[i], Value: p.valueB}).FirstErr(); err != nil {
			return err
		}
	}
	return nil
}

func (*kgoClient) consume(ctx context.Context, p *params, topic, group string, chk *checker) error {
	cl, err := kgo.NewClient(seeds(p), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	for chk.got < p.records {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		fs := cl.PollRecords(pctx, 500)
		cancel()
		if err := fs.Err0(); err != nil {
			return fmt.Errorf("after %d records: %w", chk.got, err)
		}
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			if err := chk.record(r.Topic, r.Partition, r.Key, r.Value); err != nil {
				return err
			}
		}
	}
	return nil
}
