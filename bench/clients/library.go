package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/functions"
	"github.com/brain4it/kafkabpl/value"
)

// libClient is the library's Go API: Library.Send and Library.Poll.
type libClient struct{}

func (*libClient) name() string { return "goapi" }

func (*libClient) produce(ctx context.Context, p *params, topic string) error {
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	id, err := lib.Create(ctx, kafkabpl.Producer, p.servers)
	if err != nil {
		return err
	}
	topics := []string{topic}
	for i := 0; i < p.records; i += p.batch {
		msgs := make([]kafkabpl.Message, p.batch)
		for j := range msgs {
			msgs[j] = kafkabpl.Message{Key: p.keyAny[i+j], Value: p.valueAny}
		}
		if n, err := lib.Send(ctx, id, topics, msgs); err != nil || n != p.batch {
			return fmt.Errorf("sent %d of %d: %v", n, p.batch, err)
		}
	}
	_, err = lib.Destroy(ctx, id)
	return err
}

func (*libClient) sendOne(ctx context.Context, p *params, topic string) error {
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	id, err := lib.Create(ctx, kafkabpl.Producer, p.servers)
	if err != nil {
		return err
	}
	topics := []string{topic}
	for i := range p.sends {
		if n, err := lib.Send(ctx, id, topics, []kafkabpl.Message{{Key: p.keyAny[i], Value: p.valueAny}}); err != nil || n != 1 {
			return fmt.Errorf("send %d: %d, %v", i, n, err)
		}
	}
	_, err = lib.Destroy(ctx, id)
	return err
}

func consumerConfig(p *params, topic, group string) map[string]any {
	return map[string]any{"servers": p.servers, "group": group, "auto-offset-reset": "earliest", "topics": topic}
}

func (*libClient) consume(ctx context.Context, p *params, topic, group string, chk *checker) error {
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	id, err := lib.Create(ctx, kafkabpl.Consumer, consumerConfig(p, topic, group))
	if err != nil {
		return err
	}
	for chk.got < p.records {
		res, err := lib.Poll(ctx, id, 10*time.Second)
		if err != nil {
			return err
		}
		if res.Len() == 0 {
			return fmt.Errorf("no record in 10 s after %d", chk.got)
		}
		for _, t := range res.Topics {
			for i := range t.Records {
				r := &t.Records[i]
				if err := chk.record(t.Topic, r.Partition(), r.KeyBytes(), r.ValueBytes()); err != nil {
					return err
				}
			}
		}
	}
	_, err = lib.Destroy(ctx, id)
	return err
}

// fnClient calls the library's BPL function table, functions.Table(lib),
// as a BPL runtime does: arguments and results are BPL lists.
type fnClient struct{}

func (*fnClient) name() string { return "fn" }

type fns map[string]value.Func

func (f fns) call(ctx context.Context, name string, args ...any) (any, error) {
	return f[name](ctx, value.NewList(args...))
}

func (*fnClient) produce(ctx context.Context, p *params, topic string) error {
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	f := fns(functions.Table(lib))
	id, err := f.call(ctx, "kafka-create", "producer", p.servers)
	if err != nil {
		return err
	}
	for i := 0; i < p.records; i += p.batch {
		msgs := value.NewList(make([]any, 0, p.batch)...) // room for the call, as kgo's records get
		for j := range p.batch {
			msgs.AppendNamed(p.keys[i+j], p.valueAny)
		}
		n, err := f.call(ctx, "kafka-send", id, topic, msgs)
		if err != nil || n != int64(p.batch) {
			return fmt.Errorf("sent %v of %d: %v", n, p.batch, err)
		}
	}
	_, err = f.call(ctx, "kafka-destroy", id)
	return err
}

func (*fnClient) sendOne(ctx context.Context, p *params, topic string) error {
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	f := fns(functions.Table(lib))
	id, err := f.call(ctx, "kafka-create", "producer", p.servers)
	if err != nil {
		return err
	}
	for i := range p.sends {
		msg := value.NewList().AppendNamed(p.keys[i], p.valueAny)
		if n, err := f.call(ctx, "kafka-send", id, topic, msg); err != nil || n != int64(1) {
			return fmt.Errorf("send %d: %v, %v", i, n, err)
		}
	}
	_, err = f.call(ctx, "kafka-destroy", id)
	return err
}

