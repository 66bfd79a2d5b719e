package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/twmb/franz-go/pkg/kgo"
)

// memoryTable creates n idle handles of each kind and reports what each
// costs: the growth of the Go heap in use plus goroutine stacks, after a
// GC, divided by n; and the number of such handles 100 MB would hold
// (extrapolated, not created). An idle producer has sent one record (so
// it is connected); an idle consumer has joined its own group on an empty
// topic and waits in Poll's fetch loop.
func memoryTable(ctx context.Context, w io.Writer, p *params, n int) error {
	type kind struct {
		title string
		make  func(i int) (closer func(), err error)
	}
	topic := "idle"
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	kinds := []kind{
		{"Library producer handle (Go API)", func(i int) (func(), error) {
			id, err := lib.Create(ctx, kafkabpl.Producer, p.servers)
			if err != nil {
				return nil, err
			}
			if _, err := lib.Send(ctx, id, []string{"idle-p"}, []kafkabpl.Message{{Value: p.value}}); err != nil {
				return nil, err
			}
			return func() { lib.Destroy(ctx, id) }, nil
		}},
		{"Library consumer handle (Go API)", func(i int) (func(), error) {
			id, err := lib.Create(ctx, kafkabpl.Consumer, consumerConfig(p, topic, fmt.Sprintf("idle-%d", i)))
			if err != nil {
				return nil, err
			}
			if _, err := lib.Poll(ctx, id, 0); err != nil {
				return nil, err
			}
			return func() { lib.Destroy(ctx, id) }, nil
		}},
		{"raw kgo producer client", func(i int) (func(), error) {
			cl, err := kgo.NewClient(producerOpts(p)...)
			if err != nil {
				return nil, err
			}
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "idle-p", Value: p.valueB}).FirstErr(); err != nil {
				cl.Close()
				return nil, err
			}
			return cl.Close, nil
		}},
		{"raw kgo consumer client", func(i int) (func(), error) {
			cl, err := kgo.NewClient(seeds(p), kgo.ConsumerGroup(fmt.Sprintf("idle-kgo-%d", i)), kgo.ConsumeTopics(topic))
			if err != nil {
				return nil, err
			}
			pctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
			cl.PollFetches(pctx) // start it
			cancel()
			return cl.Close, nil
		}},
	}
	admin, err := kgo.NewClient(seeds(p))
	if err != nil {
		return err
	}
	defer admin.Close()
	if err := createTopics(ctx, kadmOf(admin), topic, "idle-p"); err != nil {
		return err
	}

	fmt.Fprintf(w, "Memory of %d idle handles of each kind (Go heap in use + stacks, after GC, per handle; 100 MB / that, extrapolated):\n\n", n)
	fmt.Fprintln(w, "| handle | per handle | goroutines per handle | handles in 100 MB |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, k := range kinds {
		before, gBefore := inUse()
		var closers []func()
		for i := range n {
			c, err := k.make(i)
			if err != nil {
				for _, c := range closers {
					c()
				}
				return fmt.Errorf("%s %d: %w", k.title, i, err)
			}
			closers = append(closers, c)
		}
		time.Sleep(time.Second) // let joins and first fetches settle
		after, gAfter := inUse()
		per := float64(after-before) / float64(n)
		fmt.Fprintf(w, "| %s | %.0f KB | %.1f | %.0f |\n", k.title, per/1024, float64(gAfter-gBefore)/float64(n), 100e6/per)
		for _, c := range closers {
			c()
		}
	}
	return nil
}

func inUse() (uint64, int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse, runtime.NumGoroutine()
}
