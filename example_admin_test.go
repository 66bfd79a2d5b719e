package kafkabpl_test

import (
	"context"
	"fmt"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
)

// A consumer group's lag: what it has yet to read, from what it committed.
func ExampleLibrary_DescribeGroup() {
	// One broker that creates no topic on first use: what exists is what
	// the admin functions made.
	cluster, err := embedded.Start(embedded.Port(0), embedded.NoAutoCreate())
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	servers := cluster.Servers()
	ctx := context.Background()
	lib := kafkabpl.New()
	defer lib.Close(ctx)

	if _, err := lib.CreateTopics(ctx, servers, []string{"readings"}, kafkabpl.TopicOptions{Partitions: 1}); err != nil {
		panic(err)
	}
	p, _ := lib.Create(ctx, kafkabpl.Producer, servers)
	c, _ := lib.Create(ctx, kafkabpl.Consumer, map[string]any{
		"servers": servers, "group": "dashboard", "topics": "readings",
		"auto-offset-reset": "earliest", "enable-auto-commit": false,
	})
	send := func(values ...string) {
		msgs := make([]kafkabpl.Message, len(values))
		for i, v := range values {
			msgs[i] = kafkabpl.Message{Value: v}
		}
		if _, err := lib.Send(ctx, p, []string{"readings"}, msgs); err != nil {
			panic(err)
		}
	}

	send("20.5", "20.7", "21.0")
	for read := 0; read < 3; { // read all three, then commit
		polled, err := lib.Poll(ctx, c, time.Second)
		if err != nil {
			panic(err)
		}
		read += polled.Len()
	}
	if err := lib.Commit(ctx, c); err != nil {
		panic(err)
	}
	send("21.2", "21.4") // not read yet

	g, err := lib.DescribeGroup(ctx, servers, "dashboard")
	if err != nil {
		panic(err)
	}
	lag, _ := g.List().Get("lag")
	fmt.Println(g.State, len(g.Members), "member")
	fmt.Println(value.Format(lag))
	fmt.Println("total lag:", g.TotalLag)
	// Output:
	// Stable 1 member
	// ("readings" => (("partition" => 0 "committed" => 3 "end" => 5 "lag" => 2)))
	// total lag: 2
}
