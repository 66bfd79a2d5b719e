package kafkabpl_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
)

// A producer and a consumer through the typed Go API.
func ExampleLibrary_Send() {
	cluster, err := embedded.Start(embedded.Port(0)) // free ports of 127.0.0.1
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	servers := cluster.Servers()
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)

	c, err := lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "topics": "containers"})
	if err != nil {
		panic(err)
	}
	p, err := lib.Create(ctx, kafkabpl.Producer, servers)
	if err != nil {
		panic(err)
	}
	n, err := lib.Send(ctx, p, []string{"containers"}, []kafkabpl.Message{
		{Value: "hello world"},
		{Key: "c7", Value: "full"},
	})
	fmt.Println("delivered", n, err)

	for got := 0; got < n; {
		res, err := lib.Poll(ctx, c, 5*time.Second)
		if err != nil {
			panic(err)
		}
		for _, r := range res.Topics[0].Records {
			fmt.Printf("%s offset %d: key %v, value %v\n", r.Topic(), r.Offset(), r.Key(), r.Value())
		}
		got += res.Len()
	}
	// Output:
	// delivered 2 <nil>
	// containers offset 0: key <nil>, value hello world
	// containers offset 1: key c7, value full
}

// The BPL functions, called from Go as a BPL runtime would call them. The
// poll result is a BPL list: each message is its value, named by its key.
func ExampleLibrary_Functions() {
	cluster, err := embedded.Start(embedded.Port(0)) // free ports of 127.0.0.1
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	servers := cluster.Servers()
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)
	f := lib.Functions()

	c, _ := f["kafka-create"](ctx, kafkabpl.NewList("consumer", servers))
	fmt.Println(f["kafka-subscribe"](ctx, kafkabpl.NewList(c, kafkabpl.NewList("lights", "containers"))))

	p, _ := f["kafka-producer"](ctx, kafkabpl.NewList(servers).AppendNamed("value-serializer", "JSON"))
	msgs := kafkabpl.NewList().
		AppendNamed("c7", kafkabpl.NewList().AppendNamed("level", int64(80))).
		AppendNamed("c7", kafkabpl.NewList().AppendNamed("level", int64(95)))
	fmt.Println(f["kafka-send"](ctx, kafkabpl.NewList(p, "containers", msgs)))

	consumerJSON, _ := f["kafka-consumer"](ctx, kafkabpl.NewList(servers).
		AppendNamed("value-deserializer", "JSON").
		AppendNamed("auto-offset-reset", "earliest").
		AppendNamed("topics", "containers"))
	res, err := f["kafka-poll"](ctx, kafkabpl.NewList(consumerJSON, int64(5000)))
	fmt.Println(kafkabpl.Format(res), err)

	_, err = f["kafka-poll"](ctx, kafkabpl.NewList(p, int64(10)))
	fmt.Println(kafkabpl.ErrorType(err), errors.Is(err, kafkabpl.ErrWrongKind))
	// Output:
	// ("containers" "lights") <nil>
	// 2 <nil>
	// ("containers" => ("c7" => ("level" => 80) "c7" => ("level" => 95))) <nil>
	// WrongKind true
}

// Printing and reading BPL text.
func ExampleFormat() {
	l := kafkabpl.NewList("t1", int64(3), 2.5, 3.0, 1e-5, nil).AppendNamed("unit", "°C")
	fmt.Println(kafkabpl.Format(l))
	vs, err := kafkabpl.Parse(`("a" => 1 b => (x y)) "two"`)
	fmt.Println(len(vs), kafkabpl.Format(vs[0]), err)
	// Output:
	// ("t1" 3 2.5 3 1.0E-5 null "unit" => "°C")
	// 2 ("a" => 1 "b" => (x y)) <nil>
}

// Lists keep repeated names: two messages with the same key stay two.
func ExampleList() {
	l := kafkabpl.NewList()
	l.AppendNamed("s1", "21.5").AppendNamed("s1", "21.7").Append("no key")
	v, _ := l.Get("s1")
	fmt.Println(l.Len(), v, l)
	// Output: 3 21.5 ("s1" => "21.5" "s1" => "21.7" "no key")
}
