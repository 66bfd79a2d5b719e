package kafkabpl_test

import (
	"context"
	"fmt"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
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

// Printing and reading BPL text.
func ExampleFormat() {
	l := value.NewList("t1", int64(3), 2.5, 3.0, 1e-5, nil).AppendNamed("unit", "°C")
	fmt.Println(value.Format(l))
	vs, err := value.Parse(`("a" => 1 b => (x y)) "two"`)
	fmt.Println(len(vs), value.Format(vs[0]), err)
	// Output:
	// ("t1" 3 2.5 3 1.0E-5 null "unit" => "°C")
	// 2 ("a" => 1 "b" => (x y)) <nil>
}

// Lists keep repeated names: two messages with the same key stay two.
func ExampleList() {
	l := value.NewList()
	l.AppendNamed("s1", "21.5").AppendNamed("s1", "21.7").Append("no key")
	v, _ := l.Get("s1")
	fmt.Println(l.Len(), v, l)
	// Output: 3 21.5 ("s1" => "21.5" "s1" => "21.7" "no key")
}

// Polling: each poll returns what has arrived, each topic's records in
// partition and offset order; a poll whose timeout passes with nothing new
// is empty, not an error.
func ExampleLibrary_Poll() {
	cluster, err := embedded.Start(embedded.Port(0)) // free ports of 127.0.0.1
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	servers := cluster.Servers()
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)

	c, err := lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "topics": "readings", "auto-offset-reset": "earliest"})
	if err != nil {
		panic(err)
	}
	p, err := lib.Create(ctx, kafkabpl.Producer, servers)
	if err != nil {
		panic(err)
	}
	if _, err := lib.Send(ctx, p, []string{"readings"}, []kafkabpl.Message{
		{Key: "s1", Value: "21.5"}, {Key: "s2", Value: "19.0"}, {Key: "s1", Value: "21.7"},
	}); err != nil {
		panic(err)
	}

	for got := 0; got < 3; {
		polled, err := lib.Poll(ctx, c, 5*time.Second)
		if err != nil {
			panic(err)
		}
		for _, topic := range polled.Topics {
			for _, r := range topic.Records {
				fmt.Printf("%s partition %d offset %d: %v => %v\n", r.Topic(), r.Partition(), r.Offset(), r.Key(), r.Value())
			}
		}
		got += polled.Len()
	}
	polled, err := lib.Poll(ctx, c, 100*time.Millisecond)
	fmt.Println("then", polled.Len(), "records,", err)
	// Output:
	// readings partition 0 offset 0: s1 => 21.5
	// readings partition 0 offset 1: s2 => 19.0
	// readings partition 0 offset 2: s1 => 21.7
	// then 0 records, <nil>
}

// Committing: the group's next consumer resumes after what was committed.
func ExampleLibrary_Commit() {
	cluster, err := embedded.Start(embedded.Port(0)) // free ports of 127.0.0.1
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	servers := cluster.Servers()
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)

	p, err := lib.Create(ctx, kafkabpl.Producer, servers)
	if err != nil {
		panic(err)
	}
	send := func(values ...string) {
		msgs := make([]kafkabpl.Message, len(values))
		for i, v := range values {
			msgs[i] = kafkabpl.Message{Value: v}
		}
		if _, err := lib.Send(ctx, p, []string{"orders"}, msgs); err != nil {
			panic(err)
		}
	}
	read := func(c string, n int) []any { // polls until n values came
		var values []any
		for len(values) < n {
			polled, err := lib.Poll(ctx, c, 5*time.Second)
			if err != nil || polled.Len() == 0 {
				panic(fmt.Sprint("read ", values, ": ", err))
			}
			for _, r := range polled.Topics[0].Records {
				values = append(values, r.Value())
			}
		}
		return values
	}
	// With auto-commit off, only Commit commits.
	cfg := map[string]any{"servers": servers, "group": "billing", "topics": "orders",
		"auto-offset-reset": "earliest", "enable-auto-commit": false}

	send("o1", "o2", "o3")
	c, err := lib.Create(ctx, kafkabpl.Consumer, cfg)
	if err != nil {
		panic(err)
	}
	fmt.Println("first consumer:", read(c, 3))
	if err := lib.Commit(ctx, c); err != nil {
		panic(err)
	}
	if _, err := lib.Destroy(ctx, c); err != nil {
		panic(err)
	}

	send("o4", "o5")
	next, err := lib.Create(ctx, kafkabpl.Consumer, cfg)
	if err != nil {
		panic(err)
	}
	fmt.Println("next consumer:", read(next, 2))
	// Output:
	// first consumer: [o1 o2 o3]
	// next consumer: [o4 o5]
}

// Seeking: read a partition again from an offset, from a time, or skip to
// its end.
func ExampleLibrary_Seek() {
	cluster, err := embedded.Start(embedded.Port(0)) // free ports of 127.0.0.1
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	servers := cluster.Servers()
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)

	p, err := lib.Create(ctx, kafkabpl.Producer, servers)
	if err != nil {
		panic(err)
	}
	var msgs []kafkabpl.Message // timestamped 1 s, 2 s, 3 s and 4 s after 1970
	for i, v := range []string{"a", "b", "c", "d"} {
		msgs = append(msgs, kafkabpl.Message{Value: v, Timestamp: time.UnixMilli(int64(1000 * (i + 1)))})
	}
	if _, err := lib.Send(ctx, p, []string{"log"}, msgs); err != nil {
		panic(err)
	}
	c, err := lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "topics": "log", "auto-offset-reset": "earliest"})
	if err != nil {
		panic(err)
	}
	read := func(n int) []any { // polls until n values came
		var values []any
		for len(values) < n {
			polled, err := lib.Poll(ctx, c, 5*time.Second)
			if err != nil || polled.Len() == 0 {
				panic(fmt.Sprint("read ", values, ": ", err))
			}
			for _, r := range polled.Topics[0].Records {
				values = append(values, r.Value())
			}
		}
		return values
	}

	fmt.Println("all:", read(4))
	if err := lib.Seek(ctx, c, "log", kafkabpl.SeekOffset(2)); err != nil {
		panic(err)
	}
	fmt.Println("from offset 2:", read(2))
	if err := lib.Seek(ctx, c, "log", kafkabpl.SeekTimestamp(time.UnixMilli(1500))); err != nil {
		panic(err)
	}
	fmt.Println("from 1.5 s:", read(3))
	if err := lib.Seek(ctx, c, "log", kafkabpl.SeekEnd()); err != nil {
		panic(err)
	}
	polled, err := lib.Poll(ctx, c, 100*time.Millisecond)
	fmt.Println("at the end:", polled.Len(), "records,", err)
	// Output:
	// all: [a b c d]
	// from offset 2: [c d]
	// from 1.5 s: [b c d]
	// at the end: 0 records, <nil>
}