func (*fnClient) consume(ctx context.Context, p *params, topic, group string, chk *checker) error {
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	f := fns(functions.Table(lib))
	cfg := value.NewList()
	for k, v := range consumerConfig(p, topic, group) {
		cfg.AppendNamed(k, v)
	}
	id, err := f.call(ctx, "kafka-create", "consumer", cfg)
	if err != nil {
		return err
	}
	for chk.got < p.records {
		res, err := f.call(ctx, "kafka-poll", id, int64(10000))
		if err != nil {
			return err
		}
		n, err := checkPolled(chk, topic, res)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("no record in 10 s after %d", chk.got)
		}
	}
	_, err = f.call(ctx, "kafka-destroy", id)
	return err
}

// checkPolled checks a kafka-poll result, ("topic" => (messages)), each
// message its value named by its key.
func checkPolled(chk *checker, topic string, res any) (int, error) {
	l, ok := res.(*value.List)
	if !ok {
		return 0, fmt.Errorf("kafka-poll gave %T", res)
	}
	if l.Len() != 1 || l.Name(0) != topic {
		return 0, fmt.Errorf("kafka-poll gave %s, want one topic %s", short(l.String()), topic)
	}
	return checkMessages(chk, topic, l.At(0))
}

func checkMessages(chk *checker, topic string, v any) (int, error) {
	msgs, ok := v.(*value.List)
	if !ok {
		return 0, fmt.Errorf("messages: %T", v)
	}
	for i := range msgs.Len() {
		val, _ := msgs.At(i).(string)
		// The values format has no partition: the topic has only 0.
		if err := chk.text(topic, 0, msgs.Name(i), val); err != nil {
			return 0, err
		}
	}
	return msgs.Len(), nil
}

// scriptClient runs a BPL script through the project's evaluator
// (bpl, as the kafkabpl command does), in this process: the
// script loops, builds its messages and calls the library's functions.
type scriptClient struct{}

func (*scriptClient) name() string { return "script" }

const produceScript = `
(set p (kafka-create "producer" servers))
(set i 0)
(while (< i n)
  (set msgs (list))
  (set end (+ i batch))
  (while (< i end)
    (put msgs (string i) value)
    (set i (+ i 1)))
  (set sent (kafka-send p topic msgs))
  (if (!= sent batch) (throw "BenchError" "sent a part of a batch")))
(kafka-destroy p)
`

const sendOneScript = `
(set p (kafka-create "producer" servers))
(set i 0)
(while (< i sends)
  (set m (list))
  (put m (string i) value)                ; put gives the old value, as brain4it's
  (kafka-send p topic m)
  (set i (+ i 1)))
(kafka-destroy p)
`

const consumeScript = `
(set c (kafka-create "consumer" (list "servers" => servers "group" => group "auto-offset-reset" => "earliest" "topics" => topic)))
(set got 0)
(while (< got n)
  (set got (+ got (bench-check (get (kafka-poll c 10000) topic)))))
(kafka-destroy c)
`

func (*scriptClient) run(ctx context.Context, p *params, src string, globals map[string]any, chk *checker) error {
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	in := bpl.New(io.Discard)
	defer in.Close()
	for name, f := range functions.Table(lib) {
		in.Define(name, f)
	}
	if chk != nil {
		topic := globals["topic"].(string)
		in.Define("bench-check", func(_ context.Context, args *value.List) (any, error) {
			if args.Len() != 1 {
				return nil, errors.New("bench-check: want the messages")
			}
			n, err := checkMessages(chk, topic, args.At(0))
			if err == nil && n == 0 {
				err = fmt.Errorf("no record in 10 s after %d", chk.got)
			}
			return int64(n), err
		})
	}
	in.SetGlobal("servers", p.servers)
	in.SetGlobal("value", p.value)
	in.SetGlobal("n", int64(p.records))
	in.SetGlobal("batch", int64(p.batch))
	in.SetGlobal("sends", int64(p.sends))
	for k, v := range globals {
		in.SetGlobal(k, v)
	}
	return in.Run(ctx, "bench.bpl", src, nil)
}

func (s *scriptClient) produce(ctx context.Context, p *params, topic string) error {
	return s.run(ctx, p, produceScript, map[string]any{"topic": topic}, nil)
}

func (s *scriptClient) sendOne(ctx context.Context, p *params, topic string) error {
	return s.run(ctx, p, sendOneScript, map[string]any{"topic": topic}, nil)
}

func (s *scriptClient) consume(ctx context.Context, p *params, topic, group string, chk *checker) error {
	return s.run(ctx, p, consumeScript, map[string]any{"topic": topic, "group": group}, chk)
}
